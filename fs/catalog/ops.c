/*
 * The FUSE operations of a catalog mount. An inode's slot says which
 * entry it belongs to (catalog.h): the catalog's own directories are
 * answered here, from listings read afresh at every opendir and at most
 * the listing lifetime old for lookups (-o listing_ttl_s, a second by
 * default), with timeouts as long, so that files added to or removed from
 * the folder show; everything inside a model is handed to
 * the single-model operations (tree/ops.h) with that model's tree, whose long
 * timeouts stand as in a single mount. A model that cannot be opened is a
 * directory holding one file, error. Directories are opened and listed in
 * ops_dirs.c.
 *
 * Every inode handed to the kernel (a lookup's reply, an entry of a
 * readdirplus reply) is counted on its slot, and FUSE's forget gives the
 * counts back, so that the catalog frees what the kernel no longer holds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include "catalog/catalog.h"
#include "catalog/forget_thread.h"
#include "catalog/ops.h"
#include "catalog/ops_private.h"
#include "tree/names.h"
#include "tree/open_text.h"
#include "tree/ops.h"
#include "tree/session_end.h"

/* ==== Attributes ==== */

/* Directories are searchable wherever what they mirror is readable (as in
 * a single mount: tree/attr.c). */
static mode_t dir_mode(const struct stat *of)
{
    const mode_t allowed = of->st_mode & 0777;
    return S_IFDIR | (0555 & (allowed | ((allowed & 0444) >> 2)));
}

void ggfs_cat_entry_stat(const ggfs_cat_entry *e, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = e->slot != GGFS_NO_SLOT ? ino_of(e->slot, 1) : GGFS_UNKNOWN_INO;
    st->st_uid = e->st.st_uid;
    st->st_gid = e->st.st_gid;
    st->st_atim = e->st.st_atim;
    st->st_mtim = e->st.st_mtim;
    st->st_ctim = e->st.st_ctim;
    st->st_mode = dir_mode(&e->st);
    // A model's directory as in a single mount: ".", its entry, and the
    // subdirectories' "..".
    st->st_nlink = e->kind != GGFS_CAT_MODEL ? 2 : e->shards > 1 ? 5 : 4;
}

void ggfs_cat_error_stat(const ggfs_cat_entry *e, size_t len, struct stat *st)
{
    ggfs_cat_entry_stat(e, st);
    st->st_ino = ino_of(e->slot, GGFS_ERROR_INO);
    st->st_mode = S_IFREG | (0444 & e->st.st_mode);
    st->st_nlink = 1;
    st->st_size = (off_t)len;
    st->st_blksize = 4096;
    st->st_blocks = (st->st_size + 511) / 512;
}

void ggfs_cat_status_stat(size_t len, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = ino_of(0, GGFS_STATUS_INO);
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec = time(NULL);
    st->st_size = (off_t)len;
    st->st_blksize = 4096;
    st->st_blocks = (st->st_size + 511) / 512;
}

/* ==== Models ==== */

bool ggfs_cat_model_error(fuse_req_t req, uint64_t slot, char *buf, size_t cap, size_t *len)
{
    ggfs_catalog *cat = cat_of(req);
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (tree) {
        ggfs_catalog_put(cat, slot, tree);
        return false;
    }
    if (!ggfs_catalog_error(cat, slot, buf, cap))
        return false;
    *len = strlen(buf);
    return true;
}

ggfs_tree *ggfs_cat_hold_tree(fuse_req_t req, uint64_t slot, int (*remap)(int err))
{
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat_of(req), slot, &err);
    if (!tree)
        fuse_reply_err(req, remap ? remap(err) : err);
    return tree;
}

void ggfs_cat_put_tree(ggfs_catalog *cat, uint64_t slot, ggfs_tree *tree, uint64_t held)
{
    // Counted while the model is held: the slot cannot go meanwhile, even
    // if the kernel forgets the inode before this line.
    if (held)
        ggfs_catalog_remember(cat, slot, held);
    ggfs_catalog_put(cat, slot, tree);
}

/* A model that cannot be opened has no attributes beneath its directory. */
static int eio_as_enoent(int err)
{
    return err == EIO ? ENOENT : err;
}

/* A read of a model replaced meanwhile fails as reads of a changed file do. */
static int estale_as_eio(int err)
{
    return err == ESTALE ? EIO : err;
}

