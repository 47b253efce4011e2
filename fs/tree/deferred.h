/*
 * Requests of a remote model that may wait on the network (a read of its
 * bytes, an open that computes a tensor's stats or hashes from them) run
 * on the tree's remote-read threads (tree->remote_reads), so that the
 * loop's threads go back to other requests; one still queued when those
 * threads are freed (the mount going away) is answered EIO.
 */
#ifndef GGFS_TREE_DEFERRED_H
#define GGFS_TREE_DEFERRED_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stddef.h>

#include "tree/tree.h"

/* Serves req with args, replying to it. */
typedef void ggfs_deferred_fn(fuse_req_t req, void *args);

/* Queues serve(req, copy of args) (args_len bytes) on tree->remote_reads.
 * Returns false, having queued nothing, when the tree has no such threads
 * or the job cannot be queued: the caller then serves req itself. */
bool ggfs_tree_defer(ggfs_tree *tree, fuse_req_t req, ggfs_deferred_fn *serve, const void *args, size_t args_len);

#endif
