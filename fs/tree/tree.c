/*
 * Inode arithmetic and name lookup of the mounted tree (its attributes are
 * in attr.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tree/memory_files.h"
#include "tree/names.h"
#include "tree/ollama_files.h"
#include "tree/page_push.h"
#include "tree/prefetch_trigger.h"
#include "tree/tree.h"
#include "tree/affinity.h"
#include "tree/versions.h"


static uint64_t first_shard_ino(const ggfs_tree *tree)
{
    return GGFS_INO_FIRST_KV + ggp_kv_count(tree->keys);
}

static uint64_t first_tensor_ino(const ggfs_tree *tree)
{
    return first_shard_ino(tree) + tree->model->n_shards;
}

/* memory/CTX is numbered after the tensors' files: CTX 1 first. */
static uint64_t first_memory_ino(const ggfs_tree *tree)
{
    return first_tensor_ino(tree) + tree->model->n_tensors * GGFS_TENSOR_INODES;
}

/* offload/CTX after memory/CTX, likewise. */
static uint64_t first_offload_ino(const ggfs_tree *tree)
{
    return first_memory_ino(tree) + GGFS_MEMORY_CTX_MAX;
}

/* Files made in metadata/ by edits are numbered after offload/'s. */
static uint64_t first_new_kv_ino(const ggfs_tree *tree)
{
    return first_offload_ino(tree) + GGFS_MEMORY_CTX_MAX;
}

/* Ids from here on are files made by edits. */
static uint64_t first_new_id(const ggfs_tree *tree)
{
    return ggp_kv_count(tree->keys);
}

ggfs_view *ggfs_tree_view(const ggfs_tree *tree)
{
    return tree->edits ? ggfs_edits_view(tree->edits) : &tree->model->view;
}

/* ==== Versions of an edited tree's files (versions.h) ==== */

#define PIN_SLOT_MASK UINT64_C(0xffffffff)
#define PIN_VERSION_MAX UINT64_C(0xfffff)
// A pinned memory/CTX's slot: the last 2^24 slots, CTX 1 first; a pinned
// offload/CTX's the 2^24 before (keys' slots stay below).
#define PIN_MEMORY_BASE (PIN_SLOT_MASK + 1 - GGFS_MEMORY_CTX_MAX)
#define PIN_OFFLOAD_BASE (PIN_MEMORY_BASE - GGFS_MEMORY_CTX_MAX)

/* The version of node's file in view; UINT64_MAX when view has no such
 * file (a key it does not hold). */
static uint64_t version_in(const ggfs_view *view, ggfs_node node)
{
    if (node.kind != GGFS_KV)
        return view->version;
    const uint64_t index = ggfs_view_index_of(view, node.index);
    return index == UINT64_MAX ? UINT64_MAX : ggfs_view_changed_at(view, index);
}

ggfs_node ggfs_node_pin(const ggfs_tree *tree, const ggfs_view *view, ggfs_node node)
{
    node.pinned = false;
    if (!tree->edits || !ggfs_kind_is(node.kind, GGFS_K_FOLLOWS_KEYS))
        return node;
    const uint64_t version = version_in(view, node);
    // Past 2^20 versions (edits), or 2^32 files, a file is no longer versioned.
    if (version <= PIN_VERSION_MAX && (node.kind != GGFS_KV || node.index < PIN_OFFLOAD_BASE - GGFS_INO_FIRST_KV)) {
        node.pinned = true;
        node.version = version;
    }
    return node;
}

ggfs_view *ggfs_node_view(const ggfs_tree *tree, ggfs_node node)
{
    if (!node.pinned)
        return ggfs_tree_view(tree);
    ggfs_view *view = ggfs_versions_view(tree->versions, ggfs_ino_of(tree, node));
    if (view)
        return view;
    // Not held by the kernel yet (a lookup's reply being made), or never:
    // the current view serves it while it is that version.
    view = ggfs_tree_view(tree);
    if (version_in(view, node) == node.version)
        return view;
    ggfs_view_put(view);
    return NULL;
}

