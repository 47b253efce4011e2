/*
 * The mounted tree as arithmetic on inode numbers: nothing is built per
 * file at mount. Fixed inodes for the root, header and the two
 * directories; then one inode per key; then four per tensor (its
 * directory, info, raw, f32).
 */
#ifndef GGFS_TREE_H
#define GGFS_TREE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ggp.h"
#include "watch.h"

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
} ggfs_kind;

enum {
    GGFS_INO_ROOT = 1,
    GGFS_INO_HEADER = 2,
    GGFS_INO_METADATA = 3,
    GGFS_INO_TENSORS = 4,
    GGFS_INO_FIRST_KV = 16,
};

typedef struct ggfs_node {
    ggfs_kind kind;
    uint64_t index; // kv or tensor index
} ggfs_node;

/* Everything the daemon knows, shared read-only by all threads except the
 * lazily filled size cache. */
typedef struct ggfs_tree {
    ggp_file *model;
    const char *model_path;
    _Atomic uint64_t *kv_size; // rendered sizes, UINT64_MAX until computed
    uint64_t *long_kvs;        // keys whose file names were cut
    uint64_t n_long_kvs;
    uint64_t *long_tensors;    // tensors whose file names were cut
    uint64_t n_long_tensors;
    ggfs_watch watch;          // the model's stat at mount (owner, mode, times
                               // of every entry), and whether it has changed
    pthread_key_t scratch;     // each loop thread's ggfs_scratch for f32 reads
    unsigned readahead_kb;     // asked of the kernel at init; 0 keeps its own
} ggfs_tree;

/* A loop thread's reusable buffer, so reads allocate nothing once warm. */
typedef struct ggfs_scratch {
    void *data;
    size_t cap;
} ggfs_scratch;

/* The calling thread's scratch, grown to at least size; NULL when out of
 * memory. */
void *ggfs_scratch_get(ggfs_tree *tree, size_t size);

/* Builds the tree over an open model; allocates the size cache and the
 * lists of cut names. real_path (absolute) is watched for changes. Returns
 * false on allocation failure. */
bool ggfs_tree_init(ggfs_tree *tree, ggp_file *model, const char *model_path, const char *real_path,
                    const struct stat *st);
void ggfs_tree_destroy(ggfs_tree *tree);

ggfs_node ggfs_node_of(const ggfs_tree *tree, uint64_t ino);
uint64_t ggfs_ino_of(const ggfs_tree *tree, ggfs_node node);

/* The child called name in directory parent; kind GGFS_NONE if none. */
ggfs_node ggfs_lookup(const ggfs_tree *tree, ggfs_node parent, const char *name);

/* Whether the tensor has a raw / f32 file. */
bool ggfs_tensor_has_raw(const ggfs_tree *tree, const ggp_tensor *t);
bool ggfs_tensor_has_f32(const ggfs_tree *tree, const ggp_tensor *t);

/* Whether node is in the tree (raw and f32 are not, for some tensors). */
bool ggfs_node_exists(const ggfs_tree *tree, ggfs_node node);

/* Fills st for node (sizes exact); false when node does not exist. */
bool ggfs_stat(ggfs_tree *tree, ggfs_node node, struct stat *st);

/* The size of a node's file contents. */
uint64_t ggfs_size(ggfs_tree *tree, ggfs_node node);

#endif
