/*
 * A shard of a model: a source of bytes (source/source.h) with the
 * parser's index of its header, and where its tensors fall in the
 * model's numbering. A model (model.h) is one shard, or the shards of a
 * split set in split.no order, whose tensors are numbered in shard order.
 */
#ifndef GGFS_MODEL_SHARD_H
#define GGFS_MODEL_SHARD_H

#include <stdint.h>

#include "ggp.h"
#include "source/source.h"
#include "util/big_buffer.h"

typedef struct ggfs_shard {
    ggfs_source *source;
    ggp_file *file;         // the index of its header
    ggfs_big_buffer header; // the header's bytes the index points into, read
                            // at open into memory of its own
    const char *file_name;  // the last component of the source's name, without
                            // a URL's query or an hf:// @REVISION (malloc'ed)
    uint64_t first_tensor;  // the model's index of its first tensor
} ggfs_shard;

/* Tensor `index` of the model whose shards are shards[0, n_shards) and
 * which has n_tensors in all, and the shard it lies in (0-based); NULL
 * when index is out of range. */
static inline const ggp_tensor *ggfs_shards_tensor(const ggfs_shard *shards, uint32_t n_shards,
                                                   uint64_t n_tensors, uint64_t index, uint32_t *shard)
{
    if (index >= n_tensors)
        return NULL;
    // The last shard whose first tensor is at or before index: never one
    // without tensors, which shares its first index with the next shard.
    uint32_t lo = 0, hi = n_shards;
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (shards[mid].first_tensor <= index)
            lo = mid;
        else
            hi = mid;
    }
    *shard = lo;
    return ggp_tensor_at(shards[lo].file, index - shards[lo].first_tensor);
}

#endif
