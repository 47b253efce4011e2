/*
 * A tensor's bytes chunk by chunk (fs/model/tensor_bytes.c), from a model
 * written to a file: from the mapping and through the source's reads,
 * each giving the tensor's bytes in order in chunks no larger than the
 * limit; a file changed or cut short under the pass gives EIO (the cut
 * through the SIGBUS guard, with the source told why).
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gguf_writer.h"
#include "model/guard.h"
#include "model/model.h"
#include "model/tensor_bytes.h"

#define ALIGN 32
#define BIG_VALUES ((GGFS_TENSOR_CHUNK / 4) + 1000) // a chunk and a bit, in f32

static uint32_t word_at(uint64_t i)
{
    return (uint32_t)(i * 2654435761u) ^ 0x5bd1e995u;
}

/* Tensors: "small" (3 f32), "big" (BIG_VALUES f32). */
static void write_model(gguf_writer *w)
{
    const uint64_t small = 3, big = BIG_VALUES;
    gw_begin(w, 3, false, 2, 0);
    gw_tensor(w, "small", 1, &small, GW_TENSOR_F32, 0);
    gw_tensor(w, "big", 1, &big, GW_TENSOR_F32, ALIGN);
    gw_pad(w, ALIGN);
    const uint32_t s[3] = {1, 2, 3};
    gw_bytes(w, s, sizeof s);
    gw_pad(w, ALIGN);
    for (uint64_t i = 0; i < big; i++) {
        const uint32_t v = word_at(i);
        gw_bytes(w, &v, 4);
    }
}

typedef struct collected {
    uint8_t *bytes;
    size_t len, cap;
    unsigned chunks;
    size_t largest;
} collected;

static void collect(void *ctx, const uint8_t *bytes, size_t len)
{
    collected *c = ctx;
    c->chunks++;
    if (len > c->largest)
        c->largest = len;
    if (c->len + len > c->cap)
        return; // counted, not kept: the check of len catches it
    memcpy(c->bytes + c->len, bytes, len);
    c->len += len;
}

/* Passes tensor index through collect and checks the bytes are the file's. */
static int pass_is_whole(const ggfs_model *m, uint64_t index, const uint8_t *file, unsigned chunks)
{
    uint32_t shard;
    const ggp_tensor *t = ggfs_model_tensor(m, index, &shard);
    EXPECT(t);
    collected c = {malloc((size_t)t->bytes), 0, (size_t)t->bytes, 0, 0};
    EXPECT(c.bytes);
    EXPECT_EQ(ggfs_model_tensor_bytes(m, index, NULL, collect, &c), 0);
    EXPECT_EQ(c.len, t->bytes);
    EXPECT_EQ(c.chunks, chunks);
    EXPECT(c.largest <= GGFS_TENSOR_CHUNK);
    EXPECT(memcmp(c.bytes, file + t->offset, c.len) == 0);
    free(c.bytes);
    return 1;
}

static char *g_dir;
static gguf_writer g_file;

static ggfs_model *open_copy(const char *name)
{
    char path[4200];
    if (!tmptree_file(g_dir, name, g_file.b, g_file.n))
        return NULL;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    ggfs_model_error err;
    ggfs_model *m = ggfs_model_open(path, NULL, &err);
    if (!m)
        fprintf(stderr, "%s: %s\n", err.where, err.error.msg);
    return m;
}

static int test_mapped_pass_gives_the_bytes_in_chunks(void)
{
    ggfs_model *m = open_copy("mapped.gguf");
    EXPECT(m);
    EXPECT(m->shards[0].source->map);
    EXPECT(pass_is_whole(m, 0, g_file.b, 1));
    EXPECT(pass_is_whole(m, 1, g_file.b, 2));
    collected c = {NULL, 0, 0, 0, 0};
    EXPECT_EQ(ggfs_model_tensor_bytes(m, 2, NULL, collect, &c), EIO); // no such tensor
    EXPECT_EQ(c.chunks, 0);
    ggfs_model_close(m);
    return 1;
}

static int test_read_pass_gives_the_same_bytes(void)
{
    ggfs_model *m = open_copy("read.gguf");
    EXPECT(m);
    // A source without a mapping (a remote one) is read through.
    ggfs_source *src = m->shards[0].source;
    const uint8_t *map = src->map;
    src->map = NULL;
    const int small = pass_is_whole(m, 0, g_file.b, 1);
    const int big = pass_is_whole(m, 1, g_file.b, 3); // reads of 4 MiB
    src->map = map;
    EXPECT(small && big);
    ggfs_model_close(m);
    return 1;
}

static int test_changed_file_fails_the_pass(void)
{
    ggfs_model *m = open_copy("changed.gguf");
    EXPECT(m);
    char path[4200];
    snprintf(path, sizeof path, "%s/changed.gguf", g_dir);
    EXPECT_EQ(truncate(path, (off_t)(g_file.n - 4096)), 0);
    collected c = {NULL, 0, 0, 0, 0};
    EXPECT_EQ(ggfs_model_tensor_bytes(m, 1, NULL, collect, &c), EIO);
    EXPECT_EQ(c.chunks, 0); // found before the pass
    EXPECT_EQ(ggfs_model_tensor_bytes(m, 0, NULL, collect, &c), EIO); // a change is final
    ggfs_model_close(m);
    return 1;
}

/* A source that does not see the cut: the pass faults on the mapping. */
static const char *g_marked;

static bool always_unchanged(ggfs_source *src)
{
    (void)src;
    return true;
}

static void remember_mark(ggfs_source *src, const char *why)
{
    (void)src;
    g_marked = why;
}

static int test_cut_under_the_mapping_is_caught_by_the_guard(void)
{
    ggfs_model *m = open_copy("cut.gguf");
    EXPECT(m);
    ggfs_source *src = m->shards[0].source;
    const ggfs_source_ops *real = src->ops;
    ggfs_source_ops blind = *real;
    blind.unchanged = always_unchanged;
    blind.mark_changed = remember_mark;
    src->ops = &blind;
    char path[4200];
    snprintf(path, sizeof path, "%s/cut.gguf", g_dir);
    const long page = sysconf(_SC_PAGESIZE);
    const ggp_tensor *t = ggp_tensor_at(m->shards[0].file, 1);
    EXPECT_EQ(truncate(path, (off_t)((t->offset + (uint64_t)page) / (uint64_t)page * (uint64_t)page)), 0);
    collected c = {malloc((size_t)t->bytes), 0, (size_t)t->bytes, 0, 0};
    EXPECT(c.bytes);
    g_marked = NULL;
    const int err = ggfs_model_tensor_bytes(m, 1, NULL, collect, &c);
    src->ops = real;
    free(c.bytes);
    EXPECT_EQ(err, EIO);
    EXPECT(g_marked && strstr(g_marked, "cut short"));
    ggfs_model_close(m);
    return 1;
}

int main(void)
{
    if (!ggfs_guard_install())
        return 1;
    g_dir = tmptree_new();
    if (!g_dir)
        return 1;
    write_model(&g_file);
    int ok = test_mapped_pass_gives_the_bytes_in_chunks();
    ok &= test_read_pass_gives_the_same_bytes();
    ok &= test_changed_file_fails_the_pass();
    ok &= test_cut_under_the_mapping_is_caught_by_the_guard();
    gw_free(&g_file);
    tmptree_free(g_dir);
    printf("tensor bytes: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
