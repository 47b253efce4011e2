/*
 * Changing metadata/ of an edited model through FUSE (see edit_ops.h).
 * Names are file names, decoded (tree/names.h) into the keys' full names;
 * the edits themselves, their checks and their limits are model/edits.h's.
 */
#define _GNU_SOURCE // RENAME_NOREPLACE, RENAME_EXCHANGE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tree/attr.h"
#include "tree/edit_ops.h"
#include "tree/entry.h"
#include "tree/invalidate.h"
#include "tree/mount.h"
#include "tree/names.h"
#include "tree/text.h"
#include "util/log.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static ggfs_model_mount *mount_of(fuse_req_t req)
{
    return fuse_req_userdata(req);
}

/* The edited tree, when node is metadata/ or a file in it of an edited
 * mount; NULL otherwise (the change is then EROFS). */
static ggfs_tree *editable(fuse_req_t req, fuse_ino_t ino, ggfs_kind want, ggfs_node *node)
{
    ggfs_tree *tree = mount_of(req)->tree;
    *node = ggfs_node_of(tree, ino);
    if (!ggfs_tree_editable(tree) || node->kind != want)
        return NULL;
    ggfs_tree_edited_by(tree, req); // it sees its edit from now on
    return tree;
}

/* A file name as a key's full name: 0, ENAMETOOLONG, or EINVAL for a name
 * no key has (one that ends as a cut long name does, or is no encoding). */
static int key_name(const char *fname, char *name, size_t *len)
{
    const size_t flen = strlen(fname);
    if (flen > GGFS_NAME_MAX)
        return ENAMETOOLONG;
    return !ggfs_name_is_cut(fname, flen) && ggfs_name_decode(fname, flen, name, len) ? 0 : EINVAL;
}

/* Replies with the entry of the metadata file `id`. */
static void reply_entry(fuse_req_t req, ggfs_tree *tree, uint64_t id, struct fuse_file_info *fi)
{
    struct fuse_entry_param e;
    ggfs_view *view = ggfs_tree_view(tree);
    const bool found = ggfs_tree_entry(tree, view, ggfs_kv_node(id), &e);
    ggfs_view_put(view);
    if (!found) {
        fuse_reply_err(req, ENOENT); // gone again at once: another request deleted it
        return;
    }
    if ((fi ? fuse_reply_create(req, &e, fi) : fuse_reply_entry(req, &e)) == -ENOENT)
        ggfs_tree_forget(tree, e.ino, 1);
}

/* ==== Files open for writing ==== */

/* Reserves room for the text to grow to `len` bytes. */
static int reserve(ggfs_open_text *o, size_t len)
{
    if (len > GGFS_EDIT_VALUE_MAX)
        return EFBIG;
    if (len <= o->reserved)
        return 0;
    if (!ggfs_edits_reserve(o->mount->tree->edits, (int64_t)(len - o->reserved))) {
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: files open for writing in metadata/ hold %llu bytes already\n",
                 (unsigned long long)GGFS_EDIT_TOTAL_MAX);
        return ENOSPC;
    }
    o->reserved = len;
    return 0;
}

/* Makes the text len bytes long, new bytes zero; 0 or an errno. */
static int resize_text(ggfs_open_text *o, size_t len)
{
    ggfs_buffer *b = &o->text;
    int err = reserve(o, len);
    if (err)
        return err;
    if (len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < len)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown)
            return ENOMEM;
        b->data = grown;
        b->cap = cap;
    }
    if (len > b->len)
        memset(b->data + b->len, 0, len - b->len);
    b->len = len;
    return 0;
}

/* The current text of the metadata file `id` into b. */
static int current_text(ggfs_tree *tree, uint64_t id, ggfs_buffer *b)
{
    ggfs_kv_file f;
    if (!ggfs_kv_file_get(tree, ggfs_kv_node(id), &f))
        return ENOENT;
    int err = 0;
    if (f.view) {
        ggp_render(f.view->keys, &ggp_kv_at(f.view->keys, f.index)->value, &b->sink);
    } else {
        ggp_bytes text = {0};
        err = ggfs_edits_scratch_text(tree->edits, id, &text);
        if (!err && text.len)
            b->sink.write(&b->sink, (const char *)text.data, text.len);
        free(text.data);
    }
    ggfs_kv_file_put(&f);
    return err ? err : b->failed ? ENOMEM : 0;
}

/* Whether the metadata file `id` is a key that may not change. */
static bool is_protected(ggfs_tree *tree, uint64_t id)
{
    ggfs_kv_file f;
    if (!ggfs_kv_file_get(tree, ggfs_kv_node(id), &f))
        return false;
    const ggp_str name = ggfs_kv_file_name(&f);
    const bool protected_key = f.view && ggfs_edits_is_protected(name.ptr, name.len);
    ggfs_kv_file_put(&f);
    return protected_key;
}

