/*
 * The daemon's hash cache (fs/tree/hash_cache.c): eight readers opening
 * one tensor's hash at once cause one computation, whose digest is
 * libcrypto's and libxxhash's one-shot digest of the tensor's bytes (passed
 * in 8 MiB chunks from the mapping); a tensor file computes its own hash
 * only; `hashes` computes everything in one pass, fills the tensors' slots
 * and is computed once for readers at once, alongside tensor readers; a
 * source that changed gives EIO and nothing is kept, so a later reader
 * computes again. The model is built by hand over a file in memory and a
 * source that counts how often it is asked whether it changed (twice per
 * pass over a tensor: before and after). The hashing is the module's own
 * code (digest_module.c), linked in and handed to the cache, as the
 * daemon hands it the table it loaded.
 */
#define _GNU_SOURCE // memmem

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/sha.h>
#include <xxhash.h>

#include "check.h"
#include "counting_cancel.h"
#include "counting_source.h"
#include "model/guard.h"
#include "tree/hash_cache.h"

#define BIG_VALUES ((1u << 22) * 2 + 3) // f32: 32 MiB and 12 bytes, five chunks
#define SMALL_VALUES 100u
#define N_READERS 8


/* A GGUF file with two f32 tensors of pseudo-random bytes: "big"
 * (BIG_VALUES) and "small" (SMALL_VALUES), the second at the next multiple
 * of 32 after the first. Allocates; *data_at is where the data starts. */
static uint8_t *make_file(size_t *size, size_t *data_at, size_t *small_at)
{
    const size_t info = 8 + 3 + 4 + 8 + 4 + 8;
    const size_t header = 4 + 4 + 8 + 8 + info + (info + 2);
    *data_at = (header + 31) / 32 * 32;
    *small_at = ((size_t)BIG_VALUES * 4 + 31) / 32 * 32;
    *size = *data_at + *small_at + SMALL_VALUES * 4;
    uint8_t *b = calloc(1, *size);
    if (!b)
        return NULL;
    uint8_t *p = b;
#define PUT(v, n) (memcpy(p, &(v), n), p += n)
    const uint32_t version = 3, n_dims = 1, type = 0;
    const uint64_t n_tensors = 2, n_kv = 0, big_len = 3, small_len = 5;
    const uint64_t big_ne = BIG_VALUES, small_ne = SMALL_VALUES, big_off = 0, small_off = *small_at;
    memcpy(p, "GGUF", 4), p += 4;
    PUT(version, 4);
    PUT(n_tensors, 8);
    PUT(n_kv, 8);
    PUT(big_len, 8);
    memcpy(p, "big", 3), p += 3;
    PUT(n_dims, 4);
    PUT(big_ne, 8);
    PUT(type, 4);
    PUT(big_off, 8);
    PUT(small_len, 8);
    memcpy(p, "small", 5), p += 5;
    PUT(n_dims, 4);
    PUT(small_ne, 8);
    PUT(type, 4);
    PUT(small_off, 8);
#undef PUT
    uint32_t x = 12345;
    for (size_t i = *data_at; i < *size; i++) {
        x = x * 1664525u + 1013904223u;
        b[i] = (uint8_t)(x >> 24);
    }
    return b;
}

typedef struct fixture {
    const ggfs_model *model;
    counting_source *src;
    const uint8_t *big;   // the tensors' bytes
    const uint8_t *small;
} fixture;

static void hex_line(const uint8_t *digest, size_t len, char *out)
{
    ggfs_hex(digest, len, out);
    out[2 * len] = '\n';
}

typedef struct reader {
    pthread_t thread;
    pthread_barrier_t *start;
    ggfs_hash_cache *cache;
    const ggfs_model *model;
    bool whole;            // reads `hashes`, else big's sha256
    char text[2 * GGFS_DIGEST_MAX + 1];
    const char *hashes;
    int err;
} reader;

static void *read_hash(void *arg)
{
    reader *r = arg;
    pthread_barrier_wait(r->start);
    if (r->whole)
        r->err = ggfs_hashes_get(r->cache, r->model, &r->hashes);
    else
        r->err = ggfs_hash_file(r->cache, r->model, 0, GGFS_HASH_SHA256, r->text);
    return NULL;
}

/* Runs N_READERS readers at once, the first n_whole of them reading
 * `hashes`, the rest big's sha256. */
/* A cache over m that hashes with the module's code linked in. */
static bool cache_init(ggfs_hash_cache *c, const ggfs_model *m)
{
    if (!ggfs_hash_cache_init(c, m, NULL))
        return false;
    atomic_store(&c->module, &ggfs_digest_module_entry);
    return true;
}