bool ggfs_tree_hold(ggfs_tree *tree, ggfs_node node, ggfs_view *view, uint64_t n)
{
    return !node.pinned || ggfs_versions_hold(tree->versions, ggfs_ino_of(tree, node), view, n);
}

void ggfs_tree_forget(ggfs_tree *tree, uint64_t ino, uint64_t n)
{
    if (tree->versions && (ino & GGFS_INO_PINNED))
        ggfs_versions_forget(tree->versions, ino, n);
}

/* The pinned node of inode number ino (GGFS_INO_PINNED set). */
static ggfs_node pinned_node_of(uint64_t ino)
{
    const uint64_t slot = ino & PIN_SLOT_MASK, version = (ino >> 32) & PIN_VERSION_MAX;
    if (slot >= PIN_MEMORY_BASE)
        return (ggfs_node){GGFS_MEMORY_CTX, slot - PIN_MEMORY_BASE + 1, true, version};
    if (slot >= PIN_OFFLOAD_BASE)
        return (ggfs_node){GGFS_OFFLOAD_CTX, slot - PIN_OFFLOAD_BASE + 1, true, version};
    if (slot >= GGFS_INO_FIRST_KV)
        return (ggfs_node){GGFS_KV, slot - GGFS_INO_FIRST_KV, true, version};
    const ggfs_row *row = ggfs_fixed_row_at_ino(slot);
    if (!row || !ggfs_kind_is(row->kind, GGFS_K_FOLLOWS_KEYS))
        return ggfs_node_at(GGFS_NONE, 0);
    return (ggfs_node){row->kind, 0, true, version};
}

/* ==== Files of metadata/ ==== */

static bool view_moved(const ggfs_tree *tree, const ggfs_view *v);
#define FIND_TRIES 8 // edits in between each time: then the file is as good as gone

bool ggfs_kv_file_get(const ggfs_tree *tree, ggfs_node node, ggfs_kv_file *f)
{
    for (int tries = 0; tries < FIND_TRIES; tries++) {
        f->view = ggfs_node_view(tree, node);
        if (!f->view)
            return false;
        f->index = ggfs_view_index_of(f->view, node.index);
        if (f->index != UINT64_MAX)
            return true;
        const bool found =
            !node.pinned && tree->edits && ggfs_edits_scratch_of(tree->edits, node.index, &f->scratch);
        const bool again = !found && !node.pinned && tree->edits && view_moved(tree, f->view);
        ggfs_view_put(f->view);
        f->view = NULL;
        if (!again)
            return found;
    }
    return false;
}

void ggfs_kv_file_put(ggfs_kv_file *f)
{
    ggfs_view_put(f->view);
    f->view = NULL;
}

ggp_str ggfs_kv_file_name(const ggfs_kv_file *f)
{
    if (f->view)
        return ggp_kv_at(f->view->keys, f->index)->key;
    return (ggp_str){f->scratch.name, f->scratch.name_len};
}

const ggp_tensor *ggfs_tree_tensor(const ggfs_tree *tree, uint64_t index, uint32_t *shard)
{
    return ggfs_model_tensor(tree->model, index, shard);
}

/* Indexes of the keys (or tensors) whose file names had to be cut. */
static uint64_t *collect_cut_names(uint64_t count, ggp_str (*name_at)(const ggfs_tree *, uint64_t),
                                   const ggfs_tree *model, uint64_t *n_out)
{
    uint64_t *list = NULL;
    uint64_t n = 0, cap = 0;
    for (uint64_t i = 0; i < count; i++) {
        ggp_str name = name_at(model, i);
        char fname[GGFS_NAME_MAX + 1];
        const size_t flen = ggfs_name_encode(name.ptr, name.len, fname);
        char decoded[GGFS_NAME_MAX + 1];
        size_t dlen;
        if (ggfs_name_decode(fname, flen, decoded, &dlen) && dlen == name.len &&
            memcmp(decoded, name.ptr, dlen) == 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            uint64_t *grown = realloc(list, cap * sizeof *list);
            if (!grown) {
                free(list);
                *n_out = UINT64_MAX;
                return NULL;
            }
            list = grown;
        }
        list[n++] = i;
    }
    *n_out = n;
    return list;
}

