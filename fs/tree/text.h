/*
 * The synthesized text files: header, tensors/NAME/info, metadata/KEY,
 * shards/FILE, memory/CTX and memory.tsv (memory_files.h), the views
 * metadata.json, tensors.tsv and warnings, and tokenizer/vocab.tsv and
 * tokenizer/special.
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

/* Where a view keeps the size (and, if kept, the text) of a whole-model
 * text of this kind: GGFS_VIEW_*, tree.h. */
int ggfs_text_view_slot(ggfs_kind kind);

/* Whether a kind's text is kept with its view once rendered: vocab.tsv,
 * whose scores take long to write (a float's shortest form is found by
 * trial), so that its size and every open of one version take one render. */
bool ggfs_text_is_kept(ggfs_kind kind);

/* The kept text of such a node as view has it, rendered now if it was not
 * yet (two threads may both render; one text is kept). NULL when out of
 * memory. */
const ggfs_view_text *ggfs_text_kept(const ggfs_tree *tree, ggfs_view *view, ggfs_node node);

/* Its size, without keeping the text. */
uint64_t ggfs_text_size(const ggfs_tree *tree, const ggfs_view *view, ggfs_node node);

/* The tensor's shape as "ne0 ne1 ...", into buf of at least 96 bytes. */
void ggfs_shape_text(const ggp_tensor *t, char *buf, size_t bufsize);

#endif
