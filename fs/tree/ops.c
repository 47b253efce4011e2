/*
 * One ggfs_op_<op>() per FUSE operation. The model never changes while it
 * is mounted, so entries and attributes are cached for as long as the
 * kernel will keep them and file pages are kept between opens. Text files
 * are rendered once per open; raw and model.gguf are served from the
 * shards' bytes; f32 is dequantized per read from the blocks the read
 * touches. An edited metadata/ (edit_ops.c) changes the keys: each request
 * reads them from the view it takes, and the files that follow the keys
 * are opened without the kernel's pages of an earlier version
 * (invalidate.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tree/attr.h"
#include "tree/deferred.h"
#include "tree/edit_ops.h"
#include "tree/entry.h"
#include "tree/memory_files.h"
#include "tree/layer_trees.h"
#include "tree/names.h"
#include "tree/ollama_files.h"
#include "tree/open_text.h"
#include "tree/ops.h"
#include "tree/page_push.h"
#include "tree/prefetch_trigger.h"
#include "tree/remote_files.h"
#include "tree/shape.h"
#include "tree/read_data.h"
#include "tree/text.h"
#include "tree/tree.h"
#include "util/workers.h"

static ggfs_tree *tree_of(fuse_req_t req)
{
    return ((ggfs_model_mount *)fuse_req_userdata(req))->tree;
}

static bool is_dir(ggfs_kind k)
{
    return ggfs_kind_is(k, GGFS_K_DIR);
}

static bool follows_keys(ggfs_kind k)
{
    return ggfs_kind_is(k, GGFS_K_FOLLOWS_KEYS);
}

unsigned ggfs_tree_op_lookup(ggfs_tree *tree, fuse_req_t req, fuse_ino_t parent, const char *name)
{
    tree = ggfs_tree_route(tree, parent);
    const ggfs_node node = ggfs_lookup(tree, ggfs_node_of(tree, parent), name);
    ggfs_view *view = ggfs_tree_lookup_view(tree, req, node);
    struct fuse_entry_param e;
    const bool found = ggfs_tree_entry(tree, view, node, &e);
    ggfs_view_put(view);
    if (!found) {
        // A negative entry is cached as long as a positive one would be.
        e.entry_timeout = ggfs_tree_entry_timeout(tree, node.kind);
        fuse_reply_entry(req, &e);
        return 0;
    }
    // A reply to a request the kernel gave up on (-ENOENT) is no reference.
    const unsigned refs = fuse_reply_entry(req, &e) == -ENOENT ? 0 : 1;
    if (!refs)
        ggfs_tree_forget(tree, e.ino, 1);
    if (refs && node.kind == GGFS_MODEL_GGUF && tree->page_push)
        ggfs_page_push_known(tree->page_push);
    return refs;
}

void ggfs_tree_op_getattr(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino)
{
    tree = ggfs_tree_route(tree, ino);
    struct stat st;
    if (!ggfs_stat(tree, ggfs_node_of(tree, ino), &st)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    fuse_reply_attr(req, &st, ggfs_tree_attr_timeout(tree, ggfs_node_of(tree, ino).kind));
}

/* ==== Directories ==== */

/* The name and node of entry i of directory dir (after "." and ".."):
 * metadata/ lists view's keys, then an edited one's scratch files. */
