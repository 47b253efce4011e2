/*
 * The edits over a model's header (fs/model/edits*.c), on a small model
 * written to a file by hand: every case ggfs_edits_rename promises (onto
 * a key, a deleted key of the model, a scratch name, a new name; the
 * refusals; the index fix-ups among added keys and scratch files), writes,
 * creates, unlinks and types, the views each change makes, the limits,
 * and the file of edits saved atomically and read back at the next open.
 * Each check reads the result back through the current view.
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "gguf_writer.h"
#include "model/edits.h"
#include "model/edits_file.h"
#include "model/header.h"
#include "model/model.h"
#include "util/log.h"

#define NONE UINT64_MAX
#define NAN_BITS 0x7fc00001u // a NaN with a payload: text would make it 0x7fc00000

static ggfs_model *g_model;
static char *g_root;

/* The model's keys, in order; key i has id i. */
static const char *const MODEL_KEYS =
    "general.architecture,general.name,general.alignment,x.count,general.url,f.nan,f.one,x.list";
enum { ID_NAME = 1, ID_ALIGNMENT = 2, ID_COUNT = 3, ID_URL = 4, ID_NAN = 5, ID_ONE = 6, ID_LIST = 7, N_KEYS = 8 };

static void write_model(gguf_writer *w)
{
    static const uint32_t list[] = {1, 2, 3};
    static const uint64_t ne[] = {4};
    gw_begin(w, 3, false, 1, N_KEYS);
    gw_kv_str(w, "general.architecture", "llama");
    gw_kv_str(w, "general.name", "orig");
    gw_kv_u32(w, "general.alignment", 32);
    gw_kv_u32(w, "x.count", 7);
    gw_kv_str(w, "general.url", "http://u");
    gw_kv_f32_bits(w, "f.nan", NAN_BITS);
    gw_kv_f32_bits(w, "f.one", 0x3f800000u);
    gw_kv_u32s(w, "x.list", list, 3);
    gw_tensor(w, "t", 1, ne, GW_TENSOR_F32, 0);
    gw_pad(w, 32);
    const float data[4] = {1, 2, 3, 4};
    gw_bytes(w, data, sizeof data);
}

/* ==== The last log line ==== */

static char g_log[1024];

static void capture(int level, const char *fmt, va_list ap)
{
    (void)level;
    vsnprintf(g_log, sizeof g_log, fmt, ap);
}

static bool logged(const char *what)
{
    return strstr(g_log, what) != NULL;
}

/* ==== Reading the current view ==== */

typedef struct key_state {
    bool found;
    uint64_t id, index;
    char text[256];
    char type[GGP_TYPE_TEXT_SIZE];
} key_state;

static key_state key_of(ggfs_edits *e, const char *name)
{
    key_state k = {0};
    ggfs_view *v = ggfs_edits_view(e);
    k.index = ggfs_view_find(v, name, strlen(name));
    if (k.index != UINT64_MAX) {
        const ggp_kv *kv = ggp_kv_at(v->keys, k.index);
        ggp_bytes text = {0};
        ggp_bytes_sink s;
        ggp_bytes_sink_init(&s, &text);
        ggp_render(v->keys, &kv->value, &s.sink);
        const size_t n = text.len < sizeof k.text - 1 ? text.len : sizeof k.text - 1;
        if (n)
            memcpy(k.text, text.data, n);
        free(text.data);
        ggp_value_type_format(ggp_value_type_of(v->keys, &kv->value), k.type);
        k.id = ggfs_view_id_of(v, k.index);
        k.found = true;
        if (ggfs_view_index_of(v, k.id) != k.index)
            k.found = false; // the view's id index disagrees with its keys
    }
    ggfs_view_put(v);
    return k;
}

/* The view's key names, joined by commas. */
static const char *names(ggfs_edits *e)
{
    static char buf[1024];
    size_t n = 0;
    ggfs_view *v = ggfs_edits_view(e);
    buf[0] = '\0';
    for (uint64_t i = 0; i < ggp_kv_count(v->keys); i++) {
        const ggp_str k = ggp_kv_at(v->keys, i)->key;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%.*s", i ? "," : "", (int)k.len, k.ptr);
    }
    ggfs_view_put(v);
    return buf;
}

/* The bytes of the value of key `name` after its type field. */
static ggfs_run value_bytes(ggfs_edits *e, ggfs_view **held, const char *name)
{
    *held = ggfs_edits_view(e);
    const uint64_t i = ggfs_view_find(*held, name, strlen(name));
    return i == UINT64_MAX ? (ggfs_run){NULL, 0} : ggfs_value_run((*held)->keys, ggp_kv_at((*held)->keys, i));
}

static const char *scratch_text(ggfs_edits *e, uint64_t id)
{
    static char buf[256];
    ggp_bytes t = {0};
    buf[0] = '\0';
    if (ggfs_edits_scratch_text(e, id, &t) == 0 && t.len < sizeof buf) {
        if (t.len)
            memcpy(buf, t.data, t.len);
        buf[t.len] = '\0';
    }
    free(t.data);
    return buf;
}

static ggfs_edits *open_edits(const char *path)
{
    char why[512] = "";
    ggfs_edits *e = ggfs_edits_open(g_model, path, why, sizeof why);
    if (!e)
        fprintf(stderr, "edits: %s\n", why);
    return e;
}

static int rename_(ggfs_edits *e, const char *from, const char *to, bool no_replace, uint64_t ids[2],
                   bool *changed)
{
    return ggfs_edits_rename(e, from, strlen(from), to, strlen(to), no_replace, ids, changed);
}

/* Makes key or scratch file name holding text; returns its id. */
static uint64_t make(ggfs_edits *e, const char *name, const char *text)
{
    uint64_t id;
    bool changed;
    if (ggfs_edits_create(e, name, strlen(name), false, &id) != 0 || ggfs_edits_write(e, id, text, strlen(text), &changed) != 0)
        return NONE;
    return id;
}

static int unlink_(ggfs_edits *e, const char *name, uint64_t *id)
{
    return ggfs_edits_unlink(e, name, strlen(name), id);
}

/* ==== Small models of their own ==== */

typedef void second_key_fn(gguf_writer *w);

/* A model of general.name = "orig", the key second_key writes, and one
 * tensor, in version and byte order, written to g_root/file and opened;
 * NULL when refused. */
static ggfs_model *small_model(const char *file, uint32_t version, bool big, second_key_fn *second_key)
{
    gguf_writer w;
    static const uint64_t ne[] = {2};
    gw_begin(&w, version, big, 1, 2);
    gw_kv_str(&w, "general.name", "orig");
    second_key(&w);
    gw_tensor(&w, "t", 1, ne, GW_TENSOR_F32, 0);
    gw_pad(&w, 32);
    const uint8_t data[8] = {0};
    gw_bytes(&w, data, sizeof data);
    const bool written = tmptree_file(g_root, file, w.b, w.n);
    gw_free(&w);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", g_root, file);
    ggfs_model_error err;
    ggfs_model *m = written ? ggfs_model_open(path, NULL, &err) : NULL;
    if (written && !m)
        fprintf(stderr, "%s: %s\n", err.where, err.error.msg);
    return m;
}

static void key_old_tilde(gguf_writer *w)
{
    gw_kv_str(w, "x.old~", "old");
}

static void key_count(gguf_writer *w)
{
    gw_kv_u32(w, "x.count", 7);
}

static void key_nested(gguf_writer *w)
{
    gw_key(w, "x.nested", GW_ARR); // an empty array of arrays
    gw_uint(w, GW_ARR, 4);
    gw_count(w, 0);
}

/* ==== Rename ==== */

