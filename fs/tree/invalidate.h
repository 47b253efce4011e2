/*
 * Telling the kernel that files of an edited model changed. Their
 * attributes (sizes) are dropped at once: that never waits. Their cached
 * pages are dropped by a thread of the mount's own, because dropping a
 * page waits for a read of it in flight, which a loop thread must answer:
 * were a loop thread to wait, all of them could. Files of an edited
 * metadata/ and the root's texts are opened without the kernel's cache of
 * an earlier open (ops.c), and model.gguf when an edit came between, so a
 * file opened after an edit's close returned reads the edit.
 */
#ifndef GGFS_TREE_INVALIDATE_H
#define GGFS_TREE_INVALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tree/mount.h"

/* After an edit: the files of metadata/ with these ids (UINT64_MAX ones
 * skipped), and with keys_changed the root's files that follow the keys
 * (header, warnings, model.gguf, metadata.json). */
void ggfs_invalidate_edit(ggfs_model_mount *mount, const uint64_t *ids, size_t n_ids, bool keys_changed);

/* Stops the thread (after its job under way): call while the loop still
 * answers, as a drop of pages may wait for a read. Then no pages are
 * dropped but at open. Idempotent. */
void ggfs_invalidate_stop(ggfs_model_mount *mount);

#endif