/* ==== Lookups and attributes ==== */

/* Replies with entry e, whose slot holds one reference for the reply;
 * gives it back when the kernel never got it. */
static void reply_catalog_entry(fuse_req_t req, ggfs_catalog *cat, const ggfs_cat_entry *e,
                                const struct stat *attr)
{
    struct fuse_entry_param p;
    memset(&p, 0, sizeof p);
    p.attr = *attr;
    p.ino = p.attr.st_ino;
    // `remote`'s size changes as the mount works: asked again at each stat.
    p.attr_timeout = p.ino == ino_of(0, GGFS_STATUS_INO) ? 0 : ggfs_catalog_listing_ttl(cat);
    p.entry_timeout = ggfs_catalog_listing_ttl(cat);
    if (fuse_reply_entry(req, &p) == -ENOENT)
        ggfs_catalog_forget(cat, e->slot, 1);
}

static void cat_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    ggfs_catalog *cat = cat_of(req);
    ggfs_cat_entry dir;
    const uint64_t slot = slot_of(parent);
    if (!ggfs_catalog_entry(cat, slot, &dir)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    struct stat st;
    if (dir.kind != GGFS_CAT_MODEL) {
        ggfs_cat_entry e;
        const int err = ggfs_catalog_lookup(cat, slot, name, &e);
        size_t len;
        char *text = err == ENOENT && slot == 0 && strcmp(name, "remote") == 0 ? ggfs_catalog_status(cat, &len)
                                                                                : NULL;
        if (text) {
            // A remote collection's own `remote`: a real entry wins.
            free(text);
            ggfs_cat_status_stat(len, &st);
            ggfs_catalog_remember(cat, 0, 1);
            e.slot = 0;
            reply_catalog_entry(req, cat, &e, &st);
            return;
        }
        if (err) {
            fuse_reply_err(req, err);
            return;
        }
        ggfs_cat_entry_stat(&e, &st);
        reply_catalog_entry(req, cat, &e, &st);
        return;
    }
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (tree && local_of(parent) == 1 && strcmp(name, "verify") == 0)
        ggfs_catalog_verify_wanted(cat, slot);
    if (tree) {
        ggfs_cat_put_tree(cat, slot, tree, ggfs_tree_op_lookup(tree, req, parent, name));
        return;
    }
    char text[GGFS_ERROR_MAX];
    if (err == EIO && local_of(parent) == 1 && ggfs_catalog_error(cat, slot, text, sizeof text)) {
        if (strcmp(name, "error") != 0) {
            fuse_reply_err(req, ENOENT);
            return;
        }
        ggfs_cat_error_stat(&dir, strlen(text), &st);
        if (!ggfs_catalog_remember(cat, slot, 1)) {
            fuse_reply_err(req, ENOENT);
            return;
        }
        reply_catalog_entry(req, cat, &dir, &st);
        return;
    }
    fuse_reply_err(req, err);
}

/* The kernel no longer holds n of its lookups of ino. */
static void cat_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n)
{
    ggfs_catalog_forget(cat_of(req), slot_of(ino), n);
    fuse_reply_none(req);
}

static void cat_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
    ggfs_catalog *cat = cat_of(req);
    for (size_t i = 0; i < count; i++)
        ggfs_catalog_forget(cat, slot_of(forgets[i].ino), forgets[i].nlookup);
    fuse_reply_none(req);
}

static void cat_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    ggfs_catalog *cat = cat_of(req);
    ggfs_cat_entry e;
    const uint64_t slot = slot_of(ino), local = local_of(ino);
    if (!ggfs_catalog_entry(cat, slot, &e)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    struct stat st;
    if (local == 1) {
        // A model's directory is answered without opening the model.
        ggfs_cat_entry_stat(&e, &st);
        fuse_reply_attr(req, &st, ggfs_catalog_listing_ttl(cat));
        return;
    }
    if (slot == 0 && local == GGFS_STATUS_INO) {
        size_t len;
        char *text = ggfs_catalog_status(cat, &len);
        if (!text) {
            fuse_reply_err(req, ENOENT);
            return;
        }
        free(text);
        ggfs_cat_status_stat(len, &st);
        fuse_reply_attr(req, &st, 0); // its size changes as the mount works
        return;
    }
    if (e.kind != GGFS_CAT_MODEL) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (local == GGFS_ERROR_INO) {
        char text[GGFS_ERROR_MAX];
        size_t len;
        if (!ggfs_cat_model_error(req, slot, text, sizeof text, &len)) {
            fuse_reply_err(req, ENOENT);
            return;
        }
        ggfs_cat_error_stat(&e, len, &st);
        fuse_reply_attr(req, &st, ggfs_catalog_listing_ttl(cat));
        return;
    }
    ggfs_tree *tree = ggfs_cat_hold_tree(req, slot, eio_as_enoent);
    if (!tree)
        return;
    ggfs_tree_op_getattr(tree, req, ino);
    ggfs_cat_put_tree(cat, slot, tree, 0);
}

