/*
 * A tensor's values as f32: the one decode behind tensors/NAME/f32, the
 * values of f32.npy and stats. From a local shard's mapping the blocks the
 * elements touch are dequantized straight into the caller's memory under
 * the SIGBUS guard (no copy of the blocks); for a shard without a mapping
 * (a remote one) the blocks the elements need (ggp_tensor_f32_span) are
 * read through its source, so through its caches and read-ahead, into the
 * same memory after the values, and decoded from there. A shard found cut
 * short is marked changed, so every later read of it fails.
 */
#ifndef GGFS_MODEL_TENSOR_F32_H
#define GGFS_MODEL_TENSOR_F32_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "util/cancel.h"

/* Memory of at least size bytes for one decode, from the caller (a
 * thread's scratch, say), or NULL when out of memory. */
typedef void *(*ggfs_f32_memory)(void *ctx, size_t size);

/* Decodes elements [first, first + count) of tensor `index`, which has an
 * f32 view, into memory from get(ctx, size) (called once), and points
 * *values at them (count floats, at the start of that memory). Returns 0,
 * or EIO when the shard changed, was cut short or kept failing (the source
 * logs why), ENOMEM. */
int ggfs_model_tensor_f32(const ggfs_model *m, uint64_t index, uint64_t first, uint64_t count,
                          ggfs_f32_memory get, void *ctx, float **values);

typedef void (*ggfs_f32_consumer)(void *ctx, const float *values, size_t n);

/* Passes every value of tensor `index`, which has an f32 view, to consume
 * in order, in chunks of at most chunk values (none for an empty tensor),
 * asking cancel (NULL: never) before each. Returns 0, or EIO as above,
 * ECANCELED when cancel asked, ENOMEM; on an error the consumer has seen a
 * prefix of the values and what it made of them is to be thrown away. */
int ggfs_model_tensor_f32_pass(const ggfs_model *m, uint64_t index, size_t chunk, const ggfs_cancel *cancel,
                               ggfs_f32_consumer consume, void *ctx);

#endif
