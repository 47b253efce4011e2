/*
 * gguf-fs-digests.so (digest.h): the hashes over libxxhash's streaming API
 * and libcrypto's EVP digests (which use the CPU's SHA instructions where
 * it has them). Exports ggfs_digest_module_entry alone.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <xxhash.h>

#include "tree/digest.h"

typedef struct state {
    XXH64_state_t *xxh64;
    XXH3_state_t *xxh3;
    EVP_MD_CTX *sha1;
    EVP_MD_CTX *sha256;
    EVP_MD_CTX *md5;
    bool failed; // an EVP call failed
} state;

static EVP_MD_CTX *evp_start(const EVP_MD *md)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx && EVP_DigestInit_ex(ctx, md, NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static void state_free(void *p)
{
    state *d = p;
    if (!d)
        return;
    XXH64_freeState(d->xxh64);
    XXH3_freeState(d->xxh3);
    EVP_MD_CTX_free(d->sha1);
    EVP_MD_CTX_free(d->sha256);
    EVP_MD_CTX_free(d->md5);
    free(d);
}

static void *state_start(unsigned mask)
{
    state *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    bool ok = true;
    if (mask & GGFS_HASH_BIT(GGFS_HASH_XXH64))
        ok &= (d->xxh64 = XXH64_createState()) != NULL && XXH64_reset(d->xxh64, 0) == XXH_OK;
    if (mask & GGFS_HASH_BIT(GGFS_HASH_XXH3))
        ok &= (d->xxh3 = XXH3_createState()) != NULL && XXH3_64bits_reset(d->xxh3) == XXH_OK;
    if (mask & GGFS_HASH_BIT(GGFS_HASH_SHA1))
        ok &= (d->sha1 = evp_start(EVP_sha1())) != NULL;
    if (mask & GGFS_HASH_BIT(GGFS_HASH_SHA256))
        ok &= (d->sha256 = evp_start(EVP_sha256())) != NULL;
    if (mask & GGFS_HASH_BIT(GGFS_HASH_MD5))
        ok &= (d->md5 = evp_start(EVP_md5())) != NULL;
    if (!ok) {
        state_free(d);
        return NULL;
    }
    return d;
}

static void state_update(void *p, const void *bytes, size_t len)
{
    state *d = p;
    if (d->xxh64)
        XXH64_update(d->xxh64, bytes, len);
    if (d->xxh3)
        XXH3_64bits_update(d->xxh3, bytes, len);
    if (d->sha1 && EVP_DigestUpdate(d->sha1, bytes, len) != 1)
        d->failed = true;
    if (d->sha256 && EVP_DigestUpdate(d->sha256, bytes, len) != 1)
        d->failed = true;
    if (d->md5 && EVP_DigestUpdate(d->md5, bytes, len) != 1)
        d->failed = true;
}

static bool state_final(void *p, uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX])
{
    state *d = p;
    XXH64_canonical_t canonical;
    if (d->xxh64) {
        XXH64_canonicalFromHash(&canonical, XXH64_digest(d->xxh64));
        memcpy(out[GGFS_HASH_XXH64], canonical.digest, sizeof canonical.digest);
    }
    if (d->xxh3) {
        XXH64_canonicalFromHash(&canonical, XXH3_64bits_digest(d->xxh3));
        memcpy(out[GGFS_HASH_XXH3], canonical.digest, sizeof canonical.digest);
    }
    if (d->sha1 && EVP_DigestFinal_ex(d->sha1, out[GGFS_HASH_SHA1], NULL) != 1)
        d->failed = true;
    if (d->sha256 && EVP_DigestFinal_ex(d->sha256, out[GGFS_HASH_SHA256], NULL) != 1)
        d->failed = true;
    if (d->md5 && EVP_DigestFinal_ex(d->md5, out[GGFS_HASH_MD5], NULL) != 1)
        d->failed = true;
    return !d->failed;
}

const ggfs_digest_module ggfs_digest_module_entry = {
    .start = state_start,
    .update = state_update,
    .final = state_final,
    .free = state_free,
};