static ggp_str kv_name(const ggfs_tree *tree, uint64_t i)
{
    return ggp_kv_at(tree->keys, i)->key;
}

static ggp_str tensor_name(const ggfs_tree *tree, uint64_t i)
{
    uint32_t shard;
    return ggfs_model_tensor(tree->model, i, &shard)->name;
}

static void scratch_free(void *p)
{
    ggfs_scratch *s = p;
    free(s->data);
    free(s);
}

void *ggfs_scratch_get(ggfs_tree *tree, size_t size)
{
    ggfs_scratch *s = pthread_getspecific(tree->scratch);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s || pthread_setspecific(tree->scratch, s) != 0) {
            free(s);
            return NULL;
        }
    }
    if (s->cap < size) {
        void *grown = realloc(s->data, size);
        if (!grown)
            return NULL;
        s->data = grown;
        s->cap = size;
    }
    return s->data;
}

bool ggfs_tree_init(ggfs_tree *tree, ggfs_model *model)
{
    pthread_key_t scratch;
    if (pthread_key_create(&scratch, scratch_free) != 0) {
        memset(tree, 0, sizeof *tree);
        return false;
    }
    if (!ggfs_tree_init_shared(tree, model, scratch, 0)) {
        pthread_key_delete(scratch);
        tree->owns_scratch = false;
        return false;
    }
    tree->owns_scratch = true;
    return true;
}

void ggfs_scratch_destroy(void *scratch)
{
    scratch_free(scratch);
}

bool ggfs_tree_init_shared(ggfs_tree *tree, ggfs_model *model, pthread_key_t scratch, uint64_t ino_base)
{
    memset(tree, 0, sizeof *tree);
    tree->scratch = scratch;
    tree->ino_base = ino_base;
    tree->model = model;
    tree->keys = ggfs_model_keys(model);
    const uint64_t n_kv = ggp_kv_count(tree->keys);
    ggfs_verify_init(&tree->verify, model, &tree->cancel);
    if (!ggfs_stats_cache_init(&tree->stats, model->n_tensors, &tree->cancel))
        return false;
    if (!ggfs_hash_cache_init(&tree->hashes, model, &tree->cancel))
        return false;
    tree->long_kvs = collect_cut_names(n_kv, kv_name, tree, &tree->n_long_kvs);
    tree->long_tensors = collect_cut_names(model->n_tensors, tensor_name, tree, &tree->n_long_tensors);
    tree->memory_weights = ggfs_memory_weights(model);
    return tree->n_long_kvs != UINT64_MAX && tree->n_long_tensors != UINT64_MAX;
}

void ggfs_tree_destroy(ggfs_tree *tree)
{
    if (tree->owns_scratch) {
        // The loop's threads are gone; this thread's scratch, if any, goes here.
        void *own = pthread_getspecific(tree->scratch);
        if (own)
            scratch_free(own);
        pthread_key_delete(tree->scratch);
    }
    ggfs_affinity_free(tree->affinity);
    ggfs_versions_free(tree->versions);
    ggfs_stats_cache_destroy(&tree->stats);
    ggfs_hash_cache_destroy(&tree->hashes);
    ggfs_verify_destroy(&tree->verify);
    ggfs_page_push_free(tree->page_push);
    ggfs_prefetch_trigger_free(tree->prefetch_trigger);
    free(tree->long_kvs);
    free(tree->long_tensors);
    for (int k = 0; k < 2; k++) {
        ggfs_tree *sub = tree->layer_trees[k];
        if (!sub)
            continue;
        ggfs_model *model = sub->model;
        ggfs_tree_destroy(sub);
        free(sub);
        ggfs_model_close(model);
    }
}

