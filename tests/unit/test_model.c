/*
 * A model (fs/model/model.c) and its model.gguf (merged.c): a split set
 * opened from any of its shards, its tensors numbered across them, each
 * way the set is refused with the message and offset it must give; and
 * model.gguf of a split set, as edited and not, read piece by piece and
 * compared byte for byte with the file ggml's writer would make, written
 * here field by field (gguf_writer.h).
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gguf_writer.h"
#include "model/edits.h"
#include "model/model.h"

#define ALIGN 32

/* ==== A split set of two shards ==== */

/* Tensors a (3 floats) and b (5) in shard 1, c (2) in shard 2. */
static const char *const NAMES[] = {"a", "b", "c"};
static const uint64_t LENS[] = {3, 5, 2};
static const uint32_t SHARD_OF[] = {0, 0, 1};

typedef struct set_opts {
    uint32_t no[3];        // each shard's split.no
    uint32_t count;        // split.count in each
    int32_t total;         // split.tensors.count
    const char *c_name;    // the name of tensor c
    const uint32_t *shard_of; // each tensor's shard (NULL: SHARD_OF)
    uint32_t files;        // shards written (0: 2)
} set_opts;

static const set_opts GOOD = {{0, 1}, 2, 3, "c", NULL, 0};

static float value_of(uint64_t tensor, uint64_t i)
{
    return (float)(100 * (tensor + 1) + i);
}

static void write_shard(gguf_writer *w, const set_opts *o, uint32_t k)
{
    const uint32_t *shard_of = o->shard_of ? o->shard_of : SHARD_OF;
    uint64_t n = 0;
    for (int t = 0; t < 3; t++)
        n += shard_of[t] == k;
    gw_begin(w, 3, false, n, k == 0 ? 4 : 3);
    if (k == 0)
        gw_kv_str(w, "general.architecture", "llama");
    gw_kv_int(w, "split.no", GW_U16, o->no[k], 2);
    gw_kv_int(w, "split.count", GW_U16, o->count, 2);
    gw_kv_int(w, "split.tensors.count", GW_I32, (uint64_t)(uint32_t)o->total, 4);
    uint64_t at = 0;
    for (int t = 0; t < 3; t++) {
        if (shard_of[t] != k)
            continue;
        gw_tensor(w, t == 2 ? o->c_name : NAMES[t], 1, &LENS[t], GW_TENSOR_F32, at);
        at += (LENS[t] * 4 + ALIGN - 1) / ALIGN * ALIGN;
    }
    gw_pad(w, ALIGN);
    for (int t = 0; t < 3; t++) {
        if (shard_of[t] != k)
            continue;
        for (uint64_t i = 0; i < LENS[t]; i++) {
            const float v = value_of((uint64_t)t, i);
            gw_bytes(w, &v, 4);
        }
        gw_pad(w, ALIGN);
    }
}

/* Writes dir/s-0000K-of-0000N.gguf for each shard. */
static bool write_set(const char *dir, const set_opts *o)
{
    const uint32_t files = o->files ? o->files : 2;
    for (uint32_t k = 0; k < files; k++) {
        gguf_writer w;
        write_shard(&w, o, k);
        char name[64];
        snprintf(name, sizeof name, "s-%05u-of-%05u.gguf", k + 1, files);
        const bool ok = tmptree_file(dir, name, w.b, w.n);
        gw_free(&w);
        if (!ok)
            return false;
    }
    return true;
}

/* model.gguf as ggml's writer makes it from the set: shard 1's keys but
 * split.*, with general.architecture = arch, and every tensor, each
 * tensor's data padded to the alignment. */
static void write_merged(gguf_writer *w, const char *arch)
{
    gw_begin(w, 3, false, 3, 1);
    gw_kv_str(w, "general.architecture", arch);
    uint64_t at = 0;
    for (int t = 0; t < 3; t++) {
        gw_tensor(w, NAMES[t], 1, &LENS[t], GW_TENSOR_F32, at);
        at += (LENS[t] * 4 + ALIGN - 1) / ALIGN * ALIGN;
    }
    gw_pad(w, ALIGN);
    for (int t = 0; t < 3; t++) {
        for (uint64_t i = 0; i < LENS[t]; i++) {
            const float v = value_of((uint64_t)t, i);
            gw_bytes(w, &v, 4);
        }
        gw_pad(w, ALIGN);
    }
}

