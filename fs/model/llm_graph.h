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

/* A layer's weights, by their names' kinds (blk.N.KIND). */
typedef enum ggfs_lw {
    LW_ATTN_NORM,
    LW_ATTN_NORM_B,
    LW_WQ,
    LW_WK,
    LW_WV,
    LW_WQKV,
    LW_BQ,
    LW_BK,
    LW_BV,
    LW_BQKV,
    LW_Q_NORM,
    LW_K_NORM,
    LW_WO,
    LW_BO,
    LW_ATTN_POST_NORM,
    LW_FFN_NORM,
    LW_FFN_NORM_B,
    LW_FFN_GATE,
    LW_FFN_UP,
    LW_FFN_DOWN,
    LW_FFN_GATE_B,
    LW_FFN_UP_B,
    LW_FFN_DOWN_B,
    LW_FFN_POST_NORM,
    LW_COUNT
} ggfs_lw;

/* A weight's shape and bytes; bytes 0: the model has none. */
typedef struct ggfs_llm_weight {
    int64_t ne[3];
    uint64_t bytes;
} ggfs_llm_weight;

/* What the graph is built from: the tensors' shapes, read once. */
typedef struct ggfs_llm_model ggfs_llm_model;

/* The model of the tensors of files[0, n_files) under rules, for
 * architecture arch; NULL when out of memory. */
ggfs_llm_model *ggfs_llm_model_new(const ggp_file *const *files, uint32_t n_files, const ggfs_memory_rules *rules,
                                   ggp_str arch);
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
