/*
 * memory/CTX and memory.tsv (SPEC.md, "Memory"): the figures of
 * model/memory.h for a model's keys, as text; and the names memory/
 * looks up.
 */
#ifndef GGFS_TREE_MEMORY_FILES_H
#define GGFS_TREE_MEMORY_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"
#include "model/memory.h"

/* Whether name is a context memory/ can look up: decimal digits without a
 * leading zero, 1 to GGFS_MEMORY_CTX_MAX; its value in *ctx. */
bool ggfs_memory_name_parse(const char *name, uint32_t *ctx);

/* Writes memory/CTX's text (ctx from 1 to GGFS_MEMORY_CTX_MAX) of the model
 * whose keys are keys and tensors hold weights bytes; false when it has no
 * memory/ (an architecture whose rules are not known). */
bool ggfs_memory_ctx_render(const ggp_file *keys, uint64_t weights, uint32_t ctx, ggp_sink *sink);

/* The same for memory.tsv. */
bool ggfs_memory_tsv_render(const ggp_file *keys, uint64_t weights, ggp_sink *sink);

/* Appends a `warnings` line for each cache type llama.cpp refuses for the
 * model whose keys are keys (its memory/ reads `-` there), naming the key
 * whose head size the type's block size does not divide. */
void ggfs_memory_warnings_render(const ggp_file *keys, ggp_sink *sink);

#endif