static bool dir_entry(ggfs_tree *tree, const ggfs_view *view, ggfs_node dir, uint64_t i, char *name, ggfs_node *node)
{
    const ggfs_model *m = tree->model;
    const ggfs_row *rows = dir.kind == GGFS_TENSOR_DIR ? ggfs_tensor_rows : ggfs_fixed_rows(dir.kind);
    uint32_t shard;
    ggfs_memory_rules memory;
    // Entries that do not exist for this model or tensor (shards, raw,
    // f32...) are skipped by the caller, which keeps offsets stable.
    switch (dir.kind) {
    case GGFS_ROOT:
    case GGFS_TOKENIZER_DIR:
    case GGFS_TENSOR_DIR: {
        const ggfs_row *row = ggfs_row_at(rows, i);
        if (!row)
            return false;
        strcpy(name, row->name);
        *node = ggfs_node_at(row->kind, dir.index);
        return true;
    }
    case GGFS_METADATA_DIR: {
        const ggp_kv *kv = ggp_kv_at(view->keys, i);
        ggfs_scratch_info scratch;
        if (kv) {
            ggfs_name_encode(kv->key.ptr, kv->key.len, name);
            *node = ggfs_kv_node(ggfs_view_id_of(view, i));
            return true;
        }
        if (!tree->edits || !ggfs_edits_scratch_at(tree->edits, i - ggp_kv_count(view->keys), &scratch))
            return false;
        ggfs_name_encode(scratch.name, scratch.name_len, name);
        *node = ggfs_node_at(GGFS_KV, scratch.id);
        return true;
    }
    case GGFS_TENSORS_DIR: {
        const ggp_tensor *t = ggfs_model_tensor(m, i, &shard);
        if (!t)
            return false;
        ggfs_name_encode(t->name.ptr, t->name.len, name);
        *node = ggfs_node_at(GGFS_TENSOR_DIR, i);
        return true;
    }
    case GGFS_MEMORY_DIR:
    case GGFS_OFFLOAD_DIR: {
        // the contexts listed for the keys as they are now
        if (i > UINT32_MAX || !ggfs_memory_read(view->keys, tree->memory_weights, &memory))
            return false;
        const uint32_t ctx = ggfs_memory_listed(&memory, (uint32_t)i);
        if (ctx == 0)
            return false;
        snprintf(name, GGFS_NAME_MAX + 1, "%" PRIu32, ctx);
        *node = ggfs_node_at(dir.kind == GGFS_MEMORY_DIR ? GGFS_MEMORY_CTX : GGFS_OFFLOAD_CTX, ctx);
        return true;
    }
    case GGFS_LAYERS_DIR: {
        // The small layers' files, then projector/ and adapter/ (the
        // caller skips those the model lacks).
        const char *file = ggfs_ollama_file_name(tree->ollama, i);
        const uint64_t k = i - (tree->ollama ? tree->ollama->n_files : 0);
        if (!file && k >= 2)
            return false;
        snprintf(name, GGFS_NAME_MAX + 1, "%s", file ? file : ggfs_layer_tree_names[k]);
        *node = file ? ggfs_node_at(GGFS_LAYER, i) : ggfs_node_at(GGFS_LAYER_TREE, k);
        return true;
    }
    case GGFS_SHARDS_DIR:
        if (i >= m->n_shards)
            return false;
        snprintf(name, GGFS_NAME_MAX + 1, "%s", m->shards[i].file_name);
        *node = ggfs_node_at(GGFS_SHARD, i);
        return true;
    default:
        return false;
    }
}

/* readdir and readdirplus: offsets 1 is ".", 2 is "..", 3 + i is entry i.
 * With plus, each entry carries its attributes, so `ls -l` needs no
 * lookup per file; without, only what the kernel reads (inode and type),
 * so a plain `ls` renders no sizes. */
