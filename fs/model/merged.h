/*
 * model.gguf: the model as one GGUF file. For a plain file it is the file
 * itself. For a split set it is the file ggml's writer makes from shard 1's
 * keys without the split.* keys and every tensor of every shard in shard
 * order, each tensor's data at the next multiple of the alignment (what
 * merging the set gives), in the shards' version and byte order:
 *
 *   header (built on first read)    magic, version, counts, keys, descriptors
 *   zeros                           to the alignment
 *   tensor 0's bytes, zeros         served from its shard as read
 *   tensor 1's bytes, zeros ...
 *
 * The layout (where each tensor's data goes) is computed at open, in time
 * proportional to the number of tensors; the bytes are never copied.
 */
#ifndef GGFS_MODEL_MERGED_H
#define GGFS_MODEL_MERGED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/shard.h"

typedef struct ggfs_merged {
    bool available;          // false when a tensor's size is unknown (type)
    uint64_t size;           // bytes of model.gguf
    uint64_t header_len;     // bytes of the merged header, before padding
    uint64_t data_offset;    // header_len padded to the alignment
    uint64_t *data_at;       // split sets: each tensor's data offset in model.gguf
    const ggfs_shard *shards; // the model's, which outlive the layout
    uint32_t n_shards;
    uint64_t n_tensors;
    pthread_mutex_t lock;    // guards building the header
    _Atomic(uint8_t *) header; // the header's bytes once built
} ggfs_merged;

/* Where the bytes at one offset of model.gguf come from: a run of bytes of
 * the merged header, of zeros, or of one shard. */
typedef enum ggfs_piece_kind { GGFS_PIECE_HEADER, GGFS_PIECE_ZEROS, GGFS_PIECE_SHARD } ggfs_piece_kind;

typedef struct ggfs_piece {
    ggfs_piece_kind kind;
    uint32_t shard;          // GGFS_PIECE_SHARD
    uint64_t at;             // offset in the header or in the shard
    uint64_t len;            // bytes of the run from the asked offset on
} ggfs_piece;

/* Lays out model.gguf for a model whose shards are open: shards[0,
 * n_shards), holding n_tensors in all, which must outlive m. Allocates
 * (for a split set); returns false when out of memory. */
bool ggfs_merged_init(ggfs_merged *m, const ggfs_shard *shards, uint32_t n_shards, uint64_t n_tensors);
void ggfs_merged_destroy(ggfs_merged *m);

/* The run of bytes that starts at off (< size). Builds the merged header on
 * first use; false when out of memory. */
bool ggfs_merged_piece(ggfs_merged *m, uint64_t off, ggfs_piece *piece);

/* The merged header's bytes (a split set only), built on first use; NULL
 * when out of memory. */
const uint8_t *ggfs_merged_header(ggfs_merged *m);

#endif
