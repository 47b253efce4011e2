/*
 * `verify` (fs/tree/verify.c) over a model of two shards built by hand over
 * bytes in memory: each line's digest is libcrypto's one-shot SHA-256 (or
 * MD5 where the store published an MD5) of the shard's bytes; a published
 * digest that matches says ok, one that does not says MISMATCH with a
 * `warnings` line naming the file, offset 0 and who published it; nothing
 * published says unpublished; the verdict is the worst line's. Eight
 * readers at once cause one computation; a cancelled or failed one keeps
 * nothing, and the next reader computes again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "check.h"
#include "counting_cancel.h"
#include "counting_source.h"
#include "tree/digest.h"
#include "tree/verify.h"

#define SHARD_BYTES ((size_t)20 << 20) // three chunks of the pass
#define N_READERS 8

typedef struct fixture {
    counting_source src[2];
    uint8_t *bytes[2];
    ggfs_shard shards[2];
    ggfs_model model;
} fixture;

/* Shards "m-00001-of-00002.gguf" and "m-00002-of-00002.gguf" of
 * pseudo-random bytes; their names hold "://" so that no local file is
 * looked up for them. */
static bool fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    uint32_t x = 777;
    for (int k = 0; k < 2; k++) {
        if (!(f->bytes[k] = malloc(SHARD_BYTES)))
            return false;
        for (size_t i = 0; i < SHARD_BYTES; i++) {
            x = x * 1664525u + 1013904223u;
            f->bytes[k][i] = (uint8_t)(x >> 24);
        }
        f->src[k].base = (ggfs_source){.ops = &counting_ops, .size = SHARD_BYTES, .map = f->bytes[k]};
        f->src[k].base.name = k ? "test://m-00002-of-00002.gguf" : "test://m-00001-of-00002.gguf";
        atomic_store(&f->src[k].unchanged_calls, 1); // no lingering unless a test asks
        f->shards[k] = (ggfs_shard){.source = &f->src[k].base,
                                    .file_name = k ? "m-00002-of-00002.gguf" : "m-00001-of-00002.gguf"};
    }
    f->model = (ggfs_model){.shards = f->shards, .n_shards = 2};
    return true;
}

static void fixture_free(fixture *f)
{
    free(f->bytes[0]);
    free(f->bytes[1]);
}

static void verify_init(ggfs_verify *v, const ggfs_model *m, const ggfs_cancel *cancel)
{
    ggfs_verify_init(v, m, cancel);
    atomic_store(&v->module, &ggfs_digest_module_entry);
}

static void hex(const uint8_t *d, size_t n, char *out)
{
    ggfs_hex(d, n, out);
    out[2 * n] = '\0';
}

static void publish_sha256(fixture *f, int k, bool right)
{
    uint8_t d[32];
    SHA256(f->bytes[k], SHARD_BYTES, d);
    if (!right)
        d[5] ^= 1;
    f->src[k].base.published = (ggfs_published){.kind = GGFS_PUBLISHED_SHA256, .where = "lfs.oid"};
    memcpy(f->src[k].base.published.digest, d, 32);
}

