/*
 * Private to the catalog's FUSE operations: included only by
 * fs/catalog/ops*.c (ops.c, ops_dirs.c); everyone else uses
 * catalog/ops.h. It holds what one of those files lends the other:
 *
 *   ops.c       attributes, lookups and forgets, files, extended
 *               attributes, statfs, init and destroy, the table
 *   ops_dirs.c  directories: opendir, readdir, readdirplus, releasedir,
 *               and the mount's list of open ones
 */
#ifndef GGFS_CATALOG_OPS_PRIVATE_H
#define GGFS_CATALOG_OPS_PRIVATE_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "catalog/catalog.h"
#include "catalog/ops.h"

/* Take it before replying: a request is freed once answered, and the
 * model's reference is given back after the reply. */
static inline ggfs_catalog *cat_of(fuse_req_t req)
{
    return ((ggfs_catalog_mount *)fuse_req_userdata(req))->catalog;
}

static inline uint64_t slot_of(fuse_ino_t ino)
{
    return (uint64_t)ino >> GGFS_SLOT_SHIFT;
}

static inline uint64_t local_of(fuse_ino_t ino)
{
    return (uint64_t)ino & GGFS_LOCAL_MASK;
}

static inline fuse_ino_t ino_of(uint64_t slot, uint64_t local)
{
    return (fuse_ino_t)(slot << GGFS_SLOT_SHIFT | local);
}

/* ==== ops.c: attributes and models ==== */

/* The tree of slot's model, held for one single-model operation
 * (tree/ops.h) and given back with ggfs_cat_put_tree. When the model
 * cannot be opened, replies with the catalog's errno, passed through
 * remap when it is not NULL, and returns NULL. */
ggfs_tree *ggfs_cat_hold_tree(fuse_req_t req, uint64_t slot, int (*remap)(int err));

/* Gives the tree back to cat, first counting on its slot the `held`
 * references to inodes that the operation's reply gave the kernel (lookup,
 * readdir). Takes the catalog, not the request: the reply freed that. */
void ggfs_cat_put_tree(ggfs_catalog *cat, uint64_t slot, ggfs_tree *tree, uint64_t held);

void ggfs_cat_entry_stat(const ggfs_cat_entry *e, struct stat *st);
/* The attributes of `remote` at the root (GGFS_STATUS_INO) of len bytes. */
void ggfs_cat_status_stat(size_t len, struct stat *st);
void ggfs_cat_error_stat(const ggfs_cat_entry *e, size_t len, struct stat *st);

/* The error text of a failed model and its length; false if it did not
 * fail. Tries to open it first. */
bool ggfs_cat_model_error(fuse_req_t req, uint64_t slot, char *buf, size_t cap, size_t *len);

/* ==== ops_dirs.c: directories ==== */

void ggfs_cat_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ggfs_cat_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ggfs_cat_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void ggfs_cat_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                          struct fuse_file_info *fi);

/* Frees the directories m still lists as open, for the session's end:
 * the kernel will not release them. */
void ggfs_cat_free_open_dirs(ggfs_catalog_mount *m);

#endif
