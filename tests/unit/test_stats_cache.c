/*
 * The daemon's stats cache (fs/tree/stats_cache.c): many readers arriving at
 * once get one computation, whose text equals the accumulator's over the
 * whole tensor; a source that changed gives EIO and nothing is kept, so a
 * later reader computes again. The model is built by hand over a file in
 * memory and a source that counts how often it is asked whether it
 * changed (twice per computation: before and after the pass).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "counting_cancel.h"
#include "counting_source.h"
#include "model/guard.h"
#include "tree/stats_cache.h"

#define N_VALUES (1u << 22) // f16: 8 MiB of data, a pass of some milliseconds
#define N_READERS 8


/* A GGUF file with one f16 tensor of N_VALUES pseudo-random halves (NaNs
 * and infinities among them). Allocates. */
static uint8_t *make_file(size_t *size)
{
    const size_t header = 4 + 4 + 8 + 8 + (8 + 1) + 4 + 8 + 4 + 8;
    const size_t data_at = (header + 31) / 32 * 32;
    *size = data_at + (size_t)N_VALUES * 2;
    uint8_t *b = calloc(1, *size);
    if (!b)
        return NULL;
    uint8_t *p = b;
#define PUT(v, n) (memcpy(p, &(v), n), p += n)
    const uint32_t version = 3, n_dims = 1, type = 1;
    const uint64_t n_tensors = 1, n_kv = 0, name_len = 1, ne = N_VALUES, offset = 0;
    memcpy(p, "GGUF", 4), p += 4;
    PUT(version, 4);
    PUT(n_tensors, 8);
    PUT(n_kv, 8);
    PUT(name_len, 8);
    *p++ = 't';
    PUT(n_dims, 4);
    PUT(ne, 8);
    PUT(type, 4);
    PUT(offset, 8);
#undef PUT
    uint32_t x = 12345;
    for (size_t i = 0; i < N_VALUES; i++) {
        x = x * 1664525u + 1013904223u;
        const uint16_t h = (uint16_t)(x >> 16);
        memcpy(b + data_at + 2 * i, &h, 2);
    }
    return b;
}

typedef struct text_sink {
    ggp_sink sink;
    char buf[512];
    size_t len;
} text_sink;

static void append(ggp_sink *sink, const char *bytes, size_t len)
{
    text_sink *t = (text_sink *)sink;
    if (t->len + len < sizeof t->buf) {
        memcpy(t->buf + t->len, bytes, len);
        t->len += len;
        t->buf[t->len] = '\0';
    }
}

typedef struct reader {
    pthread_t thread;
    pthread_barrier_t *start;
    ggfs_stats_cache *cache;
    const ggfs_model *model;
    const char *text;
    int err;
} reader;

static void *read_stats(void *arg)
{
    reader *r = arg;
    pthread_barrier_wait(r->start);
    r->err = ggfs_stats_get(r->cache, r->model, 0, &r->text);
    return NULL;
}

