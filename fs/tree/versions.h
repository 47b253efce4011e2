/*
 * The versions of an edited model's files that the kernel holds. Each
 * edit makes new versions of the files it changes (model.gguf, header,
 * warnings, metadata.json, the key's own file), each under an inode
 * number of its own (tree.h), so that a reader who opened a version keeps
 * its bytes and size, in the kernel's page cache and here, while new
 * lookups find the new one: an edit is atomic for readers, as a rename is.
 *
 * This table maps each such inode the kernel has looked up to the view
 * (model/view.h) its bytes come from, with the kernel's lookup count. The
 * view is let go when the kernel forgets the inode: once no open file,
 * mapping or cached entry holds it. So an old version costs a view (the
 * edited header, at most the size of the model's header plus its edits)
 * for as long as something holds it, and nothing after.
 *
 * All calls are thread-safe.
 */
#ifndef GGFS_TREE_VERSIONS_H
#define GGFS_TREE_VERSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/view.h"

typedef struct ggfs_versions ggfs_versions;

/* An empty table; NULL when out of memory. With log_frees, each view let
 * go is one log line (the daemon's -d). */
ggfs_versions *ggfs_versions_new(bool log_frees);
/* Lets every view go. */
void ggfs_versions_free(ggfs_versions *vs);

/* The kernel is given n more references to ino, whose bytes come from
 * view: the first keeps a reference to view (later ones find it). False
 * when out of memory (the reply must then not name ino). */
bool ggfs_versions_hold(ggfs_versions *vs, uint64_t ino, ggfs_view *view, uint64_t n);

/* The kernel forgot n references to ino: at none, its view is let go.
 * An inode the table does not hold is ignored. */
void ggfs_versions_forget(ggfs_versions *vs, uint64_t ino, uint64_t n);

/* The view of ino, with a reference for the caller (ggfs_view_put); NULL
 * when the kernel holds no such inode. */
ggfs_view *ggfs_versions_view(ggfs_versions *vs, uint64_t ino);

/* How many inodes are held. */
size_t ggfs_versions_count(ggfs_versions *vs);

#endif