uint64_t ggfs_tree_op_readdir(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                              bool plus)
{
    tree = ggfs_tree_route(tree, ino);
    const ggfs_node dir = ggfs_node_of(tree, ino);
    if (!is_dir(dir.kind)) {
        fuse_reply_err(req, ENOTDIR);
        return 0;
    }
    char *buf = ggfs_scratch_get(tree, size);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return 0;
    }
    size_t used = 0;
    uint64_t entries = 0; // with an inode, in a readdirplus reply
    uint64_t *pinned = NULL; // their inodes of files that follow the keys
    size_t n_pinned = 0, cap_pinned = 0;
    ggfs_view *view = ggfs_tree_view(tree);
    for (uint64_t pos = (uint64_t)off;; pos++) {
        char name[GGFS_NAME_MAX + 1];
        struct fuse_entry_param e;
        memset(&e, 0, sizeof e);
        bool dot = pos < 2;
        if (dot) {
            strcpy(name, pos == 0 ? "." : "..");
            e.attr.st_ino = pos == 0 ? ino : ggfs_ino_of(tree, ggfs_node_at(GGFS_ROOT, 0));
            e.attr.st_mode = S_IFDIR;
        } else {
            ggfs_node node;
            if (!dir_entry(tree, view, dir, pos - 2, name, &node))
                break;
            if (!ggfs_node_exists(tree, node))
                continue;
            if (plus) {
                if (!ggfs_tree_entry(tree, view, node, &e))
                    continue;
            } else {
                e.attr.st_ino = ggfs_ino_of(tree, ggfs_node_pin(tree, view, node));
                e.attr.st_mode = is_dir(node.kind) ? S_IFDIR : S_IFREG;
            }
        }
        const bool held = plus && !dot && (e.ino & GGFS_INO_PINNED) && ggfs_tree_editable(tree);
        if (held && n_pinned == cap_pinned) {
            const size_t cap = cap_pinned ? 2 * cap_pinned : 16;
            uint64_t *grown = realloc(pinned, cap * sizeof *pinned);
            if (!grown) {
                ggfs_tree_forget(tree, e.ino, 1);
                break;
            }
            pinned = grown;
            cap_pinned = cap;
        }
        const off_t next = (off_t)pos + 1;
        const size_t need = plus ? fuse_add_direntry_plus(req, buf + used, size - used, name, &e, next)
                                 : fuse_add_direntry(req, buf + used, size - used, name, &e.attr, next);
        if (need > size - used) {
            if (held)
                ggfs_tree_forget(tree, e.ino, 1);
            break;
        }
        used += need;
        entries += plus && !dot;
        if (held)
            pinned[n_pinned++] = e.ino;
    }
    ggfs_view_put(view);
    const bool given = fuse_reply_buf(req, buf, used) != -ENOENT;
    for (size_t i = 0; !given && i < n_pinned; i++)
        ggfs_tree_forget(tree, pinned[i], 1);
    free(pinned);
    return given ? entries : 0;
}


/* ==== Files ==== */

/* `verify` was computed: the kernel's sizes of it and, when it found a
 * mismatch, of `warnings` (as it is now and in the current version of an
 * edited tree) are dropped, once (which never waits); their pages are
 * dropped at each open. */
static void verify_computed(ggfs_tree *tree, const ggfs_verify_result *r)
{
    struct fuse_session *se = tree->session ? *tree->session : NULL;
    if (!se || atomic_exchange(&tree->verify.told, true))
        return;
    fuse_lowlevel_notify_inval_inode(se, ggfs_ino_of(tree, ggfs_node_at(GGFS_VERIFY, 0)), -1, 0);
    if (!r->warnings_len)
        return;
    const ggfs_node now = ggfs_node_at(GGFS_WARNINGS, 0);
    fuse_lowlevel_notify_inval_inode(se, ggfs_ino_of(tree, now), -1, 0);
    ggfs_view *view = ggfs_tree_view(tree);
    if (!view)
        return;
    const ggfs_node pinned = ggfs_node_pin(tree, view, now);
    if (pinned.pinned)
        fuse_lowlevel_notify_inval_inode(se, ggfs_ino_of(tree, pinned), -1, 0);
    ggfs_view_put(view);
}

/* Renders the text of node into b; returns 0 or an errno. A tensor's stats
 * and hashes, and the model's hashes, are computed here, once per mount
 * (the first reader computes, the others wait for it). */
