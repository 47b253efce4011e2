/*
 * The prefetch of a remote model, handed on to the kernel: each run the
 * prefetch has fetched is stored in the page cache of model.gguf
 * (FUSE's notify_store), so that the whole model can wait there for its
 * readers, past the bound of the daemon's memory cache, as a downloaded
 * file waits in the page cache for its own. The kernel evicts those pages
 * as it evicts any, and a read of an evicted page comes to the daemon as
 * before.
 *
 * Only where model.gguf holds the source's bytes as they are: one shard,
 * no edits. The kernel takes pages only for an inode it knows: when it
 * does not know model.gguf, the sink looks it up through the mount (a
 * stat of its path, which the loop answers), and failing that waits for
 * a lookup or an open (and with it the prefetch, once the runs under way
 * have landed).
 */
#ifndef GGFS_TREE_PAGE_PUSH_H
#define GGFS_TREE_PAGE_PUSH_H

#include <fuse_lowlevel.h>
#include <stddef.h>
#include <stdint.h>

#include "source/source.h"

typedef struct ggfs_page_push ggfs_page_push;

/* For model.gguf at inode ino, at path (through the mount), whose bytes
 * are src's. NULL when out of memory. */
ggfs_page_push *ggfs_page_push_new(fuse_ino_t ino, const char *path, ggfs_source *src);

/* The session the pushes go through: before the prefetch starts. */
void ggfs_page_push_start(ggfs_page_push *p, struct fuse_session *se);

/* The prefetch's sink (source/prefetch.h): arg is the ggfs_page_push. */
void ggfs_page_push_sink(void *arg, size_t source, uint64_t off, uint64_t len);

/* The kernel was given model.gguf's inode (a lookup, an open): a sink
 * waiting for it tries again. */
void ggfs_page_push_known(ggfs_page_push *p);

/* Ends the sink's waits and its calls into the mount: returns once none
 * is under way, and none starts after. Call it while the loop still
 * answers, or once the kernel ended the connection (unmounted): a call
 * under way may wait for a reply of the loop's. Before the session's
 * device is closed (fuse_session_unmount), which a push writes to. NULL:
 * nothing. */
void ggfs_page_push_stop(ggfs_page_push *p);

/* After the prefetch stopped. NULL: nothing. */
void ggfs_page_push_free(ggfs_page_push *p);

#endif