ggfs_node ggfs_node_of(const ggfs_tree *tree, uint64_t ino)
{
    if (ino < tree->ino_base)
        return ggfs_node_at(GGFS_NONE, 0);
    if (tree->edits && (ino & GGFS_INO_PINNED))
        return pinned_node_of(ino); // an edited tree is alone: its base is 0
    ino -= tree->ino_base;
    if (ino == GGFS_INO_ROOT)
        return ggfs_node_at(GGFS_ROOT, 0);
    const ggfs_row *root_file = ino < GGFS_INO_FIRST_KV ? ggfs_fixed_row_at_ino(ino) : NULL;
    if (root_file)
        return ggfs_node_at(root_file->kind, 0);
    if (ino >= GGFS_INO_FIRST_LAYER && tree->ollama)
        return ggfs_ollama_has(tree->ollama, GGFS_LAYER, ino - GGFS_INO_FIRST_LAYER)
                   ? ggfs_node_at(GGFS_LAYER, ino - GGFS_INO_FIRST_LAYER)
                   : ggfs_node_at(GGFS_NONE, 0);
    const uint64_t first_shard = first_shard_ino(tree);
    const uint64_t first_tensor = first_tensor_ino(tree);
    if (ino >= GGFS_INO_FIRST_KV && ino < first_shard)
        return ggfs_node_at(GGFS_KV, ino - GGFS_INO_FIRST_KV);
    if (ino >= first_memory_ino(tree) && ino < first_offload_ino(tree))
        return ggfs_node_at(GGFS_MEMORY_CTX, ino - first_memory_ino(tree) + 1);
    if (ino >= first_offload_ino(tree) && ino < first_new_kv_ino(tree))
        return ggfs_node_at(GGFS_OFFLOAD_CTX, ino - first_offload_ino(tree) + 1);
    if (tree->edits && ino >= first_new_kv_ino(tree))
        return ggfs_node_at(GGFS_KV, first_new_id(tree) + (ino - first_new_kv_ino(tree)));
    if (ino >= first_shard && ino < first_tensor)
        return ggfs_node_at(GGFS_SHARD, ino - first_shard);
    if (ino >= first_tensor) {
        const uint64_t rel = ino - first_tensor;
        const uint64_t index = rel / GGFS_TENSOR_INODES;
        const ggfs_row *file = ggfs_row_at_ino(ggfs_tensor_rows, rel % GGFS_TENSOR_INODES);
        if (index < tree->model->n_tensors)
            return ggfs_node_at(file ? file->kind : GGFS_TENSOR_DIR, index);
    }
    return ggfs_node_at(GGFS_NONE, 0);
}

static uint64_t local_ino_of(const ggfs_tree *tree, ggfs_node node)
{
    const uint64_t tensor_base = first_tensor_ino(tree) + node.index * GGFS_TENSOR_INODES;
    const ggfs_row *row;
    switch (node.kind) {
    case GGFS_NONE: return 0;
    case GGFS_ROOT: return GGFS_INO_ROOT;
    case GGFS_KV:
        return node.index < first_new_id(tree) ? GGFS_INO_FIRST_KV + node.index
                                               : first_new_kv_ino(tree) + (node.index - first_new_id(tree));
    case GGFS_SHARD: return first_shard_ino(tree) + node.index;
    case GGFS_LAYER: return GGFS_INO_FIRST_LAYER + node.index;
    case GGFS_LAYER_TREE: return GGFS_INO_LAYER_TREE(node.index) + GGFS_INO_ROOT;
    case GGFS_TENSOR_DIR: return tensor_base;
    case GGFS_MEMORY_CTX:
        return node.index >= 1 && node.index <= GGFS_MEMORY_CTX_MAX ? first_memory_ino(tree) + node.index - 1 : 0;
    case GGFS_OFFLOAD_CTX:
        return node.index >= 1 && node.index <= GGFS_MEMORY_CTX_MAX ? first_offload_ino(tree) + node.index - 1 : 0;
    default:
        if ((row = ggfs_row_of_kind(ggfs_tensor_rows, node.kind)) != NULL)
            return tensor_base + row->ino;
        row = ggfs_fixed_row_of_kind(node.kind);
        return row ? row->ino : 0;
    }
}

