/*
 * The FUSE operations of a catalog mount. An inode's slot says which
 * entry it belongs to (catalog.h): the catalog's own directories are
 * answered here, from listings read afresh at every opendir and at most a
 * second old for lookups, with one-second timeouts so that files added to
 * or removed from the folder show; everything inside a model is handed to
 * the single-model operations (ops.h) with that model's tree, whose long
 * timeouts stand as in a single mount. A model that cannot be opened is a
 * directory holding one file, error.
 *
 * Every inode handed to the kernel (a lookup's reply, an entry of a
 * readdirplus reply) is counted on its slot, and FUSE's forget gives the
 * counts back, so that the catalog frees what the kernel no longer holds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "catalog.h"
#include "catalog_forget.h"
#include "catalog_ops.h"
#include "names.h"
#include "ops.h"

#define CATALOG_SECONDS 1.0 // entries and attributes of the folder's mirror

/* Take it before replying: a request is freed once answered, and the
 * model's reference is given back after the reply. */
static ggfs_catalog *cat_of(fuse_req_t req)
{
    return ((ggfs_catalog_mount *)fuse_req_userdata(req))->catalog;
}

static uint64_t slot_of(fuse_ino_t ino)
{
    return (uint64_t)ino >> GGFS_SLOT_SHIFT;
}

static uint64_t local_of(fuse_ino_t ino)
{
    return (uint64_t)ino & GGFS_LOCAL_MASK;
}

static fuse_ino_t ino_of(uint64_t slot, uint64_t local)
{
    return (fuse_ino_t)(slot << GGFS_SLOT_SHIFT | local);
}

/* ==== Attributes ==== */

/* Directories are searchable wherever what they mirror is readable (as in
 * a single mount: tree.c). */
static mode_t dir_mode(const struct stat *of)
{
    const mode_t allowed = of->st_mode & 0777;
    return S_IFDIR | (0555 & (allowed | ((allowed & 0444) >> 2)));
}

static void entry_stat(const ggfs_cat_entry *e, struct stat *st)
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

static void error_stat(const ggfs_cat_entry *e, size_t len, struct stat *st)
{
    entry_stat(e, st);
    st->st_ino = ino_of(e->slot, GGFS_ERROR_INO);
    st->st_mode = S_IFREG | (0444 & e->st.st_mode);
    st->st_nlink = 1;
    st->st_size = (off_t)len;
    st->st_blksize = 4096;
    st->st_blocks = (st->st_size + 511) / 512;
}

/* ==== Models ==== */

/* The error text of a failed model and its length; false if it did not
 * fail. Tries to open it first. */
static bool model_error(fuse_req_t req, uint64_t slot, char *buf, size_t cap, size_t *len)
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
    p.attr_timeout = CATALOG_SECONDS;
    p.entry_timeout = CATALOG_SECONDS;
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
        if (err) {
            fuse_reply_err(req, err);
            return;
        }
        entry_stat(&e, &st);
        reply_catalog_entry(req, cat, &e, &st);
        return;
    }
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (tree) {
        const unsigned held = ggfs_tree_op_lookup(tree, req, parent, name);
        // Counted while the model is held: the slot cannot go meanwhile,
        // even if the kernel forgets the inode before this line.
        if (held)
            ggfs_catalog_remember(cat, slot, held);
        ggfs_catalog_put(cat, slot, tree);
        return;
    }
    char text[GGFS_ERROR_MAX];
    if (err == EIO && local_of(parent) == 1 && ggfs_catalog_error(cat, slot, text, sizeof text)) {
        if (strcmp(name, "error") != 0) {
            fuse_reply_err(req, ENOENT);
            return;
        }
        error_stat(&dir, strlen(text), &st);
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
        entry_stat(&e, &st);
        fuse_reply_attr(req, &st, CATALOG_SECONDS);
        return;
    }
    if (e.kind != GGFS_CAT_MODEL) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (local == GGFS_ERROR_INO) {
        char text[GGFS_ERROR_MAX];
        size_t len;
        if (!model_error(req, slot, text, sizeof text, &len)) {
            fuse_reply_err(req, ENOENT);
            return;
        }
        error_stat(&e, len, &st);
        fuse_reply_attr(req, &st, CATALOG_SECONDS);
        return;
    }
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (!tree) {
        fuse_reply_err(req, err == EIO ? ENOENT : err);
        return;
    }
    ggfs_tree_op_getattr(tree, req, ino);
    ggfs_catalog_put(cat, slot, tree);
}

/* ==== Directories ==== */

/* An open directory of the catalog (or a failed model's): its entries as
 * listed at opendir, so that readdir's offsets stay put. */
typedef struct ggfs_open_dir {
    ggfs_cat_listing *listing;
    fuse_ino_t parent;      // for ".."
    bool error_only;        // a failed model: "error" and nothing else
    ggfs_cat_entry model;   // that model
    size_t error_len;
    struct ggfs_open_dir *prev, *next; // in the mount's list of open ones
} open_dir;