static int render_text(ggfs_tree *tree, ggfs_node node, ggfs_buffer *b)
{
    if (ggfs_kind_is_hash(node.kind)) {
        const ggfs_hash h = ggfs_kind_hash(node.kind);
        char text[2 * GGFS_DIGEST_MAX + 1];
        const int err = ggfs_hash_file(&tree->hashes, tree->model, node.index, h, text);
        if (err)
            return err;
        b->sink.write(&b->sink, text, (size_t)ggfs_hash_file_size(h));
    } else if (node.kind == GGFS_HASHES) {
        const char *text;
        const int err = ggfs_hashes_get(&tree->hashes, tree->model, &text);
        if (err)
            return err;
        b->sink.write(&b->sink, text, (size_t)ggfs_hashes_size(&tree->hashes));
    } else if (node.kind == GGFS_MODELFILE || node.kind == GGFS_LAYER) {
        const char *data;
        size_t len;
        if (!ggfs_ollama_bytes(tree->ollama, node.kind, node.index, &data, &len))
            return ENOENT;
        b->sink.write(&b->sink, data, len);
    } else if (node.kind == GGFS_VERIFY) {
        const ggfs_verify_result *r;
        const int err = ggfs_verify_get(&tree->verify, tree->model, &r);
        if (err)
            return err;
        verify_computed(tree, r);
        b->sink.write(&b->sink, r->text, r->len);
    } else if (node.kind == GGFS_REMOTE_STATUS) {
        size_t len;
        char *text = ggfs_tree_remote_text(tree, &len);
        if (!text)
            return ENOMEM;
        b->sink.write(&b->sink, text, len);
        free(text);
    } else if (node.kind == GGFS_TENSOR_STATS) {
        uint32_t shard;
        const ggp_tensor *t = ggfs_model_tensor(tree->model, node.index, &shard);
        const char *text;
        const int err = ggfs_stats_get(&tree->stats, tree->model, node.index, &text);
        if (err)
            return err;
        b->sink.write(&b->sink, text, (size_t)ggp_stats_text_size(t->elements));
    } else if (node.kind == GGFS_KV) {
        ggfs_kv_file f;
        if (!ggfs_kv_file_get(tree, node, &f))
            return ENOENT;
        ggp_bytes scratch = {0};
        int err = 0;
        if (f.view)
            ggp_render(f.view->keys, &ggp_kv_at(f.view->keys, f.index)->value, &b->sink);
        else if (!(err = ggfs_edits_scratch_text(tree->edits, node.index, &scratch)) && scratch.len)
            b->sink.write(&b->sink, (const char *)scratch.data, scratch.len);
        free(scratch.data);
        ggfs_kv_file_put(&f);
        if (err)
            return err;
    } else {
        ggfs_view *view = ggfs_node_view(tree, node);
        if (!view)
            return ESTALE; // a version the kernel had forgotten
        const ggfs_view_text *kept = ggfs_text_is_kept(node.kind) ? ggfs_text_kept(tree, view, node) : NULL;
        if (kept && kept->len)
            b->sink.write(&b->sink, kept->data, kept->len);
        const bool rendered = kept || (!ggfs_text_is_kept(node.kind) && ggfs_text_render(tree, view, node, &b->sink));
        ggfs_view_put(view);
        const ggfs_verify_result *verified = ggfs_verify_known(&tree->verify);
        if (node.kind == GGFS_WARNINGS && verified && verified->warnings_len)
            b->sink.write(&b->sink, verified->warnings, verified->warnings_len);
        if (!rendered)
            return ENOMEM;
    }
    return b->failed ? ENOMEM : 0;
}

/* Opens a text file: renders it and keeps the text with the open file. */
static void open_text_file(ggfs_tree *tree, fuse_req_t req, ggfs_node node, struct fuse_file_info *fi)
{
    ggfs_open_text *o = ggfs_open_text_new(tree->open_texts, false);
    if (!o) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    const int err = render_text(tree, node, &o->text);
    if (err) {
        ggfs_open_text_put(o);
        fuse_reply_err(req, err);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)o;
    fuse_reply_open(req, fi);
}

/* A remote tensor's stats and hashes read the whole tensor (the model's
 * hashes, the whole model) over the network: the open that computes them
 * runs on the remote-read threads, not the loop's. */
typedef struct deferred_open {
    ggfs_tree *tree;
    ggfs_node node;
    struct fuse_file_info fi;
} deferred_open;

static void serve_deferred_open(fuse_req_t req, void *args)
{
    deferred_open *d = args;
    open_text_file(d->tree, req, d->node, &d->fi);
}

