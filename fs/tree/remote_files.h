/*
 * What the tree of a remote model adds: the `remote` file's text
 * (source/remote_status.h) over the model's shards, and the prefetch
 * (-o prefetch, source/prefetch.h) started with the session and stopped
 * before it ends.
 */
#ifndef GGFS_TREE_REMOTE_FILES_H
#define GGFS_TREE_REMOTE_FILES_H

#include <fuse_lowlevel.h>
#include <stddef.h>

#include "tree/tree.h"

/* The `remote` file's text now, malloc'd; NULL when out of memory. */
char *ggfs_tree_remote_text(ggfs_tree *tree, size_t *len);

/* Starts the prefetch when the mount asked for one (nothing otherwise, or
 * when started already), its bytes handed to the kernel's pages of
 * model.gguf (at gguf_path through the mount) through se (page_push.h)
 * where they can be (se and gguf_path may be NULL). */
void ggfs_tree_prefetch_start(ggfs_tree *tree, struct fuse_session *se, const char *gguf_path);
/* Stops it, from any thread once the loop ended (a push may wait for a
 * reply the loop would send). */
void ggfs_tree_prefetch_stop(ggfs_tree *tree);

#endif