/* Open directories are listed in the mount, so that those the kernel never
 * releases (the daemon ends with them open) are freed at the end. */
static void track(fuse_req_t req, open_dir *d)
{
    ggfs_catalog_mount *m = fuse_req_userdata(req);
    pthread_mutex_lock(&m->lock);
    d->prev = NULL;
    d->next = m->open_dirs;
    if (m->open_dirs)
        m->open_dirs->prev = d;
    m->open_dirs = d;
    pthread_mutex_unlock(&m->lock);
}

static void untrack(ggfs_catalog_mount *m, open_dir *d)
{
    pthread_mutex_lock(&m->lock);
    if (d->prev)
        d->prev->next = d->next;
    else
        m->open_dirs = d->next;
    if (d->next)
        d->next->prev = d->prev;
    pthread_mutex_unlock(&m->lock);
}

static void open_dir_free(ggfs_catalog *cat, open_dir *d)
{
    if (d->listing)
        ggfs_catalog_unlist(cat, d->listing);
    free(d);
}

static void cat_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    ggfs_catalog *cat = cat_of(req);
    ggfs_cat_entry e;
    const uint64_t slot = slot_of(ino);
    fi->fh = 0;
    if (!ggfs_catalog_entry(cat, slot, &e)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (e.kind == GGFS_CAT_MODEL) {
        // Inside a model the tree answers readdir; a failed model's
        // directory is listed here.
        char text[GGFS_ERROR_MAX];
        size_t len;
        if (local_of(ino) == 1 && model_error(req, slot, text, sizeof text, &len)) {
            open_dir *d = calloc(1, sizeof *d);
            if (!d) {
                fuse_reply_err(req, ENOMEM);
                return;
            }
            d->error_only = true;
            d->model = e;
            d->error_len = len;
            track(req, d);
            fi->fh = (uint64_t)(uintptr_t)d;
        }
        fuse_reply_open(req, fi);
        return;
    }
    open_dir *d = calloc(1, sizeof *d);
    if (!d) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    const int err = ggfs_catalog_list(cat, slot, &d->listing);
    if (err) {
        free(d);
        fuse_reply_err(req, err);
        return;
    }
    track(req, d);
    fi->fh = (uint64_t)(uintptr_t)d;
    fuse_reply_open(req, fi);
}

static void cat_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    open_dir *d = (open_dir *)(uintptr_t)fi->fh;
    if (d) {
        untrack(fuse_req_userdata(req), d);
        open_dir_free(cat_of(req), d);
    }
    fuse_reply_err(req, 0);
}

/* Offsets as in a model's directories: 0 is ".", 1 is "..", 2 + i entry i.
 * A readdirplus entry hands the kernel an inode: its slot is made then
 * and counted, and given back if the entry is not sent after all. */
static void fill_listing(fuse_req_t req, fuse_ino_t ino, const open_dir *d, size_t size, off_t off,
                         bool plus)
{
    ggfs_catalog *cat = cat_of(req);
    char *buf = malloc(size);
    // The slots of the entries sent with an inode; an entry takes more
    // than 64 bytes of the buffer.
    uint64_t *held = plus ? malloc((size / 64 + 1) * sizeof *held) : NULL;
    if (!buf || (plus && !held)) {
        free(buf);
        free(held);
        fuse_reply_err(req, ENOMEM);
        return;
    }
    const size_t count = d->error_only ? 1 : ggfs_cat_listing_count(d->listing);
    size_t used = 0, n_held = 0;
    for (uint64_t pos = (uint64_t)off; pos < count + 2; pos++) {
        struct fuse_entry_param e;
        memset(&e, 0, sizeof e);
        const char *name;
        uint64_t slot = GGFS_NO_SLOT; // whose reference this entry takes, if any
        if (pos < 2) {
            name = pos == 0 ? "." : "..";
            e.attr.st_ino = ino;
            e.attr.st_mode = S_IFDIR;
        } else if (d->error_only) {
            name = "error";
            error_stat(&d->model, d->error_len, &e.attr);
            if (plus && ggfs_catalog_remember(cat, d->model.slot, 1))
                slot = d->model.slot;
        } else {
            ggfs_cat_entry entry;
            name = ggfs_cat_listing_name(d->listing, pos - 2);
            if (ggfs_catalog_listed(cat, slot_of(ino), d->listing, pos - 2, plus, &entry) && plus)
                slot = entry.slot;
            entry_stat(&entry, &e.attr);
        }
        size_t need;
        if (plus && slot != GGFS_NO_SLOT) {
            e.ino = e.attr.st_ino;
            e.attr_timeout = CATALOG_SECONDS;
            e.entry_timeout = CATALOG_SECONDS;
        }
        // Without a slot, a readdirplus entry has inode 0: the kernel
        // takes the name and asks a lookup for the rest.
        if (plus)
            need = fuse_add_direntry_plus(req, buf + used, size - used, name, &e, (off_t)pos + 1);
        else
            need = fuse_add_direntry(req, buf + used, size - used, name, &e.attr, (off_t)pos + 1);
        if (need > size - used) {
            if (plus && slot != GGFS_NO_SLOT)
                ggfs_catalog_forget(cat, slot, 1);
            break;
        }
        used += need;
        if (plus && slot != GGFS_NO_SLOT)
            held[n_held++] = slot;
    }
    if (fuse_reply_buf(req, buf, used) == -ENOENT) {
        for (size_t i = 0; i < n_held; i++)
            ggfs_catalog_forget(cat, held[i], 1);
    }
    free(buf);
    free(held);
}

