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
 * The layout (where each tensor's data goes, counted from the start of the
 * data section) is computed at open, in time proportional to the number of
 * tensors; the bytes are never copied. An edited model (edits.h) has a
 * header of its own, a ggfs_gguf_head: the same data section follows it,
 * moved by the difference in header sizes (a plain file's data section, to
 * its end, is its own bytes from its data offset on).
 */
#ifndef GGFS_MODEL_MERGED_H
#define GGFS_MODEL_MERGED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/header.h"
#include "model/shard.h"

typedef struct ggfs_merged {
    bool available;          // false when a tensor's size is unknown (type)
    uint64_t size;           // bytes of model.gguf
    uint64_t header_len;     // bytes of the merged header, before padding
    uint64_t data_offset;    // header_len padded to the alignment
    uint64_t data_size;      // bytes from the data section's start to the end
    uint64_t *data_at;       // split sets: each tensor's data offset from the
                             // start of the data section
    const ggfs_shard *shards; // the model's, which outlive the layout
    uint32_t n_shards;
    uint64_t n_tensors;
    pthread_mutex_t lock;    // guards building the header
    _Atomic(uint8_t *) header; // the header's bytes once built
} ggfs_merged;

/* An edited model's header and where its data section lies. */
typedef struct ggfs_gguf_head {
    const uint8_t *bytes;    // the header, len bytes
    uint64_t len;
    uint64_t data_offset;    // len padded to the alignment
    uint64_t size;           // bytes of the edited model.gguf
} ggfs_gguf_head;

/* Where the bytes at one offset of model.gguf come from: a run of bytes of
 * a header, of zeros, or of one shard. */
typedef enum ggfs_piece_kind { GGFS_PIECE_HEADER, GGFS_PIECE_ZEROS, GGFS_PIECE_SHARD } ggfs_piece_kind;

typedef struct ggfs_piece {
    ggfs_piece_kind kind;
    uint32_t shard;          // GGFS_PIECE_SHARD
    uint64_t at;             // offset in the shard
    const uint8_t *bytes;    // GGFS_PIECE_HEADER: the bytes from the asked offset on
    uint64_t len;            // bytes of the run from the asked offset on
} ggfs_piece;

/* Lays out model.gguf for a model whose shards are open: shards[0,
 * n_shards), holding n_tensors in all, which must outlive m. Allocates
 * (for a split set); returns false when out of memory. */
bool ggfs_merged_init(ggfs_merged *m, const ggfs_shard *shards, uint32_t n_shards, uint64_t n_tensors);
void ggfs_merged_destroy(ggfs_merged *m);

/* The run of bytes that starts at off, which is less than the size: of
 * the model as it is (edited NULL), or as edited. Builds the merged
 * header on first use; false when out of memory. */
bool ggfs_merged_piece(ggfs_merged *m, const ggfs_gguf_head *edited, uint64_t off, ggfs_piece *piece);

/* The merged header's bytes (a split set only), built on first use; NULL
 * when out of memory. */
const uint8_t *ggfs_merged_header(ggfs_merged *m);

/* A plan of model.gguf's header with kvs for keys (header.h): every
 * tensor of every shard, at its place in the data section. */
void ggfs_merged_plan(const ggfs_merged *m, const ggfs_run *kvs, uint64_t n_kv, ggfs_header_plan *plan);

/* Whether a key is one of the split.* keys a merged model leaves out. */
bool ggfs_is_split_key(const char *name, uint64_t len);

#endif
