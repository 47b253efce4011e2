/*
 * llama.cpp's scheduler over a graph of shapes (model/cgraph.h), with one
 * GPU and the host: ggml_backend_sched_split_graph's five passes (which
 * device runs each op: beside its weights, the large products of weights
 * left on the host offloaded to the GPU, the rest spread from their
 * neighbours), the copies of each split's inputs to its device, the GPU's
 * reordering of its splits (Vulkan's graph_optimize: the device
 * llama.cpp's own offload is checked on), then ggml's allocator
 * (model/galloc.h) over the graph as the scheduler hands it over.
 */
#ifndef GGFS_MODEL_SCHED_H
#define GGFS_MODEL_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "model/cgraph.h"

/* The bytes the compute buffers of graph g (built and expanded) need on
 * the GPU and on the host, into gpu and host; g is changed (the copies).
 * False when out of memory. */
bool ggfs_sched_reserve(ggfs_cgraph *g, uint64_t *gpu, uint64_t *host);

/* Whether the GPU runs a selective scan (ggml_ssm_scan): its A one number
 * per head (Mamba-2's; Mamba-1's is a matrix), its state and head widths
 * those Vulkan has a shader for. Where not, llama.cpp keeps A on the host
 * and runs the scan there. */
bool ggfs_sched_gpu_runs_scan(bool per_head_a, int64_t d_state, int64_t head_dim);

#endif
