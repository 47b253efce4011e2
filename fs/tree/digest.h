/*
 * The hashes llama.cpp's gguf-hash computes with --all, over any bytes fed
 * to them in order: XXH64 (seed 0) and XXH3-64 from libxxhash, SHA-1 and
 * SHA-256 from OpenSSL's libcrypto. Several run side by side over the same
 * bytes, so a pass reads them once.
 *
 * The hashing itself is a module (util/module.h), gguf-fs-digests.so
 * (digest_module.c), which alone links libxxhash and libcrypto: the hash
 * cache loads it on a mount's first hash, so that a mount nobody hashes
 * never loads them.
 */
#ifndef GGFS_TREE_DIGEST_H
#define GGFS_TREE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The four gguf-hash prints, in its order; then MD5, which `verify`
 * computes where a store publishes an MD5 (an S3 ETag). */
typedef enum ggfs_hash {
    GGFS_HASH_XXH64,
    GGFS_HASH_XXH3,
    GGFS_HASH_SHA1,
    GGFS_HASH_SHA256,
    GGFS_N_GGUF_HASHES,
    GGFS_HASH_MD5 = GGFS_N_GGUF_HASHES,
    GGFS_N_HASHES,
} ggfs_hash;

#define GGFS_HASH_BIT(h) (1u << (h))
#define GGFS_ALL_HASHES ((1u << GGFS_N_GGUF_HASHES) - 1) // gguf-hash's four
#define GGFS_DIGEST_MAX 32 // bytes of the longest digest (SHA-256)

/* "xxh64", "xxh3", "sha1", "sha256": gguf-hash's names; "md5". */
const char *ggfs_hash_name(ggfs_hash h);

/* The digest's length in bytes: 8, 8, 20, 32, 16. */
size_t ggfs_hash_size(ggfs_hash h);

/* ==== The module ==== */

#define GGFS_DIGEST_MODULE_FILE "gguf-fs-digests.so"
#define GGFS_DIGEST_MODULE_ENTRY "ggfs_digest_module_entry"

/* What gguf-fs-digests.so exports: the functions below, over a state of
 * its own. */
typedef struct ggfs_digest_module {
    void *(*start)(unsigned mask); // NULL when out of memory
    void (*update)(void *state, const void *bytes, size_t len);
    bool (*final)(void *state, uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX]);
    void (*free)(void *state);
} ggfs_digest_module;

/* The table itself, in the module (and in a test that links
 * digest_module.c). */
extern const ggfs_digest_module ggfs_digest_module_entry;

/* Loads the module; NULL, with why filled in one line (its path and the
 * loader's reason), when it cannot. Safe from any thread. */
const ggfs_digest_module *ggfs_digest_module_load(char *why, size_t why_size);

/* ==== Hashing ==== */

typedef struct ggfs_digests ggfs_digests;

/* Starts the hashes whose GGFS_HASH_BIT is in mask, with the loaded
 * module's functions. Allocates; NULL when out of memory. */
ggfs_digests *ggfs_digests_new(const ggfs_digest_module *module, unsigned mask);

void ggfs_digests_update(ggfs_digests *d, const void *bytes, size_t len);

/* Ends the hashes: the digest of hash h goes to out[h] (ggfs_hash_size(h)
 * bytes; the 64-bit xxHashes as their canonical big-endian bytes, so that
 * their hex reads as xxhsum prints them). Returns false when libcrypto
 * failed (out of memory). */
bool ggfs_digests_final(ggfs_digests *d, uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX]);

void ggfs_digests_free(ggfs_digests *d_from_new);

/* Writes the lowercase hex of bytes[0, len) to hex (2 * len characters, no
 * NUL). */
void ggfs_hex(const uint8_t *bytes, size_t len, char *hex);

#endif
