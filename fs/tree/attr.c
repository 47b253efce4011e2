/*
 * The attributes of the tree's nodes: sizes (a text file's is its
 * rendered length, computed once per view for the views and keys), modes,
 * links and times, which come from the model's file.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tree/attr.h"
#include "tree/ollama_files.h"
#include "tree/text.h"

/* A size kept in a view's cache: computed once; two threads may both
 * compute it and store the same value. A render that ran out of memory is
 * not kept. */
static uint64_t cached_size(_Atomic uint64_t *slot, ggfs_tree *tree, ggfs_view *view, ggfs_node node)
{
    uint64_t size = atomic_load_explicit(slot, memory_order_relaxed);
    if (size == UINT64_MAX && ggfs_text_is_kept(node.kind)) {
        // Rendered once for the size and every open (text.h).
        const ggfs_view_text *kept = ggfs_text_kept(tree, view, node);
        if (!kept)
            return 0;
        size = kept->len;
        atomic_store_explicit(slot, size, memory_order_relaxed);
    } else if (size == UINT64_MAX) {
        ggp_counting_sink c;
        ggp_counting_sink_init(&c);
        if (!ggfs_text_render(tree, view, node, &c.sink))
            return 0;
        size = c.total;
        atomic_store_explicit(slot, size, memory_order_relaxed);
    }
    return size;
}

/* The size of model.gguf as the view has it. */
static uint64_t gguf_size(const ggfs_tree *tree, const ggfs_view *view)
{
    return view->edited ? view->gguf.size : tree->model->merged.size;
}

static uint64_t kv_size(ggfs_tree *tree, ggfs_node node)
{
    ggfs_kv_file f;
    if (!ggfs_kv_file_get(tree, node, &f))
        return 0;
    uint64_t size;
    if (!f.view) {
        size = f.scratch.size;
    } else {
        _Atomic uint64_t *slot = &f.view->kv_size[f.index];
        size = atomic_load_explicit(slot, memory_order_relaxed);
        if (size == UINT64_MAX) {
            size = ggp_render_size(f.view->keys, &ggp_kv_at(f.view->keys, f.index)->value);
            atomic_store_explicit(slot, size, memory_order_relaxed);
        }
    }
    ggfs_kv_file_put(&f);
    return size;
}

uint64_t ggfs_size(ggfs_tree *tree, ggfs_node node)
{
    uint32_t shard;
    const ggp_tensor *t;
    uint64_t size;
    ggfs_view *view;
    switch (node.kind) {
    case GGFS_WARNINGS:
    case GGFS_METADATA_JSON:
    case GGFS_TENSORS_TSV:
    case GGFS_VOCAB_TSV:
    case GGFS_SPECIAL_TOKENS:
        if (!(view = ggfs_node_view(tree, node)))
            return 0;
        size = cached_size(&view->text_size[ggfs_text_view_slot(node.kind)], tree, view, node);
        ggfs_view_put(view);
        return size + (node.kind == GGFS_WARNINGS ? ggfs_verify_warnings_len(&tree->verify) : 0);
    case GGFS_TENSOR_NPY: {
        t = ggfs_model_tensor(tree->model, node.index, &shard);
        char header[GGP_NPY_HEADER_MAX];
        return ggp_npy_header(t, header) + t->elements * sizeof(float);
    }
    case GGFS_TENSOR_STATS:
        t = ggfs_model_tensor(tree->model, node.index, &shard);
        return ggp_stats_text_size(t->elements);
    case GGFS_TENSOR_XXH64:
    case GGFS_TENSOR_SHA1:
    case GGFS_TENSOR_SHA256:
        return ggfs_hash_file_size(ggfs_kind_hash(node.kind));
    case GGFS_HASHES:
        return ggfs_hashes_size(&tree->hashes);
    case GGFS_VERIFY: {
        // Its size once computed; before, none (it is read with direct
        // I/O, as `remote` is), since stat never computes it.
        const ggfs_verify_result *r = ggfs_verify_known(&tree->verify);
        return r ? r->len : 0;
    }
    case GGFS_REMOTE_STATUS:
        // Made afresh at each open and read with direct I/O: of no fixed
        // size, as the files of /proc.
        return 0;
    case GGFS_HEADER:
    case GGFS_TENSOR_INFO:
    case GGFS_SHARD:
    case GGFS_MEMORY_CTX:
    case GGFS_MEMORY_TSV:
    case GGFS_OFFLOAD_CTX:
        if (!(view = ggfs_node_view(tree, node)))
            return 0;
        size = ggfs_text_size(tree, view, node);
        ggfs_view_put(view);
        return size;
    case GGFS_MODEL_GGUF:
        if (!(view = ggfs_node_view(tree, node)))
            return 0;
        size = gguf_size(tree, view);
        ggfs_view_put(view);
        return size;
    case GGFS_KV:
        return kv_size(tree, node);
    case GGFS_TENSOR_RAW:
        return ggfs_model_tensor(tree->model, node.index, &shard)->bytes;
    case GGFS_TENSOR_F32:
        return ggfs_model_tensor(tree->model, node.index, &shard)->elements * sizeof(float);
    case GGFS_MODELFILE:
    case GGFS_LAYER: {
        const char *data;
        size_t len;
        return ggfs_ollama_bytes(tree->ollama, node.kind, node.index, &data, &len) ? len : 0;
    }
    default:
        return 0;
    }
}

