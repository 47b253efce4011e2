/*
 * Where llama.cpp puts a model's bytes with one GPU and `-ngl N` (and
 * `--n-cpu-moe N`): its weights, its KV cache and recurrent state, its
 * compute buffers and its output buffer, on the GPU and on the host. A pure
 * function of the keys (through the memory rules, model/memory.h) and of
 * the tensors' names, sizes and places in their files, written from
 * llama.cpp's own placement (llama_model_base::load_tensors,
 * llama_model_loader::create_tensor, llama_context::output_reserve) for
 * one sequence, n_ubatch 512, flash attention as "auto" resolves it.
 */
#ifndef GGFS_MODEL_OFFLOAD_H
#define GGFS_MODEL_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "model/compute_memo.h"
#include "model/memory.h"
#include "model/model.h"

/* One line of offload/CTX: bytes llama.cpp allocates, per device. */
typedef struct ggfs_offload_row {
    int cache;            // GGFS_CACHE_*
    uint32_t gpu_layers;  // -ngl: 0 to n_layer + 1 (the output layer last)
    uint32_t cpu_moe;     // --n-cpu-moe: the first N layers' experts stay on the host
    uint64_t gpu_model, gpu_kv, gpu_compute;
    uint64_t host_model, host_kv, host_compute, host_output;
} ggfs_offload_row;

/* What the model's tensors contribute, read once per render. */
typedef struct ggfs_offload ggfs_offload;

/* The placement of model m's tensors under the rules of its keys,
 * keeping the compute buffers it works out in memo (the view's, which
 * rules and keys are of; NULL: none kept); NULL when out of memory or a
 * tensor's name places it in no layer llama.cpp has (a blk.N past
 * block_count). */
ggfs_offload *ggfs_offload_new(const ggfs_model *m, const ggfs_memory_rules *rules, const ggp_file *keys,
                               ggfs_compute_memo *memo);
/* The same for the tensors of files[0, n_files), a split set's shards in
 * order. */
ggfs_offload *ggfs_offload_new_files(const ggp_file *const *files, uint32_t n_files, const ggfs_memory_rules *rules,
                                     const ggp_file *keys);
void ggfs_offload_free(ggfs_offload *o);

/* Whether the model has expert tensors (and so lines for --n-cpu-moe). */
bool ggfs_offload_has_experts(const ggfs_offload *o);

/* The line for a context of ctx tokens, cache type `cache`, gpu_layers
 * and cpu_moe (both at most rules->n_layer + 1). */
void ggfs_offload_at(const ggfs_offload *o, uint32_t ctx, int cache, uint32_t gpu_layers, uint32_t cpu_moe,
                     ggfs_offload_row *row);

#endif
