/*
 * A tensor's raw bytes (or a whole shard's), in order, handed to a consumer chunk by chunk: the
 * way a pass over a whole tensor (its hashes) reads it, through the model's
 * own data path. A local shard's bytes are passed straight from its
 * mapping, under the SIGBUS guard; a shard without a mapping (a remote
 * one) is read through its source, so through its caches, into a buffer.
 * A split set's tensors are read from their shards, so a pass over every
 * tensor in order sees the tensor data of the merged model.gguf.
 */
#ifndef GGFS_MODEL_TENSOR_BYTES_H
#define GGFS_MODEL_TENSOR_BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "util/cancel.h"

/* The most bytes handed to the consumer at once. */
#define GGFS_TENSOR_CHUNK ((size_t)8 << 20)

typedef void (*ggfs_bytes_consumer)(void *ctx, const uint8_t *bytes, size_t len);

/* Passes bytes [0, t->bytes) of tensor `index` to consume, in order, in
 * chunks of at most GGFS_TENSOR_CHUNK bytes (none for an empty tensor),
 * asking cancel (NULL: never) before each. The tensor must have a known
 * size (a raw view). Returns 0, or EIO when the shard changed, was cut
 * short or kept failing (the source logs why), ECANCELED when cancel
 * asked, ENOMEM; on an error the consumer has seen a prefix of the bytes
 * and what it made of them is to be thrown away. */
int ggfs_model_tensor_bytes(const ggfs_model *m, uint64_t index, const ggfs_cancel *cancel,
                            ggfs_bytes_consumer consume, void *ctx);

/* The same over every byte of a shard's file, [0, size): what `verify`
 * digests. */
int ggfs_shard_bytes(const ggfs_shard *s, const ggfs_cancel *cancel, ggfs_bytes_consumer consume, void *ctx);

#endif