static void run_readers(ggfs_hash_cache *cache, const ggfs_model *m, int n_whole, reader *readers)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N_READERS);
    for (int i = 0; i < N_READERS; i++) {
        readers[i] = (reader){.start = &start, .cache = cache, .model = m, .whole = i < n_whole};
        if (pthread_create(&readers[i].thread, NULL, read_hash, &readers[i]) != 0)
            abort();
    }
    for (int i = 0; i < N_READERS; i++)
        pthread_join(readers[i].thread, NULL);
    pthread_barrier_destroy(&start);
}

static int test_concurrent_readers_share_one_computation(const fixture *f)
{
    ggfs_hash_cache cache;
    EXPECT(cache_init(&cache, f->model));
    atomic_store(&f->src->unchanged_calls, 0);
    reader readers[N_READERS];
    run_readers(&cache, f->model, 0, readers);
    EXPECT_EQ(atomic_load(&f->src->unchanged_calls), 2); // one pass
    uint8_t want[SHA256_DIGEST_LENGTH];
    SHA256(f->big, (size_t)BIG_VALUES * 4, want);
    char want_text[2 * SHA256_DIGEST_LENGTH + 1];
    hex_line(want, sizeof want, want_text);
    for (int i = 0; i < N_READERS; i++) {
        EXPECT_EQ(readers[i].err, 0);
        EXPECT(memcmp(readers[i].text, want_text, sizeof want_text) == 0);
    }
    // Only SHA-256 was computed; a later reader gets it without a pass.
    ggfs_tensor_digests *slot = atomic_load(&cache.tensors[0]);
    EXPECT_EQ(atomic_load(&slot->done), GGFS_HASH_BIT(GGFS_HASH_SHA256));
    char again[2 * GGFS_DIGEST_MAX + 1];
    EXPECT_EQ(ggfs_hash_file(&cache, f->model, 0, GGFS_HASH_SHA256, again), 0);
    EXPECT_EQ(atomic_load(&f->src->unchanged_calls), 2);
    ggfs_hash_cache_destroy(&cache);
    return 1;
}

static int test_a_tensor_file_computes_its_hash_only(const fixture *f)
{
    ggfs_hash_cache cache;
    EXPECT(cache_init(&cache, f->model));
    atomic_store(&f->src->unchanged_calls, 1); // no lingering
    char text[2 * GGFS_DIGEST_MAX + 1];
    EXPECT_EQ(ggfs_hash_file(&cache, f->model, 0, GGFS_HASH_XXH64, text), 0);
    EXPECT_EQ(ggfs_hash_file_size(GGFS_HASH_XXH64), 17);
    char want[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)XXH64(f->big, (size_t)BIG_VALUES * 4, 0));
    EXPECT(memcmp(text, want, 16) == 0 && text[16] == '\n');
    ggfs_tensor_digests *slot = atomic_load(&cache.tensors[0]);
    EXPECT_EQ(atomic_load(&slot->done), GGFS_HASH_BIT(GGFS_HASH_XXH64));
    EXPECT(atomic_load(&cache.tensors[1]) == NULL);
    EXPECT(ggfs_once_value(&cache.text) == NULL);
    ggfs_hash_cache_destroy(&cache);
    return 1;
}

static int test_hashes_is_one_pass_that_fills_the_tensors(const fixture *f)
{
    ggfs_hash_cache cache;
    EXPECT(cache_init(&cache, f->model));
    atomic_store(&f->src->unchanged_calls, 0);
    // Half the readers want `hashes`, the others big's sha256, at once.
    reader readers[N_READERS];
    run_readers(&cache, f->model, N_READERS / 2, readers);
    for (int i = 0; i < N_READERS; i++)
        EXPECT_EQ(readers[i].err, 0);
    for (int i = 1; i < N_READERS / 2; i++)
        EXPECT(readers[i].hashes == readers[0].hashes);
    // One pass over each tensor for `hashes`, and one over big for the
    // tensor readers when they came first (the pass then leaves it to them).
    const int calls = atomic_load(&f->src->unchanged_calls);
    EXPECT(calls == 4 || calls == 6);
    for (uint64_t i = 0; i < 2; i++) {
        ggfs_tensor_digests *slot = atomic_load(&cache.tensors[i]);
        EXPECT(slot != NULL);
        EXPECT_EQ(atomic_load(&slot->done), GGFS_ALL_HASHES);
    }
    char text[2 * GGFS_DIGEST_MAX + 1];
    EXPECT_EQ(ggfs_hash_file(&cache, f->model, 1, GGFS_HASH_SHA1, text), 0);
    EXPECT_EQ(atomic_load(&f->src->unchanged_calls), calls); // kept, not computed again

    // The text: 4 lines per tensor, the model's 4 and its UUID; the model's
    // xxh64 and sha256 are over both tensors' bytes, without the padding.
    const char *t = readers[0].hashes;
    const size_t size = (size_t)ggfs_hashes_size(&cache);
    EXPECT(memchr(t, '\0', size) == NULL);
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += t[i] == '\n';
    EXPECT_EQ(lines, 13);
    EXPECT(t[size - 1] == '\n');
    uint8_t sha[SHA256_DIGEST_LENGTH];
    SHA256(f->small, SMALL_VALUES * 4, sha);
    char line[160], hex[65];
    ggfs_hex(sha, sizeof sha, hex);
    snprintf(line, sizeof line, "sha256    %.64s  model.gguf:small\n", hex);
    EXPECT(memmem(t, size, line, strlen(line)) != NULL);
    XXH64_state_t *x = XXH64_createState();
    XXH64_reset(x, 0);
    XXH64_update(x, f->big, (size_t)BIG_VALUES * 4);
    XXH64_update(x, f->small, SMALL_VALUES * 4);
    snprintf(line, sizeof line, "xxh64     %016llx  model.gguf\n", (unsigned long long)XXH64_digest(x));
    XXH64_freeState(x);
    EXPECT(memmem(t, size, line, strlen(line)) != NULL);
    EXPECT(memmem(t, size, "\nuuid      ", 11) != NULL);
    ggfs_hash_cache_destroy(&cache);
    return 1;
}

