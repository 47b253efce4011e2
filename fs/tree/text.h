/*
 * The synthesized text files: header, tensors/NAME/info, metadata/KEY,
 * shards/FILE, and the views metadata.json, tensors.tsv and warnings.
 */
#ifndef GGFS_TREE_TEXT_H
#define GGFS_TREE_TEXT_H

#include "ggp.h"
#include "model/text_buffer.h"
#include "tree/tree.h"

/* Writes the text of a text node (not stats, see stats_cache.h) as view
 * has the keys to sink. Returns false when out of memory (warnings sort
 * the tensors) or when node is a key view does not have. */
bool ggfs_text_render(const ggfs_tree *tree, const ggfs_view *view, ggfs_node node, ggp_sink *sink);

/* Its size, without keeping the text. */
uint64_t ggfs_text_size(const ggfs_tree *tree, const ggfs_view *view, ggfs_node node);

/* The tensor's shape as "ne0 ne1 ...", into buf of at least 96 bytes. */
void ggfs_shape_text(const ggp_tensor *t, char *buf, size_t bufsize);

#endif
