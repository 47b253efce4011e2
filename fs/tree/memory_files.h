/*
 * memory/CTX and memory.tsv (SPEC.md, "Memory"): the figures of
 * model/memory.h for the keys a view has, as text.
 */
#ifndef GGFS_TREE_MEMORY_FILES_H
#define GGFS_TREE_MEMORY_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"
#include "model/memory.h"
#include "tree/tree.h"

/* Whether name is a context memory/ can look up: decimal digits without a
 * leading zero, 1 to GGFS_MEMORY_CTX_MAX; its value in *ctx. */
bool ggfs_memory_name_parse(const char *name, uint32_t *ctx);

/* The memory rules of the model as view has its keys; false when it has
 * no memory/ (an architecture whose rules are not known). */
bool ggfs_memory_rules_of(const ggfs_tree *tree, const ggfs_view *view, ggfs_memory_rules *rules);

/* Writes the text of memory/CTX (node.index is CTX) or memory.tsv; false
 * when the model as view has it has no memory/. */
bool ggfs_memory_render(const ggfs_tree *tree, const ggfs_view *view, ggfs_node node, ggp_sink *sink);

#endif