void ggfs_edit_open(ggfs_tree *tree, fuse_req_t req, ggfs_node node, struct fuse_file_info *fi)
{
    if (is_protected(tree, node.index)) {
        fuse_reply_err(req, EPERM);
        return;
    }
    ggfs_open_text *o = ggfs_open_text_new(tree->open_texts, true);
    if (!o) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    o->mount = mount_of(req);
    o->id = node.index;
    o->ino = ggfs_ino_of(tree, node);
    int err = 0;
    if (fi->flags & O_TRUNC) {
        // Left empty, the key is set to "" at release, not at a flush: a
        // shell's `>` closes its first descriptor (a flush) before the
        // command writes to the copy it made.
        o->truncated = true;
        o->growing = true;
    } else {
        err = current_text(tree, node.index, &o->text);
        if (!err)
            err = reserve(o, o->text.len);
    }
    if (err) {
        ggfs_open_text_put(o);
        fuse_reply_err(req, err);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)o;
    fi->keep_cache = 0;
    fuse_reply_open(req, fi);
}

/* Sets the file's key (or scratch file) from its text, if written since
 * (or, at release, truncated); returns 0 or the errno to give the closing
 * process. */
static int commit(ggfs_open_text *o, bool releasing)
{
    pthread_mutex_lock(&o->lock);
    int err = 0;
    bool changed = false;
    const bool dirty = o->dirty || (releasing && o->truncated);
    if (o->refused)
        err = EINVAL; // told at the write already; the close says it again
    if (dirty) {
        err = ggfs_edits_write(o->mount->tree->edits, o->id, o->text.data ? o->text.data : "", o->text.len,
                               &changed);
        o->dirty = o->truncated = false; // a text refused is refused once; the value stays
        o->failed |= err != 0;
    }
    pthread_mutex_unlock(&o->lock);
    if (dirty) {
        // The kernel cached what was written, even when refused.
        const uint64_t id = o->id;
        ggfs_invalidate_edit(o->mount, o->ino, &id, 1, changed);
    }
    return err;
}

/* A file this open made becomes a key of its text, unless a text of the
 * open was refused: then it goes, and the model is as it was. */
static void settle(ggfs_open_text *o)
{
    pthread_mutex_lock(&o->lock);
    bool changed;
    ggfs_edits_settle(o->mount->tree->edits, o->id, o->text.data ? o->text.data : "", o->text.len, o->failed,
                      &changed);
    pthread_mutex_unlock(&o->lock);
    const uint64_t id = o->id;
    ggfs_invalidate_edit(o->mount, o->ino, &id, 1, changed);
}

void ggfs_edit_release(ggfs_open_text *o)
{
    if (!o->writable)
        return;
    commit(o, true); // errors were logged: release has no one to tell
    if (o->created)
        settle(o);
}

static ggfs_open_text *writable_file(struct fuse_file_info *fi)
{
    ggfs_open_text *o = fi ? (ggfs_open_text *)(uintptr_t)fi->fh : NULL;
    return o && o->writable ? o : NULL;
}

void ggfs_edit_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                        struct fuse_file_info *fi)
{
    (void)ino;
    ggfs_open_text *o = writable_file(fi);
    if (!o) {
        fuse_reply_err(req, mount_of(req)->tree->edits ? EBADF : EROFS);
        return;
    }
    pthread_mutex_lock(&o->lock);
    int err = 0;
    if (o->refused) {
        err = EINVAL;
    } else if (off < 0 || (uint64_t)off > GGFS_EDIT_VALUE_MAX || size > GGFS_EDIT_VALUE_MAX - (uint64_t)off) {
        err = EFBIG;
    } else {
        const size_t end = (size_t)off + size, before = o->text.len;
        // Only a text written front to back is checked as it grows: any
        // other write may still change what came before.
        o->growing &= (size_t)off == before;
        if (end > o->text.len)
            err = resize_text(o, end);
        if (!err && size)
            memcpy(o->text.data + off, buf, size);
        if (!err && o->growing)
            err = ggfs_edits_check_start(o->mount->tree->edits, o->id, o->text.data, o->text.len, &o->checked);
        if (err == EINVAL) {
            // The value stays as it was: this open sets nothing more.
            o->text.len = before;
            o->refused = o->failed = true;
            o->dirty = o->truncated = false;
        }
        o->dirty |= err == 0;
    }
    pthread_mutex_unlock(&o->lock);
    if (err == EFBIG)
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: a write in metadata/ past %llu bytes, the most a value may have\n",
                 (unsigned long long)GGFS_EDIT_VALUE_MAX);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_write(req, size);
}