static int test_concurrent_readers_share_one_computation(const ggfs_model *m, counting_source *src)
{
    ggfs_stats_cache cache;
    EXPECT(ggfs_stats_cache_init(&cache, 1, NULL));
    atomic_store(&src->unchanged_calls, 0);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N_READERS);
    reader readers[N_READERS];
    for (int i = 0; i < N_READERS; i++) {
        readers[i] = (reader){.start = &start, .cache = &cache, .model = m};
        EXPECT(pthread_create(&readers[i].thread, NULL, read_stats, &readers[i]) == 0);
    }
    for (int i = 0; i < N_READERS; i++)
        pthread_join(readers[i].thread, NULL);
    pthread_barrier_destroy(&start);
    EXPECT_EQ(atomic_load(&src->unchanged_calls), 2); // one computation
    for (int i = 0; i < N_READERS; i++) {
        EXPECT_EQ(readers[i].err, 0);
        EXPECT(readers[i].text == readers[0].text);
    }
    // The text is the accumulator's over every value, in one go.
    uint32_t shard;
    const ggp_tensor *t = ggfs_model_tensor(m, 0, &shard);
    float *values = malloc((size_t)N_VALUES * sizeof *values);
    EXPECT(values != NULL);
    EXPECT_EQ(ggp_tensor_read_f32(m->shards[0].file, t, 0, N_VALUES, values), GGP_OK);
    ggp_stats s;
    ggp_stats_init(&s);
    ggp_stats_add(&s, values, N_VALUES);
    free(values);
    EXPECT(s.nans > 0 && s.infs > 0);
    text_sink want = {{append}, "", 0};
    ggp_stats_render(&s, N_VALUES, &want.sink);
    EXPECT_EQ(want.len, ggp_stats_text_size(N_VALUES));
    EXPECT(memcmp(readers[0].text, want.buf, want.len) == 0);
    char nans_line[64];
    snprintf(nans_line, sizeof nans_line, "\nnans: %llu", (unsigned long long)s.nans);
    EXPECT(strstr(want.buf, nans_line) != NULL);

    // Later readers get the kept text without computing.
    const char *again;
    EXPECT_EQ(ggfs_stats_get(&cache, m, 0, &again), 0);
    EXPECT(again == readers[0].text);
    EXPECT_EQ(atomic_load(&src->unchanged_calls), 2);
    ggfs_stats_cache_destroy(&cache);
    return 1;
}

static int test_changed_source_is_not_kept(const ggfs_model *m, counting_source *src)
{
    ggfs_stats_cache cache;
    EXPECT(ggfs_stats_cache_init(&cache, 1, NULL));
    atomic_store(&src->unchanged_calls, 1); // no lingering
    atomic_store(&src->changed, true);
    const char *text;
    EXPECT_EQ(ggfs_stats_get(&cache, m, 0, &text), EIO);
    atomic_store(&src->changed, false);
    EXPECT_EQ(ggfs_stats_get(&cache, m, 0, &text), 0);
    EXPECT(text != NULL);
    ggfs_stats_cache_destroy(&cache);
    return 1;
}

static int test_cancelled_is_not_kept(const ggfs_model *m, counting_source *src)
{
    counting_cancel asked = {0};
    const ggfs_cancel cancel = counting_cancel_of(&asked);
    ggfs_stats_cache cache;
    EXPECT(ggfs_stats_cache_init(&cache, 1, &cancel));
    atomic_store(&src->unchanged_calls, 1); // no lingering
    // Asked before each 64 KiB chunk: the pass stops at the third ask.
    atomic_store(&asked.from, 3);
    const char *text;
    EXPECT_EQ(ggfs_stats_get(&cache, m, 0, &text), ECANCELED);
    EXPECT_EQ(atomic_load(&asked.asks), 3);
    EXPECT(ggfs_once_value(&cache.text[0]) == NULL);
    atomic_store(&asked.from, 0);
    EXPECT_EQ(ggfs_stats_get(&cache, m, 0, &text), 0);
    EXPECT(text != NULL);
    EXPECT_EQ(atomic_load(&asked.asks), 3 + N_VALUES / 16384); // once a chunk
    ggfs_stats_cache_destroy(&cache);
    return 1;
}

int main(void)
{
    size_t size;
    uint8_t *bytes = make_file(&size);
    if (!bytes || !ggfs_guard_install())
        return 1;
    ggp_error err;
    ggp_file *f = ggp_open_mem(bytes, size, &err);
    if (!f) {
        fprintf(stderr, "open: offset %llu: %s\n", (unsigned long long)err.offset, err.msg);
        return 1;
    }
    counting_source src = {.base = {.ops = &counting_ops, .name = "mem.gguf", .size = size, .map = bytes}};
    atomic_init(&src.unchanged_calls, 0);
    atomic_init(&src.changed, false);
    ggfs_shard shard = {.source = &src.base, .file = f, .file_name = "mem.gguf", .first_tensor = 0};
    ggfs_model m = {.shards = &shard, .n_shards = 1, .n_tensors = 1, .total_size = size};
    int ok = test_concurrent_readers_share_one_computation(&m, &src);
    ok &= test_changed_source_is_not_kept(&m, &src);
    ok &= test_cancelled_is_not_kept(&m, &src);
    ggp_close(f);
    free(bytes);
    printf("stats cache: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
