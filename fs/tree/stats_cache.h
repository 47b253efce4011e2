/*
 * tensors/NAME/stats, computed once per mount: the first reader of a
 * tensor's stats streams its f32 values through the accumulator; readers
 * that come while it does wait for that one computation, and every later
 * reader gets the text it left. The size is known before (it depends on
 * the element count only), so stat never computes.
 */
#ifndef GGFS_TREE_STATS_CACHE_H
#define GGFS_TREE_STATS_CACHE_H

#include <stdint.h>

#include "model/model.h"
#include "util/cancel.h"
#include "util/once.h"

typedef struct ggfs_stats_cache {
    ggfs_once_group group;
    ggfs_once *text;          // per tensor: its stats text (char *)
    uint64_t n_tensors;
    const ggfs_cancel *cancel; // asked between chunks of a computation
} ggfs_stats_cache;

/* Allocates the per-tensor slots (nothing is computed); computations ask
 * cancel (NULL: never) whether to stop. false when out of memory. destroy
 * is safe on a zeroed cache and after a failed init. */
bool ggfs_stats_cache_init(ggfs_stats_cache *c, uint64_t n_tensors, const ggfs_cancel *cancel);
void ggfs_stats_cache_destroy(ggfs_stats_cache *c);

/* The stats text of tensor `index` (ggp_stats_text_size(elements) bytes,
 * not NUL-terminated), computing it unless it was computed or is being
 * computed (then waits). The text stays valid until destroy. Returns 0, or
 * EIO when the tensor's shard changed or was cut short (the next reader
 * tries again), ECANCELED when the cache's cancel asked (nothing is kept
 * either), ENOMEM. The tensor must have an f32 view. */
int ggfs_stats_get(ggfs_stats_cache *c, const ggfs_model *m, uint64_t index, const char **text);

/* Computes the stats of tensor `index` into s, streaming its f32 values
 * through the accumulator in cache-sized chunks, asking cancel (NULL:
 * never) before each. Returns 0, EIO, ECANCELED or ENOMEM. */
int ggfs_stats_compute(const ggfs_model *m, uint64_t index, const ggfs_cancel *cancel, ggp_stats *s);

#endif
