/*
 * The tree's shape, written once: what each kind of node is, and the
 * entries of the fixed directories (the root's, each tensor's) in the
 * order readdir lists them, with the inode numbers they take. Lookup,
 * readdir, the inode arithmetic, whether a node exists, and how a file is
 * opened derive from these tables (tree.c, ops.c): a new file at the root
 * or in every tensor's directory is one row here, plus its kind's size
 * (attr.c) and its bytes (a text's render in text.c or ops.c, or a data
 * reader in read_data.c).
 */
#ifndef GGFS_TREE_SHAPE_H
#define GGFS_TREE_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tree/tree.h"

/* What a kind of node is. */
enum {
    GGFS_K_DIR = 1 << 0,          // a directory
    GGFS_K_TEXT = 1 << 1,         // rendered whole at open, read from the open file
    GGFS_K_READS_DATA = 1 << 2,   // its render passes over tensor data (stats, hashes)
    GGFS_K_FOLLOWS_KEYS = 1 << 3, // changes with edits: a version per edit (tree.h)
    GGFS_K_OF_TENSOR = 1 << 4,    // a tensor's directory or file: the tensor's xattrs
};

typedef struct ggfs_kind_info {
    unsigned flags;
    // Whether a node of the kind is in this tree; NULL: always.
    bool (*exists)(const ggfs_tree *tree, ggfs_node node);
} ggfs_kind_info;

/* The kind's row (GGFS_NONE's has no flags and exists nowhere). */
const ggfs_kind_info *ggfs_kind_info_of(ggfs_kind kind);

static inline bool ggfs_kind_is(ggfs_kind kind, unsigned flag)
{
    return (ggfs_kind_info_of(kind)->flags & flag) != 0;
}

/* An entry of a fixed directory. */
typedef struct ggfs_row {
    const char *name;
    ggfs_kind kind;
    uint64_t ino;  // the root's: its inode number (tree.h's GGFS_INO_*);
                   // a tensor's: after the tensor's directory's
} ggfs_row;

/* The root's entries, then a tensor directory's, in readdir's order; each
 * list ends with a row whose name is NULL. */
extern const ggfs_row ggfs_root_rows[];
extern const ggfs_row ggfs_tensor_rows[];

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