static int test_changed_source_is_not_kept(const fixture *f)
{
    ggfs_hash_cache cache;
    EXPECT(cache_init(&cache, f->model));
    atomic_store(&f->src->unchanged_calls, 1); // no lingering
    atomic_store(&f->src->changed, true);
    char text[2 * GGFS_DIGEST_MAX + 1];
    const char *hashes;
    EXPECT_EQ(ggfs_hash_file(&cache, f->model, 1, GGFS_HASH_SHA1, text), EIO);
    EXPECT_EQ(ggfs_hashes_get(&cache, f->model, &hashes), EIO);
    EXPECT(ggfs_once_value(&cache.text) == NULL);
    atomic_store(&f->src->changed, false);
    EXPECT_EQ(ggfs_hash_file(&cache, f->model, 1, GGFS_HASH_SHA1, text), 0);
    EXPECT_EQ(ggfs_hashes_get(&cache, f->model, &hashes), 0);
    ggfs_hash_cache_destroy(&cache);
    return 1;
}

static int test_cancelled_is_not_kept(const fixture *f)
{
    counting_cancel asked = {0};
    const ggfs_cancel cancel = counting_cancel_of(&asked);
    ggfs_hash_cache cache;
    EXPECT(cache_init(&cache, f->model));
    cache.cancel = &cancel;
    atomic_store(&f->src->unchanged_calls, 1); // no lingering
    // Asked before each 8 MiB chunk: big's pass stops at the third ask.
    atomic_store(&asked.from, 3);
    char text[2 * GGFS_DIGEST_MAX + 1];
    EXPECT_EQ(ggfs_hash_file(&cache, f->model, 0, GGFS_HASH_SHA256, text), ECANCELED);
    EXPECT_EQ(atomic_load(&asked.asks), 3);
    const char *hashes;
    EXPECT_EQ(ggfs_hashes_get(&cache, f->model, &hashes), ECANCELED);
    EXPECT(ggfs_once_value(&cache.text) == NULL);
    EXPECT_EQ(atomic_load(&atomic_load(&cache.tensors[0])->done), 0);
    atomic_store(&asked.from, 0);
    EXPECT_EQ(ggfs_hashes_get(&cache, f->model, &hashes), 0);
    EXPECT_EQ(atomic_load(&atomic_load(&cache.tensors[0])->done), GGFS_ALL_HASHES);
    ggfs_hash_cache_destroy(&cache);
    return 1;
}

int main(void)
{
    size_t size, data_at, small_at;
    uint8_t *bytes = make_file(&size, &data_at, &small_at);
    if (!bytes || !ggfs_guard_install())
        return 1;
    ggp_error err;
    ggp_file *file = ggp_open_mem(bytes, size, &err);
    if (!file) {
        fprintf(stderr, "open: offset %llu: %s\n", (unsigned long long)err.offset, err.msg);
        return 1;
    }
    counting_source src = {.base = {.ops = &counting_ops, .name = "mem.gguf", .size = size, .map = bytes}};
    atomic_init(&src.unchanged_calls, 0);
    atomic_init(&src.changed, false);
    ggfs_shard shard = {.source = &src.base, .file = file, .file_name = "mem.gguf", .first_tensor = 0};
    ggfs_model m = {.shards = &shard, .n_shards = 1, .n_tensors = 2, .total_size = size};
    const fixture f = {&m, &src, bytes + data_at, bytes + data_at + small_at};
    int ok = test_concurrent_readers_share_one_computation(&f);
    ok &= test_a_tensor_file_computes_its_hash_only(&f);
    ok &= test_hashes_is_one_pass_that_fills_the_tensors(&f);
    ok &= test_changed_source_is_not_kept(&f);
    ok &= test_cancelled_is_not_kept(&f);
    ggp_close(file);
    free(bytes);
    printf("hash cache: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
