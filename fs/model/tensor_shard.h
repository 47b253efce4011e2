/*
 * What a model's reads and passes over a tensor's data share, whichever
 * way they get the bytes (tensor_bytes.c, tensor_f32.c): the shard the
 * tensor lies in, checked before; a mapping that faulted, which means the
 * file was cut short; and the check after a pass, since a file rewritten
 * in place leaves no fault behind. Private to fs/model/.
 */
#ifndef GGFS_MODEL_TENSOR_SHARD_H
#define GGFS_MODEL_TENSOR_SHARD_H

#include <errno.h>

#include "model/model.h"

/* Tensor `index` (*t) and its shard, when the shard still holds the bytes
 * it held when opened; NULL (EIO to the reader) when it does not or there
 * is no such tensor. */
static inline const ggfs_shard *ggfs_tensor_shard(const ggfs_model *m, uint64_t index, const ggp_tensor **t)
{
    uint32_t shard;
    *t = ggfs_model_tensor(m, index, &shard);
    if (!*t || !ggfs_source_unchanged(m->shards[shard].source))
        return NULL;
    return &m->shards[shard];
}

/* A guarded read of the shard's mapping faulted: the file was cut short.
 * Marks it changed (every later read fails, the source logs it once) and
 * returns EIO. */
static inline int ggfs_shard_cut_short(const ggfs_shard *s)
{
    s->source->ops->mark_changed(s->source, "was cut short");
    return EIO;
}

/* The result of a pass over the shard's bytes that ended with err: EIO
 * when it succeeded but the shard changed meanwhile, since what was read
 * is only trusted if the source is still the same. */
static inline int ggfs_shard_recheck(const ggfs_shard *s, int err)
{
    return !err && !ggfs_source_unchanged(s->source) ? EIO : err;
}

#endif
