/*
 * A tensor's values as f32 (tensor_f32.h), from the mapping or through the
 * source.
 */
#include <errno.h>
#include <stdlib.h>

#include "model/guard.h"
#include "model/tensor_f32.h"
#include "model/tensor_shard.h"

/* Where a fetched decode puts the blocks: after the values, on a 64-byte
 * boundary as they would be in a mapping. */
static size_t blocks_at(uint64_t count)
{
    return ((size_t)(count * sizeof(float)) + 63) & ~(size_t)63;
}

/* decode for a shard without a mapping. */
static int decode_fetched(const ggfs_shard *s, const ggp_tensor *t, uint64_t first, uint64_t count,
                          ggfs_f32_memory get, void *ctx, float **values)
{
    uint64_t off, span;
    if (ggp_tensor_f32_span(t, first, count, &off, &span) != GGP_OK)
        return EIO;
    const size_t at = blocks_at(count);
    char *buf = get(ctx, at + (size_t)span);
    if (!buf)
        return ENOMEM;
    const int err = ggfs_source_read(s->source, buf + at, (size_t)span, t->offset + off, t->offset + t->bytes);
    if (err)
        return err;
    if (ggp_tensor_decode_f32(s->file, t, buf + at, (size_t)span, first, count, (float *)buf) != GGP_OK)
        return EIO;
    *values = (float *)buf;
    return 0;
}

/* Elements [first, first + count) of t, in shard s checked unchanged by
 * the caller. */
static int decode(const ggfs_shard *s, const ggp_tensor *t, uint64_t first, uint64_t count, ggfs_f32_memory get,
                  void *ctx, float **values)
{
    if (!s->source->map)
        return decode_fetched(s, t, first, count, get, ctx, values);
    float *dst = get(ctx, (size_t)count * sizeof(float));
    if (!dst)
        return ENOMEM;
    bool cut_short;
    if (ggfs_guarded_read_f32(s->file, t, first, count, dst, &cut_short) != GGP_OK)
        return cut_short ? ggfs_shard_cut_short(s) : EIO;
    *values = dst;
    return 0;
}

int ggfs_model_tensor_f32(const ggfs_model *m, uint64_t index, uint64_t first, uint64_t count,
                          ggfs_f32_memory get, void *ctx, float **values)
{
    const ggp_tensor *t;
    const ggfs_shard *s = ggfs_tensor_shard(m, index, &t);
    if (!s)
        return EIO;
    return decode(s, t, first, count, get, ctx, values);
}

/* A pass's memory: one buffer, grown to the largest chunk's need. */
typedef struct pass_memory {
    void *data;
    size_t cap;
} pass_memory;

static void *grow(void *ctx, size_t size)
{
    pass_memory *mem = ctx;
    if (size > mem->cap) {
        void *grown = realloc(mem->data, size);
        if (!grown)
            return NULL;
        mem->data = grown;
        mem->cap = size;
    }
    return mem->data;
}

int ggfs_model_tensor_f32_pass(const ggfs_model *m, uint64_t index, size_t chunk, const ggfs_cancel *cancel,
                               ggfs_f32_consumer consume, void *ctx)
{
    const ggp_tensor *t;
    const ggfs_shard *s = ggfs_tensor_shard(m, index, &t);
    if (!s)
        return EIO;
    pass_memory mem = {NULL, 0};
    int err = 0;
    for (uint64_t first = 0; first < t->elements && !err; first += chunk) {
        const uint64_t n = t->elements - first < chunk ? t->elements - first : chunk;
        if (ggfs_cancel_asked(cancel)) {
            err = ECANCELED;
            break;
        }
        float *values;
        err = decode(s, t, first, n, grow, &mem, &values);
        if (!err)
            consume(ctx, values, (size_t)n);
    }
    free(mem.data);
    return ggfs_shard_recheck(s, err);
}