void ggfs_tree_op_open(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    tree = ggfs_tree_route(tree, ino);
    const ggfs_node node = ggfs_node_of(tree, ino);
    if (is_dir(node.kind)) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    const bool writes = (fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC);
    if (writes && (!ggfs_tree_editable(tree) || node.kind != GGFS_KV)) {
        fuse_reply_err(req, EROFS);
        return;
    }
    fi->fh = 0;
    if (writes) {
        ggfs_edit_open(tree, req, node, fi);
        return;
    }
    // A version of a file never changes. A key's file may hold in the
    // kernel's cache what a write refused there left.
    fi->keep_cache = !ggfs_tree_editable(tree) || !follows_keys(node.kind) ||
                     (node.pinned && node.kind != GGFS_KV);
    if (node.kind == GGFS_REMOTE_STATUS || node.kind == GGFS_VERIFY) {
        // Made afresh at each open, or computed at the first: longer or
        // shorter than at stat.
        fi->keep_cache = 0;
        fi->direct_io = 1;
    }
    if (node.kind == GGFS_WARNINGS)
        fi->keep_cache = 0; // grows when `verify` finds a mismatch
    ggfs_tree_opened_by(tree, req, node);
    if (!ggfs_kind_is(node.kind, GGFS_K_TEXT)) {
        if (node.kind == GGFS_MODEL_GGUF)
            ggfs_prefetch_trigger_opened(tree->prefetch_trigger);
        fuse_reply_open(req, fi);
        if (node.kind == GGFS_MODEL_GGUF && tree->page_push)
            ggfs_page_push_known(tree->page_push);
        return;
    }
    if (ggfs_kind_is(node.kind, GGFS_K_READS_DATA)) {
        const deferred_open d = {tree, node, *fi};
        if (ggfs_tree_defer(tree, req, serve_deferred_open, &d, sizeof d))
            return;
    }
    open_text_file(tree, req, node, fi);
}

void ggfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    ggfs_open_text *o = (ggfs_open_text *)(uintptr_t)fi->fh;
    if (o) {
        ggfs_edit_release(o);
        ggfs_open_text_put(o);
    }
    fuse_reply_err(req, 0);
}

/* The part [off, off + size) of a file of `total` bytes; false when empty. */
static bool clamp(uint64_t total, off_t off, size_t size, uint64_t *start, uint64_t *len)
{
    if (off < 0 || (uint64_t)off >= total)
        return false;
    *start = (uint64_t)off;
    *len = total - *start < size ? total - *start : size;
    return true;
}

void ggfs_op_read_text(fuse_req_t req, struct fuse_file_info *fi, size_t size, off_t off)
{
    ggfs_open_text *o = (ggfs_open_text *)(uintptr_t)fi->fh;
    uint64_t start, len;
    ggfs_open_text_ref(o);
    if (o->writable)
        pthread_mutex_lock(&o->lock); // a write may move the text
    if (!clamp(o->text.len, off, size, &start, &len))
        fuse_reply_buf(req, NULL, 0);
    else
        fuse_reply_buf(req, o->text.data + start, (size_t)len);
    if (o->writable)
        pthread_mutex_unlock(&o->lock);
    ggfs_open_text_put(o);
}

void ggfs_tree_op_read(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    tree = ggfs_tree_route(tree, ino);
    const ggfs_node node = ggfs_node_of(tree, ino);
    if (fi->fh) {
        ggfs_op_read_text(req, fi, size, off);
        return;
    }
    uint64_t start, len;
    if (!clamp(ggfs_size(tree, node), off, size, &start, &len)) {
        fuse_reply_buf(req, NULL, 0);
        return;
    }
    ggfs_read_data(req, tree, node, start, len);
}

/* ==== Extended attributes ==== */

/* A key's type as user.gguf.type shows it: "u32", "str", "arr[str]";
 * arrays of arrays "arr[arr]". */
static long type_text(ggp_value_type t, char *buf)
{
    if (t.depth == 0)
        return sprintf(buf, "%s", ggp_vtype_name(t.leaf));
    return sprintf(buf, "arr[%s]", t.depth > 1 ? "arr" : ggp_vtype_name(t.leaf));
}

/* The value of attribute `name` on node into buf (at least 320 bytes), or
 * at *big; returns its length, or -1 when the node has no such attribute
 * (or no memory). A metadata file's name is copied to *owned (malloc'ed,
 * for the caller to free), as the view it lies in is let go here. */
