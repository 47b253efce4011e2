/*
 * The memory llama.cpp allocates to run a model at a context size: its
 * weights, its KV cache (full-attention and sliding-window layers apart)
 * with f16, q8_0 and q4_0 caches, and its recurrent state. A pure function
 * of the keys (as a view has them, so it follows edits) and of the tensors'
 * bytes, written from llama.cpp's own rules (llama-context.cpp's padding,
 * llama-kv-cache*.cpp, llama-memory-recurrent.cpp, llama-hparams.cpp and
 * each architecture's hyperparameters) for one sequence with its defaults:
 * n_ubatch 512, flash attention on (its "auto" on a CPU), no full-size
 * sliding-window cache. Architectures whose rules are not written here have
 * none (ggfs_memory_read fails).
 */
#ifndef GGFS_MODEL_MEMORY_H
#define GGFS_MODEL_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"
#include "model/model.h"

#define GGFS_MEMORY_CTX_MAX (UINT32_C(1) << 24) // the largest context looked up
#define GGFS_MEMORY_LISTED_FIRST 512             // memory/ lists 512, 1024, ...
#define GGFS_MEMORY_MAX_LAYERS 512               // LLAMA_MAX_LAYERS

/* Cache element types, in the order of ggfs_memory's kv[]. */
enum { GGFS_CACHE_F16, GGFS_CACHE_Q8_0, GGFS_CACHE_Q4_0, GGFS_CACHE_TYPES };

/* One KV cache (the full-attention one or the sliding-window one): its
 * layers and the bytes one cell takes over all of them, K and V, for each
 * cache type. */
typedef struct ggfs_kv_rule {
    uint32_t layers;
    uint64_t cell_bytes[GGFS_CACHE_TYPES];
} ggfs_kv_rule;

/* Why llama.cpp refuses a quantized cache type for a model
 * (llama_init_from_model): flash attention forced off (no_flash), or the
 * first trunk layer whose K (then V) head size the type's block size does
 * not divide. */
typedef struct ggfs_cache_refusal {
    bool refused;
    bool no_flash;     // the architecture's flash attention is off: a quantized V needs it
    char row;          // 'K' or 'V'
    uint32_t head;     // the head size (n_embd_head_k or n_embd_head_v)
    uint64_t offset;   // file offset of the key that gives it
    char key[96];      // that key's name
} ggfs_cache_refusal;

/* Which cache a layer's K and V rows are in. */
enum { GGFS_LAYER_NO_KV, GGFS_LAYER_FULL, GGFS_LAYER_SWA };

/* One layer's share: its cache, the bytes one cell of it takes (K and V,
 * per cache type) and its recurrent state. offload/ places each layer's
 * share on the layer's device, as llama.cpp does (offload_kqv). */
typedef struct ggfs_layer_memory {
    uint8_t cache;                          // GGFS_LAYER_*
    uint64_t cell_bytes[GGFS_CACHE_TYPES];  // 0 unless cache is FULL or SWA
    uint64_t state;                         // bytes of recurrent state
    bool sliding;                           // its attention slides (is_swa), cache or not
    uint32_t n_head, n_head_kv;             // its attention's heads (head_count, head_count_kv)
    uint32_t head_k, head_v;                // and their sizes (key_length, value_length)
} ggfs_layer_memory;

/* What a model's keys fix, read once by ggfs_memory_read. */
typedef struct ggfs_memory_rules {
    uint32_t n_ctx_train;  // the trained context (context_length)
    ggfs_kv_rule full;     // full-attention layers (an MLA cache counts here)
    ggfs_kv_rule swa;      // sliding-window layers
    uint32_t n_swa;        // the window, when swa.layers > 0
    uint64_t recurrent;    // bytes of recurrent state (f32), any context
    uint64_t weights;      // bytes of tensor data
    ggfs_cache_refusal refusal[GGFS_CACHE_TYPES]; // never refused: f16
    uint32_t n_layer;      // block_count, prediction layers included
    uint32_t n_nextn;      // of them, the prediction layers after the trunk (nextn_predict_layers)
    uint32_t n_embd;       // embedding_length
    uint32_t n_ff;         // feed_forward_length, the largest layer's
    uint32_t n_expert;     // expert_count (0: no experts)
    uint32_t n_expert_used; // expert_used_count
    uint32_t n_ff_exp;     // expert_feed_forward_length (0: not given)
    ggfs_layer_memory layer[GGFS_MEMORY_MAX_LAYERS];
} ggfs_memory_rules;

/* The figures of memory/CTX, in its order (bytes unless said). */
typedef struct ggfs_memory {
    uint64_t context;    // cells llama.cpp allocates: CTX padded to 256
    uint64_t weights;
    uint32_t kv_layers;
    uint64_t kv_cells;   // 0 when kv_layers is 0
    uint32_t swa_layers;
    uint64_t swa_cells;  // 0 when swa_layers is 0
    uint64_t kv[GGFS_CACHE_TYPES];
    bool refused[GGFS_CACHE_TYPES]; // no figure: llama.cpp makes no such cache
    uint64_t recurrent;
    uint64_t total_f16;  // weights + kv[GGFS_CACHE_F16] + recurrent
} ggfs_memory;

/* Reads the rules of the model whose keys are `keys` and whose tensors
 * hold `weights` bytes. False when its architecture is not one whose rules
 * are written here, or its keys lack (or give out of range) a value those
 * rules need, as llama.cpp would refuse to load it. */
bool ggfs_memory_read(const ggp_file *keys, uint64_t weights, ggfs_memory_rules *rules);

/* The figures at a context of ctx tokens (1 <= ctx <= GGFS_MEMORY_CTX_MAX). */
void ggfs_memory_at(const ggfs_memory_rules *rules, uint32_t ctx, ggfs_memory *out);

/* A cache type's name: "f16", "q8_0", "q4_0". */
const char *ggfs_cache_name(int type);

/* The cells of a layer's cache at a context of ctx tokens. */
uint64_t ggfs_memory_layer_cells(const ggfs_memory_rules *rules, uint32_t il, uint32_t ctx);

/* The contexts memory/ lists, ascending: 512 doubling while below the
 * trained context, then the trained context (capped at
 * GGFS_MEMORY_CTX_MAX). The i-th one, or 0 past the last. */
uint32_t ggfs_memory_listed(const ggfs_memory_rules *rules, uint32_t i);

/* The bytes of tensor data of model m (tensors of unknown type count 0). */
uint64_t ggfs_memory_weights(const ggfs_model *m);

#endif
