/*
 * The hashes of a mount, as llama.cpp's `llama-gguf-hash --all --uuid
 * model.gguf` computes them: tensors/NAME/{xxh64,sha1,sha256} (one
 * tensor's digest) and the root's `hashes` (every tensor's four digests,
 * then the model's and its UUID). Each is computed on its first read and
 * kept for the life of the mount; readers that come while it is computed
 * wait for that one computation. A tensor file computes its one hash only;
 * `hashes` computes everything in one pass over the tensors in file order,
 * filling the tensors' slots on the way. Sizes are known before: they
 * depend on the tensor names only, so stat never computes.
 */
#ifndef GGFS_TREE_HASH_CACHE_H
#define GGFS_TREE_HASH_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "tree/digest.h"
#include "util/cancel.h"
#include "util/once.h"

/* One tensor's digests; allocated when its first hash is asked for. */
typedef struct ggfs_tensor_digests {
    _Atomic unsigned done; // GGFS_HASH_BITs whose digest is filled in
    uint8_t digest[GGFS_N_HASHES][GGFS_DIGEST_MAX];
} ggfs_tensor_digests;

typedef struct ggfs_hash_cache {
    ggfs_once_group group;                   // its lock guards `computing` too, and its
                                             // condition is broadcast when they change
    _Atomic(ggfs_tensor_digests *) *tensors; // per tensor, NULL until asked for
    uint8_t *computing;                      // per tensor, under lock: GGFS_HASH_BITs a reader computes
    ggfs_once text;                          // `hashes` (char *)
    uint64_t text_size;                      // its exact size; UINT64_MAX when it has none
    uint64_t n_tensors;
    _Atomic(const ggfs_digest_module *) module; // loaded on the first hash (tree/digest.h)
    atomic_bool module_failed;               // loading it failed, and that was logged
    const ggfs_cancel *cancel;               // asked between chunks of a computation
} ggfs_hash_cache;

/* Sizes the `hashes` text from the model's tensor names and allocates the
 * per-tensor slots (nothing is hashed); computations ask cancel (NULL:
 * never) whether to stop. false when out of memory. destroy is safe on a
 * zeroed cache and after a failed init. */
bool ggfs_hash_cache_init(ggfs_hash_cache *c, const ggfs_model *m, const ggfs_cancel *cancel);
void ggfs_hash_cache_destroy(ggfs_hash_cache *c);

/* tensors/NAME/HASH: the digest's lowercase hex and a newline. */
static inline uint64_t ggfs_hash_file_size(ggfs_hash h)
{
    return 2 * ggfs_hash_size(h) + 1;
}

/* Writes the text of tensor `index`'s file for hash h into text (at least
 * ggfs_hash_file_size(h) bytes), computing that hash unless it was
 * computed or is being computed (then waits). The tensor must have a raw
 * view. Returns 0, or EIO when its shard changed, was cut short or kept
 * failing, or the hashes' module cannot be loaded (logged once per mount)
 * (nothing is kept: the next reader tries again), ECANCELED when the
 * cache's cancel asked (nothing is kept either), ENOMEM. */
int ggfs_hash_file(ggfs_hash_cache *c, const ggfs_model *m, uint64_t index, ggfs_hash h, char *text);

/* Whether the model has `hashes`: every tensor's size is known (a tensor
 * of an unknown type leaves gguf-hash nothing to print, as ggml refuses
 * the file). */
static inline bool ggfs_hashes_available(const ggfs_hash_cache *c)
{
    return c->text_size != UINT64_MAX;
}

/* The `hashes` text (ggfs_hashes_size bytes, not NUL-terminated), computed
 * unless it was or is being computed (then waits); valid until destroy.
 * Returns 0, EIO or ECANCELED (as above) or ENOMEM. */
int ggfs_hashes_get(ggfs_hash_cache *c, const ggfs_model *m, const char **text);

static inline uint64_t ggfs_hashes_size(const ggfs_hash_cache *c)
{
    return c->text_size;
}

#endif
