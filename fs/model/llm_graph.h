/*
 * The graph llama.cpp builds for a model's ubatch (llama.cpp's
 * src/models/ARCH.cpp over llm_graph_context's helpers), as tensor shapes
 * (model/cgraph.h), and the compute buffers its scheduler and ggml's
 * allocator reserve for it (model/sched.h): offload/'s compute figures
 * for the architectures whose graph is written here.
 */
#ifndef GGFS_MODEL_LLM_GRAPH_H
#define GGFS_MODEL_LLM_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"
#include "model/memory.h"

/* What the graph is built from: the tensors' shapes, read once. */
typedef struct ggfs_llm_model ggfs_llm_model;

/* The model of the tensors of files[0, n_files) under rules and keys, for
 * architecture arch; NULL when out of memory. */
ggfs_llm_model *ggfs_llm_model_new(const ggp_file *const *files, uint32_t n_files, const ggfs_memory_rules *rules,
                                   const ggp_file *keys, ggp_str arch);
void ggfs_llm_model_free(ggfs_llm_model *m);

/* Whether the architecture's graph is written here. */
bool ggfs_llm_has_graph(const ggfs_llm_model *m);

/* The compute buffers llama.cpp reserves for a context of ctx tokens with
 * cache type `cache` and the layers from i_gpu_start on (and the output
 * layer when i_gpu_start <= n_layer) on the GPU: into gpu and host (the
 * host's as its buffer type allocates them). False when the graph is not
 * written here or memory ran out. */
bool ggfs_llm_compute(const ggfs_llm_model *m, uint32_t ctx, int cache, uint32_t i_gpu_start, uint64_t *gpu,
                      uint64_t *host);

#endif