/* Sets the text of a file open for writing, for req's process. */
static void commit_for(fuse_req_t req, struct fuse_file_info *fi)
{
    ggfs_open_text *o = writable_file(fi);
    if (o)
        ggfs_tree_edited_by(o->mount->tree, req); // it sees its edit from now on
    fuse_reply_err(req, o ? commit(o, false) : 0);
}

void ggfs_edit_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    commit_for(req, fi);
}

void ggfs_edit_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
    (void)ino, (void)datasync;
    commit_for(req, fi);
}

/* ==== Attributes: sizes, and what cp -p, touch and editors set ==== */

void ggfs_edit_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
    ggfs_node node;
    ggfs_tree *tree = editable(req, ino, GGFS_KV, &node);
    if (!tree)
        tree = editable(req, ino, GGFS_METADATA_DIR, &node);
    if (!tree) {
        fuse_reply_err(req, EROFS);
        return;
    }
    int err = 0;
    ggfs_open_text *o = writable_file(fi);
    if ((to_set & FUSE_SET_ATTR_SIZE) && node.kind != GGFS_KV) {
        err = EISDIR;
    } else if ((to_set & FUSE_SET_ATTR_SIZE) && attr->st_size < 0) {
        err = EINVAL;
    } else if ((to_set & FUSE_SET_ATTR_SIZE) && o) {
        pthread_mutex_lock(&o->lock);
        err = (uint64_t)attr->st_size > GGFS_EDIT_VALUE_MAX ? EFBIG : resize_text(o, (size_t)attr->st_size);
        o->dirty |= err == 0 && !o->refused;
        // Emptied, the text is written anew from its start (and checked so).
        o->growing = o->text.len == 0;
        o->checked = (ggp_prefix_state){0, 0};
        pthread_mutex_unlock(&o->lock);
    } else if (to_set & FUSE_SET_ATTR_SIZE) {
        // truncate(2) by name: the key is set from its text cut (or
        // zero-filled) to the size, at once.
        if (is_protected(tree, node.index)) {
            err = EPERM;
        } else {
            ggfs_open_text *t = ggfs_open_text_new(tree->open_texts, true);
            if (!t) {
                err = ENOMEM;
            } else {
                t->mount = mount_of(req);
                t->id = node.index;
                t->ino = ino;
                err = current_text(tree, node.index, &t->text);
                if (!err)
                    err = (uint64_t)attr->st_size > GGFS_EDIT_VALUE_MAX ? EFBIG
                                                                         : resize_text(t, (size_t)attr->st_size);
                t->dirty = true;
                if (!err)
                    err = commit(t, false);
                ggfs_open_text_put(t);
            }
        }
    }
    // Modes, owners and times are the model's: accepted (cp -p, touch and
    // editors set them) and left as they are.
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    struct stat st;
    if (!ggfs_stat(tree, node, &st)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (o) {
        pthread_mutex_lock(&o->lock);
        st.st_size = (off_t)o->text.len;
        pthread_mutex_unlock(&o->lock);
    }
    fuse_reply_attr(req, &st, ggfs_tree_attr_timeout(tree, node.kind));
}

/* ==== Names ==== */

void ggfs_edit_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                         struct fuse_file_info *fi)
{
    (void)mode;
    ggfs_node dir;
    ggfs_tree *tree = editable(req, parent, GGFS_METADATA_DIR, &dir);
    char key[GGFS_NAME_MAX + 1];
    size_t len;
    uint64_t id;
    if (!tree) {
        fuse_reply_err(req, EROFS);
        return;
    }
    const int bad = key_name(name, key, &len);
    if (bad) {
        fuse_reply_err(req, bad);
        return;
    }
    ggfs_open_text *o = fi ? ggfs_open_text_new(tree->open_texts, true) : NULL;
    if (fi && !o) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    // An open's file is a key only once its text takes (ggfs_edits_create).
    const int err = ggfs_edits_create(tree->edits, key, len, fi != NULL, &id);
    if (err) {
        if (o)
            ggfs_open_text_put(o);
        fuse_reply_err(req, err);
        return;
    }
    // Only mknod makes a key at once (a scratch file is none).
    ggfs_invalidate_edit(mount_of(req), 0, &id, 1, !fi && !ggfs_edits_is_scratch_name(key, len));
    if (o) {
        o->mount = mount_of(req);
        o->id = id;
        o->ino = ggfs_ino_of(tree, ggfs_kv_node(id));
        o->created = true;
        o->growing = true;
        fi->fh = (uint64_t)(uintptr_t)o;
        fi->keep_cache = 0;
    }
    reply_entry(req, tree, id, fi);
}

void ggfs_edit_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    (void)rdev;
    ggfs_node dir;
    if (!editable(req, parent, GGFS_METADATA_DIR, &dir)) {
        fuse_reply_err(req, EROFS);
        return;
    }
    if (!S_ISREG(mode)) {
        fuse_reply_err(req, EPERM); // metadata/ holds files only
        return;
    }
    ggfs_edit_op_create(req, parent, name, mode, NULL);
}

