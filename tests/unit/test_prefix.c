/*
 * ggp_open_prefix against ggp_open_mem, over every .gguf file in the
 * directories given (ggml's fixtures and their variants, the hostile
 * corpus):
 *
 * - every prefix length (sampled past 16 KiB of header) gives either
 *   GGP_ERR_NEED_MORE asking for more than it had, or exactly what opening
 *   the whole file gives: the same index, or the same refusal at the same
 *   offset with the same message;
 * - a caller fetching growing chunks reaches that result;
 * - ggp_tensor_decode_f32 over blocks copied out of the file gives the same
 *   bits as ggp_tensor_read_f32 on the whole file, for sub-ranges that
 *   start and end inside blocks;
 * - a header parsed apart from the file, with the whole file attached for
 *   its data (ggp_file_attach_data, as the daemon opens a local model),
 *   reads every tensor's f32 as the whole file does, its views staying in
 *   the header's copy;
 * - hostile counts and lengths are refused from the first bytes, without
 *   asking for more.
 *
 * Every prefix is an exact-size heap copy, so the sanitizers catch any
 * read past it.
 *
 * usage: test_prefix DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"

#define EXHAUSTIVE_HEADER (16 * 1024)

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    const long n = ftell(fp);
    rewind(fp);
    unsigned char *bytes = malloc(n > 0 ? (size_t)n : 1);
    if (bytes && fread(bytes, 1, (size_t)n, fp) != (size_t)n) {
        free(bytes);
        bytes = NULL;
    }
    fclose(fp);
    *size = (size_t)n;
    return bytes;
}

static int same_value(const ggp_value *a, const ggp_value *b, const unsigned char *abase,
                      const unsigned char *bbase)
{
    EXPECT_EQ(a->type, b->type);
    EXPECT_EQ(a->elem_type, b->elem_type);
    EXPECT_EQ(a->count, b->count);
    EXPECT_EQ(a->offset, b->offset);
    EXPECT_EQ(a->size, b->size);
    EXPECT_EQ(a->data - abase, b->data - bbase);
    return 1;
}

/* The two handles index the same file the same way. */
static int same_index(const ggp_file *whole, const ggp_file *prefix)
{
    const unsigned char *wb = ggp_file_bytes(whole), *pb = ggp_file_bytes(prefix);
    EXPECT_EQ(ggp_version(whole), ggp_version(prefix));
    EXPECT_EQ(ggp_byte_order_of(whole), ggp_byte_order_of(prefix));
    EXPECT_EQ(ggp_alignment(whole), ggp_alignment(prefix));
    EXPECT_EQ(ggp_data_offset(whole), ggp_data_offset(prefix));
    EXPECT_EQ(ggp_header_end(whole), ggp_header_end(prefix));
    EXPECT_EQ(ggp_file_size(whole), ggp_file_size(prefix));
    EXPECT_EQ(ggp_kv_count(whole), ggp_kv_count(prefix));
    EXPECT_EQ(ggp_tensor_count(whole), ggp_tensor_count(prefix));
    for (uint64_t i = 0; i < ggp_kv_count(whole); i++) {
        const ggp_kv *a = ggp_kv_at(whole, i), *b = ggp_kv_at(prefix, i);
        EXPECT_EQ(a->offset, b->offset);
        EXPECT_EQ(a->key.len, b->key.len);
        EXPECT(memcmp(a->key.ptr, b->key.ptr, (size_t)a->key.len) == 0);
        if (!same_value(&a->value, &b->value, wb, pb))
            return 0;
        EXPECT_EQ(ggp_render_size(whole, &a->value), ggp_render_size(prefix, &b->value));
    }
    for (uint64_t i = 0; i < ggp_tensor_count(whole); i++) {
        const ggp_tensor *a = ggp_tensor_at(whole, i), *b = ggp_tensor_at(prefix, i);
        EXPECT_EQ(a->name.len, b->name.len);
        EXPECT(memcmp(a->name.ptr, b->name.ptr, (size_t)a->name.len) == 0);
        EXPECT_EQ(a->n_dims, b->n_dims);
        for (int d = 0; d < GGP_MAX_DIMS; d++)
            EXPECT_EQ(a->ne[d], b->ne[d]);
        EXPECT_EQ(a->type_id, b->type_id);
        EXPECT(a->type == b->type);
        EXPECT_EQ(a->elements, b->elements);
        EXPECT_EQ(a->offset, b->offset);
        EXPECT_EQ(a->bytes, b->bytes);
        EXPECT_EQ(a->info_offset, b->info_offset);
        EXPECT(ggp_tensor_find(prefix, b->name.ptr, (size_t)b->name.len) == b);
    }
    return 1;
}

