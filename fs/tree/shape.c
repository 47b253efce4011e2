/*
 * The tree's shape (see shape.h): one line per kind of node, one row per
 * entry of the root and of a tensor's directory.
 */
#include <string.h>

#include "tree/shape.h"

const ggfs_row ggfs_root_rows[] = {
    {"header", GGFS_HEADER, GGFS_INO_HEADER},
    {"warnings", GGFS_WARNINGS, GGFS_INO_WARNINGS},
    {"model.gguf", GGFS_MODEL_GGUF, GGFS_INO_MODEL_GGUF},
    {"metadata.json", GGFS_METADATA_JSON, GGFS_INO_METADATA_JSON},
    {"tensors.tsv", GGFS_TENSORS_TSV, GGFS_INO_TENSORS_TSV},
    {"hashes", GGFS_HASHES, GGFS_INO_HASHES},
    {"verify", GGFS_VERIFY, GGFS_INO_VERIFY},
    {"remote", GGFS_REMOTE_STATUS, GGFS_INO_REMOTE},
    {"memory.tsv", GGFS_MEMORY_TSV, GGFS_INO_MEMORY_TSV},
    {"Modelfile", GGFS_MODELFILE, GGFS_INO_MODELFILE},
    {"metadata", GGFS_METADATA_DIR, GGFS_INO_METADATA},
    {"tensors", GGFS_TENSORS_DIR, GGFS_INO_TENSORS},
    {"shards", GGFS_SHARDS_DIR, GGFS_INO_SHARDS},
    {"memory", GGFS_MEMORY_DIR, GGFS_INO_MEMORY},
    {"offload", GGFS_OFFLOAD_DIR, GGFS_INO_OFFLOAD},
    {"tokenizer", GGFS_TOKENIZER_DIR, GGFS_INO_TOKENIZER},
    {"layers", GGFS_LAYERS_DIR, GGFS_INO_LAYERS},
    {NULL, GGFS_NONE, 0},
};

const ggfs_row ggfs_tokenizer_rows[] = {
    {"vocab.tsv", GGFS_VOCAB_TSV, GGFS_INO_VOCAB_TSV},
    {"special", GGFS_SPECIAL_TOKENS, GGFS_INO_SPECIAL_TOKENS},
    {NULL, GGFS_NONE, 0},
};

const ggfs_row ggfs_tensor_rows[] = {
    {"info", GGFS_TENSOR_INFO, 1},
    {"raw", GGFS_TENSOR_RAW, 2},
    {"f32", GGFS_TENSOR_F32, 3},
    {"f32.npy", GGFS_TENSOR_NPY, 4},
    {"stats", GGFS_TENSOR_STATS, 5},
    {"xxh64", GGFS_TENSOR_XXH64, 6},
    {"sha1", GGFS_TENSOR_SHA1, 7},
    {"sha256", GGFS_TENSOR_SHA256, 8},
    {NULL, GGFS_NONE, 0},
};

_Static_assert(sizeof ggfs_tensor_rows / sizeof ggfs_tensor_rows[0] == GGFS_TENSOR_INODES,
               "a tensor's inodes: its directory and one per row (the rows end with NULL)");

enum {
    DIR = GGFS_K_DIR,
    TEXT = GGFS_K_TEXT,
    DATA = GGFS_K_READS_DATA,
    KEYS = GGFS_K_FOLLOWS_KEYS,
    TENSOR = GGFS_K_OF_TENSOR,
};

