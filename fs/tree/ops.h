/*
 * The FUSE low-level operations of the mount.
 */
#ifndef GGFS_TREE_OPS_H
#define GGFS_TREE_OPS_H

#include <fuse_lowlevel.h>

#include "tree/mount.h"
#include "tree/tree.h"

/* One model's mount: the session's userdata is a ggfs_model_mount. */
extern const struct fuse_lowlevel_ops ggfs_ops;

/* The operations on one model's tree, each replying to req. A single
 * mount calls them with its one tree; a catalog with the tree of the model
 * the inode belongs to (tree->ino_base tells them apart). lookup and
 * readdir return how many references to inodes the reply gave the kernel
 * (FUSE's lookup count, which forget gives back). */
unsigned ggfs_tree_op_lookup(ggfs_tree *tree, fuse_req_t req, fuse_ino_t parent, const char *name);
void ggfs_tree_op_getattr(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino);
uint64_t ggfs_tree_op_readdir(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                              bool plus);
void ggfs_tree_op_open(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ggfs_tree_op_read(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi);
void ggfs_tree_op_getxattr(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void ggfs_tree_op_listxattr(ggfs_tree *tree, fuse_req_t req, fuse_ino_t ino, size_t size);

/* Operations that need no tree: release of an open file (whatever tree it
 * came from), and the refusals of a read-only mount (EROFS). */
void ggfs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
/* A read of a file whose text was made at its open (a ggfs_open_text in
 * fi->fh, tree/open_text.h, which ggfs_op_release frees): the text is held
 * until the reply is sent, as the kernel may release the file before the
 * writev of that reply returns. */
void ggfs_op_read_text(fuse_req_t req, struct fuse_file_info *fi, size_t size, off_t off);
void ggfs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi);
void ggfs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void ggfs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void ggfs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void ggfs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void ggfs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                    const char *newname, unsigned int flags);
void ggfs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void ggfs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi);
void ggfs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                    struct fuse_file_info *fi);
void ggfs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
                      int flags);
void ggfs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* The refusals of a read-only mount, for an operation table's designated
 * initializers: every change answers EROFS. */
#define GGFS_READ_ONLY_OPS                                                                       \
    .setattr = ggfs_op_setattr, .mknod = ggfs_op_mknod, .mkdir = ggfs_op_mkdir,                 \
    .unlink = ggfs_op_unlink, .rmdir = ggfs_op_unlink, .symlink = ggfs_op_symlink,              \
    .rename = ggfs_op_rename, .link = ggfs_op_link, .write = ggfs_op_write,                     \
    .create = ggfs_op_create, .setxattr = ggfs_op_setxattr, .removexattr = ggfs_op_removexattr

#endif