/* One prefix of `avail` bytes, as an exact-size copy. On NEED_MORE sets
 * *need; returns 0 on any mismatch with the whole file's verdict. */
static int check_prefix(const char *path, const unsigned char *bytes, size_t size, size_t avail,
                        const ggp_file *whole, const ggp_error *whole_err, uint64_t *need)
{
    unsigned char *copy = malloc(avail ? avail : 1);
    EXPECT(copy != NULL);
    memcpy(copy, bytes, avail);
    ggp_error err;
    ggp_file *f = ggp_open_prefix(copy, avail, size, &err);
    int ok = 1;
    *need = 0;
    if (!f && err.code == GGP_ERR_NEED_MORE) {
        if (err.offset <= avail || err.offset > size) {
            fprintf(stderr, "%s: prefix %zu asks for %llu bytes\n", path, avail,
                    (unsigned long long)err.offset);
            ok = 0;
        }
        // A file that opens needs no byte past its descriptors.
        if (whole && err.offset > ggp_header_end(whole)) {
            fprintf(stderr, "%s: prefix %zu asks for %llu bytes, past the header's %llu\n", path,
                    avail, (unsigned long long)err.offset,
                    (unsigned long long)ggp_header_end(whole));
            ok = 0;
        }
        *need = err.offset;
    } else if (whole) {
        if (!f)
            fprintf(stderr, "%s: prefix %zu refused at %llu: %s\n", path, avail,
                    (unsigned long long)err.offset, err.msg);
        ok = f != NULL && avail >= ggp_header_end(whole) && same_index(whole, f);
        if (f && avail < size && ggp_file_has_data(f))
            ok = 0;
    } else {
        if (f || err.code != whole_err->code || err.offset != whole_err->offset ||
            strcmp(err.msg, whole_err->msg) != 0) {
            fprintf(stderr, "%s: prefix %zu: %s at %llu (\"%s\"), the whole file: %s at %llu (\"%s\")\n",
                    path, avail, f ? "opened" : ggp_strerror(err.code),
                    (unsigned long long)err.offset, f ? "" : err.msg,
                    ggp_strerror(whole_err->code), (unsigned long long)whole_err->offset,
                    whole_err->msg);
            ok = 0;
        }
    }
    ggp_close(f);
    free(copy);
    return ok;
}

/* As a remote source's caller does: 64 bytes first, then at least double
 * or what was asked, until the verdict. */
static int check_growing(const char *path, const unsigned char *bytes, size_t size,
                         const ggp_file *whole, const ggp_error *whole_err)
{
    size_t avail = size < 64 ? size : 64;
    for (int rounds = 0; rounds < 64; rounds++) {
        uint64_t need;
        if (!check_prefix(path, bytes, size, avail, whole, whole_err, &need))
            return 0;
        if (need == 0)
            return 1;
        avail = need > 2 * (uint64_t)avail ? (size_t)need : 2 * avail;
        if (avail > size)
            avail = size;
    }
    fprintf(stderr, "%s: no verdict after 64 growing fetches\n", path);
    return 0;
}

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 17;
}

/* decode_f32 from copied blocks equals read_f32 on the mapping. */
static int check_decode(const char *path, const unsigned char *bytes, const ggp_file *whole,
                        const ggp_file *prefix)
{
    uint64_t rng = 42;
    for (uint64_t i = 0; i < ggp_tensor_count(whole); i++) {
        const ggp_tensor *tw = ggp_tensor_at(whole, i);
        const ggp_tensor *tp = ggp_tensor_at(prefix, i);
        if (ggp_tensor_f32_unavailable(whole, tw)) {
            EXPECT(ggp_tensor_f32_unavailable(prefix, tp) != NULL);
            continue;
        }
        EXPECT(tp->data == NULL);
        const uint64_t n = tw->elements;
        float *want = malloc(n * sizeof(float) + 1), *got = malloc(n * sizeof(float) + 1);
        EXPECT(want && got);
        EXPECT_EQ(ggp_tensor_read_f32(prefix, tp, 0, n, got), GGP_ERR_UNSUPPORTED);
        for (int round = 0; round < 24; round++) {
            uint64_t first, count;
            if (round == 0)
                first = 0, count = n;
            else {
                first = n ? next_random(&rng) % n : 0;
                count = n - first ? 1 + next_random(&rng) % (n - first) : 0;
            }
            uint64_t off, len;
            EXPECT_EQ(ggp_tensor_f32_span(tp, first, count, &off, &len), GGP_OK);
            EXPECT(off + len <= tw->bytes);
            unsigned char *blocks = malloc(len ? (size_t)len : 1);
            EXPECT(blocks != NULL);
            memcpy(blocks, bytes + tw->offset + off, (size_t)len);
            EXPECT_EQ(ggp_tensor_read_f32(whole, tw, first, count, want), GGP_OK);
            const ggp_err e = ggp_tensor_decode_f32(prefix, tp, blocks, (size_t)len, first, count, got);
            if (len > 0)
                EXPECT_EQ(ggp_tensor_decode_f32(prefix, tp, blocks, (size_t)len - 1, first, count, got),
                          GGP_ERR_RANGE);
            free(blocks);
            EXPECT_EQ(e, GGP_OK);
            if (memcmp(want, got, (size_t)count * sizeof(float)) != 0) {
                fprintf(stderr, "%s: tensor %llu [%llu, +%llu): decoded bits differ\n", path,
                        (unsigned long long)i, (unsigned long long)first, (unsigned long long)count);
                free(want), free(got);
                return 0;
            }
        }
        uint64_t off, len;
        EXPECT_EQ(ggp_tensor_f32_span(tp, n, 1, &off, &len), GGP_ERR_RANGE);
        free(want);
        free(got);
    }
    return 1;
}

