/*
 * The mounted tree of one model as arithmetic on inode numbers: nothing is
 * built per file at mount. Fixed inodes for the root's entries; then one
 * inode per key (shard 1's); then one per shard file in shards/ (split
 * sets); then TENSOR_INODES per tensor of the model (its directory and its
 * files); then, when metadata/ is edited, one per file made in it (keys
 * and scratch files, model/edits.h), numbered by their ids.
 *
 * A key's node holds its id (model/view.h): a key of the model has its
 * index as id until an edit moves another file onto its name. What the
 * keys hold is read from a view, taken for each request.
 */
#ifndef GGFS_TREE_TREE_H
#define GGFS_TREE_TREE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ggp.h"
#include "model/edits.h"
#include "model/model.h"
#include "model/view.h"
#include "tree/hash_cache.h"
#include "tree/stats_cache.h"
#include "util/cancel.h"

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
} ggfs_kind;

/* The root's files whose text covers the whole model; their sizes are
 * computed on first stat and kept. */
enum { GGFS_VIEW_WARNINGS, GGFS_VIEW_METADATA_JSON, GGFS_VIEW_TENSORS_TSV, GGFS_N_VIEWS };
_Static_assert(GGFS_N_VIEWS <= GGFS_VIEW_SIZE_SLOTS, "each view keeps the sizes of the root's views");

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
    // 12..15 are kept for further files at the root
    GGFS_INO_FIRST_KV = 16,
};

typedef struct ggfs_node {
    ggfs_kind kind;
    uint64_t index; // kv id, shard or tensor index
} ggfs_node;

/* Everything the daemon knows, shared read-only by all threads except the
 * lazily filled size caches (in the views) and stats, and the edits. */
typedef struct ggfs_tree {
    ggfs_model *model;
    const ggp_file *keys;      // the model's own metadata: shard 1's (its
                               // key count fixes the inode numbers)
    ggfs_edits *edits;         // NULL: metadata/ is read-only
    _Atomic uint64_t gguf_opened; // edits' generation model.gguf was last opened at
    ggfs_stats_cache stats;    // tensors/NAME/stats, computed on first read
    ggfs_hash_cache hashes;    // hashes and tensors/NAME/{xxh64,sha1,sha256}, the same
    ggfs_cancel cancel;        // asked by stats' and hashes' computations; never
                               // unless set (tree/session_end.h)
    uint64_t *long_kvs;        // keys whose file names were cut
    uint64_t n_long_kvs;
    uint64_t *long_tensors;    // tensors whose file names were cut
    uint64_t n_long_tensors;
    pthread_key_t scratch;     // each loop thread's ggfs_scratch for f32 reads
    bool owns_scratch;         // false when the key is shared (a catalog's trees)
    uint64_t ino_base;         // added to every inode number: 0 for a single
                               // model, the model's slot in a catalog
    struct ggfs_workers *remote_reads; // data reads of a remote model run here,
                               // so that a slow one holds no loop thread;
                               // NULL for a local model
    struct ggfs_remote_engine *remote; // a remote model's engine: connections, caches
                               // (the `remote` file, prefetch); NULL if local
    struct ggfs_prefetch *prefetch; // -o prefetch or prefetch_after_mb, from the
                               // session's start
    struct ggfs_prefetch_trigger *prefetch_trigger; // lets a held prefetch go
                               // (prefetch_trigger.h), or NULL
    struct ggfs_page_push *page_push; // where the prefetch's bytes go (page_push.h),
                               // or NULL
} ggfs_tree;

/* A loop thread's reusable buffer, so reads allocate nothing once warm. */
typedef struct ggfs_scratch {
    void *data;
    size_t cap;
} ggfs_scratch;

/* The calling thread's scratch, grown to at least size; NULL when out of
 * memory. */
void *ggfs_scratch_get(ggfs_tree *tree, size_t size);

/* Frees a thread's scratch: the destructor for a scratch key shared by
 * trees (pthread_key_create). */
void ggfs_scratch_destroy(void *scratch);

/* Builds the tree over an open model; allocates the size cache and the
 * lists of cut names. Returns false on allocation failure. */
bool ggfs_tree_init(ggfs_tree *tree, ggfs_model *model);
/* The same, for one of many trees that share the loop threads' scratch
 * buffers through `scratch` (which the caller creates and deletes) and
 * number their inodes from ino_base (+1 is the root). */
bool ggfs_tree_init_shared(ggfs_tree *tree, ggfs_model *model, pthread_key_t scratch, uint64_t ino_base);
void ggfs_tree_destroy(ggfs_tree *tree);

ggfs_node ggfs_node_of(const ggfs_tree *tree, uint64_t ino);
uint64_t ggfs_ino_of(const ggfs_tree *tree, ggfs_node node);

/* The child called name in directory parent; kind GGFS_NONE if none. */
ggfs_node ggfs_lookup(const ggfs_tree *tree, ggfs_node parent, const char *name);

/* Tensor `index` of the model, and its shard. */
const ggp_tensor *ggfs_tree_tensor(const ggfs_tree *tree, uint64_t index, uint32_t *shard);

/* Whether tensor `index` has a raw / f32 file (its hash files exist where
 * raw does; f32.npy and stats where f32 does). */
bool ggfs_tensor_has_raw(const ggfs_tree *tree, uint64_t index);
bool ggfs_tensor_has_f32(const ggfs_tree *tree, uint64_t index);

/* Whether kind is a tensor's hash file, and the hash it holds. */
static inline bool ggfs_kind_is_hash(ggfs_kind k)
{
    return k == GGFS_TENSOR_XXH64 || k == GGFS_TENSOR_SHA1 || k == GGFS_TENSOR_SHA256;
}

static inline ggfs_hash ggfs_kind_hash(ggfs_kind k)
{
    return k == GGFS_TENSOR_XXH64 ? GGFS_HASH_XXH64
         : k == GGFS_TENSOR_SHA1  ? GGFS_HASH_SHA1
                                  : GGFS_HASH_SHA256;
}

/* Whether node is in the tree (raw and f32 are not, for some tensors). */
bool ggfs_node_exists(const ggfs_tree *tree, ggfs_node node);

/* The keys as they are now, with a reference (ggfs_view_put). */
ggfs_view *ggfs_tree_view(const ggfs_tree *tree);

/* A file of metadata/ now: key `index` of `view`, or a scratch file. */
typedef struct ggfs_kv_file {
    ggfs_view *view;           // referenced; NULL for a scratch file
    uint64_t index;
    ggfs_scratch_info scratch;
} ggfs_kv_file;

/* Finds the metadata file with this id; false when there is none now.
 * Release with ggfs_kv_file_put. */
bool ggfs_kv_file_get(const ggfs_tree *tree, uint64_t id, ggfs_kv_file *f);
void ggfs_kv_file_put(ggfs_kv_file *f);

/* The full name of a metadata file. */
ggp_str ggfs_kv_file_name(const ggfs_kv_file *f);

/* Whether the tree's metadata/ can be edited. */
static inline bool ggfs_tree_editable(const ggfs_tree *tree)
{
    return tree->edits != NULL;
}

#endif
