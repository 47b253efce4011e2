/*
 * The mounted tree of one model as arithmetic on inode numbers: nothing is
 * built per file at mount. Fixed inodes for the root's entries; then one
 * inode per key (shard 1's); then one per shard file in shards/ (split
 * sets); then TENSOR_INODES per tensor of the model (its directory and its
 * files); then, when metadata/ is edited, one per file made in it (keys
 * and scratch files, model/edits.h), numbered by their ids. An edited
 * tree numbers the versions of the files that follow the keys apart
 * (GGFS_INO_PINNED below).
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
#include "tree/shape.h"
#include "tree/stats_cache.h"
#include "tree/verify.h"
#include "util/cancel.h"

/* The files whose text covers the whole model (at the root and in
 * tokenizer/); their sizes are computed on first stat and kept. */
enum {
    GGFS_VIEW_WARNINGS,
    GGFS_VIEW_METADATA_JSON,
    GGFS_VIEW_TENSORS_TSV,
    GGFS_VIEW_VOCAB_TSV,
    GGFS_VIEW_SPECIAL_TOKENS,
    GGFS_N_VIEWS
};
_Static_assert(GGFS_N_VIEWS <= GGFS_VIEW_SIZE_SLOTS, "each view keeps the sizes of the root's views");

/* An edited tree's files that follow the keys (header, warnings,
 * model.gguf, metadata.json, and each key's file) have one inode per
 * version: bit 52 set, the version in bits 32-51, and in bits 0-31 the
 * file's own inode number above. A root file's version is its view's
 * (model/view.h), a key file's the content version of its value; the
 * files of a model that is not edited, and scratch files, have one inode
 * each. Every number stays below 2^53, exact as a double (JavaScript's
 * stat, jq). */
#define GGFS_INO_PINNED (UINT64_C(1) << 52)

typedef struct ggfs_node {
    ggfs_kind kind;
    uint64_t index; // kv id, shard or tensor index
    bool pinned;    // one version of a file that follows the keys, in an
                    // edited tree; else the file as it is now
    uint64_t version; // pinned: the view's version, or the key's content version
} ggfs_node;

/* The node of a file as it is now (not pinned to a version). */
static inline ggfs_node ggfs_node_at(ggfs_kind kind, uint64_t index)
{
    return (ggfs_node){kind, index, false, 0};
}

/* Everything the daemon knows, shared read-only by all threads except the
 * lazily filled size caches (in the views) and stats, and the edits. */
typedef struct ggfs_tree {
    ggfs_model *model;
    const ggp_file *keys;      // the model's own metadata: shard 1's (its
                               // key count fixes the inode numbers)
    ggfs_edits *edits;         // NULL: metadata/ is read-only
    struct ggfs_versions *versions; // edited: the versions the kernel holds (versions.h)
    struct ggfs_affinity *affinity; // edited: the version each loading process keeps (affinity.h)
    ggfs_stats_cache stats;    // tensors/NAME/stats, computed on first read
    ggfs_hash_cache hashes;    // hashes and tensors/NAME/{xxh64,sha1,sha256}, the same
    ggfs_verify verify;        // `verify`, the same
    struct fuse_session *const *session; // told when `warnings` grows (a
                               // mismatch `verify` found); NULL: nobody
    ggfs_cancel cancel;        // asked by stats' and hashes' computations; never
                               // unless set (tree/session_end.h)
    struct ggfs_open_texts *open_texts; // the mount's open texts (open_text.h), or NULL
    uint64_t *long_kvs;        // keys whose file names were cut
    uint64_t n_long_kvs;
    uint64_t *long_tensors;    // tensors whose file names were cut
    uint64_t n_long_tensors;
    uint64_t memory_weights;   // the tensors' bytes, for memory/ (model/memory.h)
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
    const struct ggfs_ollama_layers *ollama; // an Ollama model's Modelfile and
                               // layers/ (ollama_files.h), or NULL; the
                               // tree's owner frees it after the tree
    struct ggfs_tree *layer_trees[2]; // layers/projector and layers/adapter
                               // (layer_trees.h), or NULL; freed with the tree
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

/* The keys as node reads them, with a reference: its version's view when
 * pinned, else the current one. NULL when node's version is gone (the
 * kernel forgot it and it is no longer current). */
ggfs_view *ggfs_node_view(const ggfs_tree *tree, ggfs_node node);

/* Pins node to its version in view (the current one, as a lookup finds
 * it), when the tree is edited and node is a file that follows the keys:
 * a key's file only while it is a key of view. */
ggfs_node ggfs_node_pin(const ggfs_tree *tree, const ggfs_view *view, ggfs_node node);

/* The kernel was given n references to node's inode (a lookup's reply):
 * a pinned node's view is kept while it holds one. False when out of
 * memory. Forgetting them: ggfs_tree_forget. */
bool ggfs_tree_hold(ggfs_tree *tree, ggfs_node node, ggfs_view *view, uint64_t n);
void ggfs_tree_forget(ggfs_tree *tree, uint64_t ino, uint64_t n);

/* A file of metadata/ now: key `index` of `view`, or a scratch file. */
typedef struct ggfs_kv_file {
    ggfs_view *view;           // referenced; NULL for a scratch file
    uint64_t index;
    ggfs_scratch_info scratch;
} ggfs_kv_file;

/* Finds the metadata file of node (a GGFS_KV: its id, and its version
 * when pinned); false when there is none. Release with ggfs_kv_file_put. */
bool ggfs_kv_file_get(const ggfs_tree *tree, ggfs_node node, ggfs_kv_file *f);

/* The metadata file with this id as it is now. */
static inline ggfs_node ggfs_kv_node(uint64_t id)
{
    return ggfs_node_at(GGFS_KV, id);
}
void ggfs_kv_file_put(ggfs_kv_file *f);

/* The full name of a metadata file. */
ggp_str ggfs_kv_file_name(const ggfs_kv_file *f);

/* Whether the tree's metadata/ can be edited. */
static inline bool ggfs_tree_editable(const ggfs_tree *tree)
{
    return tree->edits != NULL;
}

#endif
