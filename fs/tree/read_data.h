/*
 * Reads of the files whose bytes come from the shards: a tensor's raw, f32
 * and f32.npy, and model.gguf.
 */
#ifndef GGFS_TREE_READ_DATA_H
#define GGFS_TREE_READ_DATA_H

#include <fuse_lowlevel.h>

#include "tree/tree.h"

/* Replies to a read of [start, start + len) of node, inside its size. A
 * shard that changed or was cut short gives EIO. */
void ggfs_read_data(fuse_req_t req, ggfs_tree *tree, ggfs_node node, uint64_t start, uint64_t len);

#endif
