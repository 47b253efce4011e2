/*
 * Building GGUF headers from runs of bytes (fs/model/header.c) and the
 * views over them (view.c): a file's own keys and descriptors put back
 * through a plan give its header byte for byte, in versions 1 to 3 and
 * both byte orders; a key encoded from its name and value is the key as
 * the file holds it; where a file's data section starts; and a view's ids,
 * indexes and references.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gguf_writer.h"
#include "model/header.h"
#include "model/view.h"

#define ALIGN 32

/* A file of three keys and two tensors; *header_end is where its header ends. */
static void write_file(gguf_writer *w, uint32_t version, bool big, size_t *header_end)
{
    static const uint32_t list[] = {7, 8};
    static const uint64_t ne_a[] = {4}, ne_b[] = {2, 3};
    gw_begin(w, version, big, 2, 3);
    gw_kv_str(w, "general.name", "héllo");
    gw_kv_u32(w, "x.count", 0x01020304);
    gw_kv_u32s(w, "x.list", list, 2);
    gw_tensor(w, "a", 1, ne_a, GW_TENSOR_F32, 0);
    gw_tensor(w, "bb", 2, ne_b, GW_TENSOR_F32, 32);
    *header_end = w->n;
    gw_pad(w, ALIGN);
    static const uint8_t data[64] = {1, 2, 3};
    gw_bytes(w, data, sizeof data);
}

static ggp_file *open_or_say(const gguf_writer *w)
{
    ggp_error err;
    ggp_file *f = ggp_open_mem(w->b, w->n, &err);
    if (!f)
        fprintf(stderr, "v%u %s: offset %llu: %s\n", w->version, w->big ? "BE" : "LE",
                (unsigned long long)err.offset, err.msg);
    return f;
}

static const struct {
    uint32_t version;
    bool big;
} FORMATS[] = {{1, false}, {2, false}, {3, false}, {2, true}, {3, true}};

/* The file in format i, written into w and opened; NULL when refused. */
static ggp_file *open_format(size_t i, gguf_writer *w, size_t *header_end)
{
    write_file(w, FORMATS[i].version, FORMATS[i].big, header_end);
    return open_or_say(w);
}

static int test_plan_of_a_file_gives_its_header_back(void)
{
    for (size_t i = 0; i < sizeof FORMATS / sizeof *FORMATS; i++) {
        gguf_writer w;
        size_t end;
        ggp_file *f = open_format(i, &w, &end);
        EXPECT(f);
        EXPECT_EQ(ggp_header_end(f), end);
        ggfs_run runs[3];
        for (uint64_t k = 0; k < 3; k++)
            runs[k] = ggfs_kv_run(f, ggp_kv_at(f, k));
        ggfs_header_plan plan;
        ggfs_header_plan_file(&plan, f, runs, 3);
        EXPECT_EQ(ggfs_header_len(&plan), end);
        uint8_t *out = malloc(end);
        EXPECT(out);
        ggfs_header_write(&plan, out);
        const bool same = memcmp(out, w.b, end) == 0;
        free(out);
        if (!same)
            fprintf(stderr, "v%u %s: the header differs\n", FORMATS[i].version, FORMATS[i].big ? "BE" : "LE");
        EXPECT(same);

        // Without its second key: the rest of the header as it was.
        const ggfs_run two[2] = {runs[0], runs[2]};
        ggfs_header_plan_file(&plan, f, two, 2);
        const uint64_t len = ggfs_header_len(&plan);
        EXPECT_EQ(len, end - runs[1].len);
        out = malloc(len + ALIGN + 64);
        EXPECT(out);
        memset(out, 0, len + ALIGN + 64);
        ggfs_header_write(&plan, out);
        ggp_error err;
        ggp_file *g = ggp_open_prefix(out, (size_t)len, ggfs_pad_to(len, ALIGN) + 64, &err);
        EXPECT(g);
        EXPECT_EQ(ggp_kv_count(g), 2);
        EXPECT(ggp_kv_find(g, "x.list", 6) && !ggp_kv_find(g, "x.count", 7));
        EXPECT_EQ(ggp_tensor_count(g), 2);
        EXPECT_EQ(ggp_tensor_at(g, 1)->offset - ggp_data_offset(g), 32);
        EXPECT_EQ(ggp_tensor_at(g, 1)->bytes, 24);
        ggp_close(g);
        free(out);
        ggp_close(f);
        gw_free(&w);
    }
    return 1;
}