static int test_rename_key_onto_key_takes_its_place_with_its_own_id(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    EXPECT_STR(names(e), MODEL_KEYS);
    const uint64_t gen = ggfs_edits_generation(e);
    uint64_t ids[2];
    bool changed;
    EXPECT_EQ(rename_(e, "general.url", "general.name", false, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ids[0], ID_URL);
    EXPECT_EQ(ids[1], ID_NAME);
    EXPECT_STR(names(e), "general.architecture,general.name,general.alignment,x.count,f.nan,f.one,x.list");
    const key_state k = key_of(e, "general.name");
    EXPECT(k.found);
    EXPECT_STR(k.text, "http://u\n");
    EXPECT_STR(k.type, "str");
    EXPECT_EQ(k.id, ID_URL);
    ggfs_view *v = ggfs_edits_view(e);
    EXPECT_EQ(ggfs_view_index_of(v, ID_NAME), UINT64_MAX); // the target's id is gone
    ggfs_view_put(v);
    EXPECT_EQ(ggfs_edits_generation(e), gen + 1);
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_onto_key_reads_text_as_its_type(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    const uint64_t id = make(e, "n.text", "12\n");
    EXPECT(id != NONE);
    EXPECT_STR(key_of(e, "n.text").type, "str");
    uint64_t ids[2];
    bool changed;
    EXPECT_EQ(rename_(e, "n.text", "x.count", false, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ids[0], id);
    EXPECT_EQ(ids[1], ID_COUNT);
    const key_state k = key_of(e, "x.count");
    EXPECT_STR(k.text, "12\n");
    EXPECT_STR(k.type, "u32");
    EXPECT_EQ(k.id, id);
    EXPECT_EQ(k.index, 3);
    EXPECT_STR(names(e), MODEL_KEYS);

    // A scratch file's text the same way, into an array.
    uint64_t sid;
    EXPECT_EQ(ggfs_edits_create(e, ".list.swp", 9, false, &sid), 0);
    EXPECT_EQ(ggfs_edits_write(e, sid, "9\n8\n", 4, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(rename_(e, ".list.swp", "x.list", false, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ids[0], sid);
    EXPECT_EQ(ids[1], ID_LIST);
    EXPECT_STR(key_of(e, "x.list").text, "9\n8\n");
    EXPECT_STR(key_of(e, "x.list").type, "arr[u32]");
    ggfs_scratch_info info;
    EXPECT(!ggfs_edits_scratch_named(e, ".list.swp", 9, &info));
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_onto_key_of_same_type_keeps_the_bytes(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    uint64_t ids[2];
    bool changed;
    EXPECT_EQ(rename_(e, "f.nan", "f.one", false, ids, &changed), 0);
    ggfs_view *v;
    const ggfs_run run = value_bytes(e, &v, "f.one");
    EXPECT_EQ(run.len, 4);
    uint32_t bits;
    memcpy(&bits, run.bytes, 4);
    ggfs_view_put(v);
    EXPECT_EQ(bits, NAN_BITS); // not the quiet NaN "nan\n" parses to
    EXPECT_STR(key_of(e, "f.one").text, "nan\n");
    EXPECT(!key_of(e, "f.nan").found);
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_refuses_text_that_does_not_fit(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    EXPECT(make(e, "n.text", "abc") != NONE);
    const uint64_t gen = ggfs_edits_generation(e);
    uint64_t ids[2];
    bool changed = true;
    g_log[0] = '\0';
    EXPECT_EQ(rename_(e, "n.text", "x.count", false, ids, &changed), EINVAL);
    EXPECT(!changed);
    EXPECT(logged("x.count"));
    EXPECT_STR(key_of(e, "x.count").text, "7\n");
    EXPECT_STR(key_of(e, "n.text").text, "abc\n");
    EXPECT_EQ(ggfs_edits_generation(e), gen);

    // A scratch file stays a scratch file.
    uint64_t sid;
    EXPECT_EQ(ggfs_edits_create(e, ".v~", 3, false, &sid), 0);
    EXPECT_EQ(ggfs_edits_write(e, sid, "-1\n", 3, &changed), 0);
    EXPECT_EQ(rename_(e, ".v~", "x.count", false, ids, &changed), EINVAL);
    EXPECT_STR(scratch_text(e, sid), "-1\n");
    EXPECT_STR(key_of(e, "x.count").text, "7\n");

    // Onto a deleted key of the model: read as the type the model gave it.
    uint64_t id;
    EXPECT_EQ(unlink_(e, "x.count", &id), 0);
    EXPECT_EQ(rename_(e, "n.text", "x.count", false, ids, &changed), EINVAL);
    EXPECT(!key_of(e, "x.count").found);
    EXPECT(key_of(e, "n.text").found);
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_onto_deleted_key_brings_it_back_where_it_was(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    uint64_t gone;
    EXPECT_EQ(unlink_(e, "general.url", &gone), 0);
    EXPECT_EQ(gone, ID_URL);
    const uint64_t id = make(e, "n.url", "http://v\n");
    EXPECT(id != NONE);
    uint64_t ids[2];
    bool changed;
    // A deleted key is no file: no_replace lets it be.
    EXPECT_EQ(rename_(e, "n.url", "general.url", true, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ids[0], id);
    EXPECT_EQ(ids[1], NONE);
    EXPECT_STR(names(e), MODEL_KEYS);
    const key_state k = key_of(e, "general.url");
    EXPECT_STR(k.text, "http://v\n");
    EXPECT_EQ(k.id, id);
    EXPECT_EQ(k.index, 4);

    // The value takes the type the model gave the key.
    EXPECT_EQ(unlink_(e, "x.count", &gone), 0);
    EXPECT(make(e, "n.c", "41") != NONE);
    EXPECT_EQ(rename_(e, "n.c", "x.count", false, ids, &changed), 0);
    EXPECT_STR(key_of(e, "x.count").type, "u32");
    EXPECT_STR(key_of(e, "x.count").text, "41\n");
    EXPECT_STR(names(e), MODEL_KEYS);
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_onto_scratch_name_makes_key_a_scratch_file(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    const uint64_t gen = ggfs_edits_generation(e);
    uint64_t ids[2];
    bool changed;
    EXPECT_EQ(rename_(e, "general.name", "general.name~", false, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ids[0], ID_NAME);
    EXPECT_EQ(ids[1], NONE);
    EXPECT_EQ(ggfs_edits_generation(e), gen + 1);
    EXPECT(!key_of(e, "general.name").found);
    ggfs_scratch_info info;
    EXPECT(ggfs_edits_scratch_named(e, "general.name~", 13, &info));
    EXPECT_EQ(info.id, ID_NAME);
    EXPECT_EQ(info.size, 5);
    EXPECT_EQ(info.type.depth, 0);
    EXPECT_EQ(info.type.leaf, GGP_V_STRING);
    EXPECT_STR(scratch_text(e, ID_NAME), "orig\n");

    // A scratch file onto another scratch name: the keys do not change.
    EXPECT_EQ(rename_(e, "general.name~", ".general.name.swp", false, ids, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(ggfs_edits_generation(e), gen + 1);
    EXPECT(ggfs_edits_scratch_of(e, ID_NAME, &info));
    EXPECT_STR(info.name, ".general.name.swp");

    // And back: the deleted key returns to its place.
    EXPECT_EQ(rename_(e, ".general.name.swp", "general.name", false, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_STR(names(e), MODEL_KEYS);
    const key_state k = key_of(e, "general.name");
    EXPECT_STR(k.text, "orig\n");
    EXPECT_EQ(k.id, ID_NAME);
    EXPECT(!ggfs_edits_scratch_at(e, 0, &info));
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_onto_new_name_moves_key_to_the_end(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    uint64_t ids[2];
    bool changed;
    EXPECT_EQ(rename_(e, "general.name", "general.title", true, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ids[0], ID_NAME);
    EXPECT_EQ(ids[1], NONE);
    EXPECT_STR(names(e),
               "general.architecture,general.alignment,x.count,general.url,f.nan,f.one,x.list,general.title");
    key_state k = key_of(e, "general.title");
    EXPECT_STR(k.text, "orig\n");
    EXPECT_EQ(k.id, ID_NAME);

    // An array keeps its type and elements.
    EXPECT_EQ(rename_(e, "x.list", "y.list", false, ids, &changed), 0);
    k = key_of(e, "y.list");
    EXPECT_STR(k.type, "arr[u32]");
    EXPECT_STR(k.text, "1\n2\n3\n");
    EXPECT_EQ(k.index, 7);

    // A scratch file becomes a key of its own type.
    uint64_t sid;
    EXPECT_EQ(ggfs_edits_create(e, ".n", 2, false, &sid), 0);
    EXPECT_EQ(ggfs_edits_write(e, sid, "5\n", 2, &changed), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, sid, "u64", 3, &changed), 0);
    EXPECT_EQ(rename_(e, ".n", "n.five", false, ids, &changed), 0);
    k = key_of(e, "n.five");
    EXPECT_STR(k.type, "u64");
    EXPECT_STR(k.text, "5\n");
    EXPECT_EQ(k.id, sid);
    EXPECT_EQ(k.index, 8);
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_no_replace_refuses_existing_files(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    const uint64_t gen = ggfs_edits_generation(e);
    uint64_t ids[2];
    bool changed;
    EXPECT_EQ(rename_(e, "general.url", "general.name", true, ids, &changed), EEXIST);
    EXPECT(!changed);
    EXPECT_STR(names(e), MODEL_KEYS);
    EXPECT_STR(key_of(e, "general.name").text, "orig\n");
    uint64_t a, b;
    EXPECT_EQ(ggfs_edits_create(e, ".a", 2, false, &a), 0);
    EXPECT_EQ(ggfs_edits_create(e, ".b", 2, false, &b), 0);
    EXPECT_EQ(rename_(e, ".a", ".b", true, ids, &changed), EEXIST);
    EXPECT_EQ(rename_(e, "general.url", ".b", true, ids, &changed), EEXIST);
    ggfs_scratch_info info;
    EXPECT(ggfs_edits_scratch_named(e, ".a", 2, &info) && info.id == a);
    EXPECT(ggfs_edits_scratch_named(e, ".b", 2, &info) && info.id == b);
    EXPECT_EQ(ggfs_edits_generation(e), gen);
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_refuses_protected_keys(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    uint64_t ids[2];
    bool changed;
    g_log[0] = '\0';
    EXPECT_EQ(rename_(e, "general.alignment", "general.align", false, ids, &changed), EPERM);
    EXPECT(logged("general.alignment"));
    EXPECT_EQ(rename_(e, "general.alignment", "general.alignment~", false, ids, &changed), EPERM);
    EXPECT_EQ(rename_(e, "general.name", "general.alignment", false, ids, &changed), EPERM);
    EXPECT_EQ(rename_(e, "general.name", "split.no", false, ids, &changed), EPERM);
    uint64_t sid;
    EXPECT_EQ(ggfs_edits_create(e, ".s", 2, false, &sid), 0);
    EXPECT_EQ(rename_(e, ".s", "split.count", false, ids, &changed), EPERM);
    EXPECT_STR(names(e), MODEL_KEYS);
    EXPECT_STR(key_of(e, "general.alignment").text, "32\n");
    // A scratch name is no key: split.*~ may be made.
    EXPECT_EQ(rename_(e, ".s", "split.count~", false, ids, &changed), 0);
    ggfs_edits_close(e);
    return 1;
}

static int test_rename_of_nothing_and_to_itself(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    uint64_t ids[2] = {0, 0};
    bool changed = true;
    EXPECT_EQ(rename_(e, "no.such", "x.y", false, ids, &changed), ENOENT);
    EXPECT_EQ(ids[0], NONE);
    EXPECT_EQ(ids[1], NONE);
    EXPECT(!changed);
    EXPECT_EQ(ggfs_edits_rename(e, "general.name", 12, "", 0, false, ids, &changed), EINVAL);
    EXPECT_EQ(rename_(e, "general.name", "general.name", true, ids, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(ids[0], ID_NAME);
    EXPECT_EQ(ggfs_edits_generation(e), 0);
    EXPECT_STR(names(e), MODEL_KEYS);
    ggfs_edits_close(e);
    return 1;
}

/* An added key renamed onto another: the source leaving shifts the
 * slots after it, the target's among them. */
static int test_rename_among_added_keys(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    const uint64_t one = make(e, "a.one", "1"), two = make(e, "a.two", "2"), three = make(e, "a.three", "3");
    EXPECT(one != NONE && two != NONE && three != NONE);
    uint64_t ids[2];
    bool changed;
    // The source before the target.
    EXPECT_EQ(rename_(e, "a.one", "a.three", false, ids, &changed), 0);
    EXPECT_EQ(ids[0], one);
    EXPECT_EQ(ids[1], three);
    EXPECT_STR(names(e), "general.architecture,general.name,general.alignment,x.count,general.url,f.nan,f.one,"
                         "x.list,a.two,a.three");
    EXPECT_STR(key_of(e, "a.two").text, "2\n");
    EXPECT_EQ(key_of(e, "a.two").id, two);
    EXPECT_STR(key_of(e, "a.three").text, "1\n");
    EXPECT_EQ(key_of(e, "a.three").id, one);

    // The source after the target.
    const uint64_t four = make(e, "a.four", "4");
    EXPECT_EQ(rename_(e, "a.four", "a.two", false, ids, &changed), 0);
    EXPECT_EQ(ids[1], two);
    EXPECT_STR(names(e), "general.architecture,general.name,general.alignment,x.count,general.url,f.nan,f.one,"
                         "x.list,a.two,a.three");
    EXPECT_STR(key_of(e, "a.two").text, "4\n");
    EXPECT_EQ(key_of(e, "a.two").id, four);
    EXPECT_STR(key_of(e, "a.three").text, "1\n");

    // A key of the model onto an added one, and one added onto the model's.
    EXPECT_EQ(rename_(e, "general.url", "a.three", false, ids, &changed), 0);
    EXPECT_STR(key_of(e, "a.three").text, "http://u\n");
    EXPECT_EQ(key_of(e, "a.three").id, ID_URL);
    EXPECT_EQ(rename_(e, "a.two", "general.name", false, ids, &changed), 0);
    EXPECT_STR(names(e), "general.architecture,general.name,general.alignment,x.count,f.nan,f.one,x.list,a.three");
    EXPECT_STR(key_of(e, "general.name").text, "4\n");
    EXPECT_EQ(key_of(e, "general.name").index, 1);
    ggfs_edits_close(e);
    return 1;
}

/* A scratch file renamed onto another: the target leaving shifts the
 * source's place when it came first. */
static int test_rename_among_scratch_files(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    const uint64_t a = make(e, ".a", "A"), b = make(e, ".b", "B"), c = make(e, ".c", "C"), d = make(e, ".d", "D");
    EXPECT(a != NONE && b != NONE && c != NONE && d != NONE);
    uint64_t ids[2];
    bool changed;
    // The target before the source, which is not the last.
    EXPECT_EQ(rename_(e, ".c", ".a", false, ids, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(ids[0], c);
    EXPECT_EQ(ids[1], a);
    ggfs_scratch_info info;
    EXPECT(ggfs_edits_scratch_at(e, 0, &info));
    EXPECT_STR(info.name, ".b");
    EXPECT_STR(scratch_text(e, info.id), "B");
    EXPECT(ggfs_edits_scratch_at(e, 1, &info));
    EXPECT_STR(info.name, ".d");
    EXPECT_STR(scratch_text(e, info.id), "D");
    EXPECT(ggfs_edits_scratch_at(e, 2, &info));
    EXPECT_STR(info.name, ".a");
    EXPECT_EQ(info.id, c);
    EXPECT_STR(scratch_text(e, c), "C");
    EXPECT(!ggfs_edits_scratch_at(e, 3, &info));

    // The target after the source.
    EXPECT_EQ(rename_(e, ".b", ".a", false, ids, &changed), 0);
    EXPECT_EQ(ids[1], c);
    EXPECT(ggfs_edits_scratch_at(e, 0, &info));
    EXPECT_STR(info.name, ".d");
    EXPECT_EQ(info.id, d);
    EXPECT(ggfs_edits_scratch_at(e, 1, &info));
    EXPECT_STR(info.name, ".a");
    EXPECT_EQ(info.id, b);
    EXPECT_STR(scratch_text(e, b), "B");
    EXPECT(!ggfs_edits_scratch_at(e, 2, &info));

    // A key onto a scratch file replaces it.
    EXPECT_EQ(rename_(e, "general.url", ".a", false, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ids[0], ID_URL);
    EXPECT_EQ(ids[1], b);
    EXPECT(ggfs_edits_scratch_at(e, 1, &info));
    EXPECT_EQ(info.id, ID_URL);
    EXPECT_STR(scratch_text(e, ID_URL), "http://u\n");
    EXPECT(!ggfs_edits_scratch_at(e, 2, &info));
    ggfs_edits_close(e);
    return 1;
}

/* A model's own key may have a name tools give temporary files: it is a
 * key all the same, and a rename onto it replaces it. */
static int test_rename_onto_a_key_named_like_a_scratch_file(void)
{
    ggfs_model *m = small_model("tilde.gguf", 3, false, key_old_tilde);
    EXPECT(m);
    char why[256];
    ggfs_edits *e = ggfs_edits_open(m, NULL, why, sizeof why);
    EXPECT(e);
    uint64_t ids[2], id;
    bool changed;
    EXPECT_EQ(ggfs_edits_create(e, "x.old~", 6, false, &id), EEXIST);
    EXPECT_EQ(rename_(e, "general.name", "x.old~", true, ids, &changed), EEXIST);
    EXPECT_EQ(rename_(e, "general.name", "x.old~", false, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ids[0], 0);
    EXPECT_EQ(ids[1], 1);
    EXPECT_STR(names(e), "x.old~");
    EXPECT_STR(key_of(e, "x.old~").text, "orig\n");
    EXPECT_EQ(key_of(e, "x.old~").id, 0);
    ggfs_scratch_info info;
    EXPECT(!ggfs_edits_scratch_named(e, "x.old~", 6, &info)); // one file of that name
    ggfs_edits_close(e);
    ggfs_model_close(m);
    return 1;
}

/* ==== Write, create, unlink, type ==== */

static int test_write_parses_text_as_the_key_type(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    bool changed;
    EXPECT_EQ(ggfs_edits_write(e, ID_COUNT, "9\n", 2, &changed), 0);
    EXPECT(changed);
    EXPECT_EQ(ggfs_edits_generation(e), 1);
    EXPECT_STR(key_of(e, "x.count").text, "9\n");
    EXPECT_STR(key_of(e, "x.count").type, "u32");
    // The same text again changes nothing.
    EXPECT_EQ(ggfs_edits_write(e, ID_COUNT, "9\n", 2, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(ggfs_edits_generation(e), 1);
    g_log[0] = '\0';
    EXPECT_EQ(ggfs_edits_write(e, ID_COUNT, "abc\n", 4, &changed), EINVAL);
    EXPECT(!changed);
    EXPECT(logged("x.count") && logged("u32"));
    EXPECT_EQ(ggfs_edits_write(e, ID_COUNT, "4294967296\n", 11, &changed), EINVAL);
    EXPECT_STR(key_of(e, "x.count").text, "9\n");
    EXPECT_EQ(ggfs_edits_write(e, ID_LIST, "4\n5\n", 4, &changed), 0);
    EXPECT_STR(key_of(e, "x.list").text, "4\n5\n");
    EXPECT_EQ(ggfs_edits_write(e, ID_ALIGNMENT, "64\n", 3, &changed), EPERM);
    EXPECT_STR(key_of(e, "general.alignment").text, "32\n");
    // An id that is gone is ignored.
    EXPECT_EQ(ggfs_edits_write(e, 999, "1", 1, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(ggfs_edits_generation(e), 2);

    // A scratch file keeps its text as it is; the keys do not change.
    uint64_t sid;
    EXPECT_EQ(ggfs_edits_create(e, "x.count~", 8, false, &sid), 0);
    EXPECT_EQ(ggfs_edits_write(e, sid, "not a number", 12, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(ggfs_edits_generation(e), 2);
    EXPECT_STR(scratch_text(e, sid), "not a number");
    ggfs_scratch_info info;
    EXPECT(ggfs_edits_scratch_of(e, sid, &info));
    EXPECT_EQ(info.size, 12);
    ggfs_edits_close(e);
    return 1;
}

static int test_create_makes_scratch_files_keys_and_deleted_keys_again(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    EXPECT_EQ(ggfs_edits_first_new_id(e), N_KEYS);
    uint64_t id;
    EXPECT_EQ(ggfs_edits_create(e, ".x.swp", 6, false, &id), 0);
    EXPECT_EQ(id, N_KEYS);
    EXPECT_EQ(ggfs_edits_generation(e), 0);
    EXPECT_STR(names(e), MODEL_KEYS);
    ggfs_scratch_info info;
    EXPECT(ggfs_edits_scratch_named(e, ".x.swp", 6, &info));
    EXPECT_EQ(info.id, id);
    EXPECT_EQ(info.size, 0);

    EXPECT_EQ(ggfs_edits_create(e, "new.key", 7, false, &id), 0);
    EXPECT_EQ(id, N_KEYS + 1);
    EXPECT_EQ(ggfs_edits_generation(e), 1);
    key_state k = key_of(e, "new.key");
    EXPECT_STR(k.text, "\n");
    EXPECT_STR(k.type, "str");
    EXPECT_EQ(k.id, id);
    EXPECT_EQ(k.index, N_KEYS);

    EXPECT_EQ(ggfs_edits_create(e, "general.name", 12, false, &id), EEXIST);
    EXPECT_EQ(ggfs_edits_create(e, ".x.swp", 6, false, &id), EEXIST);
    EXPECT_EQ(ggfs_edits_create(e, "new.key", 7, false, &id), EEXIST);
    EXPECT_EQ(ggfs_edits_create(e, "general.alignment", 17, false, &id), EEXIST);
    EXPECT_EQ(ggfs_edits_create(e, "split.no", 8, false, &id), EPERM);
    EXPECT_EQ(ggfs_edits_create(e, "split.no~", 9, false, &id), 0); // a scratch name is no key
    EXPECT_EQ(ggfs_edits_create(e, "", 0, false, &id), EINVAL);
    EXPECT_EQ(ggfs_edits_generation(e), 1);

    // A deleted key of the model comes back where it was, as the model has it.
    uint64_t gone;
    EXPECT_EQ(unlink_(e, "general.url", &gone), 0);
    EXPECT_EQ(ggfs_edits_create(e, "general.url", 11, false, &id), 0);
    EXPECT_EQ(id, N_KEYS + 3); // after new.key and split.no~
    k = key_of(e, "general.url");
    EXPECT_STR(k.text, "http://u\n");
    EXPECT_EQ(k.index, 4);
    EXPECT_EQ(k.id, id);
    ggfs_edits_close(e);
    return 1;
}

static int test_unlink_deletes_keys_and_scratch_files(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    uint64_t id = 0;
    EXPECT_EQ(unlink_(e, "general.url", &id), 0);
    EXPECT_EQ(id, ID_URL);
    EXPECT_EQ(ggfs_edits_generation(e), 1);
    EXPECT_STR(names(e), "general.architecture,general.name,general.alignment,x.count,f.nan,f.one,x.list");
    EXPECT_EQ(unlink_(e, "general.url", &id), ENOENT);
    EXPECT_EQ(unlink_(e, "general.alignment", &id), EPERM);
    EXPECT(key_of(e, "general.alignment").found);
    // A key added, deleted and made again is a new key at the end.
    const uint64_t added = make(e, "a.k", "v");
    EXPECT_EQ(unlink_(e, "a.k", &id), 0);
    EXPECT_EQ(id, added);
    EXPECT(!key_of(e, "a.k").found);
    EXPECT_EQ(ggfs_edits_create(e, "a.k", 3, false, &id), 0);
    EXPECT(id != added);
    EXPECT_STR(key_of(e, "a.k").text, "\n");
    // A scratch file goes without changing the keys.
    const uint64_t sid = make(e, ".s", "text");
    const uint64_t gen = ggfs_edits_generation(e);
    EXPECT_EQ(unlink_(e, ".s", &id), 0);
    EXPECT_EQ(id, sid);
    EXPECT_EQ(ggfs_edits_generation(e), gen);
    ggfs_scratch_info info;
    EXPECT(!ggfs_edits_scratch_of(e, sid, &info));
    ggfs_edits_close(e);
    return 1;
}

static int test_set_type_reads_the_value_again(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    bool changed;
    // setfattr may pass a trailing newline or NUL.
    EXPECT_EQ(ggfs_edits_set_type(e, ID_COUNT, "u64\n\0", 5, &changed), 0);
    EXPECT(changed);
    EXPECT_STR(key_of(e, "x.count").type, "u64");
    EXPECT_STR(key_of(e, "x.count").text, "7\n");
    EXPECT_EQ(ggfs_edits_set_type(e, ID_COUNT, "str", 3, &changed), 0);
    EXPECT_STR(key_of(e, "x.count").type, "str");
    EXPECT_STR(key_of(e, "x.count").text, "7\n");
    EXPECT_EQ(ggfs_edits_set_type(e, ID_COUNT, "i8", 2, &changed), 0);
    EXPECT_STR(key_of(e, "x.count").type, "i8");
    const uint64_t gen = ggfs_edits_generation(e);
    EXPECT_EQ(gen, 3);
    EXPECT_EQ(ggfs_edits_set_type(e, ID_COUNT, "i8", 2, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(ggfs_edits_set_type(e, ID_NAME, "u32", 3, &changed), EINVAL);
    EXPECT(!changed);
    EXPECT_STR(key_of(e, "general.name").type, "str");
    EXPECT_EQ(ggfs_edits_set_type(e, ID_NAME, "nonsense", 8, &changed), EINVAL);
    EXPECT_EQ(ggfs_edits_set_type(e, ID_ALIGNMENT, "u64", 3, &changed), EPERM);
    EXPECT_EQ(ggfs_edits_set_type(e, 999, "u64", 3, &changed), ENOENT);
    EXPECT_EQ(ggfs_edits_generation(e), gen);

    // A key just made (an empty string) takes any type's zero.
    uint64_t id;
    EXPECT_EQ(ggfs_edits_create(e, "n.b", 3, false, &id), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, id, "bool", 4, &changed), 0);
    EXPECT_STR(key_of(e, "n.b").text, "false\n");
    EXPECT_EQ(ggfs_edits_create(e, "n.f", 3, false, &id), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, id, "f32", 3, &changed), 0);
    EXPECT_STR(key_of(e, "n.f").text, "0\n");
    EXPECT_EQ(ggfs_edits_create(e, "n.a", 3, false, &id), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, id, "arr[i32]", 8, &changed), 0);
    EXPECT_STR(key_of(e, "n.a").type, "arr[i32]");
    EXPECT_STR(key_of(e, "n.a").text, "");

    // A scratch file's type is kept for when it is renamed over a key.
    uint64_t sid;
    EXPECT_EQ(ggfs_edits_create(e, ".t", 2, false, &sid), 0);
    const uint64_t before = ggfs_edits_generation(e);
    EXPECT_EQ(ggfs_edits_set_type(e, sid, "arr[str]", 8, &changed), 0);
    EXPECT(!changed);
    EXPECT_EQ(ggfs_edits_generation(e), before);
    ggfs_scratch_info info;
    EXPECT(ggfs_edits_scratch_of(e, sid, &info));
    EXPECT_EQ(info.type.depth, 1);
    EXPECT_EQ(info.type.leaf, GGP_V_STRING);
    EXPECT_EQ(ggfs_edits_set_type(e, sid, "arr[", 4, &changed), EINVAL);
    ggfs_edits_close(e);
    return 1;
}

static int test_scratch_names(void)
{
    static const char *const yes[] = {".x", "a~", "a.swp", "a.swx", "a.tmp", "4913", "sedAb12Cd", "tmp.x",
                                      "tmpa_b12345"};
    static const char *const no[] = {"general.name", "4914", "sedAb12C", "sed-b12Cd", "tmp.", "tmpa_b1234",
                                     "tmpa-b12345", "a.swpx", ""};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        EXPECT(ggfs_edits_is_scratch_name(yes[i], strlen(yes[i])));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        EXPECT(!ggfs_edits_is_scratch_name(no[i], strlen(no[i])));
    EXPECT(ggfs_edits_is_protected("general.alignment", 17));
    EXPECT(ggfs_edits_is_protected("split.anything", 14));
    EXPECT(!ggfs_edits_is_protected("general.alignments", 18));
    EXPECT(!ggfs_edits_is_protected("split", 5));
    return 1;
}

/* ==== Views ==== */

static int test_each_change_makes_a_new_view_and_keeps_the_old(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    ggfs_view *v0 = ggfs_edits_view(e);
    EXPECT(v0 == &g_model->view); // nothing changed: the model's own
    EXPECT(!v0->edited);
    bool changed;
    EXPECT_EQ(ggfs_edits_write(e, ID_NAME, "first\n", 6, &changed), 0);
    ggfs_view *v1 = ggfs_edits_view(e);
    EXPECT(v1 != v0 && v1->edited);
    EXPECT_EQ(v1->version, 1);
    EXPECT_EQ(ggfs_edits_write(e, ID_NAME, "second\n", 7, &changed), 0);
    ggfs_view *v2 = ggfs_edits_view(e);
    EXPECT_EQ(v2->version, 2);
    // A view handed out never changes.
    const ggp_kv *kv = ggp_kv_find(v1->keys, "general.name", 12);
    EXPECT(kv);
    const ggp_str s1 = ggp_value_str(v1->keys, &kv->value);
    EXPECT(s1.len == 5 && memcmp(s1.ptr, "first", 5) == 0);
    kv = ggp_kv_find(v0->keys, "general.name", 12);
    EXPECT(ggp_value_str(v0->keys, &kv->value).len == 4);

    // model.gguf of a single file: the edited header, padded, then the
    // same data section, whose bytes keep their offsets from its start.
    const ggp_file *shard = g_model->shards[0].file;
    EXPECT(v2->gguf.bytes == v2->keys_header);
    EXPECT_EQ(v2->gguf.data_offset % 32, 0);
    EXPECT(v2->gguf.data_offset >= v2->gguf.len);
    EXPECT_EQ(v2->gguf.size - v2->gguf.data_offset, ggp_file_size(shard) - ggfs_data_start(shard));
    EXPECT_EQ(v2->keys_file_size, v2->gguf.size);
    EXPECT_EQ(v2->gguf.len, ggp_header_end(shard) + 2); // "orig" became "second"
    EXPECT_EQ(ggp_tensor_count(v2->keys), 1);
    EXPECT_EQ(ggp_tensor_at(v2->keys, 0)->offset - ggp_data_offset(v2->keys), 0);
    ggfs_view_put(v0);
    ggfs_view_put(v1);
    ggfs_view_put(v2);
    ggfs_edits_close(e);
    return 1;
}

/* Readers taking views while changes are made: each view, whatever its
 * version, holds the value of that version whole. */
#define N_CHANGES 200
#define N_READERS 4

typedef struct view_reader {
    pthread_t thread;
    ggfs_edits *e;
    atomic_bool *done;
    unsigned views, wrong;
} view_reader;

static void *read_views(void *arg)
{
    view_reader *r = arg;
    do {
        ggfs_view *v = ggfs_edits_view(r->e);
        const ggp_kv *kv = ggp_kv_find(v->keys, "general.name", 12);
        char want[32];
        if (v->version == 0)
            snprintf(want, sizeof want, "orig");
        else
            snprintf(want, sizeof want, "n%llu", (unsigned long long)v->version);
        const ggp_str got = kv ? ggp_value_str(v->keys, &kv->value) : (ggp_str){"", 0};
        r->wrong += got.len != strlen(want) || memcmp(got.ptr, want, got.len) != 0;
        r->views++;
        ggfs_view_put(v);
    } while (!atomic_load(r->done));
    return NULL;
}

static int test_views_stay_whole_while_changes_are_made(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    atomic_bool done;
    atomic_init(&done, false);
    view_reader readers[N_READERS];
    for (int i = 0; i < N_READERS; i++) {
        readers[i] = (view_reader){.e = e, .done = &done};
        EXPECT_EQ(pthread_create(&readers[i].thread, NULL, read_views, &readers[i]), 0);
    }
    int failed = 0;
    for (unsigned k = 1; k <= N_CHANGES && !failed; k++) {
        char text[32];
        const int n = snprintf(text, sizeof text, "n%u\n", k);
        bool changed;
        failed = ggfs_edits_write(e, ID_NAME, text, (size_t)n, &changed) != 0 || !changed;
    }
    atomic_store(&done, true);
    for (int i = 0; i < N_READERS; i++)
        pthread_join(readers[i].thread, NULL);
    EXPECT(!failed);
    EXPECT_EQ(ggfs_edits_generation(e), N_CHANGES);
    for (int i = 0; i < N_READERS; i++) {
        EXPECT(readers[i].views > 0);
        EXPECT_EQ(readers[i].wrong, 0);
    }
    EXPECT_STR(key_of(e, "general.name").text, "n200\n");
    ggfs_edits_close(e);
    return 1;
}

/* ==== Limits ==== */

static int test_limits_of_one_value_and_of_all(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    const size_t max = (size_t)GGFS_EDIT_VALUE_MAX;
    char *big = malloc(max + 1);
    EXPECT(big);
    memset(big, 'x', max + 1);
    bool changed;
    EXPECT_EQ(ggfs_edits_write(e, ID_NAME, big, max + 1, &changed), EFBIG);
    EXPECT_STR(key_of(e, "general.name").text, "orig\n");
    // Scratch files: one value at most, and 64 MiB over all.
    uint64_t ids[4];
    const char *const scratch[4] = {".s0", ".s1", ".s2", ".s3"};
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(ggfs_edits_create(e, scratch[i], 3, false, &ids[i]), 0);
    EXPECT_EQ(ggfs_edits_write(e, ids[0], big, max + 1, &changed), EFBIG);
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(ggfs_edits_write(e, ids[i], big, max, &changed), 0);
    g_log[0] = '\0';
    EXPECT_EQ(ggfs_edits_write(e, ids[3], big, max, &changed), ENOSPC);
    EXPECT(logged(".s3"));
    ggfs_scratch_info info;
    EXPECT(ggfs_edits_scratch_of(e, ids[3], &info));
    EXPECT_EQ(info.size, 0);
    // Giving one back makes room again.
    EXPECT_EQ(ggfs_edits_write(e, ids[0], "", 0, &changed), 0);
    EXPECT_EQ(ggfs_edits_write(e, ids[3], big, max, &changed), 0);
    free(big);

    // Keys count with the scratch files: with three of 16 MiB held, no
    // key may take 16 MiB more.
    const size_t len = max - 16; // its encoding, with the length field, fits one value too
    char *text = malloc(len);
    EXPECT(text);
    memset(text, 'k', len - 1);
    text[len - 1] = '\n';
    const uint64_t gen = ggfs_edits_generation(e);
    EXPECT_EQ(ggfs_edits_write(e, ID_URL, text, len, &changed), ENOSPC);
    EXPECT(!changed);
    EXPECT_EQ(ggfs_edits_generation(e), gen);
    EXPECT_STR(key_of(e, "general.url").text, "http://u\n");
    EXPECT_EQ(ggfs_edits_write(e, ids[1], "", 0, &changed), 0);
    EXPECT_EQ(ggfs_edits_write(e, ID_URL, text, len, &changed), 0);
    EXPECT(changed);
    ggfs_view *v;
    EXPECT_EQ(value_bytes(e, &v, "general.url").len, 8 + len - 1);
    ggfs_view_put(v);
    free(text);

    // Text of files open for writing, apart.
    EXPECT(ggfs_edits_reserve(e, (int64_t)GGFS_EDIT_TOTAL_MAX));
    EXPECT(!ggfs_edits_reserve(e, 1));
    EXPECT(ggfs_edits_reserve(e, -10));
    EXPECT(ggfs_edits_reserve(e, 10));
    EXPECT(!ggfs_edits_reserve(e, 1));
    EXPECT(ggfs_edits_reserve(e, -(int64_t)GGFS_EDIT_TOTAL_MAX));
    ggfs_edits_close(e);
    return 1;
}

static int test_limit_of_array_elements(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    // GGFS_EDIT_ELEMENTS_MAX + 1 elements of one byte: "0\n" each.
    const size_t n = (size_t)GGFS_EDIT_ELEMENTS_MAX + 1;
    char *text = malloc(2 * n);
    EXPECT(text);
    for (size_t i = 0; i < n; i++)
        memcpy(text + 2 * i, "0\n", 2);
    uint64_t id;
    bool changed;
    EXPECT_EQ(ggfs_edits_create(e, "n.bytes", 7, false, &id), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, id, "arr[u8]", 7, &changed), 0);
    g_log[0] = '\0';
    EXPECT_EQ(ggfs_edits_write(e, id, text, 2 * n, &changed), EFBIG);
    EXPECT(logged("n.bytes") && logged("elements"));
    // Two halves fit one by one, not together.
    const size_t half = n / 2 + 1;
    uint64_t id2;
    EXPECT_EQ(ggfs_edits_write(e, id, text, 2 * half, &changed), 0);
    EXPECT_EQ(ggfs_edits_create(e, "n.more", 6, false, &id2), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, id2, "arr[u8]", 7, &changed), 0);
    EXPECT_EQ(ggfs_edits_write(e, id2, text, 2 * half, &changed), ENOSPC);
    EXPECT_STR(key_of(e, "n.more").text, "");
    free(text);
    ggfs_edits_close(e);
    return 1;
}

/* Edits of a model in version 1 (32-bit lengths) and of a big-endian one:
 * names are read back from the keys' own bytes in that format. */
static int test_edits_in_other_formats(void)
{
    static const struct {
        uint32_t version;
        bool big;
    } formats[] = {{1, false}, {2, true}, {3, true}};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%zu.gguf", i);
        ggfs_model *m = small_model(name, formats[i].version, formats[i].big, key_count);
        EXPECT(m);
        char why[256];
        ggfs_edits *e = ggfs_edits_open(m, NULL, why, sizeof why);
        EXPECT(e);
        bool changed;
        uint64_t ids[2], id;
        EXPECT_EQ(ggfs_edits_write(e, 1, "258\n", 4, &changed), 0);
        EXPECT_EQ(ggfs_edits_create(e, "new.key", 7, false, &id), 0);
        EXPECT_EQ(ggfs_edits_write(e, id, "a value", 7, &changed), 0);
        EXPECT_EQ(rename_(e, "general.name", "general.title", false, ids, &changed), 0);
        EXPECT_EQ(rename_(e, "new.key", "x.count", false, ids, &changed), EINVAL);
        EXPECT_STR(names(e), "x.count,new.key,general.title");
        EXPECT_STR(key_of(e, "x.count").text, "258\n");
        EXPECT_STR(key_of(e, "new.key").text, "a value\n");
        EXPECT_STR(key_of(e, "general.title").text, "orig\n");
        ggfs_view *v = ggfs_edits_view(e);
        EXPECT_EQ(ggp_version(v->keys), formats[i].version);
        EXPECT_EQ(ggp_byte_order_of(v->keys), formats[i].big ? GGP_BIG : GGP_LITTLE);
        ggfs_view_put(v);
        ggfs_edits_close(e);
        ggfs_model_close(m);
    }
    return 1;
}

/* An empty array of arrays has no known leaf type ("arr[arr]"): a key of
 * it renamed is saved as such and read back at the next open. */
static int test_array_of_unknown_leaf_is_saved_and_read_back(void)
{
    ggfs_model *m = small_model("nested.gguf", 3, false, key_nested);
    EXPECT(m);
    char edits[4200];
    snprintf(edits, sizeof edits, "%s/nested.json", g_root);
    char why[512] = "";
    ggfs_edits *e = ggfs_edits_open(m, edits, why, sizeof why);
    EXPECT(e);
    EXPECT_STR(key_of(e, "x.nested").type, "arr[arr]");
    EXPECT_STR(key_of(e, "x.nested").text, "");
    bool changed;
    uint64_t ids[2];
    EXPECT_EQ(ggfs_edits_write(e, 1, "[1]\n", 4, &changed), EINVAL); // no leaf to read 1 as
    EXPECT_EQ(rename_(e, "x.nested", "y.nested", false, ids, &changed), 0);
    EXPECT(changed);
    EXPECT_STR(key_of(e, "y.nested").type, "arr[arr]");
    ggfs_edits_close(e);
    e = ggfs_edits_open(m, edits, why, sizeof why);
    if (!e)
        fprintf(stderr, "reopening: %s\n", why);
    EXPECT(e);
    EXPECT_STR(names(e), "general.name,y.nested");
    EXPECT_STR(key_of(e, "y.nested").type, "arr[arr]");
    EXPECT_STR(key_of(e, "y.nested").text, "");
    ggfs_edits_close(e);
    ggfs_model_close(m);
    return 1;
}

/* ==== The file of edits ==== */

static bool read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    const size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return true;
}

static int count_entries(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

static int test_edits_file_is_saved_and_read_back(void)
{
    char *dir = tmptree_new();
    EXPECT(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/edits.json", dir);
    ggfs_edits *e = open_edits(path);
    EXPECT(e);
    struct stat st;
    EXPECT(stat(path, &st) != 0); // made at the first change
    bool changed;
    uint64_t id;
    EXPECT_EQ(ggfs_edits_write(e, ID_NAME, "Fixed\n", 6, &changed), 0);
    EXPECT_EQ(stat(path, &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600);
    EXPECT_EQ(ggfs_edits_set_type(e, ID_COUNT, "u64", 3, &changed), 0);
    EXPECT_EQ(unlink_(e, "general.url", &id), 0);
    EXPECT(make(e, "new.key", "v\n") != NONE);
    EXPECT(make(e, ".scratch.swp", "never saved") != NONE);
    // An existing file keeps its mode.
    EXPECT_EQ(chmod(path, 0644), 0);
    EXPECT_EQ(ggfs_edits_write(e, ID_LIST, "5\n", 2, &changed), 0);
    EXPECT_EQ(stat(path, &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644);
    char want[1024];
    snprintf(want, sizeof want, "%s", names(e));
    ggfs_edits_close(e);
    EXPECT_EQ(count_entries(dir), 1); // no temporary left beside it

    static char text[8192];
    EXPECT(read_file(path, text, sizeof text));
    EXPECT(strstr(text, "\"format\": \"gguf-fs edits 1\""));
    EXPECT(strstr(text, "{\"key\": \"general.name\", \"type\": \"str\", \"value\": \"Fixed\"}"));
    EXPECT(strstr(text, "{\"key\": \"x.count\", \"type\": \"u64\", \"was\": \"u32\", \"value\": 7}"));
    EXPECT(strstr(text, "\"general.url\""));
    EXPECT(!strstr(text, "scratch"));
    char why[256];
    ggfs_edits_loaded loaded;
    EXPECT_EQ(ggfs_edits_file_load(path, &loaded, why, sizeof why), 0);
    EXPECT_EQ(loaded.n_keys, 4); // general.name, x.count, x.list, new.key
    EXPECT_EQ(loaded.n_deleted, 1);
    EXPECT(loaded.keys[3].name_len == 7 && memcmp(loaded.keys[3].name, "new.key", 7) == 0);
    EXPECT(loaded.keys[1].retyped);
    EXPECT_EQ(loaded.keys[1].was.leaf, GGP_V_U32);
    ggfs_edits_loaded_free(&loaded);

    // The next open reads them back.
    e = open_edits(path);
    EXPECT(e);
    EXPECT_STR(names(e), want);
    EXPECT_STR(key_of(e, "general.name").text, "Fixed\n");
    EXPECT_STR(key_of(e, "x.count").type, "u64");
    EXPECT_STR(key_of(e, "x.count").text, "7\n");
    EXPECT_STR(key_of(e, "x.list").text, "5\n");
    EXPECT_STR(key_of(e, "new.key").text, "v\n");
    EXPECT(!key_of(e, "general.url").found);
    ggfs_scratch_info info;
    EXPECT(!ggfs_edits_scratch_at(e, 0, &info));
    ggfs_edits_close(e);
    tmptree_free(dir);
    return 1;
}

/* Bytes JSON cannot hold (not UTF-8), in a value and in a name, are
 * saved escaped and read back as they were. */
static int test_edits_file_keeps_bytes_that_are_not_utf8(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/bytes.json", g_root);
    ggfs_edits *e = open_edits(path);
    EXPECT(e);
    bool changed;
    uint64_t id;
    static const char value[] = "\xff\xfe ok\tand\\n\n";
    EXPECT_EQ(ggfs_edits_write(e, ID_NAME, value, sizeof value - 1, &changed), 0);
    EXPECT_EQ(ggfs_edits_create(e, "k\xff.x", 4, false, &id), 0);
    EXPECT_EQ(ggfs_edits_write(e, id, "v\x80\n", 3, &changed), 0);
    EXPECT_EQ(unlink_(e, "general.url", &id), 0);
    ggfs_edits_close(e);
    static char text[4096];
    EXPECT(read_file(path, text, sizeof text));
    EXPECT(strstr(text, "\"escaped\": "));
    EXPECT(strstr(text, "\"key_escaped\": \"k\\\\xff.x\""));
    e = open_edits(path);
    EXPECT(e);
    EXPECT_STR(key_of(e, "general.name").text, value);
    EXPECT_STR(key_of(e, "k\xff.x").text, "v\x80\n");
    EXPECT(!key_of(e, "general.url").found);
    ggfs_edits_close(e);
    return 1;
}

/* Opening with a file that is no edits, or not of this model, fails with
 * one line naming the file and the key. */
static int test_edits_file_that_does_not_fit_is_refused(void)
{
    char *dir = tmptree_new();
    EXPECT(dir);
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"garbage", "edits.json"},
        {"{\"format\": \"gguf-fs edits 1\", \"keys\": [], \"deleted\": [\"no.such\"]}", "no.such"},
        {"{\"format\": \"gguf-fs edits 1\", \"keys\": [{\"key\": \"general.alignment\", \"type\": \"u32\", "
         "\"value\": 64}], \"deleted\": []}",
         "general.alignment"},
        {"{\"format\": \"gguf-fs edits 1\", \"keys\": [{\"key\": \"x.count\", \"type\": \"str\", \"value\": \"a\"}], "
         "\"deleted\": []}",
         "x.count"},
        {"{\"format\": \"gguf-fs edits 1\", \"keys\": [{\"key\": \"x.count\", \"type\": \"u32\", \"value\": -1}], "
         "\"deleted\": []}",
         "x.count"},
    };
    char path[4200];
    snprintf(path, sizeof path, "%s/edits.json", dir);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        EXPECT(tmptree_text(dir, "edits.json", bad[i].text));
        char why[512] = "";
        ggfs_edits *e = ggfs_edits_open(g_model, path, why, sizeof why);
        if (e) {
            fprintf(stderr, "edits file %zu was not refused\n", i);
            ggfs_edits_close(e);
            return 0;
        }
        if (!strstr(why, bad[i].says) || !strstr(why, path)) {
            fprintf(stderr, "edits file %zu: \"%s\" does not name %s and the file\n", i, why, bad[i].says);
            return 0;
        }
    }
    // An empty file is no edits yet.
    EXPECT(tmptree_text(dir, "edits.json", ""));
    ggfs_edits *e = open_edits(path);
    EXPECT(e);
    EXPECT_STR(names(e), MODEL_KEYS);
    ggfs_edits_close(e);
    tmptree_free(dir);
    return 1;
}

/* A change whose saving fails is not made. */
static int test_failed_save_leaves_everything_as_it_was(void)
{
    char *dir = tmptree_new();
    EXPECT(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/missing/edits.json", dir);
    ggfs_edits *e = open_edits(path);
    EXPECT(e);
    bool changed = true;
    uint64_t id;
    EXPECT(ggfs_edits_write(e, ID_NAME, "new\n", 4, &changed) != 0);
    EXPECT(!changed);
    EXPECT(ggfs_edits_create(e, "new.key", 7, false, &id) != 0);
    EXPECT(unlink_(e, "general.url", &id) != 0);
    EXPECT_EQ(ggfs_edits_generation(e), 0);
    EXPECT_STR(names(e), MODEL_KEYS);
    EXPECT_STR(key_of(e, "general.name").text, "orig\n");
    // Scratch files are never saved: they are made all the same.
    EXPECT_EQ(ggfs_edits_create(e, ".s", 2, false, &id), 0);
    ggfs_edits_close(e);
    tmptree_free(dir);
    return 1;
}

/* ==== Files an open makes: pending until their text takes ==== */

static bool is_pending(ggfs_edits *e, const char *name)
{
    ggfs_scratch_info info;
    return ggfs_edits_scratch_named(e, name, strlen(name), &info);
}

static int test_a_file_an_open_makes_is_a_key_only_once_its_text_takes(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    const uint64_t gen = ggfs_edits_generation(e);
    uint64_t id;
    bool changed;
    // Refused, it goes: no key, no view made.
    EXPECT_EQ(ggfs_edits_create(e, "new.k", 5, true, &id), 0);
    EXPECT(is_pending(e, "new.k"));
    EXPECT(!key_of(e, "new.k").found);
    EXPECT_EQ(ggfs_edits_settle(e, id, "x\n", 2, true, &changed), 0);
    EXPECT(!changed);
    EXPECT(!is_pending(e, "new.k"));
    EXPECT_STR(names(e), MODEL_KEYS);
    EXPECT_EQ(ggfs_edits_generation(e), gen);
    // Its first text that takes makes the key, with the file's id; the
    // release then leaves it.
    EXPECT_EQ(ggfs_edits_create(e, "new.k", 5, true, &id), 0);
    EXPECT_EQ(ggfs_edits_write(e, id, "hello\n", 6, &changed), 0);
    EXPECT(changed);
    EXPECT(!is_pending(e, "new.k"));
    key_state k = key_of(e, "new.k");
    EXPECT(k.found);
    EXPECT_EQ(k.id, id);
    EXPECT_STR(k.text, "hello\n");
    EXPECT_EQ(ggfs_edits_settle(e, id, "other\n", 6, true, &changed), 0);
    EXPECT(!changed);
    EXPECT_STR(key_of(e, "new.k").text, "hello\n");
    // Typed before its text: a text that does not fit keeps it pending,
    // and the failed open's release takes it away.
    EXPECT_EQ(ggfs_edits_create(e, "new.u8", 6, true, &id), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, id, "u8", 2, &changed), 0);
    EXPECT_EQ(ggfs_edits_write(e, id, "300\n", 4, &changed), EINVAL);
    EXPECT(is_pending(e, "new.u8"));
    EXPECT_EQ(ggfs_edits_settle(e, id, "300\n", 4, true, &changed), 0);
    EXPECT(!is_pending(e, "new.u8") && !key_of(e, "new.u8").found);
    // Released empty (touch), after setfattr typed it: the type's zero.
    EXPECT_EQ(ggfs_edits_create(e, "new.t", 5, true, &id), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, id, "u32", 3, &changed), 0);
    EXPECT_EQ(ggfs_edits_settle(e, id, "", 0, false, &changed), 0);
    EXPECT(changed);
    k = key_of(e, "new.t");
    EXPECT_STR(k.text, "0\n");
    EXPECT_STR(k.type, "u32");
    // A text the release brings that does not fit: gone, and said so.
    EXPECT_EQ(ggfs_edits_create(e, "new.v", 5, true, &id), 0);
    EXPECT_EQ(ggfs_edits_set_type(e, id, "u8", 2, &changed), 0);
    EXPECT_EQ(ggfs_edits_settle(e, id, "999\n", 4, false, &changed), EINVAL);
    EXPECT(!is_pending(e, "new.v") && !key_of(e, "new.v").found);
    EXPECT_STR(names(e), "general.architecture,general.name,general.alignment,x.count,general.url,f.nan,f.one,"
                         "x.list,new.k,new.t");
    ggfs_edits_close(e);
    return 1;
}

static int test_a_deleted_key_made_again_by_an_open_comes_back_only_with_its_text(void)
{
    ggfs_edits *e = open_edits(NULL);
    EXPECT(e);
    uint64_t id;
    bool changed;
    EXPECT_EQ(ggfs_edits_unlink(e, "x.count", 7, &id), 0);
    EXPECT_EQ(ggfs_edits_create(e, "x.count", 7, true, &id), 0);
    EXPECT(!key_of(e, "x.count").found);
    EXPECT_EQ(ggfs_edits_write(e, id, "-1\n", 3, &changed), EINVAL); // the model's type: u32
    EXPECT_EQ(ggfs_edits_settle(e, id, "-1\n", 3, true, &changed), 0);
    EXPECT(!key_of(e, "x.count").found && !is_pending(e, "x.count"));
    EXPECT_EQ(ggfs_edits_create(e, "x.count", 7, true, &id), 0);
    EXPECT_EQ(ggfs_edits_write(e, id, "9\n", 2, &changed), 0);
    const key_state k = key_of(e, "x.count");
    EXPECT_STR(k.text, "9\n");
    EXPECT_STR(k.type, "u32");
    EXPECT_STR(names(e), MODEL_KEYS); // back where it was
    // A file renamed onto a pending name takes its place.
    uint64_t pid, ids[2];
    EXPECT_EQ(ggfs_edits_create(e, "new.p", 5, true, &pid), 0);
    EXPECT_EQ(rename_(e, "general.url", "new.p", true, ids, &changed), EEXIST);
    EXPECT_EQ(rename_(e, "general.url", "new.p", false, ids, &changed), 0);
    EXPECT_EQ(ids[1], pid);
    EXPECT(!is_pending(e, "new.p"));
    EXPECT_STR(key_of(e, "new.p").text, "http://u\n");
    ggfs_edits_close(e);
    return 1;
}

int main(void)
{
    ggfs_log_set_sink(capture);
    g_root = tmptree_new();
    gguf_writer w;
    write_model(&w);
    const bool written = g_root && tmptree_file(g_root, "m.gguf", w.b, w.n);
    gw_free(&w);
    if (!written)
        return 1;
    char path[4200];
    snprintf(path, sizeof path, "%s/m.gguf", g_root);
    ggfs_model_error err;
    g_model = ggfs_model_open(path, NULL, &err);
    if (!g_model) {
        fprintf(stderr, "%s: offset %llu: %s\n", err.where, (unsigned long long)err.error.offset, err.error.msg);
        return 1;
    }
    int ok = test_rename_key_onto_key_takes_its_place_with_its_own_id();
    ok &= test_rename_onto_key_reads_text_as_its_type();
    ok &= test_rename_onto_key_of_same_type_keeps_the_bytes();
    ok &= test_rename_refuses_text_that_does_not_fit();
    ok &= test_rename_onto_deleted_key_brings_it_back_where_it_was();
    ok &= test_rename_onto_scratch_name_makes_key_a_scratch_file();
    ok &= test_rename_onto_new_name_moves_key_to_the_end();
    ok &= test_rename_no_replace_refuses_existing_files();
    ok &= test_rename_refuses_protected_keys();
    ok &= test_rename_of_nothing_and_to_itself();
    ok &= test_rename_among_added_keys();
    ok &= test_rename_among_scratch_files();
    ok &= test_rename_onto_a_key_named_like_a_scratch_file();
    ok &= test_write_parses_text_as_the_key_type();
    ok &= test_create_makes_scratch_files_keys_and_deleted_keys_again();
    ok &= test_unlink_deletes_keys_and_scratch_files();
    ok &= test_set_type_reads_the_value_again();
    ok &= test_scratch_names();
    ok &= test_each_change_makes_a_new_view_and_keeps_the_old();
    ok &= test_views_stay_whole_while_changes_are_made();
    ok &= test_limits_of_one_value_and_of_all();
    ok &= test_limit_of_array_elements();
    ok &= test_edits_in_other_formats();
    ok &= test_array_of_unknown_leaf_is_saved_and_read_back();
    ok &= test_edits_file_is_saved_and_read_back();
    ok &= test_edits_file_keeps_bytes_that_are_not_utf8();
    ok &= test_edits_file_that_does_not_fit_is_refused();
    ok &= test_failed_save_leaves_everything_as_it_was();
    ok &= test_a_file_an_open_makes_is_a_key_only_once_its_text_takes();
    ok &= test_a_deleted_key_made_again_by_an_open_comes_back_only_with_its_text();
    ggfs_model_close(g_model);
    tmptree_free(g_root);
    printf("edits: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