static ggfs_model *open_shard(const char *dir, const char *name, ggfs_model_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return ggfs_model_open(path, NULL, err);
}

/* Every byte of model.gguf at every offset, from its pieces, equals want. */
static int pieces_are(ggfs_model *m, const ggfs_gguf_head *edited, const gguf_writer *want)
{
    const uint64_t size = edited ? edited->size : m->merged.size;
    EXPECT_EQ(size, want->n);
    for (uint64_t off = 0; off < size; off++) {
        ggfs_piece p;
        EXPECT(ggfs_merged_piece(&m->merged, edited, off, &p));
        EXPECT(p.len > 0 && off + p.len <= size);
        for (uint64_t i = 0; i < p.len; i++) {
            uint8_t byte = 0;
            if (p.kind == GGFS_PIECE_HEADER)
                byte = p.bytes[i];
            else if (p.kind == GGFS_PIECE_SHARD)
                byte = m->shards[p.shard].source->map[p.at + i];
            if (byte != want->b[off + i]) {
                fprintf(stderr, "model.gguf byte %llu (piece at %llu, kind %d): %u, expected %u\n",
                        (unsigned long long)(off + i), (unsigned long long)off, (int)p.kind, byte,
                        want->b[off + i]);
                return 0;
            }
        }
    }
    return 1;
}

/* ==== Tests ==== */

static int test_any_shard_opens_the_whole_set(void)
{
    char *dir = tmptree_new();
    EXPECT(dir && write_set(dir, &GOOD));
    for (int k = 0; k < 2; k++) {
        ggfs_model_error err;
        ggfs_model *m = open_shard(dir, k == 0 ? "s-00001-of-00002.gguf" : "s-00002-of-00002.gguf", &err);
        EXPECT(m);
        EXPECT_EQ(m->n_shards, 2);
        EXPECT(ggfs_model_is_split(m));
        EXPECT_EQ(m->n_tensors, 3);
        EXPECT_EQ(m->total_size, m->shards[0].source->size + m->shards[1].source->size);
        EXPECT_STR(m->shards[0].file_name, "s-00001-of-00002.gguf");
        EXPECT_STR(m->shards[1].file_name, "s-00002-of-00002.gguf");
        EXPECT_EQ(m->shards[1].first_tensor, 2);
        // The keys are shard 1's.
        EXPECT(ggfs_model_keys(m) == m->shards[0].file);
        EXPECT(ggp_kv_find(ggfs_model_keys(m), "general.architecture", 20));
        for (uint64_t t = 0; t < 3; t++) {
            uint32_t shard = 99;
            const ggp_tensor *tensor = ggfs_model_tensor(m, t, &shard);
            EXPECT(tensor);
            EXPECT_EQ(shard, SHARD_OF[t]);
            EXPECT(tensor->name.len == 1 && tensor->name.ptr[0] == NAMES[t][0]);
            EXPECT_EQ(ggfs_model_tensor_find(m, NAMES[t], 1), t);
        }
        uint32_t shard;
        EXPECT(!ggfs_model_tensor(m, 3, &shard));
        EXPECT_EQ(ggfs_model_tensor_find(m, "zz", 2), UINT64_MAX);
        ggfs_model_close(m);
    }
    tmptree_free(dir);
    return 1;
}

static int test_key_int_reads_any_integer(void)
{
    char *dir = tmptree_new();
    EXPECT(dir && write_set(dir, &(set_opts){{0, 1}, 2, -5, "c", NULL, 0}));
    char path[4200];
    snprintf(path, sizeof path, "%s/s-00001-of-00002.gguf", dir);
    ggp_error err;
    ggp_file *f = ggp_open(path, &err);
    EXPECT(f);
    int64_t v;
    uint64_t at;
    EXPECT(ggfs_model_key_int(f, "split.count", &v, &at));
    EXPECT_EQ(v, 2);
    EXPECT_EQ(at, ggp_kv_find(f, "split.count", 11)->value.offset);
    EXPECT(ggfs_model_key_int(f, "split.tensors.count", &v, &at));
    EXPECT(v == -5);
    EXPECT(!ggfs_model_key_int(f, "general.architecture", &v, &at)); // a string
    EXPECT(!ggfs_model_key_int(f, "no.such", &v, &at));
    ggp_close(f);
    tmptree_free(dir);
    return 1;
}

