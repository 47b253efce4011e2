/*
 * Inode arithmetic and name lookup of the mounted tree (its attributes are
 * in attr.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tree/names.h"
#include "tree/page_push.h"
#include "tree/prefetch_trigger.h"
#include "tree/tree.h"

#define TENSOR_INODES 9 // directory, info, raw, f32, f32.npy, stats, xxh64, sha1, sha256

static uint64_t first_shard_ino(const ggfs_tree *tree)
{
    return GGFS_INO_FIRST_KV + ggp_kv_count(tree->keys);
}

static uint64_t first_tensor_ino(const ggfs_tree *tree)
{
    return first_shard_ino(tree) + tree->model->n_shards;
}

/* Files made in metadata/ by edits are numbered after the tensors' files. */
static uint64_t first_new_kv_ino(const ggfs_tree *tree)
{
    return first_tensor_ino(tree) + tree->model->n_tensors * TENSOR_INODES;
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

bool ggfs_kv_file_get(const ggfs_tree *tree, uint64_t id, ggfs_kv_file *f)
{
    f->view = ggfs_tree_view(tree);
    f->index = ggfs_view_index_of(f->view, id);
    if (f->index != UINT64_MAX)
        return true;
    ggfs_view_put(f->view);
    f->view = NULL;
    return tree->edits && ggfs_edits_scratch_of(tree->edits, id, &f->scratch);
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
    atomic_init(&tree->gguf_opened, 0);
    const uint64_t n_kv = ggp_kv_count(tree->keys);
    if (!ggfs_stats_cache_init(&tree->stats, model->n_tensors, &tree->cancel))
        return false;
    if (!ggfs_hash_cache_init(&tree->hashes, model, &tree->cancel))
        return false;
    tree->long_kvs = collect_cut_names(n_kv, kv_name, tree, &tree->n_long_kvs);
    tree->long_tensors = collect_cut_names(model->n_tensors, tensor_name, tree, &tree->n_long_tensors);
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
    ggfs_stats_cache_destroy(&tree->stats);
    ggfs_hash_cache_destroy(&tree->hashes);
    ggfs_page_push_free(tree->page_push);
    ggfs_prefetch_trigger_free(tree->prefetch_trigger);
    free(tree->long_kvs);
    free(tree->long_tensors);
}

ggfs_node ggfs_node_of(const ggfs_tree *tree, uint64_t ino)
{
    if (ino < tree->ino_base)
        return (ggfs_node){GGFS_NONE, 0};
    ino -= tree->ino_base;
    switch (ino) {
    case GGFS_INO_ROOT: return (ggfs_node){GGFS_ROOT, 0};
    case GGFS_INO_HEADER: return (ggfs_node){GGFS_HEADER, 0};
    case GGFS_INO_METADATA: return (ggfs_node){GGFS_METADATA_DIR, 0};
    case GGFS_INO_TENSORS: return (ggfs_node){GGFS_TENSORS_DIR, 0};
    case GGFS_INO_MODEL_GGUF: return (ggfs_node){GGFS_MODEL_GGUF, 0};
    case GGFS_INO_SHARDS: return (ggfs_node){GGFS_SHARDS_DIR, 0};
    case GGFS_INO_WARNINGS: return (ggfs_node){GGFS_WARNINGS, 0};
    case GGFS_INO_METADATA_JSON: return (ggfs_node){GGFS_METADATA_JSON, 0};
    case GGFS_INO_TENSORS_TSV: return (ggfs_node){GGFS_TENSORS_TSV, 0};
    case GGFS_INO_HASHES: return (ggfs_node){GGFS_HASHES, 0};
    case GGFS_INO_REMOTE: return (ggfs_node){GGFS_REMOTE_STATUS, 0};
    }
    const uint64_t first_shard = first_shard_ino(tree);
    const uint64_t first_tensor = first_tensor_ino(tree);
    if (ino >= GGFS_INO_FIRST_KV && ino < first_shard)
        return (ggfs_node){GGFS_KV, ino - GGFS_INO_FIRST_KV};
    if (tree->edits && ino >= first_new_kv_ino(tree))
        return (ggfs_node){GGFS_KV, first_new_id(tree) + (ino - first_new_kv_ino(tree))};
    if (ino >= first_shard && ino < first_tensor)
        return (ggfs_node){GGFS_SHARD, ino - first_shard};
    if (ino >= first_tensor) {
        const uint64_t rel = ino - first_tensor;
        const uint64_t index = rel / TENSOR_INODES;
        if (index < tree->model->n_tensors) {
            static const ggfs_kind kinds[TENSOR_INODES] = {
                GGFS_TENSOR_DIR, GGFS_TENSOR_INFO, GGFS_TENSOR_RAW,
                GGFS_TENSOR_F32, GGFS_TENSOR_NPY,  GGFS_TENSOR_STATS,
                GGFS_TENSOR_XXH64, GGFS_TENSOR_SHA1, GGFS_TENSOR_SHA256,
            };
            return (ggfs_node){kinds[rel % TENSOR_INODES], index};
        }
    }
    return (ggfs_node){GGFS_NONE, 0};
}

static uint64_t local_ino_of(const ggfs_tree *tree, ggfs_node node)
{
    const uint64_t tensor_base = first_tensor_ino(tree) + node.index * TENSOR_INODES;
    switch (node.kind) {
    case GGFS_ROOT: return GGFS_INO_ROOT;
    case GGFS_HEADER: return GGFS_INO_HEADER;
    case GGFS_METADATA_DIR: return GGFS_INO_METADATA;
    case GGFS_TENSORS_DIR: return GGFS_INO_TENSORS;
    case GGFS_MODEL_GGUF: return GGFS_INO_MODEL_GGUF;
    case GGFS_SHARDS_DIR: return GGFS_INO_SHARDS;
    case GGFS_WARNINGS: return GGFS_INO_WARNINGS;
    case GGFS_METADATA_JSON: return GGFS_INO_METADATA_JSON;
    case GGFS_TENSORS_TSV: return GGFS_INO_TENSORS_TSV;
    case GGFS_HASHES: return GGFS_INO_HASHES;
    case GGFS_REMOTE_STATUS: return GGFS_INO_REMOTE;
    case GGFS_KV:
        return node.index < first_new_id(tree) ? GGFS_INO_FIRST_KV + node.index
                                               : first_new_kv_ino(tree) + (node.index - first_new_id(tree));
    case GGFS_SHARD: return first_shard_ino(tree) + node.index;
    case GGFS_TENSOR_DIR: return tensor_base;
    case GGFS_TENSOR_INFO: return tensor_base + 1;
    case GGFS_TENSOR_RAW: return tensor_base + 2;
    case GGFS_TENSOR_F32: return tensor_base + 3;
    case GGFS_TENSOR_NPY: return tensor_base + 4;
    case GGFS_TENSOR_STATS: return tensor_base + 5;
    case GGFS_TENSOR_XXH64: return tensor_base + 6;
    case GGFS_TENSOR_SHA1: return tensor_base + 7;
    case GGFS_TENSOR_SHA256: return tensor_base + 8;
    case GGFS_NONE: break;
    }
    return 0;
}

uint64_t ggfs_ino_of(const ggfs_tree *tree, ggfs_node node)
{
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

/* The id of the file of metadata/ called fname: a key of the model as it
 * is, or, when edited, of the current view, or a scratch file. */
static uint64_t find_metadata(const ggfs_tree *tree, const char *fname)
{
    if (!tree->edits)
        return find_named(tree, fname, find_kv, kv_name, tree->long_kvs, tree->n_long_kvs);
    const size_t flen = strlen(fname);
    char name[GGFS_NAME_MAX + 1];
    size_t len;
    if (flen > GGFS_NAME_MAX)
        return UINT64_MAX;
    uint64_t id = UINT64_MAX;
    ggfs_view *v = ggfs_edits_view(tree->edits);
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
    ggfs_view_put(v);
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
    const ggfs_node none = {GGFS_NONE, 0};
    uint64_t i;
    switch (parent.kind) {
    case GGFS_ROOT:
        if (strcmp(name, "header") == 0) return (ggfs_node){GGFS_HEADER, 0};
        if (strcmp(name, "metadata") == 0) return (ggfs_node){GGFS_METADATA_DIR, 0};
        if (strcmp(name, "tensors") == 0) return (ggfs_node){GGFS_TENSORS_DIR, 0};
        if (strcmp(name, "model.gguf") == 0) return (ggfs_node){GGFS_MODEL_GGUF, 0};
        if (strcmp(name, "shards") == 0) return (ggfs_node){GGFS_SHARDS_DIR, 0};
        if (strcmp(name, "warnings") == 0) return (ggfs_node){GGFS_WARNINGS, 0};
        if (strcmp(name, "metadata.json") == 0) return (ggfs_node){GGFS_METADATA_JSON, 0};
        if (strcmp(name, "tensors.tsv") == 0) return (ggfs_node){GGFS_TENSORS_TSV, 0};
        if (strcmp(name, "hashes") == 0) return (ggfs_node){GGFS_HASHES, 0};
        if (strcmp(name, "remote") == 0) return (ggfs_node){GGFS_REMOTE_STATUS, 0};
        return none;
    case GGFS_METADATA_DIR:
        i = find_metadata(tree, name);
        return i == UINT64_MAX ? none : (ggfs_node){GGFS_KV, i};
    case GGFS_TENSORS_DIR:
        i = find_named(tree, name, find_tensor, tensor_name, tree->long_tensors, tree->n_long_tensors);
        return i == UINT64_MAX ? none : (ggfs_node){GGFS_TENSOR_DIR, i};
    case GGFS_SHARDS_DIR:
        i = find_shard(tree, name);
        return i == UINT64_MAX ? none : (ggfs_node){GGFS_SHARD, i};
    case GGFS_TENSOR_DIR: {
        static const char *const files[] = {"info", "raw", "f32", "f32.npy", "stats",
                                            "xxh64", "sha1", "sha256"};
        static const ggfs_kind kinds[] = {GGFS_TENSOR_INFO, GGFS_TENSOR_RAW, GGFS_TENSOR_F32,
                                          GGFS_TENSOR_NPY, GGFS_TENSOR_STATS, GGFS_TENSOR_XXH64,
                                          GGFS_TENSOR_SHA1, GGFS_TENSOR_SHA256};
        for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
            if (strcmp(name, files[f]) == 0)
                return (ggfs_node){kinds[f], parent.index};
        }
        return none;
    }
    default:
        return none;
    }
}

bool ggfs_node_exists(const ggfs_tree *tree, ggfs_node node)
{
    switch (node.kind) {
    case GGFS_NONE:
        return false;
    case GGFS_TENSOR_RAW:
    case GGFS_TENSOR_XXH64:
    case GGFS_TENSOR_SHA1:
    case GGFS_TENSOR_SHA256:
        return ggfs_tensor_has_raw(tree, node.index);
    case GGFS_HASHES:
        return ggfs_hashes_available(&tree->hashes);
    case GGFS_REMOTE_STATUS:
        return tree->remote != NULL;
    case GGFS_TENSOR_F32:
    case GGFS_TENSOR_NPY:
    case GGFS_TENSOR_STATS:
        return ggfs_tensor_has_f32(tree, node.index);
    case GGFS_KV: {
        if (!tree->edits)
            return node.index < ggp_kv_count(tree->keys);
        ggfs_kv_file f;
        if (!ggfs_kv_file_get(tree, node.index, &f))
            return false;
        ggfs_kv_file_put(&f);
        return true;
    }
    case GGFS_MODEL_GGUF:
        return tree->model->merged.available;
    case GGFS_SHARDS_DIR:
    case GGFS_SHARD:
        return ggfs_model_is_split(tree->model);
    default:
        return true;
    }
}