void ggfs_edit_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    ggfs_node dir;
    ggfs_tree *tree = editable(req, parent, GGFS_METADATA_DIR, &dir);
    uint64_t id;
    if (!tree) {
        fuse_reply_err(req, EROFS);
        return;
    }
    const ggfs_node node = ggfs_lookup(tree, dir, name);
    if (node.kind != GGFS_KV) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    // A key found by its cut long name is deleted by its full name.
    ggfs_kv_file f;
    int err = ENOENT;
    if (ggfs_kv_file_get(tree, node, &f)) {
        const ggp_str full = ggfs_kv_file_name(&f);
        err = ggfs_edits_unlink(tree->edits, full.ptr, full.len, &id);
        ggfs_kv_file_put(&f);
    }
    if (!err)
        ggfs_invalidate_edit(mount_of(req), 0, &id, 1, true);
    fuse_reply_err(req, err);
}

void ggfs_edit_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                         const char *newname, unsigned int flags)
{
    ggfs_node dir, newdir;
    ggfs_tree *tree = editable(req, parent, GGFS_METADATA_DIR, &dir);
    if (!tree || !editable(req, newparent, GGFS_METADATA_DIR, &newdir)) {
        fuse_reply_err(req, EROFS);
        return;
    }
    if (flags & ~(unsigned)RENAME_NOREPLACE) {
        fuse_reply_err(req, EINVAL); // RENAME_EXCHANGE, RENAME_WHITEOUT
        return;
    }
    char to[GGFS_NAME_MAX + 1];
    size_t to_len;
    const int bad = key_name(newname, to, &to_len);
    if (bad) {
        fuse_reply_err(req, bad);
        return;
    }
    const ggfs_node node = ggfs_lookup(tree, dir, name);
    ggfs_kv_file f;
    if (node.kind != GGFS_KV || !ggfs_kv_file_get(tree, node, &f)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    const ggp_str from = ggfs_kv_file_name(&f);
    uint64_t ids[2];
    bool changed;
    char *from_copy = malloc(from.len ? from.len : 1);
    int err = ENOMEM;
    if (from_copy) {
        memcpy(from_copy, from.ptr, from.len);
        err = ggfs_edits_rename(tree->edits, from_copy, from.len, to, to_len, flags & RENAME_NOREPLACE, ids, &changed);
    }
    ggfs_kv_file_put(&f);
    free(from_copy);
    if (!err)
        ggfs_invalidate_edit(mount_of(req), 0, ids, 2, changed);
    fuse_reply_err(req, err);
}

/* ==== What metadata/ does not hold ==== */

void ggfs_edit_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    (void)name, (void)mode;
    ggfs_node dir;
    fuse_reply_err(req, editable(req, parent, GGFS_METADATA_DIR, &dir) ? EPERM : EROFS);
}

void ggfs_edit_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    ggfs_node dir;
    ggfs_tree *tree = editable(req, parent, GGFS_METADATA_DIR, &dir);
    // metadata/ has no directories: a file there is ENOTDIR, as anywhere.
    fuse_reply_err(req, tree && ggfs_lookup(tree, dir, name).kind == GGFS_KV ? ENOTDIR : tree ? ENOENT : EROFS);
}

void ggfs_edit_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    (void)link, (void)name;
    ggfs_node dir;
    fuse_reply_err(req, editable(req, parent, GGFS_METADATA_DIR, &dir) ? EPERM : EROFS);
}

void ggfs_edit_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    (void)ino, (void)newname;
    ggfs_node dir;
    fuse_reply_err(req, editable(req, newparent, GGFS_METADATA_DIR, &dir) ? EPERM : EROFS);
}

/* ==== Types ==== */

void ggfs_edit_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
                           int flags)
{
    (void)flags;
    ggfs_node node;
    ggfs_tree *tree = editable(req, ino, GGFS_KV, &node);
    if (!tree) {
        fuse_reply_err(req, EROFS);
        return;
    }
    if (strcmp(name, "user.gguf.type") != 0) {
        // user.gguf.name is the file's name (rename it); nothing else is kept.
        fuse_reply_err(req, strcmp(name, "user.gguf.name") == 0 ? EPERM : ENOTSUP);
        return;
    }
    bool changed;
    const int err = ggfs_edits_set_type(tree->edits, node.index, value, size, &changed);
    if (!err)
        ggfs_invalidate_edit(mount_of(req), ino, &node.index, 1, changed);
    fuse_reply_err(req, err);
}

void ggfs_edit_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
    (void)name;
    ggfs_node node;
    fuse_reply_err(req, editable(req, ino, GGFS_KV, &node) ? EPERM : EROFS);
}
