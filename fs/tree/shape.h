/*
 * The tree's shape, written once: what each kind of node is, and the
 * entries of the fixed directories (the root's, each tensor's) in the
 * order readdir lists them, with the inode numbers they take. Lookup,
 * readdir, the inode arithmetic and how a file is opened derive from these
 * tables (tree.c, ops.c): a new file at the root, in tokenizer/ or in every
 * tensor's directory is one row here, plus its kind's size (attr.c), its bytes (a
 * text's render in text.c or ops.c, or a data reader in read_data.c) and,
 * if not every model has it, when it exists (tree.c).
 */
#ifndef GGFS_TREE_SHAPE_H
#define GGFS_TREE_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ggfs_kind {
    GGFS_NONE,
    GGFS_ROOT,
    GGFS_HEADER,
    GGFS_METADATA_DIR,
    GGFS_TENSORS_DIR,
    GGFS_KV,
    GGFS_TENSOR_DIR,
    GGFS_TENSOR_INFO,
    GGFS_TENSOR_RAW,
    GGFS_TENSOR_F32,
    GGFS_TENSOR_NPY,
    GGFS_TENSOR_STATS,
    GGFS_TENSOR_XXH64,
    GGFS_TENSOR_SHA1,
    GGFS_TENSOR_SHA256,
    GGFS_MODEL_GGUF,
    GGFS_SHARDS_DIR,
    GGFS_SHARD,
    GGFS_WARNINGS,
    GGFS_METADATA_JSON,
    GGFS_TENSORS_TSV,
    GGFS_HASHES,
    GGFS_REMOTE_STATUS,
    GGFS_MEMORY_DIR,
    GGFS_MEMORY_CTX,   // memory/CTX: its index is CTX
    GGFS_MEMORY_TSV,
    GGFS_TOKENIZER_DIR,
    GGFS_VOCAB_TSV,
    GGFS_SPECIAL_TOKENS,
    GGFS_MODELFILE,
    GGFS_LAYERS_DIR,
    GGFS_LAYER,
    GGFS_LAYER_TREE, // layers/projector, layers/adapter: another tree's root
    GGFS_VERIFY,
    GGFS_OFFLOAD_DIR,
    GGFS_OFFLOAD_CTX, // offload/CTX: its index is CTX
    GGFS_KIND_COUNT,
} ggfs_kind;

/* The root's inode numbers, and where the numbers of the keys' files
 * start (tree.h numbers the rest). */
enum {
    GGFS_INO_ROOT = 1,
    GGFS_INO_HEADER = 2,
    GGFS_INO_METADATA = 3,
    GGFS_INO_TENSORS = 4,
    GGFS_INO_MODEL_GGUF = 5,
    GGFS_INO_SHARDS = 6,
    GGFS_INO_WARNINGS = 7,
    GGFS_INO_METADATA_JSON = 8,
    GGFS_INO_TENSORS_TSV = 9,
    GGFS_INO_HASHES = 10,
    GGFS_INO_REMOTE = 11,
    GGFS_INO_MEMORY = 12,
    GGFS_INO_MEMORY_TSV = 13,
    GGFS_INO_TOKENIZER = 14,
    GGFS_INO_VOCAB_TSV = 15,     // tokenizer/'s files
    GGFS_INO_SPECIAL_TOKENS = 16,
    GGFS_INO_MODELFILE = 17,
    GGFS_INO_LAYERS = 18,
    GGFS_INO_VERIFY = 19,
    GGFS_INO_OFFLOAD = 20,
    // 21 to 23 are kept for further fixed files
    GGFS_INO_FIRST_KV = 24,
};

/* What a kind of node is. */
enum {
    GGFS_K_DIR = 1 << 0,          // a directory
    GGFS_K_TEXT = 1 << 1,         // rendered whole at open, read from the open file
    GGFS_K_READS_DATA = 1 << 2,   // its render passes over tensor data (stats, hashes)
    GGFS_K_FOLLOWS_KEYS = 1 << 3, // changes with edits: a version per edit (tree.h)
    GGFS_K_OF_TENSOR = 1 << 4,    // a tensor's directory or file: the tensor's xattrs
};

/* The kind's flags (GGFS_NONE's and any unknown kind's: none). */
unsigned ggfs_kind_flags(ggfs_kind kind);

static inline bool ggfs_kind_is(ggfs_kind kind, unsigned flag)
{
    return (ggfs_kind_flags(kind) & flag) != 0;
}

/* An entry of a fixed directory. */
typedef struct ggfs_row {
    const char *name;
    ggfs_kind kind;
    uint64_t ino;  // the root's: its inode number (GGFS_INO_*, tree.h);
                   // a tensor's: after the tensor's directory's
} ggfs_row;

/* The root's entries, tokenizer/'s, then a tensor directory's, in
 * readdir's order; each list ends with a row whose name is NULL. */
extern const ggfs_row ggfs_root_rows[];
extern const ggfs_row ggfs_tokenizer_rows[];
extern const ggfs_row ggfs_tensor_rows[];

/* The directories of one inode each whose entries are rows (the root and
 * tokenizer/), and their files' rows together: ggfs_fixed_rows(kind) is
 * the list of directory kind (NULL for any other kind). */
const ggfs_row *ggfs_fixed_rows(ggfs_kind dir);
/* The row of a file of those directories with this inode or kind; NULL
 * when none. */
const ggfs_row *ggfs_fixed_row_at_ino(uint64_t ino);
const ggfs_row *ggfs_fixed_row_of_kind(ggfs_kind kind);

/* Inode numbers each tensor takes: its directory and one per file. */
#define GGFS_TENSOR_INODES 9

/* Row i of rows; NULL past the last. */
const ggfs_row *ggfs_row_at(const ggfs_row *rows, uint64_t i);
/* The row called name, or of kind; NULL when none. */
const ggfs_row *ggfs_row_named(const ggfs_row *rows, const char *name);
const ggfs_row *ggfs_row_of_kind(const ggfs_row *rows, ggfs_kind kind);
/* The row whose ino is ino; NULL when none. */
const ggfs_row *ggfs_row_at_ino(const ggfs_row *rows, uint64_t ino);

#endif