static long xattr_value(ggfs_tree *tree, ggfs_node node, const char *name, char *buf, const char **big,
                        char **owned)
{
    ggp_str full = {NULL, 0};
    const ggp_tensor *t = NULL;
    uint32_t shard;
    ggp_value_type type = {0, GGP_V_COUNT};
    if (node.kind == GGFS_KV) {
        ggfs_kv_file f;
        if (!ggfs_kv_file_get(tree, node, &f))
            return -1;
        full = ggfs_kv_file_name(&f);
        if (f.view) {
            const ggp_value *v = &ggp_kv_at(f.view->keys, f.index)->value;
            type = v->type == GGP_V_ARRAY ? (ggp_value_type){v->elem_type == GGP_V_ARRAY ? 2 : 1, v->elem_type}
                                          : (ggp_value_type){0, v->type};
        } else {
            type = f.scratch.type;
        }
        *owned = malloc(full.len ? (size_t)full.len : 1);
        if (*owned)
            memcpy(*owned, full.ptr, (size_t)full.len);
        full.ptr = *owned;
        ggfs_kv_file_put(&f);
    } else if (ggfs_kind_is(node.kind, GGFS_K_OF_TENSOR)) {
        t = ggfs_model_tensor(tree->model, node.index, &shard);
        full = t->name;
    }
    if (!full.ptr)
        return -1;
    if (strcmp(name, "user.gguf.name") == 0) {
        *big = full.ptr;
        return (long)full.len;
    }
    if (strcmp(name, "user.gguf.type") == 0 && node.kind == GGFS_KV)
        return type_text(type, buf);
    if (node.kind != GGFS_TENSOR_DIR)
        return -1;
    if (strcmp(name, "user.gguf.type") == 0) {
        if (t->type)
            return sprintf(buf, "%s", t->type->name);
        return sprintf(buf, "unknown(%u)", t->type_id);
    }
    if (strcmp(name, "user.gguf.shape") == 0) {
        ggfs_shape_text(t, buf, 320);
        return (long)strlen(buf);
    }
    return -1;
}

static void reply_xattr(fuse_req_t req, const char *value, size_t len, size_t size)
{
    if (size == 0)
        fuse_reply_xattr(req, len);
    else if (size < len)
        fuse_reply_err(req, ERANGE);
    else
        fuse_reply_buf(req, value, len);
}

void ggfs_tree_op_getxattr(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    tree = ggfs_tree_route(tree, ino);
    char buf[320];
    char *owned = NULL;
    const char *big = NULL;
    const long len = xattr_value(tree, ggfs_node_of(tree, ino), name, buf, &big, &owned);
    if (len < 0)
        fuse_reply_err(req, ENODATA);
    else
        reply_xattr(req, big ? big : buf, (size_t)len, size);
    free(owned);
}

void ggfs_tree_op_listxattr(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, size_t size)
{
    tree = ggfs_tree_route(tree, ino);
    static const char *const names[] = {"user.gguf.name", "user.gguf.type", "user.gguf.shape"};
    const ggfs_node node = ggfs_node_of(tree, ino);
    char list[64];
    size_t len = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char buf[320];
        char *owned = NULL;
        const char *big = NULL;
        const long found = xattr_value(tree, node, names[i], buf, &big, &owned);
        free(owned);
        if (found >= 0) {
            memcpy(list + len, names[i], strlen(names[i]) + 1);
            len += strlen(names[i]) + 1;
        }
    }
    reply_xattr(req, list, len, size);
}

/* ==== The rest ==== */

static void ggfs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    ggfs_tree *tree = tree_of(req);
    struct statvfs sv;
    memset(&sv, 0, sizeof sv);
    sv.f_bsize = 4096;
    sv.f_frsize = 4096;
    sv.f_blocks = (tree->model->total_size + 4095) / 4096;
    sv.f_files = ggfs_ino_of(tree, ggfs_node_at(GGFS_TENSOR_DIR, tree->model->n_tensors));
    sv.f_namemax = GGFS_NAME_MAX;
    sv.f_flag = ggfs_tree_editable(tree) ? 0 : ST_RDONLY;
    fuse_reply_statfs(req, &sv);
}

static void ggfs_op_init(void *userdata, struct fuse_conn_info *conn)
{
    const ggfs_model_mount *mount = userdata;
    // The model never changes under a working mount: there is nothing for
    // the kernel to revalidate before serving cached pages.
    conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
    // The kernel caps a mount's read-ahead at what init asks for.
    if (mount->readahead_kb)
        conn->max_readahead = mount->readahead_kb * 1024;
    // An edited metadata/ takes O_TRUNC with the open that asks for it.
    if (ggfs_tree_editable(mount->tree) && (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC))
        conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
    // In the daemon's process, now that it has forked.
    ggfs_tree_prefetch_start(mount->tree, mount->session);
}

