/*
 * One model's mount: what the session's userdata holds for the operations
 * of ops.c and edit_ops.c.
 */
#ifndef GGFS_TREE_MOUNT_H
#define GGFS_TREE_MOUNT_H

#include <fuse_lowlevel.h>
#include <pthread.h>

#include "tree/tree.h"

struct ggfs_workers;

typedef struct ggfs_model_mount {
    ggfs_tree *tree;
    unsigned readahead_kb;          // asked of the kernel at init; 0 keeps its own
    struct fuse_session *session;   // set before any request: edits and the prefetch
                                    // notify the kernel through it
    struct ggfs_workers *invalidator; // edited mounts: one thread dropping the kernel's
                                    // pages of files an edit changed (invalidate.h)
    pthread_mutex_t invalidator_lock; // held to hand it a job, and to take it away
} ggfs_model_mount;

#endif