uint64_t ggfs_ino_of(const ggfs_tree *tree, ggfs_node node)
{
    if (node.pinned) {
        const ggfs_node current = ggfs_node_at(node.kind, node.index);
        const uint64_t slot = node.kind == GGFS_KV           ? GGFS_INO_FIRST_KV + node.index
                            : node.kind == GGFS_MEMORY_CTX ? PIN_MEMORY_BASE + node.index - 1
                            : node.kind == GGFS_OFFLOAD_CTX ? PIN_OFFLOAD_BASE + node.index - 1
                                                           : local_ino_of(tree, current);
        return GGFS_INO_PINNED | node.version << 32 | slot;
    }
    const uint64_t local = local_ino_of(tree, node);
    return local ? tree->ino_base + local : 0;
}

bool ggfs_tensor_has_raw(const ggfs_tree *tree, uint64_t index)
{
    uint32_t shard;
    return ggfs_model_tensor(tree->model, index, &shard)->type != NULL;
}

bool ggfs_tensor_has_f32(const ggfs_tree *tree, uint64_t index)
{
    uint32_t shard;
    const ggp_tensor *t = ggfs_model_tensor(tree->model, index, &shard);
    return ggp_tensor_f32_unavailable(tree->model->shards[shard].file, t) == NULL;
}

/* Finds the entry called fname: by decoding it, or for a cut name by
 * encoding each of the cut entries. Returns UINT64_MAX if none. */
static uint64_t find_named(const ggfs_tree *tree, const char *fname,
                           uint64_t (*find)(const ggfs_tree *, const char *, size_t),
                           ggp_str (*name_at)(const ggfs_tree *, uint64_t),
                           const uint64_t *cut, uint64_t n_cut)
{
    const size_t flen = strlen(fname);
    if (flen > GGFS_NAME_MAX)
        return UINT64_MAX;
    char decoded[GGFS_NAME_MAX + 1];
    size_t dlen;
    if (ggfs_name_decode(fname, flen, decoded, &dlen)) {
        const uint64_t hit = find(tree, decoded, dlen);
        if (hit != UINT64_MAX) {
            // A name that had to be cut has no short file name of its own.
            char again[GGFS_NAME_MAX + 1];
            ggp_str name = name_at(tree, hit);
            if (ggfs_name_encode(name.ptr, name.len, again) == flen && memcmp(again, fname, flen) == 0)
                return hit;
        }
    }
    if (!ggfs_name_is_cut(fname, flen))
        return UINT64_MAX;
    for (uint64_t i = 0; i < n_cut; i++) {
        ggp_str name = name_at(tree, cut[i]);
        char candidate[GGFS_NAME_MAX + 1];
        if (ggfs_name_encode(name.ptr, name.len, candidate) == flen && memcmp(candidate, fname, flen) == 0)
            return cut[i];
    }
    return UINT64_MAX;
}

static uint64_t find_kv(const ggfs_tree *tree, const char *name, size_t len)
{
    const ggp_kv *kv = ggp_kv_find(tree->keys, name, len);
    return kv ? (uint64_t)(kv - ggp_kv_at(tree->keys, 0)) : UINT64_MAX;
}

/* The id of the edited metadata/'s file called fname (flen bytes): a key
 * of view v, or a scratch file. */
static uint64_t find_edited(const ggfs_tree *tree, const ggfs_view *v, const char *fname, size_t flen)
{
    char name[GGFS_NAME_MAX + 1];
    size_t len;
    uint64_t id = UINT64_MAX;
    const ggp_file *keys = v->keys;
    // A long name is found by comparing with every key's file name; files
    // made here have short names (no more than a file name holds).
    for (uint64_t i = 0; ggfs_name_is_cut(fname, flen) && i < ggp_kv_count(keys) && id == UINT64_MAX; i++) {
        const ggp_str key = ggp_kv_at(keys, i)->key;
        char candidate[GGFS_NAME_MAX + 1];
        if (ggfs_name_encode(key.ptr, key.len, candidate) == flen && memcmp(candidate, fname, flen) == 0)
            id = ggfs_view_id_of(v, i);
    }
    if (id == UINT64_MAX && ggfs_name_decode(fname, flen, name, &len)) {
        const uint64_t index = ggfs_view_find(v, name, len);
        char again[GGFS_NAME_MAX + 1];
        if (index != UINT64_MAX && ggfs_name_encode(name, len, again) == flen && memcmp(again, fname, flen) == 0)
            id = ggfs_view_id_of(v, index);
        ggfs_scratch_info info;
        if (index == UINT64_MAX && ggfs_edits_scratch_named(tree->edits, name, len, &info))
            id = info.id;
    }
    return id;
}

