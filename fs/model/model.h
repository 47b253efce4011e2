/*
 * A model: one GGUF file, or the shards of a split set, each a source of
 * bytes (source/source.h) with the parser's index of its header. The model knows
 * nothing of FUSE: it opens and validates the set, numbers the tensors of
 * all shards in shard order (shard.h), and lays out model.gguf (merged.h).
 */
#ifndef GGFS_MODEL_MODEL_H
#define GGFS_MODEL_MODEL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"
#include "model/merged.h"
#include "model/shard.h"
#include "model/view.h"
#include "source/source.h"

typedef struct ggfs_model {
    ggfs_shard *shards;     // in split.no order; one for a plain file
    uint32_t n_shards;
    uint64_t n_tensors;     // over all shards
    uint64_t total_size;    // bytes over all shards
    ggfs_merged merged;     // the layout of model.gguf for a split set
    ggfs_view view;         // the keys and model.gguf as they are (view.h)
} ggfs_model;

/* Why a model was refused: the parser's code, offset and message, and the
 * file (or URL) they are about. */
typedef struct ggfs_model_error {
    ggp_error error;
    char where[PATH_MAX];
} ggfs_model_error;

/* Opens the model `name` names: a file or URL, or any shard of a split set
 * (the other shards are found beside it by name), checking the set as SPEC
 * "Split models" says. Remote shards are opened with `remote` (NULL when
 * the mount has none). Returns NULL and fills err on refusal. */
ggfs_model *ggfs_model_open(const char *name, ggfs_remote_engine *remote, ggfs_model_error *err);

/* The most a remote shard's header is fetched past its end: growing
 * requests stop at the first multiple of this past what the parser asked. */
#define GGFS_MODEL_HEADER_STEP (1u << 20)
void ggfs_model_close(ggfs_model *model);

/* Whether the model is a split set (more than one shard). */
static inline bool ggfs_model_is_split(const ggfs_model *m)
{
    return m->n_shards > 1;
}

/* The file whose keys are the model's metadata: shard 1's. */
static inline const ggp_file *ggfs_model_keys(const ggfs_model *m)
{
    return m->shards[0].file;
}

/* Tensor `index` of the model and the shard it lies in (0-based); NULL
 * when index is out of range. */
const ggp_tensor *ggfs_model_tensor(const ggfs_model *m, uint64_t index, uint32_t *shard);

/* The index of the tensor with exactly this name, or UINT64_MAX. */
uint64_t ggfs_model_tensor_find(const ggfs_model *m, const char *name, size_t len);

/* Reads a model's key as an integer of any integer type; false when the
 * key is absent or not an integer. *offset is the value's file offset. */
bool ggfs_model_key_int(const ggp_file *file, const char *key, int64_t *value, uint64_t *offset);

#endif
