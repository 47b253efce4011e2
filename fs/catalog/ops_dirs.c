/*
 * The directories of a catalog mount (ops.c has the rest): the
 * catalog's own directories and a failed model's are listed here, from a
 * listing read afresh at every opendir; inside a model the tree answers
 * readdir (tree/ops.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/ops_private.h"
#include "tree/ops.h"
#include "util/dlist.h"

/* An open directory of the catalog (or a failed model's): its entries as
 * listed at opendir, so that readdir's offsets stay put. */
typedef struct ggfs_open_dir {
    ggfs_cat_listing *listing;
    fuse_ino_t parent;      // for ".."
    bool error_only;        // a failed model: "error" and nothing else
    size_t status_len;      // a remote collection's root: `remote` last, this long; 0: none
    ggfs_cat_entry model;   // that model
    size_t error_len;
    ggfs_dlink link;        // in the mount's list of open ones
} open_dir;

/* Open directories are listed in the mount, so that those the kernel never
 * releases (the daemon ends with them open) are freed at the end. */
static void track(fuse_req_t req, open_dir *d)
{
    ggfs_catalog_mount *m = fuse_req_userdata(req);
    pthread_mutex_lock(&m->lock);
    ggfs_dlist_push_front(&m->open_dirs, &d->link);
    pthread_mutex_unlock(&m->lock);
}

static void untrack(ggfs_catalog_mount *m, open_dir *d)
{
    pthread_mutex_lock(&m->lock);
    ggfs_dlist_remove(&d->link);
    pthread_mutex_unlock(&m->lock);
}

static void open_dir_free(ggfs_catalog *cat, open_dir *d)
{
    if (d->listing)
        ggfs_catalog_unlist(cat, d->listing);
    free(d);
}

void ggfs_cat_free_open_dirs(ggfs_catalog_mount *m)
{
    for (;;) {
        pthread_mutex_lock(&m->lock);
        ggfs_dlink *front = ggfs_dlist_front(&m->open_dirs);
        if (front)
            ggfs_dlist_remove(front);
        pthread_mutex_unlock(&m->lock);
        if (!front)
            break;
        open_dir_free(m->catalog, GGFS_CONTAINER_OF(front, open_dir, link));
    }
}

void ggfs_cat_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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
        if (local_of(ino) == 1 && ggfs_cat_model_error(req, slot, text, sizeof text, &len)) {
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
    char *status = slot == 0 ? ggfs_catalog_status(cat, &d->status_len) : NULL;
    if (!status || ggfs_cat_listing_has(d->listing, "remote"))
        d->status_len = 0; // a real entry named remote wins
    free(status);
    track(req, d);
    fi->fh = (uint64_t)(uintptr_t)d;
    fuse_reply_open(req, fi);
}

void ggfs_cat_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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
    const size_t count = d->error_only ? 1 : ggfs_cat_listing_count(d->listing) + (d->status_len > 0);
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
            ggfs_cat_error_stat(&d->model, d->error_len, &e.attr);
            if (plus && ggfs_catalog_remember(cat, d->model.slot, 1))
                slot = d->model.slot;
        } else if (d->status_len && pos == count + 1) {
            name = "remote";
            ggfs_cat_status_stat(d->status_len, &e.attr);
            if (plus && ggfs_catalog_remember(cat, 0, 1))
                slot = 0;
        } else {
            ggfs_cat_entry entry;
            name = ggfs_cat_listing_name(d->listing, pos - 2);
            if (ggfs_catalog_listed(cat, slot_of(ino), d->listing, pos - 2, plus, &entry) && plus)
                slot = entry.slot;
            ggfs_cat_entry_stat(&entry, &e.attr);
        }
        size_t need;
        if (plus && slot != GGFS_NO_SLOT) {
            e.ino = e.attr.st_ino;
            e.attr_timeout = e.ino == ino_of(0, GGFS_STATUS_INO) ? 0 : ggfs_catalog_listing_ttl(cat);
            e.entry_timeout = ggfs_catalog_listing_ttl(cat);
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
    const uint64_t slot = slot_of(ino);
    ggfs_tree *tree = ggfs_cat_hold_tree(req, slot, NULL);
    if (!tree)
        return;
    ggfs_cat_put_tree(cat, slot, tree, ggfs_tree_op_readdir(tree, req, ino, size, off, plus));
}

void ggfs_cat_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    readdir_any(req, ino, size, off, fi, false);
}

void ggfs_cat_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                          struct fuse_file_info *fi)
{
    readdir_any(req, ino, size, off, fi, true);
}
