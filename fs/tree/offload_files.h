/*
 * offload/CTX (SPEC.md, "Memory"): the bytes llama.cpp allocates on the
 * GPU and on the host for each cache type and -ngl (model/offload.h), as
 * a tab-separated table.
 */
#ifndef GGFS_TREE_OFFLOAD_FILES_H
#define GGFS_TREE_OFFLOAD_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"
#include "model/compute_memo.h"
#include "model/model.h"

/* Writes offload/CTX's text (ctx from 1 to GGFS_MEMORY_CTX_MAX) of model m
 * whose keys (as the view has them) are keys and tensors hold weights
 * bytes (ggfs_memory_weights), keeping the compute buffers it works out
 * in memo (the view's; NULL: none kept); false when it has no
 * offload/ (no memory/: an architecture whose rules are not known) or out
 * of memory. */
bool ggfs_offload_ctx_render(const ggp_file *keys, const ggfs_model *m, uint64_t weights, uint32_t ctx,
                             ggfs_compute_memo *memo, ggp_sink *sink);

#endif