/* The header alone, in a heap copy of its own, then the whole file
 * attached. */
static int check_attached(const char *path, const unsigned char *bytes, size_t size,
                          const ggp_file *whole)
{
    const size_t header = (size_t)ggp_header_end(whole);
    unsigned char *copy = malloc(header ? header : 1);
    EXPECT(copy != NULL);
    memcpy(copy, bytes, header);
    ggp_error err;
    ggp_file *f = ggp_open_prefix(copy, header, size, &err);
    EXPECT(f != NULL);
    ggp_file_attach_data(f, bytes);
    int ok = ggp_file_has_data(f);
    EXPECT(ggp_file_bytes(f) == copy);
    for (uint64_t i = 0; ok && i < ggp_tensor_count(whole); i++) {
        const ggp_tensor *tw = ggp_tensor_at(whole, i), *ta = ggp_tensor_at(f, i);
        EXPECT(ta->name.ptr >= (const char *)copy && ta->name.ptr < (const char *)copy + header);
        EXPECT(ta->data == tw->data);
        if (ggp_tensor_f32_unavailable(whole, tw))
            continue;
        const uint64_t n = tw->elements;
        float *want = malloc(n * sizeof(float) + 1), *got = malloc(n * sizeof(float) + 1);
        EXPECT(want && got);
        EXPECT_EQ(ggp_tensor_read_f32(whole, tw, 0, n, want), GGP_OK);
        EXPECT_EQ(ggp_tensor_read_f32(f, ta, 0, n, got), GGP_OK);
        if (memcmp(want, got, n * sizeof(float)) != 0) {
            fprintf(stderr, "%s: tensor %llu: f32 with the data attached differs\n", path,
                    (unsigned long long)i);
            ok = 0;
        }
        free(want);
        free(got);
    }
    ggp_close(f);
    free(copy);
    return ok;
}

static int check_file(const char *path)
{
    size_t size;
    unsigned char *bytes = read_file(path, &size);
    EXPECT(bytes != NULL);
    ggp_error whole_err;
    ggp_file *whole = ggp_open_mem(bytes, size, &whole_err);
    int ok = 1;
    // Every prefix through the header, then a sample of longer ones and
    // the whole file.
    const uint64_t header = whole ? ggp_header_end(whole) : size;
    const uint64_t through = header + 64 < size ? header + 64 : size;
    uint64_t need;
    for (size_t avail = 0; avail <= through && ok; avail += avail < EXHAUSTIVE_HEADER ? 1 : 61)
        ok = check_prefix(path, bytes, size, avail, whole, &whole_err, &need);
    ok = ok && check_prefix(path, bytes, size, size, whole, &whole_err, &need) && need == 0;
    ok = ok && check_growing(path, bytes, size, whole, &whole_err);
    if (ok && whole && ggp_header_end(whole) < size) {
        const size_t avail = (size_t)ggp_header_end(whole);
        ggp_error err;
        ggp_file *prefix = ggp_open_prefix(bytes, avail, size, &err);
        ok = prefix && !ggp_file_has_data(prefix) && check_decode(path, bytes, whole, prefix);
        ggp_close(prefix);
    }
    ok = ok && (!whole || check_attached(path, bytes, size, whole));
    ggp_close(whole);
    free(bytes);
    return ok;
}

/* ==== Hostile first bytes ==== */

static size_t put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
    return 4;
}

static size_t put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
    return 8;
}