/* ==== Files ==== */

static void cat_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    ggfs_catalog *cat = cat_of(req);
    const uint64_t slot = slot_of(ino), local = local_of(ino);
    if (local == 1) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    if (slot == 0 && local == GGFS_STATUS_INO) {
        if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
            fuse_reply_err(req, EROFS);
            return;
        }
        // An open text as a model's files have: its reads and release are
        // theirs (tree/ops.h).
        ggfs_open_text *o = ggfs_open_text_new(ggfs_catalog_open_texts(cat), false);
        size_t len;
        char *text = o ? ggfs_catalog_status(cat, &len) : NULL;
        if (text)
            o->text.sink.write(&o->text.sink, text, len);
        free(text);
        if (!text || o->text.failed) {
            if (o)
                ggfs_open_text_put(o);
            fuse_reply_err(req, ENOMEM);
            return;
        }
        fi->fh = (uint64_t)(uintptr_t)o;
        fi->direct_io = 1; // made afresh at every open, whatever its size was
        fuse_reply_open(req, fi);
        return;
    }
    if (local == GGFS_ERROR_INO) {
        if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
            fuse_reply_err(req, EROFS);
            return;
        }
        fi->fh = 0;
        fi->keep_cache = 1; // a slot's error never changes
        fuse_reply_open(req, fi);
        return;
    }
    ggfs_tree *tree = ggfs_cat_hold_tree(req, slot, NULL);
    if (!tree)
        return;
    if (local == GGFS_INO_VERIFY)
        ggfs_catalog_verify_ahead(cat, slot);
    ggfs_tree_op_open(tree, req, ino, fi);
    ggfs_cat_put_tree(cat, slot, tree, 0);
}

static void cat_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    ggfs_catalog *cat = cat_of(req);
    const uint64_t slot = slot_of(ino);
    if (slot == 0 && local_of(ino) == GGFS_STATUS_INO) {
        ggfs_op_read_text(req, fi, size, off);
        return;
    }
    if (local_of(ino) == GGFS_ERROR_INO) {
        char text[GGFS_ERROR_MAX];
        size_t len;
        if (!ggfs_catalog_error(cat, slot, text, sizeof text)) {
            fuse_reply_err(req, EIO);
            return;
        }
        len = strlen(text);
        if (off < 0 || (uint64_t)off >= len)
            fuse_reply_buf(req, NULL, 0);
        else
            fuse_reply_buf(req, text + off, len - (size_t)off < size ? len - (size_t)off : size);
        return;
    }
    ggfs_tree *tree = ggfs_cat_hold_tree(req, slot, estale_as_eio);
    if (!tree)
        return;
    ggfs_tree_op_read(tree, req, ino, size, off, fi);
    ggfs_cat_put_tree(cat, slot, tree, 0);
}

/* ==== Extended attributes ==== */

/* The catalog's own entries have none; a model's files have a single
 * mount's. */
static void cat_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    ggfs_catalog *cat = cat_of(req);
    const uint64_t slot = slot_of(ino), local = local_of(ino);
    ggfs_cat_entry e;
    if (local == 1 || local == GGFS_ERROR_INO || !ggfs_catalog_entry(cat, slot, &e) ||
        e.kind != GGFS_CAT_MODEL) {
        fuse_reply_err(req, ENODATA);
        return;
    }
    ggfs_tree *tree = ggfs_cat_hold_tree(req, slot, NULL);
    if (!tree)
        return;
    ggfs_tree_op_getxattr(tree, req, ino, name, size);
    ggfs_cat_put_tree(cat, slot, tree, 0);
}