/* Whether the edits' view is no longer v: a file looked for in v, then
 * among the scratch files, may have moved from one to the other between
 * the two (a pending file that became a key), and is looked for again. */
static bool view_moved(const ggfs_tree *tree, const ggfs_view *v)
{
    ggfs_view *now = ggfs_edits_view(tree->edits);
    const bool moved = now != v; // v is held: no other view has its address
    ggfs_view_put(now);
    return moved;
}

/* The id of the file of metadata/ called fname: a key of the model as it
 * is, or, when edited, of the current view, or a scratch file. */
static uint64_t find_metadata(const ggfs_tree *tree, const char *fname)
{
    if (!tree->edits)
        return find_named(tree, fname, find_kv, kv_name, tree->long_kvs, tree->n_long_kvs);
    const size_t flen = strlen(fname);
    if (flen > GGFS_NAME_MAX)
        return UINT64_MAX;
    uint64_t id = UINT64_MAX;
    for (int tries = 0; tries < FIND_TRIES && id == UINT64_MAX; tries++) {
        ggfs_view *v = ggfs_edits_view(tree->edits);
        id = find_edited(tree, v, fname, flen);
        const bool again = id == UINT64_MAX && view_moved(tree, v);
        ggfs_view_put(v);
        if (!again)
            break;
    }
    return id;
}

static uint64_t find_tensor(const ggfs_tree *tree, const char *name, size_t len)
{
    return ggfs_model_tensor_find(tree->model, name, len);
}

/* The shard whose file is called name. */
static uint64_t find_shard(const ggfs_tree *tree, const char *name)
{
    const ggfs_model *m = tree->model;
    for (uint32_t k = 0; ggfs_model_is_split(m) && k < m->n_shards; k++) {
        if (strcmp(m->shards[k].file_name, name) == 0)
            return k;
    }
    return UINT64_MAX;
}

ggfs_node ggfs_lookup(const ggfs_tree *tree, ggfs_node parent, const char *name)
{
    const ggfs_node none = ggfs_node_at(GGFS_NONE, 0);
    uint64_t i;
    const ggfs_row *row;
    switch (parent.kind) {
    case GGFS_ROOT:
    case GGFS_TOKENIZER_DIR:
        row = ggfs_row_named(ggfs_fixed_rows(parent.kind), name);
        return row ? ggfs_node_at(row->kind, 0) : none;
    case GGFS_METADATA_DIR:
        i = find_metadata(tree, name);
        return i == UINT64_MAX ? none : ggfs_node_at(GGFS_KV, i);
    case GGFS_TENSORS_DIR:
        i = find_named(tree, name, find_tensor, tensor_name, tree->long_tensors, tree->n_long_tensors);
        return i == UINT64_MAX ? none : ggfs_node_at(GGFS_TENSOR_DIR, i);
    case GGFS_SHARDS_DIR:
        i = find_shard(tree, name);
        return i == UINT64_MAX ? none : ggfs_node_at(GGFS_SHARD, i);
    case GGFS_TENSOR_DIR:
        row = ggfs_row_named(ggfs_tensor_rows, name);
        return row ? ggfs_node_at(row->kind, parent.index) : none;
    case GGFS_MEMORY_DIR:
    case GGFS_OFFLOAD_DIR: {
        uint32_t ctx;
        if (!ggfs_memory_name_parse(name, &ctx))
            return none;
        return ggfs_node_at(parent.kind == GGFS_MEMORY_DIR ? GGFS_MEMORY_CTX : GGFS_OFFLOAD_CTX, ctx);
    }
    case GGFS_LAYERS_DIR:
        for (i = 0; i < 2; i++)
            if (tree->layer_trees[i] && strcmp(name, ggfs_layer_tree_names[i]) == 0)
                return ggfs_node_at(GGFS_LAYER_TREE, i);
        i = ggfs_ollama_find(tree->ollama, name);
        return i == UINT64_MAX ? none : ggfs_node_at(GGFS_LAYER, i);
    default:
        return none;
    }
}