static int test_lines_and_verdicts(void)
{
    fixture f;
    EXPECT(fixture_init(&f));
    uint8_t sha[2][32], md5[16];
    SHA256(f.bytes[0], SHARD_BYTES, sha[0]);
    SHA256(f.bytes[1], SHARD_BYTES, sha[1]);
    EXPECT(EVP_Digest(f.bytes[1], SHARD_BYTES, md5, NULL, EVP_md5(), NULL) == 1);
    char h0[65], h1[65], m1[33], want[1024];
    hex(sha[0], 32, h0);
    hex(sha[1], 32, h1);
    hex(md5, 16, m1);

    // Both published and right.
    publish_sha256(&f, 0, true);
    publish_sha256(&f, 1, true);
    ggfs_verify v;
    verify_init(&v, &f.model, NULL);
    const ggfs_verify_result *r;
    EXPECT_EQ(ggfs_verify_get(&v, &f.model, &r), 0);
    snprintf(want, sizeof want, "m-00001-of-00002.gguf\tsha256\t%s\t%s\tok\nm-00002-of-00002.gguf\tsha256\t%s\t%s\tok\nverdict: ok\n",
             h0, h0, h1, h1);
    EXPECT_EQ(r->len, strlen(want));
    EXPECT_STR(r->text, want);
    EXPECT_EQ(r->warnings_len, 0);
    EXPECT_EQ(atomic_load(&v.done_bytes), 2 * SHARD_BYTES);
    EXPECT_EQ(v.total_bytes, 2 * SHARD_BYTES);
    ggfs_verify_destroy(&v);

    // The second wrong: MISMATCH, a warnings line; the first unpublished.
    f.src[0].base.published = (ggfs_published){0};
    publish_sha256(&f, 1, false);
    char wrong[65];
    hex(f.src[1].base.published.digest, 32, wrong);
    verify_init(&v, &f.model, NULL);
    EXPECT_EQ(ggfs_verify_get(&v, &f.model, &r), 0);
    snprintf(want, sizeof want, "m-00001-of-00002.gguf\tsha256\t%s\t-\tunpublished\nm-00002-of-00002.gguf\tsha256\t%s\t%s\tMISMATCH\nverdict: MISMATCH\n",
             h0, h1, wrong);
    EXPECT_STR(r->text, want);
    snprintf(want, sizeof want, "m-00002-of-00002.gguf: offset 0: sha256 %s of the file is not the %s its store publishes (lfs.oid)\n",
             h1, wrong);
    EXPECT_STR(r->warnings, want);
    EXPECT_EQ(r->warnings_len, strlen(want));
    ggfs_verify_destroy(&v);

    // An MD5 published (an S3 ETag): the line compares MD5s; the verdict
    // of ok and unpublished is unpublished.
    f.src[1].base.published = (ggfs_published){.kind = GGFS_PUBLISHED_MD5, .where = "ETag"};
    memcpy(f.src[1].base.published.digest, md5, 16);
    verify_init(&v, &f.model, NULL);
    EXPECT_EQ(ggfs_verify_get(&v, &f.model, &r), 0);
    snprintf(want, sizeof want, "m-00001-of-00002.gguf\tsha256\t%s\t-\tunpublished\nm-00002-of-00002.gguf\tmd5\t%s\t%s\tok\nverdict: unpublished\n",
             h0, m1, m1);
    EXPECT_STR(r->text, want);
    ggfs_verify_destroy(&v);
    fixture_free(&f);
    return 1;
}

typedef struct reader {
    pthread_t thread;
    pthread_barrier_t *start;
    ggfs_verify *v;
    const ggfs_model *m;
    const ggfs_verify_result *r;
    int err;
} reader;

static void *read_verify(void *arg)
{
    reader *r = arg;
    pthread_barrier_wait(r->start);
    r->err = ggfs_verify_get(r->v, r->m, &r->r);
    return NULL;
}

static int test_one_computation_for_readers_at_once(void)
{
    fixture f;
    EXPECT(fixture_init(&f));
    atomic_store(&f.src[0].unchanged_calls, 0); // the first check lingers
    ggfs_verify v;
    verify_init(&v, &f.model, NULL);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N_READERS);
    reader readers[N_READERS];
    for (int i = 0; i < N_READERS; i++) {
        readers[i] = (reader){.start = &start, .v = &v, .m = &f.model};
        EXPECT(pthread_create(&readers[i].thread, NULL, read_verify, &readers[i]) == 0);
    }
    for (int i = 0; i < N_READERS; i++)
        pthread_join(readers[i].thread, NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < N_READERS; i++) {
        EXPECT_EQ(readers[i].err, 0);
        EXPECT(readers[i].r == readers[0].r);
    }
    // One pass over each shard: checked before and after.
    EXPECT_EQ(atomic_load(&f.src[0].unchanged_calls), 2);
    EXPECT_EQ(atomic_load(&f.src[1].unchanged_calls), 1 + 2);
    ggfs_verify_destroy(&v);
    fixture_free(&f);
    return 1;
}

static int test_cancelled_or_failed_keeps_nothing(void)
{
    fixture f;
    EXPECT(fixture_init(&f));
    counting_cancel cc = {0};
    atomic_store(&cc.from, 2); // the second chunk's ask
    const ggfs_cancel cancel = counting_cancel_of(&cc);
    ggfs_verify v;
    verify_init(&v, &f.model, &cancel);
    const ggfs_verify_result *r;
    EXPECT_EQ(ggfs_verify_get(&v, &f.model, &r), ECANCELED);
    EXPECT_EQ(atomic_load(&cc.asks), 2);
    EXPECT(ggfs_verify_known(&v) == NULL);
    EXPECT_EQ(ggfs_verify_warnings_len(&v), 0);
    atomic_store(&cc.from, 0);
    atomic_store(&f.src[1].changed, true);
    EXPECT_EQ(ggfs_verify_get(&v, &f.model, &r), EIO);
    EXPECT(ggfs_verify_known(&v) == NULL);
    atomic_store(&f.src[1].changed, false);
    EXPECT_EQ(ggfs_verify_get(&v, &f.model, &r), 0);
    EXPECT(ggfs_verify_known(&v) == r);
    ggfs_verify_destroy(&v);
    fixture_free(&f);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_lines_and_verdicts();
    ok &= test_one_computation_for_readers_at_once();
    ok &= test_cancelled_or_failed_keeps_nothing();
    return ok ? 0 : 1;
}