/* Whether node is metadata/ or a file in it. */
static bool is_metadata(ggfs_node node)
{
    return node.kind == GGFS_METADATA_DIR || node.kind == GGFS_KV;
}

bool ggfs_stat(ggfs_tree *tree, ggfs_node node, struct stat *st)
{
    if (!ggfs_node_exists(tree, node))
        return false;
    if (node.kind == GGFS_LAYER_TREE) // that tree's root
        return ggfs_stat(tree->layer_trees[node.index], ggfs_node_at(GGFS_ROOT, 0), st);
    const struct stat *m = &tree->model->shards[0].source->st;
    memset(st, 0, sizeof *st);
    st->st_ino = ggfs_ino_of(tree, node);
    st->st_uid = m->st_uid;
    st->st_gid = m->st_gid;
    st->st_atim = m->st_atim;
    st->st_mtim = m->st_mtim;
    st->st_ctim = m->st_ctim;
    // A directory is searchable wherever the model is readable: masking
    // 0555 by a 0644 model would leave directories nobody can enter.
    const mode_t allowed = m->st_mode & 0777;
    const mode_t dir_allowed = allowed | ((allowed & 0444) >> 2);
    // Edited, metadata/ and its files are the owner's to write, whatever
    // the model's own write bits: the model itself is never written.
    const mode_t write = ggfs_tree_editable(tree) && is_metadata(node) ? 0200 : 0;
    switch (node.kind) {
    case GGFS_ROOT:
        st->st_mode = S_IFDIR | (0555 & dir_allowed);
        // ".", its entry, and the subdirectories' ".."
        st->st_nlink = 4 + ggfs_model_is_split(tree->model) +
                       2 * ggfs_node_exists(tree, ggfs_node_at(GGFS_MEMORY_DIR, 0)) + // and offload/
                       ggfs_node_exists(tree, ggfs_node_at(GGFS_TOKENIZER_DIR, 0)) +
                       (tree->ollama != NULL);
        break;
    case GGFS_METADATA_DIR:
    case GGFS_SHARDS_DIR:
    case GGFS_TOKENIZER_DIR:
    case GGFS_TENSOR_DIR:
    case GGFS_MEMORY_DIR:
    case GGFS_OFFLOAD_DIR:
        st->st_mode = S_IFDIR | (0555 & dir_allowed) | write;
        st->st_nlink = 2;
        break;
    case GGFS_TENSORS_DIR:
        st->st_mode = S_IFDIR | (0555 & dir_allowed);
        st->st_nlink = 2 + tree->model->n_tensors;
        break;
    case GGFS_LAYERS_DIR:
        st->st_mode = S_IFDIR | (0555 & dir_allowed);
        st->st_nlink = 2 + (tree->layer_trees[0] != NULL) + (tree->layer_trees[1] != NULL);
        break;
    default:
        st->st_mode = S_IFREG | (0444 & allowed) | write;
        st->st_nlink = 1;
        st->st_size = (off_t)ggfs_size(tree, node);
        st->st_blksize = 4096;
        st->st_blocks = (st->st_size + 511) / 512;
    }
    return true;
}