/* The header's fixed part: magic, version 3, the two counts. */
static size_t start(unsigned char *p, uint64_t tensors, uint64_t kvs)
{
    memcpy(p, "GGUF", 4);
    size_t n = 4 + put32(p + 4, 3);
    n += put64(p + n, tensors);
    return n + put64(p + n, kvs);
}

static int refused_at_once(const unsigned char *bytes, size_t avail, uint64_t file_size,
                           ggp_err code, uint64_t offset)
{
    ggp_error err;
    ggp_file *f = ggp_open_prefix(bytes, avail, file_size, &err);
    EXPECT(f == NULL);
    if (err.code != code)
        fprintf(stderr, "refused with %s (%s), expected %s\n", ggp_strerror(err.code), err.msg,
                ggp_strerror(code));
    EXPECT_EQ(err.code, code);
    EXPECT_EQ(err.offset, offset);
    return 1;
}

static int test_hostile_counts_refused_without_more(void)
{
    unsigned char b[256];
    const uint64_t big = 1ULL << 40; // a 1 TiB file: plenty of room, still not enough
    // 2^60 keys, 2^60 tensors.
    size_t n = start(b, 0, 1ULL << 60);
    EXPECT(refused_at_once(b, n, big, GGP_ERR_TRUNCATED, 16));
    n = start(b, 1ULL << 60, 0);
    EXPECT(refused_at_once(b, n, big, GGP_ERR_TRUNCATED, 8));
    // A key whose length is past the file.
    n = start(b, 0, 1);
    n += put64(b + n, 1ULL << 50);
    EXPECT(refused_at_once(b, n, big, GGP_ERR_TRUNCATED, 24));
    // An array of 2^59 u64 in a 1 TiB file.
    n = start(b, 0, 1);
    n += put64(b + n, 1);
    b[n++] = 'k';
    n += put32(b + n, 9);       // array
    n += put32(b + n, 10);      // of u64
    n += put64(b + n, 1ULL << 59);
    EXPECT(refused_at_once(b, n, big, GGP_ERR_TRUNCATED, 41));
    // An array of 2^61 strings.
    n = start(b, 0, 1);
    n += put64(b + n, 1);
    b[n++] = 'k';
    n += put32(b + n, 9);
    n += put32(b + n, 8);
    n += put64(b + n, 1ULL << 61);
    EXPECT(refused_at_once(b, n, big, GGP_ERR_TRUNCATED, 41));
    // A bad type needs no more bytes to be refused.
    n = start(b, 0, 1);
    n += put64(b + n, 1);
    b[n++] = 'k';
    n += put32(b + n, 77);
    EXPECT(refused_at_once(b, n, big, GGP_ERR_VALUE_TYPE, 33));
    // A tensor whose data lies past the end of the file, known as soon as
    // the descriptors are in.
    n = start(b, 1, 0);
    n += put64(b + n, 1);
    b[n++] = 't';
    n += put32(b + n, 1);
    n += put64(b + n, 1024);
    n += put32(b + n, 0);       // f32: 4 KiB of data
    n += put64(b + n, 0);
    EXPECT(refused_at_once(b, n, 2048, GGP_ERR_DATA, n - 8));
    return 1;
}

static int test_need_more_names_the_bytes(void)
{
    unsigned char b[64];
    size_t n = start(b, 0, 1);
    n += put64(b + n, 5);
    memcpy(b + n, "hello", 5);
    n += 5;
    ggp_error err;
    EXPECT(ggp_open_prefix(b, 2, 1000, &err) == NULL);
    EXPECT_EQ(err.code, GGP_ERR_NEED_MORE);
    EXPECT_EQ(err.offset, 4);
    EXPECT(ggp_open_prefix(b, n - 2, 1000, &err) == NULL);
    EXPECT_EQ(err.code, GGP_ERR_NEED_MORE);
    EXPECT_EQ(err.offset, n);
    EXPECT(strstr(err.msg, "goes on past") != NULL);
    // More bytes than the file has is the caller's mistake.
    EXPECT(ggp_open_prefix(b, n, n - 1, &err) == NULL);
    EXPECT_EQ(err.code, GGP_ERR_RANGE);
    return 1;
}

int main(int argc, char **argv)
{
    int ok = test_hostile_counts_refused_without_more() & test_need_more_names_the_bytes();
    int files = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            const size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 5, ".gguf") != 0)
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (!check_file(path)) {
                fprintf(stderr, "FAIL %s\n", path);
                ok = 0;
            }
            files++;
        }
        closedir(d);
    }
    printf("%d files checked prefix by prefix\n", files);
    return ok && files > 0 ? 0 : 1;
}