/* Whether the keys node reads (its version's, or the current ones) have a
 * vocabulary: tokenizer/ and its files are there only then. */
static bool has_vocab(const ggfs_tree *tree, ggfs_node node)
{
    ggfs_view *view = ggfs_node_view(tree, node);
    const bool has = view && ggp_has_vocab(view->keys);
    ggfs_view_put(view);
    return has;
}

/* A version of a file that follows the keys: there while the kernel holds
 * it or it is current (always, unpinned). */
static bool version_held(const ggfs_tree *tree, ggfs_node node)
{
    if (!node.pinned)
        return true;
    ggfs_view *view = ggfs_node_view(tree, node);
    ggfs_view_put(view);
    return view != NULL;
}

/* Whether the model, as the version of node has its keys, has memory/. */
static bool has_memory(const ggfs_tree *tree, ggfs_node node)
{
    ggfs_view *view = ggfs_node_view(tree, node);
    if (!view)
        return false;
    ggfs_memory_rules rules;
    const bool known = ggfs_memory_read(view->keys, tree->memory_weights, &rules);
    ggfs_view_put(view);
    return known;
}

bool ggfs_node_exists(const ggfs_tree *tree, ggfs_node node)
{
    switch (node.kind) {
    case GGFS_MEMORY_CTX:
    case GGFS_OFFLOAD_CTX:
        if (node.index < 1 || node.index > GGFS_MEMORY_CTX_MAX)
            return false;
        return has_memory(tree, node);
    case GGFS_MEMORY_DIR:
    case GGFS_OFFLOAD_DIR:
    case GGFS_MEMORY_TSV:
        return has_memory(tree, node);
    case GGFS_NONE:
    case GGFS_KIND_COUNT:
        return false;
    case GGFS_TENSOR_RAW:
    case GGFS_TENSOR_XXH64:
    case GGFS_TENSOR_SHA1:
    case GGFS_TENSOR_SHA256:
        return ggfs_tensor_has_raw(tree, node.index);
    case GGFS_TENSOR_F32:
    case GGFS_TENSOR_NPY:
    case GGFS_TENSOR_STATS:
        return ggfs_tensor_has_f32(tree, node.index);
    case GGFS_HASHES:
        return ggfs_hashes_available(&tree->hashes);
    case GGFS_REMOTE_STATUS:
        return tree->remote != NULL;
    case GGFS_VERIFY:
        return true;
    case GGFS_MODELFILE:
    case GGFS_LAYERS_DIR:
    case GGFS_LAYER:
        return ggfs_ollama_has(tree->ollama, node.kind, node.index);
    case GGFS_LAYER_TREE:
        return node.index < 2 && tree->layer_trees[node.index];
    case GGFS_KV: {
        if (!tree->edits)
            return node.index < ggp_kv_count(tree->keys);
        ggfs_kv_file f;
        if (!ggfs_kv_file_get(tree, node, &f))
            return false;
        ggfs_kv_file_put(&f);
        return true;
    }
    case GGFS_MODEL_GGUF:
        return tree->model->merged.available && version_held(tree, node);
    case GGFS_HEADER:
    case GGFS_WARNINGS:
    case GGFS_METADATA_JSON:
        return version_held(tree, node);
    case GGFS_TOKENIZER_DIR:
    case GGFS_VOCAB_TSV:
    case GGFS_SPECIAL_TOKENS:
        return has_vocab(tree, node);
    case GGFS_SHARDS_DIR:
    case GGFS_SHARD:
        return ggfs_model_is_split(tree->model);
    case GGFS_ROOT:
    case GGFS_METADATA_DIR:
    case GGFS_TENSORS_DIR:
    case GGFS_TENSOR_DIR:
    case GGFS_TENSOR_INFO:
    case GGFS_TENSORS_TSV:
        return true;
    }
    return false;
}