static const unsigned kinds[] = {
    [GGFS_NONE] = 0,
    [GGFS_ROOT] = DIR,
    [GGFS_HEADER] = TEXT | KEYS,
    [GGFS_METADATA_DIR] = DIR,
    [GGFS_TENSORS_DIR] = DIR,
    [GGFS_KV] = TEXT | KEYS,
    [GGFS_TENSOR_DIR] = DIR | TENSOR,
    [GGFS_TENSOR_INFO] = TEXT | TENSOR,
    [GGFS_TENSOR_RAW] = TENSOR,
    [GGFS_TENSOR_F32] = TENSOR,
    [GGFS_TENSOR_NPY] = TENSOR,
    [GGFS_TENSOR_STATS] = TEXT | DATA | TENSOR,
    [GGFS_TENSOR_XXH64] = TEXT | DATA | TENSOR,
    [GGFS_TENSOR_SHA1] = TEXT | DATA | TENSOR,
    [GGFS_TENSOR_SHA256] = TEXT | DATA | TENSOR,
    [GGFS_MODEL_GGUF] = KEYS,
    [GGFS_SHARDS_DIR] = DIR,
    [GGFS_SHARD] = TEXT,
    [GGFS_WARNINGS] = TEXT | KEYS,
    [GGFS_METADATA_JSON] = TEXT | KEYS,
    [GGFS_TENSORS_TSV] = TEXT,
    [GGFS_HASHES] = TEXT | DATA,
    [GGFS_REMOTE_STATUS] = TEXT,
    [GGFS_MEMORY_DIR] = DIR,
    [GGFS_MEMORY_CTX] = TEXT | KEYS,
    [GGFS_MEMORY_TSV] = TEXT | KEYS,
    [GGFS_TOKENIZER_DIR] = DIR,
    [GGFS_VOCAB_TSV] = TEXT | KEYS,
    [GGFS_SPECIAL_TOKENS] = TEXT | KEYS,
    [GGFS_MODELFILE] = TEXT,
    [GGFS_LAYERS_DIR] = DIR,
    [GGFS_LAYER] = TEXT,
    [GGFS_LAYER_TREE] = DIR,
    [GGFS_VERIFY] = TEXT | DATA,
    [GGFS_OFFLOAD_DIR] = DIR,
    [GGFS_OFFLOAD_CTX] = TEXT | KEYS,
};

_Static_assert(sizeof kinds / sizeof kinds[0] == GGFS_KIND_COUNT, "one line per kind");

unsigned ggfs_kind_flags(ggfs_kind kind)
{
    return (unsigned)kind < GGFS_KIND_COUNT ? kinds[kind] : 0;
}

/* ==== Finding rows ==== */

const ggfs_row *ggfs_row_at(const ggfs_row *rows, uint64_t i)
{
    for (uint64_t r = 0; r < i; r++) {
        if (!rows[r].name)
            return NULL;
    }
    return rows[i].name ? &rows[i] : NULL;
}

const ggfs_row *ggfs_row_named(const ggfs_row *rows, const char *name)
{
    for (; rows->name; rows++) {
        if (strcmp(rows->name, name) == 0)
            return rows;
    }
    return NULL;
}

const ggfs_row *ggfs_row_of_kind(const ggfs_row *rows, ggfs_kind kind)
{
    for (; rows->name; rows++) {
        if (rows->kind == kind)
            return rows;
    }
    return NULL;
}

const ggfs_row *ggfs_row_at_ino(const ggfs_row *rows, uint64_t ino)
{
    for (; rows->name; rows++) {
        if (rows->ino == ino)
            return rows;
    }
    return NULL;
}

/* ==== The directories of fixed rows ==== */

static const struct {
    ggfs_kind dir;
    const ggfs_row *rows;
} fixed_dirs[] = {
    {GGFS_ROOT, ggfs_root_rows},
    {GGFS_TOKENIZER_DIR, ggfs_tokenizer_rows},
};

#define N_FIXED_DIRS (sizeof fixed_dirs / sizeof fixed_dirs[0])

const ggfs_row *ggfs_fixed_rows(ggfs_kind dir)
{
    for (size_t d = 0; d < N_FIXED_DIRS; d++) {
        if (fixed_dirs[d].dir == dir)
            return fixed_dirs[d].rows;
    }
    return NULL;
}

const ggfs_row *ggfs_fixed_row_at_ino(uint64_t ino)
{
    const ggfs_row *row = NULL;
    for (size_t d = 0; !row && d < N_FIXED_DIRS; d++)
        row = ggfs_row_at_ino(fixed_dirs[d].rows, ino);
    return row;
}

const ggfs_row *ggfs_fixed_row_of_kind(ggfs_kind kind)
{
    const ggfs_row *row = NULL;
    for (size_t d = 0; !row && d < N_FIXED_DIRS; d++)
        row = ggfs_row_of_kind(fixed_dirs[d].rows, kind);
    return row;
}
