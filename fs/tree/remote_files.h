/*
 * What the tree of a remote model adds: the `remote` file's text
 * (source/remote_status.h) over the model's shards, and the prefetch
 * (source/prefetch.h) started with the session, running (-o prefetch) or
 * held for a load of the model to let go (-o prefetch_after_mb,
 * prefetch_trigger.h), and stopped before the session ends.
 */
#ifndef GGFS_TREE_REMOTE_FILES_H
#define GGFS_TREE_REMOTE_FILES_H

#include <fuse_lowlevel.h>
#include <stddef.h>

#include "tree/tree.h"

/* The `remote` file's text now, malloc'd; NULL when out of memory. */
char *ggfs_tree_remote_text(ggfs_tree *tree, size_t *len);

/* Before serving: where the prefetch of a single unedited model is to
 * go besides the caches, the kernel's pages of model.gguf, at gguf_path
 * through the mount (page_push.h). Nothing when the mount asked for no
 * prefetch. */
void ggfs_tree_prefetch_prepare(ggfs_tree *tree, const char *gguf_path);

/* Starts the prefetch when the mount asked for one (nothing otherwise, or
 * when started already), handing its bytes to the kernel through se where
 * they can go; held, with its trigger, when it is to wait for a load. */
void ggfs_tree_prefetch_start(ggfs_tree *tree, struct fuse_session *se);

/* Ends the prefetch's calls into the mount (ggfs_page_push_stop): while
 * the loop still answers, or once it ended by an unmount; before the
 * session's device is closed. From any thread. */
void ggfs_tree_prefetch_quiet(ggfs_tree *tree);

/* Stops the prefetch, from any thread once the loop ended and after
 * ggfs_tree_prefetch_quiet. */
void ggfs_tree_prefetch_stop(ggfs_tree *tree);

#endif