static int test_a_key_encoded_is_the_key_as_stored(void)
{
    for (size_t i = 0; i < sizeof FORMATS / sizeof *FORMATS; i++) {
        gguf_writer w;
        size_t end;
        ggp_file *f = open_format(i, &w, &end);
        EXPECT(f);
        const uint64_t width = FORMATS[i].version == 1 ? 4 : 8;
        for (uint64_t k = 0; k < 3; k++) {
            const ggp_kv *kv = ggp_kv_at(f, k);
            const ggfs_run whole = ggfs_kv_run(f, kv), value = ggfs_value_run(f, kv);
            EXPECT(whole.bytes == w.b + kv->offset);
            EXPECT_EQ(whole.len, width + kv->key.len + 4 + value.len);
            EXPECT(value.bytes == whole.bytes + width + kv->key.len + 4);
            EXPECT_EQ(ggfs_kv_encoded_len(f, kv->key.len, value.len), whole.len);
            uint8_t out[128];
            EXPECT(whole.len <= sizeof out);
            EXPECT_EQ(ggfs_kv_encode(f, kv->key.ptr, kv->key.len, kv->value.type, value.bytes, value.len, out),
                      whole.len);
            EXPECT(memcmp(out, whole.bytes, whole.len) == 0);
        }
        // The value runs: a u32's 4 bytes; a string's length and bytes.
        EXPECT_EQ(ggfs_value_run(f, ggp_kv_at(f, 1)).len, 4);
        EXPECT_EQ(ggfs_value_run(f, ggp_kv_at(f, 0)).len, width + strlen("héllo"));
        EXPECT_EQ(ggfs_value_run(f, ggp_kv_at(f, 2)).len, 4 + width + 2 * 4);
        // A descriptor: name, n_dims, ne[], type; the offset field after it.
        const ggp_tensor *t = ggp_tensor_at(f, 1);
        const ggfs_run d = ggfs_descriptor_run(f, t);
        EXPECT(d.bytes == w.b + t->info_offset);
        EXPECT_EQ(d.len, width + 2 + 4 + 2 * width + 4);
        ggp_close(f);
        gw_free(&w);
    }
    return 1;
}

static int test_data_start_of_files_without_tensors(void)
{
    // Padded as ggml's writer pads: the data section starts after the padding.
    gguf_writer w;
    gw_begin(&w, 3, false, 0, 1);
    gw_kv_u32(&w, "x.count", 1);
    const size_t end = w.n;
    gw_pad(&w, ALIGN);
    ggp_error err;
    ggp_file *f = ggp_open_mem(w.b, w.n, &err);
    EXPECT(f);
    EXPECT(end % ALIGN != 0);
    EXPECT_EQ(ggfs_data_start(f), ggfs_pad_to(end, ALIGN));
    ggp_close(f);
    // Not padded: it starts at the end of the file.
    f = ggp_open_mem(w.b, end, &err);
    EXPECT(f);
    EXPECT_EQ(ggfs_data_start(f), end);
    ggp_close(f);
    gw_free(&w);
    EXPECT_EQ(ggfs_pad_to(0, 32), 0);
    EXPECT_EQ(ggfs_pad_to(1, 32), 32);
    EXPECT_EQ(ggfs_pad_to(64, 32), 64);
    return 1;
}

/* ==== Views ==== */

