/*
 * The attributes of the tree's nodes, as stat(2) shows them.
 */
#ifndef GGFS_TREE_ATTR_H
#define GGFS_TREE_ATTR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tree/tree.h"

/* Fills st for node (sizes exact); false when node does not exist. */
bool ggfs_stat(ggfs_tree *tree, ggfs_node node, struct stat *st);

/* The size of a node's file contents. */
uint64_t ggfs_size(ggfs_tree *tree, ggfs_node node);

#endif
