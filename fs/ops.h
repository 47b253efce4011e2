/*
 * The FUSE low-level operations of the mount.
 */
#ifndef GGFS_OPS_H
#define GGFS_OPS_H

#include <fuse_lowlevel.h>

/* The session's userdata is a ggfs_tree. */
extern const struct fuse_lowlevel_ops ggfs_ops;

#endif
