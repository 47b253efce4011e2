/*
 * What the kernel is told of a node: its entry, with the attributes and
 * how long to trust them; for an edited tree, which version of a file that
 * follows the keys a lookup finds (the newest, or the one the process
 * loads: affinity.h), held for the kernel (versions.h). Shared by the
 * lookups of ops.c and the creations of edit_ops.c.
 */
#ifndef GGFS_TREE_ENTRY_H
#define GGFS_TREE_ENTRY_H

#include <fuse_lowlevel.h>
#include <stdbool.h>

#include "tree/tree.h"

/* How long the kernel keeps what does not change: a year. */
#define GGFS_CACHE_SECONDS (365.0 * 24 * 3600)

/* How long the kernel may keep node's entry, found or not, and its
 * attributes. An edited tree's root and its directories that come and go
 * with keys (tokenizer/, memory/, offload/) change with each edit, and
 * the kernel is told so only after the edit's reply: they are asked for
 * again at each use, so that no process sees the tree as it was before an
 * edit it saw acknowledged. */
double ggfs_tree_entry_timeout(const ggfs_tree *tree, ggfs_kind kind);
double ggfs_tree_attr_timeout(const ggfs_tree *tree, ggfs_kind kind);

/* Fills e with node's entry as found in view: pinned to its version
 * there, with the kernel's reference to it held (a reply that fails gives
 * it back with ggfs_tree_forget). False when node does not exist. */
bool ggfs_tree_entry(ggfs_tree *tree, ggfs_view *view, ggfs_node node, struct fuse_entry_param *e);

/* The view a lookup of node by req's process finds it in, with a
 * reference: the version the process loads, for a root file of an edited
 * model, else the current one. */
ggfs_view *ggfs_tree_lookup_view(ggfs_tree *tree, fuse_req_t req, ggfs_node node);

/* req's process opened node: a version of a root file it will load. */
void ggfs_tree_opened_by(ggfs_tree *tree, fuse_req_t req, ggfs_node node);

/* req's process made an edit: it finds the newest version from now on. */
void ggfs_tree_edited_by(ggfs_tree *tree, fuse_req_t req);

#endif
