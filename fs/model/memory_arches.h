/*
 * llama.cpp's memory rules, one table row per architecture (the
 * architectures its create_memory and each model's load_hparams treat
 * alike share a row's values): which caches it makes, which layers slide
 * and over what window, which layers keep recurrent state and how much.
 * An architecture without a row has no memory/ (model/memory.h).
 */
#ifndef GGFS_MODEL_MEMORY_ARCHES_H
#define GGFS_MODEL_MEMORY_ARCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The memory create_memory makes. */
typedef enum ggfs_kv_kind {
    GGFS_KV_NONE,      // none at all (encoders, diffusion models)
    GGFS_KV_PLAIN,     // llama_kv_cache (llama_kv_cache_iswa with a window)
    GGFS_KV_RECURRENT, // llama_memory_recurrent: state only
    GGFS_KV_HYBRID,    // llama_memory_hybrid(_iswa): attention and recurrent layers
} ggfs_kv_kind;

/* Which layers slide. */
typedef enum ggfs_swa_kind {
    GGFS_SWA_NONE,
    GGFS_SWA_PATTERN, // load_swa_pattern(period, dense_first): the pattern key (an array of
                      // flags, or a period), else the row's period
    GGFS_SWA_ARRAY,   // the pattern key, an array of flags, is required
    GGFS_SWA_LLAMA4,  // chunked over 8192 whatever the key gives, period 4; none when the key is 0
    GGFS_SWA_LFM2,    // every attention layer
} ggfs_swa_kind;

/* Where the window comes from (ARCH.attention.sliding_window). */
typedef enum ggfs_window {
    GGFS_WIN_DEFAULT,  // the key, else the row's window
    GGFS_WIN_REQUIRED, // the key, which the model must have
    GGFS_WIN_IF_GIVEN, // no sliding layers unless the key is given and not 0
    GGFS_WIN_FORCED,   // the row's window, when the key is given and not 0; else none
} ggfs_window;

/* The recurrent state of a layer (llama_hparams::n_embd_r and n_embd_s). */
typedef enum ggfs_recr_kind {
    GGFS_RECR_NONE,
    GGFS_RECR_SSM,        // Mamba: conv (d_conv-1)*d_inner, scan d_state*d_inner; no groups read
    GGFS_RECR_SSM_GROUPS, // the same with ssm.group_count's B and C in the conv state
    GGFS_RECR_RWKV,       // token shift token_shift_count*n_embd, wkv n_embd*wkv.head_size
    GGFS_RECR_CONV,       // LFM2's short conv: n_embd*(l_cache-1)
    GGFS_RECR_KDA,        // Kimi's delta attention: 3*(d_conv-1)*heads*kda, kda*kda*heads
    GGFS_RECR_LA,         // MiniMax-01's lightning attention: head_k*head_k*heads
} ggfs_recr_kind;

/* Which layers keep recurrent state (is_recr). */
typedef enum ggfs_recr_layers {
    GGFS_RL_ALL,         // every layer of the trunk
    GGFS_RL_NO_KV_HEADS, // the layers with no KV heads
    GGFS_RL_INTERVAL,    // attention.recurrent_layers, else all but every full_attention_interval-th
    GGFS_RL_NEMOTRON,    // no KV heads and no feed-forward
} ggfs_recr_layers;

/* Which layers a hybrid's attention cache holds. */
typedef enum ggfs_attn_layers {
    GGFS_AL_NOT_RECR,       // every layer not recurrent, prediction layers too
    GGFS_AL_TRUNK_NOT_RECR, // the trunk's layers not recurrent
    GGFS_AL_NEMOTRON,       // not recurrent and no feed-forward
    GGFS_AL_ALL,            // every layer (Falcon-H1: attention and state in each)
} ggfs_attn_layers;

/* Where layers stop having caches of their own (the rest reuse one). */
typedef enum ggfs_kv_from {
    GGFS_KV_FROM_NONE,
    GGFS_KV_FROM_20,     // gemma3n: layers from 20 on
    GGFS_KV_FROM_SHARED, // gemma4: the last attention.shared_kv_layers
} ggfs_kv_from;

typedef struct ggfs_arch_rules {
    const char *name;
    uint8_t kv;          // ggfs_kv_kind
    uint8_t swa;         // ggfs_swa_kind
    uint8_t window;      // ggfs_window
    uint16_t window_size; // GGFS_WIN_DEFAULT's and GGFS_WIN_FORCED's
    uint8_t period;      // GGFS_SWA_PATTERN's
    bool dense_first;    // the full-attention layer first in each period, not last
    bool window_64;      // exaone4: sliding layers only with 64 layers
    bool swa_heads;      // key_length_swa and value_length_swa required
    uint8_t recr;        // ggfs_recr_kind
    uint8_t recr_layers; // ggfs_recr_layers
    uint8_t interval;    // GGFS_RL_INTERVAL's default
    uint8_t attn_layers; // ggfs_attn_layers
    uint8_t kv_from;     // ggfs_kv_from
    bool mla;            // reads the MLA head sizes: a cache of K rows only when both given
    bool no_flash;       // flash attention forced off: every quantized V cache refused
} ggfs_arch_rules;

/* The row of the architecture named name[0, len), or NULL. */
const ggfs_arch_rules *ggfs_arch_rules_of(const char *name, size_t len);

#endif
