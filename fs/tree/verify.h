/*
 * `verify`: each file of a model (each shard, whole, from its source's
 * bytes) digested and compared with what its store publishes
 * (source/published.h). Computed on the first read and kept for the life
 * of the tree, as `hashes` is: readers that come meanwhile wait for that
 * one computation, a cancelled one keeps nothing. A mismatch becomes a
 * line of the model's `warnings` once it is known.
 *
 * The text, one line per file, tab-separated, then the verdict:
 *
 *   model.gguf	sha256	<digest>	<published or ->	ok|MISMATCH|unpublished
 *   verdict: ok|MISMATCH|unpublished
 *
 * The digest is MD5 (and the line says `md5`) where the store publishes
 * an MD5 only (a single-part S3 ETag).
 */
#ifndef GGFS_TREE_VERIFY_H
#define GGFS_TREE_VERIFY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "util/cancel.h"
#include "util/once.h"

typedef struct ggfs_verify_result {
    char *text;     // `verify`
    size_t len;
    char *warnings; // the lines `warnings` gains (one per mismatching file); "" if none
    size_t warnings_len;
} ggfs_verify_result;

typedef struct ggfs_verify {
    ggfs_once_group group;
    ggfs_once result;             // ggfs_verify_result *
    const ggfs_cancel *cancel;    // asked between chunks
    _Atomic uint64_t done_bytes;  // of the computation under way or done, for `remote`
    uint64_t total_bytes;         // every shard's size
    _Atomic(const struct ggfs_digest_module *) module; // loaded on the first computation
    atomic_bool told;             // the kernel was told of the sizes it changed (tree/ops.c)
} ggfs_verify;

void ggfs_verify_init(ggfs_verify *v, const ggfs_model *m, const ggfs_cancel *cancel);
void ggfs_verify_destroy(ggfs_verify *v);

/* The result, computed unless it was or is being computed (then waits);
 * valid until destroy. Returns 0, EIO when a shard changed, was cut short
 * or kept failing, or the digests' module cannot be loaded (logged),
 * ECANCELED when cancel asked (nothing kept either way), ENOMEM. */
int ggfs_verify_get(ggfs_verify *v, const ggfs_model *m, const ggfs_verify_result **out);

/* The result if it is computed, else NULL; never waits. */
static inline const ggfs_verify_result *ggfs_verify_known(ggfs_verify *v)
{
    return ggfs_once_value(&v->result);
}

/* The length of the lines `warnings` gains: 0 until computed. */
static inline size_t ggfs_verify_warnings_len(ggfs_verify *v)
{
    const ggfs_verify_result *r = ggfs_verify_known(v);
    return r ? r->warnings_len : 0;
}

#endif