static int test_unedited_view_numbers_keys_by_index(void)
{
    gguf_writer w;
    size_t end;
    write_file(&w, 3, false, &end);
    ggp_file *f = open_or_say(&w);
    EXPECT(f);
    ggfs_view v;
    EXPECT(ggfs_view_init_unedited(&v, f, w.n));
    EXPECT(!v.edited);
    EXPECT_EQ(v.version, 0);
    EXPECT_EQ(v.keys_file_size, w.n);
    for (uint64_t i = 0; i < 3; i++) {
        EXPECT_EQ(ggfs_view_id_of(&v, i), i);
        EXPECT_EQ(ggfs_view_index_of(&v, i), i);
        EXPECT_EQ(atomic_load(&v.kv_size[i]), UINT64_MAX);
    }
    EXPECT_EQ(ggfs_view_index_of(&v, 3), UINT64_MAX);
    EXPECT_EQ(ggfs_view_find(&v, "x.list", 6), 2);
    EXPECT_EQ(ggfs_view_find(&v, "x.lis", 5), UINT64_MAX);
    // References are not counted: the model owns it.
    ggfs_view_ref(&v);
    ggfs_view_put(&v);
    ggfs_view_put(&v);
    EXPECT_EQ(atomic_load(&v.refs), 0);
    ggfs_view_destroy_unedited(&v);
    ggp_close(f);
    gw_free(&w);
    return 1;
}

static int test_edited_view_finds_keys_by_id(void)
{
    gguf_writer w;
    size_t end;
    write_file(&w, 3, false, &end);
    uint8_t *header = malloc(end);
    uint64_t *ids = malloc(3 * sizeof *ids);
    EXPECT(header && ids);
    memcpy(header, w.b, end);
    ids[0] = 10, ids[1] = 3, ids[2] = 7;
    const uint64_t data_offset = ggfs_pad_to(end, ALIGN);
    ggp_error err;
    ggfs_view *v = ggfs_view_new(5, header, end, w.n, NULL, (ggfs_gguf_head){NULL, end, data_offset, w.n}, ids, &err);
    EXPECT(v);
    EXPECT(v->edited);
    EXPECT_EQ(v->version, 5);
    EXPECT(v->gguf.bytes == header); // a single file: model.gguf's header is the keys'
    EXPECT_EQ(v->gguf.size, w.n);
    EXPECT_EQ(ggp_kv_count(v->keys), 3);
    EXPECT_EQ(ggp_tensor_count(v->keys), 2);
    static const uint64_t want[][2] = {{10, 0}, {3, 1}, {7, 2}};
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(ggfs_view_index_of(v, want[i][0]), want[i][1]);
        EXPECT_EQ(ggfs_view_id_of(v, want[i][1]), want[i][0]);
    }
    static const uint64_t none[] = {0, 1, 2, 4, 8, 11, UINT64_MAX};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        EXPECT_EQ(ggfs_view_index_of(v, none[i]), UINT64_MAX);
    EXPECT_EQ(ggfs_view_find(v, "x.count", 7), 1);
    // Freed when the last reference goes (ASan sees a leak or a double free).
    ggfs_view_ref(v);
    EXPECT_EQ(atomic_load(&v->refs), 2);
    ggfs_view_put(v);
    EXPECT_EQ(atomic_load(&v->refs), 1);
    ggfs_view_put(v);
    ggfs_view_put(NULL);
    gw_free(&w);
    return 1;
}

static int test_edited_view_the_parser_refuses_is_not_made(void)
{
    uint8_t *header = malloc(16);
    uint8_t *gguf = malloc(16);
    uint64_t *ids = malloc(sizeof *ids);
    EXPECT(header && gguf && ids);
    memcpy(header, "GGUF\x03\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff", 16); // 2^64-1 tensors
    ggp_error err = {GGP_OK, 0, ""};
    ggfs_view *v = ggfs_view_new(1, header, 16, 4096, gguf, (ggfs_gguf_head){NULL, 16, 32, 4096}, ids, &err);
    EXPECT(!v);
    EXPECT(err.code != GGP_OK);
    EXPECT(err.msg[0] != '\0');
    return 1; // what it was given is freed: ASan reports a leak otherwise
}

int main(void)
{
    int ok = test_plan_of_a_file_gives_its_header_back();
    ok &= test_a_key_encoded_is_the_key_as_stored();
    ok &= test_data_start_of_files_without_tensors();
    ok &= test_unedited_view_numbers_keys_by_index();
    ok &= test_edited_view_finds_keys_by_id();
    ok &= test_edited_view_the_parser_refuses_is_not_made();
    printf("header: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