/* Opening the set from shard `open` after breaking it: refused, naming
 * where (a file), at offset, with words. */
static int refused(const set_opts *o, const char *remove, const char *open, const char *where, bool at_count,
                   const char *words)
{
    char *dir = tmptree_new();
    EXPECT(dir && write_set(dir, o));
    char path[4200];
    if (remove) {
        snprintf(path, sizeof path, "%s/%s", dir, remove);
        EXPECT_EQ(unlink(path), 0);
    }
    ggfs_model_error err;
    ggfs_model *m = open_shard(dir, open, &err);
    if (m) {
        fprintf(stderr, "opening %s was not refused (%s)\n", open, words);
        ggfs_model_close(m);
        return 0;
    }
    if (!strstr(err.error.msg, words) || !strstr(err.where, where)) {
        fprintf(stderr, "%s: %s: expected %s: %s\n", err.where, err.error.msg, where, words);
        return 0;
    }
    if (at_count) {
        // The offset is that of shard 1's split.count value.
        snprintf(path, sizeof path, "%s/s-00001-of-00002.gguf", dir);
        ggp_error e;
        ggp_file *f = ggp_open(path, &e);
        EXPECT(f);
        EXPECT_EQ(err.error.offset, ggp_kv_find(f, "split.count", 11)->value.offset);
        ggp_close(f);
    }
    tmptree_free(dir);
    return 1;
}

static int test_broken_sets_are_refused(void)
{
    int ok = refused(&GOOD, "s-00002-of-00002.gguf", "s-00001-of-00002.gguf", "s-00001-of-00002.gguf", true,
                     "split.count is 2, but shard 2, s-00002-of-00002.gguf, cannot be read");
    ok &= refused(&(set_opts){{0, 0}, 2, 3, "c", NULL, 0}, NULL, "s-00001-of-00002.gguf", "s-00002-of-00002.gguf", false,
                  "split.no is 0, the same as in s-00001-of-00002.gguf");
    ok &= refused(&(set_opts){{0, 3}, 2, 3, "c", NULL, 0}, NULL, "s-00001-of-00002.gguf", "s-00002-of-00002.gguf", false,
                  "split.no is 3, but the file name makes it shard 2 (split.no 1)");
    ok &= refused(&(set_opts){{0, 1}, 2, 4, "c", NULL, 0}, NULL, "s-00002-of-00002.gguf", "s-00001-of-00002.gguf", false,
                  "split.tensors.count is 4, but the 2 shards hold 3 tensors");
    ok &= refused(&(set_opts){{0, 1}, 2, 3, "a", NULL, 0}, NULL, "s-00001-of-00002.gguf", "s-00002-of-00002.gguf", false,
                  "tensor 'a' is also in s-00001-of-00002.gguf");
    ok &= refused(&(set_opts){{0, 1}, 3, 3, "c", NULL, 0}, NULL, "s-00001-of-00002.gguf", "s-00001-of-00002.gguf", true,
                  "split.count is 3, but the file name says 2 shards");
    EXPECT(ok);

    // A shard under another name is no shard.
    char *dir = tmptree_new();
    EXPECT(dir && write_set(dir, &GOOD));
    char from[4200], to[4200];
    snprintf(from, sizeof from, "%s/s-00001-of-00002.gguf", dir);
    snprintf(to, sizeof to, "%s/model.gguf", dir);
    EXPECT_EQ(rename(from, to), 0);
    ggfs_model_error err;
    EXPECT(!open_shard(dir, "model.gguf", &err));
    EXPECT(strstr(err.error.msg, "split.count is 2, but the file name does not end in -KKKKK-of-NNNNN.gguf"));
    // A file that is no GGUF, and none at all.
    EXPECT(tmptree_text(dir, "bad.gguf", "not a model"));
    EXPECT(!open_shard(dir, "bad.gguf", &err));
    EXPECT(err.error.code != GGP_OK);
    EXPECT(!open_shard(dir, "none.gguf", &err));
    EXPECT_EQ(err.error.code, GGP_ERR_IO);
    EXPECT(strstr(err.error.msg, "cannot open"));
    tmptree_free(dir);
    return 1;
}