/* The session ends: remote reads still running finish, queued ones are
 * answered EIO, before the session they reply to is freed (the daemon has
 * ended them before its device closed: end_model_reads in main.c). */
static void ggfs_op_destroy(void *userdata)
{
    ggfs_tree *tree = ((ggfs_model_mount *)userdata)->tree;
    ggfs_tree_prefetch_stop(tree);
    ggfs_workers_free(tree->remote_reads);
    tree->remote_reads = NULL;
}

/* Every change is refused: the model is mounted read-only. */
void ggfs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                            struct fuse_file_info *fi)
{
    (void)ino, (void)attr, (void)to_set, (void)fi;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    (void)parent, (void)name, (void)mode, (void)rdev;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    (void)parent, (void)name, (void)mode;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    (void)parent, (void)name;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    (void)link, (void)parent, (void)name;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                           const char *newname, unsigned int flags)
{
    (void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    (void)ino, (void)newparent, (void)newname;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                          struct fuse_file_info *fi)
{
    (void)ino, (void)buf, (void)size, (void)off, (void)fi;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                           struct fuse_file_info *fi)
{
    (void)parent, (void)name, (void)mode, (void)fi;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                             size_t size, int flags)
{
    (void)ino, (void)name, (void)value, (void)size, (void)flags;
    fuse_reply_err(req, EROFS);
}

void ggfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
    (void)ino, (void)name;
    fuse_reply_err(req, EROFS);
}

/* ==== One model's mount: every inode is its tree's ==== */

static void ggfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    ggfs_tree_op_lookup(tree_of(req), req, parent, name);
}

static void ggfs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    ggfs_tree_op_getattr(tree_of(req), req, ino);
}

static void ggfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                            struct fuse_file_info *fi)
{
    (void)fi;
    ggfs_tree_op_readdir(tree_of(req), req, ino, size, off, false);
}

static void ggfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                                struct fuse_file_info *fi)
{
    (void)fi;
    ggfs_tree_op_readdir(tree_of(req), req, ino, size, off, true);
}

static void ggfs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    ggfs_tree_op_open(tree_of(req), req, ino, fi);
}

static void ggfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                         struct fuse_file_info *fi)
{
    ggfs_tree_op_read(tree_of(req), req, ino, size, off, fi);
}

static void ggfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    ggfs_tree_op_getxattr(tree_of(req), req, ino, name, size);
}

static void ggfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    ggfs_tree_op_listxattr(tree_of(req), req, ino, size);
}

/* The kernel forgets inodes: an edited model's old versions go with them. */
static void ggfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    ggfs_tree_forget(tree_of(req), ino, nlookup);
    fuse_reply_none(req);
}

static void ggfs_op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
    ggfs_tree *tree = tree_of(req);
    for (size_t i = 0; i < count; i++)
        ggfs_tree_forget(tree, forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

/* A model mount's release: a load of model.gguf ends with its last
 * opener (prefetch_trigger.h). */
static void ggfs_op_release_model(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    ggfs_tree *tree = tree_of(req);
    if (ggfs_node_of(tree, ino).kind == GGFS_MODEL_GGUF)
        ggfs_prefetch_trigger_released(tree->prefetch_trigger);
    ggfs_op_release(req, ino, fi);
}

const struct fuse_lowlevel_ops ggfs_ops = {
    .init = ggfs_op_init,
    .destroy = ggfs_op_destroy,
    .lookup = ggfs_op_lookup,
    .forget = ggfs_op_forget,
    .forget_multi = ggfs_op_forget_multi,
    .getattr = ggfs_op_getattr,
    .readdir = ggfs_op_readdir,
    .readdirplus = ggfs_op_readdirplus,
    .open = ggfs_op_open,
    .read = ggfs_op_read,
    .release = ggfs_op_release_model,
    .getxattr = ggfs_op_getxattr,
    .listxattr = ggfs_op_listxattr,
    .statfs = ggfs_op_statfs,
    GGFS_EDIT_OPS,
};