static void readdir_any(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi,
                        bool plus)
{
    ggfs_catalog *cat = cat_of(req);
    const open_dir *d = (const open_dir *)(uintptr_t)fi->fh;
    if (d) {
        fill_listing(req, ino, d, size, off, plus);
        return;
    }
    int err;
    const uint64_t slot = slot_of(ino);
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (!tree) {
        fuse_reply_err(req, err);
        return;
    }
    const uint64_t held = ggfs_tree_op_readdir(tree, req, ino, size, off, plus);
    if (held)
        ggfs_catalog_remember(cat, slot, held);
    ggfs_catalog_put(cat, slot, tree);
}

static void cat_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    readdir_any(req, ino, size, off, fi, false);
}

static void cat_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                            struct fuse_file_info *fi)
{
    readdir_any(req, ino, size, off, fi, true);
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
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (!tree) {
        fuse_reply_err(req, err);
        return;
    }
    ggfs_tree_op_open(tree, req, ino, fi);
    ggfs_catalog_put(cat, slot, tree);
}

static void cat_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    ggfs_catalog *cat = cat_of(req);
    const uint64_t slot = slot_of(ino);
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
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (!tree) {
        fuse_reply_err(req, err == ESTALE ? EIO : err);
        return;
    }
    ggfs_tree_op_read(tree, req, ino, size, off, fi);
    ggfs_catalog_put(cat, slot, tree);
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
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (!tree) {
        fuse_reply_err(req, err);
        return;
    }
    ggfs_tree_op_getxattr(tree, req, ino, name, size);
    ggfs_catalog_put(cat, slot, tree);
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
    int err;
    ggfs_tree *tree = ggfs_catalog_get(cat, slot, &err);
    if (!tree) {
        fuse_reply_err(req, err);
        return;
    }
    ggfs_tree_op_listxattr(tree, req, ino, size);
    ggfs_catalog_put(cat, slot, tree);
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

void ggfs_catalog_mount_stop(ggfs_catalog_mount *m)
{
    pthread_mutex_lock(&m->lock);
    m->stopped = true;
    ggfs_forgetter *f = m->forgetter;
    m->forgetter = NULL;
    pthread_mutex_unlock(&m->lock);
    ggfs_forgetter_stop(f);
}

/* The session ends: the thread is normally stopped already (main.c), and
 * directories still open will not be released. */
static void cat_destroy(void *userdata)
{
    ggfs_catalog_mount *m = userdata;
    ggfs_catalog_mount_stop(m);
    pthread_mutex_lock(&m->lock);
    open_dir *d = m->open_dirs;
    m->open_dirs = NULL;
    pthread_mutex_unlock(&m->lock);
    while (d) {
        open_dir *next = d->next;
        open_dir_free(m->catalog, d);
        d = next;
    }
}

const struct fuse_lowlevel_ops ggfs_catalog_ops = {
    .init = cat_init,
    .destroy = cat_destroy,
    .lookup = cat_lookup,
    .forget = cat_forget,
    .forget_multi = cat_forget_multi,
    .getattr = cat_getattr,
    .opendir = cat_opendir,
    .readdir = cat_readdir,
    .readdirplus = cat_readdirplus,
    .releasedir = cat_releasedir,
    .open = cat_open,
    .read = cat_read,
    .release = ggfs_op_release,
    .getxattr = cat_getxattr,
    .listxattr = cat_listxattr,
    .statfs = cat_statfs,
    .setattr = ggfs_op_setattr,
    .mknod = ggfs_op_mknod,
    .mkdir = ggfs_op_mkdir,
    .unlink = ggfs_op_unlink,
    .rmdir = ggfs_op_unlink,
    .symlink = ggfs_op_symlink,
    .rename = ggfs_op_rename,
    .link = ggfs_op_link,
    .write = ggfs_op_write,
    .create = ggfs_op_create,
    .setxattr = ggfs_op_setxattr,
    .removexattr = ggfs_op_removexattr,
};