static int test_merged_model_is_what_ggml_writes(void)
{
    char *dir = tmptree_new();
    EXPECT(dir && write_set(dir, &GOOD));
    ggfs_model_error err;
    ggfs_model *m = open_shard(dir, "s-00002-of-00002.gguf", &err);
    EXPECT(m);
    gguf_writer want;
    write_merged(&want, "llama");
    EXPECT(m->merged.available);
    EXPECT_EQ(m->merged.data_offset % ALIGN, 0);
    EXPECT_EQ(m->merged.data_size, 3 * ALIGN);
    EXPECT_EQ(m->merged.data_at[0], 0);
    EXPECT_EQ(m->merged.data_at[1], ALIGN);
    EXPECT_EQ(m->merged.data_at[2], 2 * ALIGN);
    EXPECT_EQ(m->merged.size, want.n);
    const int same = pieces_are(m, NULL, &want);
    EXPECT(same);
    const uint8_t *header = ggfs_merged_header(&m->merged);
    EXPECT(header && header == ggfs_merged_header(&m->merged)); // built once
    EXPECT(memcmp(header, want.b, m->merged.header_len) == 0);
    gw_free(&want);
    ggfs_model_close(m);
    tmptree_free(dir);
    return 1;
}

static int test_edited_merged_model_is_what_ggml_writes(void)
{
    char *dir = tmptree_new();
    EXPECT(dir && write_set(dir, &GOOD));
    ggfs_model_error err;
    ggfs_model *m = open_shard(dir, "s-00001-of-00002.gguf", &err);
    EXPECT(m);
    char why[256];
    ggfs_edits *e = ggfs_edits_open(m, NULL, why, sizeof why);
    EXPECT(e);
    bool changed;
    const uint64_t id = ggfs_view_find(&m->view, "general.architecture", 20);
    EXPECT_EQ(ggfs_edits_write(e, id, "a longer name\n", 14, &changed), 0);
    ggfs_view *v = ggfs_edits_view(e);
    // metadata/ keeps the split.* keys; model.gguf's header has its own bytes.
    EXPECT_EQ(ggp_kv_count(v->keys), 4);
    EXPECT(v->gguf_header && v->gguf.bytes == v->gguf_header);
    gguf_writer want;
    write_merged(&want, "a longer name");
    EXPECT_EQ(v->gguf.len, m->merged.header_len + strlen("a longer name") - strlen("llama"));
    const int same = pieces_are(m, &v->gguf, &want);
    EXPECT(same);
    // Shard 1 with the edited keys: its file size moves with the header.
    EXPECT_EQ(v->keys_file_size - ggfs_pad_to(ggp_header_end(v->keys), ALIGN),
              m->shards[0].source->size - ggfs_data_start(m->shards[0].file));
    gw_free(&want);
    ggfs_view_put(v);
    ggfs_edits_close(e);
    ggfs_model_close(m);
    tmptree_free(dir);
    return 1;
}

static int test_single_file_model_is_the_file(void)
{
    char *dir = tmptree_new();
    EXPECT(dir);
    gguf_writer w;
    write_merged(&w, "llama");
    EXPECT(tmptree_file(dir, "one.gguf", w.b, w.n));
    ggfs_model_error err;
    ggfs_model *m = open_shard(dir, "one.gguf", &err);
    EXPECT(m);
    EXPECT(!ggfs_model_is_split(m));
    EXPECT_EQ(m->n_tensors, 3);
    EXPECT_EQ(m->merged.size, w.n);
    EXPECT_EQ(m->merged.data_offset, ggp_data_offset(m->shards[0].file));
    for (uint64_t off = 0; off < w.n; off += 7) {
        ggfs_piece p;
        EXPECT(ggfs_merged_piece(&m->merged, NULL, off, &p));
        EXPECT_EQ(p.kind, GGFS_PIECE_SHARD);
        EXPECT_EQ(p.at, off);
        EXPECT_EQ(p.len, w.n - off);
    }
    const int same = pieces_are(m, NULL, &w);
    EXPECT(same);
    gw_free(&w);
    ggfs_model_close(m);
    tmptree_free(dir);
    return 1;
}

