/*
 * Telling the kernel about files an edit changed. An edit makes new
 * versions of the files that follow the keys under new inodes (tree.h),
 * which new lookups find; what it tells the kernel is for the rest:
 *  - the file written through, and scratch files, change in place: their
 *    attributes (sizes) are dropped at once, which never waits, and their
 *    cached pages by a thread of the mount's own, because dropping a page
 *    waits for a read of it in flight, which a loop thread must answer:
 *    were a loop thread to wait, all of them could;
 *  - the entries of the old versions are dropped by that thread too, so
 *    that an old version is let go (versions.h) as soon as nothing holds
 *    it, rather than at the next lookup of its name.
 */
#ifndef GGFS_TREE_INVALIDATE_H
#define GGFS_TREE_INVALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tree/mount.h"

/* After an edit: the attributes and pages of ino (the file written
 * through; 0 for none) and of the scratch files among ids (UINT64_MAX ones
 * skipped); with keys_changed, the entries of the root's files that follow
 * the keys and of the keys among ids. */
void ggfs_invalidate_edit(ggfs_model_mount *mount, uint64_t ino, const uint64_t *ids, size_t n_ids,
                          bool keys_changed);

/* Stops the thread (after its job under way): call while the loop still
 * answers, as a drop of pages may wait for a read. Then no pages are
 * dropped but at open. Idempotent. */
void ggfs_invalidate_stop(ggfs_model_mount *mount);

#endif
