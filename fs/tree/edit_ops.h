/*
 * The FUSE operations that change metadata/ of a model mounted with
 * -o edit or -o edits=PATH (model/edits.h does the editing), and the
 * refusals of everything else: every other change, and every change of a
 * mount without editing, gets EROFS.
 *
 * Writing a file of metadata/ keeps its text with the open file; the text
 * becomes the key's value when the file is flushed (each close(2), and
 * fsync(2)), so that close returns the verdict: EINVAL when the text is
 * no value of the key's type, with the old value kept and a log line
 * saying why; EPERM for general.alignment and split.*. A file released
 * with text never flushed (written through a mapping) is set at release,
 * where an error can only be logged.
 */
#ifndef GGFS_TREE_EDIT_OPS_H
#define GGFS_TREE_EDIT_OPS_H

#include <fuse_lowlevel.h>

#include "tree/open_text.h"
#include "tree/tree.h"

/* Opens a file of metadata/ for writing (ops.c's open, for opens that
 * write): its text starts as the file's (empty with O_TRUNC). */
void ggfs_edit_open(ggfs_tree *tree, fuse_req_t req, ggfs_node node, struct fuse_file_info *fi);

/* Sets what a file open for writing still holds, at its release. */
void ggfs_edit_release(ggfs_open_text *o);

/* A single model's operations: userdata is a ggfs_model_mount. */
void ggfs_edit_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi);
void ggfs_edit_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);
void ggfs_edit_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void ggfs_edit_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void ggfs_edit_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void ggfs_edit_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void ggfs_edit_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                         const char *newname, unsigned int flags);
void ggfs_edit_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void ggfs_edit_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                        struct fuse_file_info *fi);
void ggfs_edit_op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                         struct fuse_file_info *fi);
void ggfs_edit_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
                           int flags);
void ggfs_edit_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);
void ggfs_edit_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ggfs_edit_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

/* Their designated initializers, for a single model's operation table. */
#define GGFS_EDIT_OPS                                                                                  \
    .setattr = ggfs_edit_op_setattr, .mknod = ggfs_edit_op_mknod, .mkdir = ggfs_edit_op_mkdir,        \
    .unlink = ggfs_edit_op_unlink, .rmdir = ggfs_edit_op_rmdir, .symlink = ggfs_edit_op_symlink,      \
    .rename = ggfs_edit_op_rename, .link = ggfs_edit_op_link, .write = ggfs_edit_op_write,            \
    .create = ggfs_edit_op_create, .setxattr = ggfs_edit_op_setxattr,                                 \
    .removexattr = ggfs_edit_op_removexattr, .flush = ggfs_edit_op_flush, .fsync = ggfs_edit_op_fsync

#endif