static void cat_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    ggfs_catalog *cat = cat_of(req);
    const uint64_t slot = slot_of(ino), local = local_of(ino);
    ggfs_cat_entry e;
    if (local == 1 || local == GGFS_ERROR_INO || !ggfs_catalog_entry(cat, slot, &e) ||
        e.kind != GGFS_CAT_MODEL) {
        if (size == 0)
            fuse_reply_xattr(req, 0);
        else
            fuse_reply_buf(req, NULL, 0);
        return;
    }
    ggfs_tree *tree = ggfs_cat_hold_tree(req, slot, NULL);
    if (!tree)
        return;
    ggfs_tree_op_listxattr(tree, req, ino, size);
    ggfs_cat_put_tree(cat, slot, tree, 0);
}

/* ==== The rest ==== */

static void cat_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    struct statvfs sv;
    memset(&sv, 0, sizeof sv);
    sv.f_bsize = 4096;
    sv.f_frsize = 4096;
    sv.f_files = ggfs_catalog_slots(cat_of(req));
    sv.f_namemax = GGFS_NAME_MAX;
    sv.f_flag = ST_RDONLY;
    fuse_reply_statfs(req, &sv);
}

static void cat_init(void *userdata, struct fuse_conn_info *conn)
{
    ggfs_catalog_mount *m = userdata;
    // An inode's bytes never change: a file changed in the folder gets a
    // new slot, so new inodes.
    conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
    // Every listing carries its entries' attributes, which the catalog has
    // at hand: a walk over the folder (a glob, find) then looks no model's
    // directory up again. (Left to choose, the kernel asks for them only
    // in a listing's first reply.)
    conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
    if (m->readahead_kb)
        conn->max_readahead = m->readahead_kb * 1024;
    // Without it the kernel keeps every entry it looked up until memory is
    // short, and the catalog a slot for each: the mount works, unbounded.
    pthread_mutex_lock(&m->lock);
    if (!m->stopped && m->session &&
        !(m->forgetter = ggfs_forgetter_start(m->catalog, m->session, m->mountpoint)))
        fuse_log(FUSE_LOG_ERR, "gguf-fs: cannot start the thread that asks the kernel to forget "
                               "entries; they stay until the kernel drops them\n");
    pthread_mutex_unlock(&m->lock);
}

void ggfs_catalog_mount_init(ggfs_catalog_mount *m, ggfs_catalog *catalog)
{
    memset(m, 0, sizeof *m);
    m->catalog = catalog;
    // The models' hashes and stats stop computing once the session ends.
    ggfs_catalog_set_cancel(catalog, ggfs_session_end(&m->session));
    ggfs_catalog_set_session(catalog, &m->session);
    pthread_mutex_init(&m->lock, NULL);
    ggfs_dlist_init(&m->open_dirs);
}

void ggfs_catalog_mount_destroy(ggfs_catalog_mount *m)
{
    pthread_mutex_destroy(&m->lock);
}

void ggfs_catalog_mount_stop(ggfs_catalog_mount *m)
{
    pthread_mutex_lock(&m->lock);
    m->stopped = true;
    ggfs_forgetter *f = m->forgetter;
    m->forgetter = NULL;
    pthread_mutex_unlock(&m->lock);
    ggfs_forgetter_stop(f);
}

/* The session ends: the thread is normally stopped already (daemon/main.c), and
 * directories still open will not be released. */
static void cat_destroy(void *userdata)
{
    ggfs_catalog_mount *m = userdata;
    ggfs_catalog_mount_stop(m);
    ggfs_cat_free_open_dirs(m);
}

const struct fuse_lowlevel_ops ggfs_catalog_ops = {
    .init = cat_init,
    .destroy = cat_destroy,
    .lookup = cat_lookup,
    .forget = cat_forget,
    .forget_multi = cat_forget_multi,
    .getattr = cat_getattr,
    .opendir = ggfs_cat_opendir,
    .readdir = ggfs_cat_readdir,
    .readdirplus = ggfs_cat_readdirplus,
    .releasedir = ggfs_cat_releasedir,
    .open = cat_open,
    .read = cat_read,
    .release = ggfs_op_release,
    .getxattr = cat_getxattr,
    .listxattr = cat_listxattr,
    .statfs = cat_statfs,
    GGFS_READ_ONLY_OPS,
};