/* A shard without tensors in the middle of a set: the tensors after it
 * are numbered in the shard that holds them. */
static int test_shard_without_tensors(void)
{
    static const uint32_t shard_of[] = {0, 0, 2};
    char *dir = tmptree_new();
    EXPECT(dir && write_set(dir, &(set_opts){{0, 1, 2}, 3, 3, "c", shard_of, 3}));
    ggfs_model_error err;
    ggfs_model *m = open_shard(dir, "s-00002-of-00003.gguf", &err);
    if (!m)
        fprintf(stderr, "%s: %s\n", err.where, err.error.msg);
    EXPECT(m);
    EXPECT_EQ(m->n_shards, 3);
    EXPECT_EQ(m->n_tensors, 3);
    EXPECT_EQ(m->shards[1].first_tensor, 2);
    EXPECT_EQ(m->shards[2].first_tensor, 2);
    for (uint64_t t = 0; t < 3; t++) {
        uint32_t shard = 99;
        const ggp_tensor *tensor = ggfs_model_tensor(m, t, &shard);
        EXPECT(tensor && tensor->name.ptr[0] == NAMES[t][0]);
        EXPECT_EQ(shard, shard_of[t]);
    }
    gguf_writer want;
    write_merged(&want, "llama");
    const int same = pieces_are(m, NULL, &want);
    gw_free(&want);
    EXPECT(same);
    ggfs_model_close(m);
    tmptree_free(dir);
    return 1;
}

/* A header longer than the first read (64 KiB) and than the second
 * (4 MiB): read again, larger, until the parser has it all. */
static int test_long_headers_are_read_in_rounds(void)
{
    static const size_t lengths[] = {100 << 10, 5 << 20};
    for (size_t i = 0; i < 2; i++) {
        char *dir = tmptree_new();
        EXPECT(dir);
        char *value = malloc(lengths[i] + 1);
        EXPECT(value);
        for (size_t k = 0; k < lengths[i]; k++)
            value[k] = (char)('a' + k % 26);
        value[lengths[i]] = '\0';
        gguf_writer w;
        gw_begin(&w, 3, false, 1, 2);
        gw_kv_str(&w, "general.architecture", "llama");
        gw_kv_str(&w, "x.long", value);
        gw_tensor(&w, "a", 1, &LENS[0], GW_TENSOR_F32, 0);
        gw_pad(&w, ALIGN);
        const float data[3] = {1, 2, 3};
        gw_bytes(&w, data, sizeof data);
        EXPECT(tmptree_file(dir, "long.gguf", w.b, w.n));
        ggfs_model_error err;
        ggfs_model *m = open_shard(dir, "long.gguf", &err);
        EXPECT(m);
        const ggp_file *f = ggfs_model_keys(m);
        const ggp_kv *kv = ggp_kv_find(f, "x.long", 6);
        EXPECT(kv);
        const ggp_str v = ggp_value_str(f, &kv->value);
        EXPECT_EQ(v.len, lengths[i]);
        EXPECT(memcmp(v.ptr, value, v.len) == 0);
        if (m->shards[0].header.mapped) {
            // Read into huge pages: what was read past the header went back.
            EXPECT_EQ(m->shards[0].header.size, ggp_header_end(f));
            EXPECT(m->shards[0].header.cap < ggp_header_end(f) + 4096);
        }
        EXPECT_EQ(m->shards[0].header.mapped, i == 1);
        EXPECT_EQ(ggp_tensor_at(f, 0)->offset + 12, w.n);
        EXPECT_EQ(m->merged.size, w.n);
        ggfs_model_close(m);
        gw_free(&w);
        free(value);
        tmptree_free(dir);
    }
    return 1;
}

int main(void)
{
    int ok = test_any_shard_opens_the_whole_set();
    ok &= test_key_int_reads_any_integer();
    ok &= test_broken_sets_are_refused();
    ok &= test_merged_model_is_what_ggml_writes();
    ok &= test_edited_merged_model_is_what_ggml_writes();
    ok &= test_single_file_model_is_the_file();
    ok &= test_long_headers_are_read_in_rounds();
    ok &= test_shard_without_tensors();
    printf("model: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
