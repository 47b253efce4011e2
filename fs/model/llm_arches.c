/*
 * The architectures whose graph offload/ builds (llm_build.h): one row
 * each, naming the layer's program and the options its src/models/ file
 * takes. A layer's program is a few steps over registers (the layer's
 * input, the current tensor, the saved residual, ...), written as the
 * file writes its layer, so that the tensors are made and expanded in
 * llama.cpp's order; the helpers do the rest.
 */
#include <string.h>

#include "model/llm_build.h"

/* The registers a layer's program works on. */
enum {
    R_INP, // the layer's input; the next layer's, at the end
    R_CUR,
    R_RES, // the residual saved
    R_NRM, // the normed input, for a block beside the attention
    R_ATT, // the attention's output, set aside
    R_FFN, // the feed-forward block's output, set aside
    R_FIN, // the feed-forward block's input
    R_PRB, // the experts' router's logits, made early (smallthinker)
    R_SKP, // the model's normed input, skipping to every layer's output (talkie)
    R_COUNT,
    R_NONE = 0xff
};

typedef enum step_op {
    S_END,
    S_COPY,      // dst = a
    S_NORM,      // dst = the row's norm of a, with layer weights w and wb (LW_COUNT: none)
    S_NORM_OUT,  // the same, named as the output's (a post-ffn norm: il -1)
    S_ATTN,      // dst = attention over a (Q, K, V, their norms, RoPE, the cache, wo)
    S_LAST_ROWS, // in the last layer, a, b and c (those given) keep the output rows only
    S_ADD,       // dst = a + b
    S_FFN,       // dst = the row's feed-forward block over a
    S_NORM_OR,   // dst = the norm of a with w where the layer has w, else b (stablelm)
    S_RES_SCALE, // dst = a scaled where the row scales the residual's branches, else a
    S_DENSE,     // dst = the dense feed-forward block over a, in a layer with experts too (arctic)
    S_EXPERTS,   // dst = the experts over a
    S_BLOCK,     // dst = the block's one mixer over a: a feed-forward block where it has one, else attention or a
                 // recurrent mixer (nemotron_h)
    S_ROUTE,     // dst = the router's logits over a (ffn_gate_inp)
    S_ROUTED,    // dst = the experts over a, by the logits in b
    S_PER_LAYER, // dst = a plus the layer's gated per-layer input where it has one, times its output scale
    S_MUL_W,     // dst = a times the layer's weight w
    S_NORM_EITHER, // dst = the row's norm of a, with the layer's weight w where it has one, else with wb
    S_SELF_ATTN, // dst = attention over a, in a layer that has a recurrent mixer beside it
    S_RECURRENT, // dst = the layer's recurrent mixer over a
    S_CROSS,     // dst = the cross attention over the encoder's output from a (T5's decoder)
} step_op;

typedef struct step {
    uint8_t op, dst, a, b, c;
    uint8_t w, wb;
} step;

typedef enum input_kind {
    IN_PLAIN,     // the token embeddings
    IN_SCALED,    // scaled (ggml_scale)
    IN_POSITIONS, // plus the learned positions' embeddings
    IN_NORMED,    // normed (token_embd_norm, LayerNorm)
    IN_POSITIONS_IF_ANY, // plus the learned positions' embeddings where the model has them (mpt)
    IN_SCALED_BY_KEY,    // scaled where the keys give embedding_scale (granite)
    IN_RMS_NORMED,       // normed without a weight (muse-glimmer)
    IN_BERT,             // plus the first token type's row and the positions' embeddings, then normed as layer 0's
    IN_NORMED_FIRST,     // normed as layer 0's (token_embd_norm, LayerNorm: rwkv6, rwkv7)
} input_kind;

typedef enum qk_norm_kind {
    QK_NONE,
    QK_BEFORE_ROPE,  // per head
    QK_AFTER_ROPE,   // per head
    QK_WHOLE,        // over the whole projection, before it is cut into heads
} qk_norm_kind;
typedef enum rope_kind {
    ROPE_ALL,
    ROPE_NONE,
    ROPE_SWA_ONLY,    // the sliding layers, where the model has any
    ROPE_NOT_EVERY_4, // not layers 3, 7, 11, ...
    ROPE_IF_32,       // baichuan: in its 7B (32 layers) only
    ROPE_BY_PATTERN,  // where attention.rope_pattern does not give 0
    ROPE_NOT_FULL,    // not the full-attention layers (every 4th) where the model has sliding ones, else
                      // not the last layer (llama4)
} rope_kind;

typedef enum ffn_kind {
    FFN_GATED,     // up and gate, then their gated product (swiglu, geglu, ...)
    FFN_ACT,       // up, then an activation (gelu, silu, relu)
    FFN_RELU_SQR,  // up, relu, then squared
    FFN_FUSED_GLU, // up twice as wide, then its halves' gated product
} ffn_kind;

/* The experts' routing (build_moe_ffn's gating_op, norm_w, w_scale). */
typedef enum gating_kind {
    GATE_SOFTMAX,
    GATE_SIGMOID,
    GATE_KEY,         // expert_gating_func: 2 sigmoid, else softmax
    GATE_KEY_SIGMOID, // the same, sigmoid when not given
    GATE_SOFTMAX_WEIGHT, // the logits chosen from, the chosen ones' softmax their weights (gpt-oss)
} gating_kind;
typedef enum choice { NO, YES, BY_KEY } choice;

typedef enum output_kind {
    OUT_PLAIN,
    OUT_BIAS,     // plus output.bias
    OUT_SCALE,    // scaled when the keys give a logit scale
    OUT_SOFTCAP,  // scale, tanh, scale
    OUT_SOFTCAP_KEY, // the same when the keys give final_logit_softcapping
    OUT_SCALE_ALWAYS,
    OUT_EMBD_NORM, // the output's norm is token_embd_norm (lfm2's)
    OUT_EMBEDDINGS, // the normed embeddings, no logits (embedding models)
    OUT_BY_EMBD,    // the logits by the token embeddings themselves, on the host (bitnet)
    OUT_SCALE_SOFTCAP, // scaled, then capped unless the keys give the cap as 0 (muse-glimmer)
    OUT_UNPADDED,   // no graph where the output has fewer rows than the vocabulary (qwen3tts' codec head)
    OUT_SCALED_NORM, // the output's norm scaled before the logits (minicpm3)
    OUT_SOFTCAP_UNLESS_OFF, // capped unless the keys give the cap as 0 (gemma4)
    OUT_LAST_LAYER, // the last layer's output itself, no norm, no logits (bert)
    OUT_SCALE_CAP_BY_KEY, // scaled, then capped where the keys give a cap not 0 (grok)
    OUT_UNNORMED,   // the logits of the last layer's output as it is, no norm (hrm_text's passes end normed)
} output_kind;

/* qwen35's family (gated delta net layers beside gated attention). */
typedef enum delta_kind {
    DELTA_NONE,
    DELTA_QWEN35,    // qwen35, qwen35moe: the fused delta net takes fewer Q and K heads as they are
    DELTA_QWEN3NEXT, // Q and its gate cut into heads first; fewer Q and K heads repeated
} delta_kind;

/* Kimi's delta attention (KDA) beside latent attention. */
typedef enum kda_kind {
    KDA_NONE,
    KDA_KIMI,    // kimi-linear: the decay and output gate through low ranks; the latent attention without
                 // RoPE; a shared expert built whatever weights it has
    KDA_BAILING, // bailingmoe3: the decay a bounded sigmoid; the latent attention's heads gated
    KDA_K3,      // kimi-k3: its own layers (llm_kimi_k3.c): the residual mixed from checkpoints, the decay
                 // bounded where the keys say, a full-rank output gate, situ activations
} kda_kind;

/* Where the output rows are taken. */
typedef enum rows_kind {
    ROWS_LAST_LAYER,  // in the last layer (the program's S_LAST_ROWS)
    ROWS_BEFORE_NORM, // at the output, before its norm (step35)
    ROWS_AFTER_NORM,  // at the output, after its norm (nemotron_h)
} rows_kind;

struct arch_graph {
    const char *arch;
    const step *layer;
    const step *sequential; // the layer when the keys turn off use_parallel_residual, if they may
    uint8_t norm;    // NORM_RMS or NORM_LAYER, the layer's and the output's
    uint8_t input;   // input_kind
    uint8_t qk_norm; // per head, with the row's norm, where the model has the weights
    uint8_t qk_type; // that norm's type
    uint8_t rope;    // rope_kind
    bool factors;    // RoPE takes rope_freqs (get_rope_factors)
    bool factors_not_swa; // but not in the sliding layers (step35)
    bool q_scale;    // Q scaled after RoPE (the attention's scale then 1)
    uint8_t ffn;     // ffn_kind, of the layers without experts
    uint8_t output;  // output_kind
    uint8_t rows;    // rows_kind
    uint8_t gating;  // gating_kind of the layers with experts (ffn_gate_inp)
    uint8_t norm_w;  // choice: the chosen experts' weights normalized
    uint8_t w_scale; // choice: scaled (by expert_weights_scale, unless 0 or 1)
    uint8_t mrope;   // choice: multi-section RoPE (BY_KEY: where rope.dimension_sections says)
    uint8_t res_scale; // choice: the residual's branches scaled (BY_KEY: where residual_scale is given)
    bool bias_free;  // the attention's output and the feed-forward block take no bias, whatever the file has
    bool mla;        // multi-head latent attention (deepseek2's)
    bool qkv_heads_first; // a fused projection cut into heads before Q, K and V are taken (openelm)
    bool cacheless;  // attention over the ubatch alone, whatever cache llama.cpp makes (llama-embed)
    bool moe_scaled; // a layer's experts and shared expert summed, then scaled (cohere2moe)
    bool latent_kv;  // Q, K and V from latents, decompressed (minicpm3)
    bool gemma4;     // gemma4's attention: V is K's where the layer has no V, normed without a weight
    bool unclamped;  // Q, K and V not clamped whatever clamp_kqv says (its loader reads no such key)
    bool k_bare_norm; // K normed without a weight where the layer has none (talkie)
    bool grok;       // grok's: no flash attention, its scores capped; a dense block beside the experts
    bool t5;         // T5's encoder: the scores biased by relative position buckets, no flash attention
    bool img_logits; // chameleon's: the image tokens' logits set to the lowest float; norms with biases on Q and K
    bool grovemoe;   // grovemoe's: experts chosen by the logits' sigmoid, adjugate experts over their output
    uint8_t kda;     // kda_kind: Kimi's delta attention layers beside latent attention
    bool swiglu_clamp; // the gated products' halves clamped where swiglu_clamp_exp (the experts') and
                       // swiglu_clamp_shexp (the other blocks') give the layer a limit
    uint8_t qwen35;  // delta_kind: gated delta net layers; attention gated by the second half
                     // of each Q head; the shared expert gated by a sigmoid
    bool plamo2;     // plamo2's Mamba layers (ggfs_llm_mamba_plamo2)
    bool gemma3n;    // gemma3n's altup streams (llm_gemma3n.c) instead of a layer program
    bool wavtokenizer; // wavtokenizer-dec's convolutional nets (llm_wavtokenizer.c) instead of a layer program
    bool lightning;  // minimax-01's lightning attention in the layers with attn_norm_2
    bool down_f32;   // the experts' down product at f32 precision (mistral4's), which Vulkan runs on the host
    uint8_t rwkv;    // rwkv_kind: the RWKV layers (llm_rwkv.c) instead of a layer program
    bool hrm;        // hrm_text's: the layers run as passes of stacks (ggfs_llm_model's hrm_stack), each
                     // over the high state plus the low one, its output normed as the low or the high state
    bool llama4;     // llama4's attention (Q scaled by a temperature in the layers without RoPE, Q and K
                     // normed without weights in the others) and experts (weighted before them, chosen by logits)
};

#define NO_W LW_COUNT

/* src/models/llama.cpp and the many like it: attention, then the
 * feed-forward block, each after its norm and added to the residual. */
static const step pre_norm[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, LW_FFN_NORM_B},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* command-r: the feed-forward block on the attention's normed input,
 * beside it: (ffn + input) + attention. */
static const step parallel_ffn_inp[] = {
    {S_NORM, R_NRM, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_NRM, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_INP, R_NRM, 0, 0},
    {S_COPY, R_ATT, R_CUR, 0, 0, 0, 0},
    {S_FFN, R_CUR, R_NRM, 0, 0, 0, 0},
    {S_ADD, R_CUR, R_CUR, R_INP, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_ATT, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* phi2: the same beside the attention, but (attention + ffn) + input. */
static const step parallel_attn_ffn[] = {
    {S_NORM, R_NRM, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_NRM, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_INP, R_NRM, 0, 0},
    {S_FFN, R_FFN, R_NRM, 0, 0, 0, 0},
    {S_ADD, R_CUR, R_CUR, R_FFN, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_INP, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* gptneox (use_parallel_residual): the feed-forward block on its own
 * norm of the input, beside the attention: (ffn + input) + attention. */
static const step parallel_own_norm[] = {
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_INP, R_NONE, 0, 0},
    {S_COPY, R_ATT, R_CUR, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_FFN_NORM, LW_FFN_NORM_B},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_CUR, R_CUR, R_INP, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_ATT, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* seed_oss: pre_norm, its feed-forward block's norm named as a post-attention one. */
static const step pre_norm_post_named[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_ATTN_POST_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* phi3: pre_norm, the last sum's sources the other way round. */
static const step pre_norm_residual_first[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, LW_FFN_NORM_B},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_FIN, R_CUR, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* granite, minicpm: pre_norm, each branch scaled before it is added. */
static const step pre_norm_scaled[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_RES_SCALE, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, LW_FFN_NORM_B},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_RES_SCALE, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* stablelm: the feed-forward block after its own norm where the layer has
 * one, else beside the attention on its normed input. */
static const step stablelm_layer[] = {
    {S_NORM, R_NRM, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_NRM, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_INP, R_NRM, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_INP, 0, 0, 0},
    {S_NORM_OR, R_CUR, R_FIN, R_NRM, 0, LW_FFN_NORM, LW_FFN_NORM_B},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* dbrx: pre_norm, its feed-forward block's norm named for the attention's
 * output. */
static const step pre_norm_out_named[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_ATTN_OUT_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* falcon: the feed-forward block beside the attention, (ffn + attention)
 * + input. */
static const step parallel_ffn_attn[] = {
    {S_NORM, R_NRM, R_INP, 0, 0, LW_ATTN_NORM, LW_ATTN_NORM_B},
    {S_ATTN, R_CUR, R_NRM, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_INP, R_NRM, 0, 0},
    {S_FFN, R_FFN, R_NRM, 0, 0, 0, 0},
    {S_ADD, R_CUR, R_FFN, R_CUR, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_INP, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* gemma2, gemma3: norms after the attention and the feed-forward block
 * too, before each is added to the residual. */
static const step post_norms[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_NORM, R_CUR, R_CUR, 0, 0, LW_ATTN_POST_NORM, NO_W},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_NORM_OUT, R_CUR, R_CUR, 0, 0, LW_FFN_POST_NORM, NO_W},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* plamo3: post_norms, the last norm named as its layer's. */
static const step post_norms_layer_named[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_NORM, R_CUR, R_CUR, 0, 0, LW_ATTN_POST_NORM, NO_W},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_CUR, 0, 0, LW_FFN_POST_NORM, NO_W},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* arctic: a dense feed-forward block on the attention's sum, and beside
 * it experts on the layer's own input, normed. */
static const step arctic_layer[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_DENSE, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_FFN, R_CUR, R_FIN, 0, 0, 0},
    {S_NORM, R_CUR, R_RES, 0, 0, LW_FFN_NORM_EXPS, NO_W},
    {S_EXPERTS, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FFN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* lfm2: pre_norm, the residual each sum's first source. */
static const step pre_norm_residual_before[] = {
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_INP, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_INP, R_CUR, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_FIN, R_CUR, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* nemotron_h: blocks of one mixer each (attention, Mamba-2 or a
 * feed-forward block) after a norm, added to the residual; the output
 * rows taken at the output. */
static const step one_mixer[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_BLOCK, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_RES, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* mamba2: one_mixer, the output rows taken in the last layer. */
static const step one_mixer_rows[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_BLOCK, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_INP, R_CUR, R_RES, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* falcon-h1: attention and the Mamba-2 mixer beside it, each over its own
 * norm of the input; their sum and the input, then the feed-forward block. */
static const step attn_beside_ssm[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_SELF_ATTN, R_ATT, R_CUR, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_RECURRENT, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_CUR, R_ATT, R_CUR, 0, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_LAST_ROWS, 0, R_FIN, R_NONE, R_NONE, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* minimax-01: the residuals are the normed inputs, scaled. */
static const step normed_residuals[] = {
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_COPY, R_RES, R_CUR, 0, 0, 0, 0},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_RES_SCALE, R_RES, R_RES, 0, 0, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_COPY, R_RES, R_CUR, 0, 0, 0, 0},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_RES_SCALE, R_RES, R_RES, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_RES, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* T5's decoder: self attention, cross attention over the encoder's
 * output, the feed-forward block, each after its norm and added. */
static const step t5_decoder[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_CROSS_NORM, NO_W},
    {S_CROSS, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_FIN, R_NONE, 0, 0},
    {S_ADD, R_ATT, R_CUR, R_FIN, 0, 0, 0},
    {S_NORM, R_CUR, R_ATT, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_ATT, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* cogvlm: pre_norm, every row an output (no output rows taken). */
static const step pre_norm_all_rows[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* openelm: pre_norm, the attention's sum with the residual first. */
static const step pre_norm_residual_first_attn[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_RES, R_CUR, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* smallthinker: the experts' router on the layer's input, before the
 * attention. */
static const step routed_early[] = {
    {S_ROUTE, R_PRB, R_INP, 0, 0, 0, 0},
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_PRB, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_ROUTED, R_CUR, R_CUR, R_PRB, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* muse-glimmer: norms before and after each block, those after unnamed
 * (il -1), the attention's before the last layer's rows are taken. */
static const step sandwich_unnamed[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_NORM_OUT, R_CUR, R_CUR, 0, 0, LW_ATTN_POST_NORM, NO_W},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_NORM_OUT, R_CUR, R_CUR, 0, 0, LW_FFN_POST_NORM, NO_W},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* gemma4: post_norms, the output rows taken at the output, the
 * per-layer input added last. */
static const step post_norms_per_layer[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_CUR, 0, 0, LW_ATTN_POST_NORM, NO_W},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_NORM_OUT, R_CUR, R_CUR, 0, 0, LW_FFN_POST_NORM, NO_W},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_PER_LAYER, R_INP, R_INP, 0, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* bert: attention on the layer's input, then norms after each sum. */
static const step post_norm_sums[] = {
    {S_ATTN, R_CUR, R_INP, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_INP, R_NONE, 0, 0},
    {S_ADD, R_CUR, R_CUR, R_INP, 0, 0, 0},
    {S_NORM, R_FIN, R_CUR, 0, 0, LW_ATTN_OUT_NORM, LW_ATTN_OUT_NORM_B},
    {S_FFN, R_CUR, R_FIN, 0, 0, 0, 0},
    {S_ADD, R_CUR, R_CUR, R_FIN, 0, 0, 0},
    {S_NORM, R_INP, R_CUR, 0, 0, LW_LAYER_OUT_NORM, LW_LAYER_OUT_NORM_B},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* modern-bert: pre_norm, the attention's norm only in the layers that
 * have one. */
static const step pre_norm_where_any[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM_OR, R_CUR, R_INP, R_INP, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* talkie: pre_norm (norms without weights), the model's normed input
 * scaled and added to every layer's output. */
static const step pre_norm_skip[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_SKP, 0, 0},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_ADD, R_CUR, R_CUR, R_FIN, 0, 0, 0},
    {S_MUL_W, R_ATT, R_SKP, 0, 0, LW_OUT_SCALE, NO_W},
    {S_ADD, R_INP, R_CUR, R_ATT, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* grok: pre_norm, each block's output normed before its sum (the
 * layer's output norm, or else its post-ffn norm). */
static const step pre_post_norm[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_NORM, R_CUR, R_INP, 0, 0, LW_ATTN_NORM, NO_W},
    {S_ATTN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_NORM, R_CUR, R_CUR, 0, 0, LW_ATTN_OUT_NORM, NO_W},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_NORM, R_CUR, R_FIN, 0, 0, LW_FFN_NORM, NO_W},
    {S_FFN, R_CUR, R_CUR, 0, 0, 0, 0},
    {S_NORM_EITHER, R_CUR, R_CUR, 0, 0, LW_LAYER_OUT_NORM, LW_FFN_POST_NORM},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

/* exaone4, olmo2: the norms after the blocks only. */
static const step post_norms_only[] = {
    {S_COPY, R_RES, R_INP, 0, 0, 0, 0},
    {S_ATTN, R_CUR, R_INP, 0, 0, 0, 0},
    {S_LAST_ROWS, 0, R_CUR, R_RES, R_NONE, 0, 0},
    {S_NORM, R_CUR, R_CUR, 0, 0, LW_ATTN_POST_NORM, NO_W},
    {S_ADD, R_FIN, R_CUR, R_RES, 0, 0, 0},
    {S_FFN, R_CUR, R_FIN, 0, 0, 0, 0},
    {S_NORM_OUT, R_CUR, R_CUR, 0, 0, LW_FFN_POST_NORM, NO_W},
    {S_ADD, R_INP, R_CUR, R_FIN, 0, 0, 0},
    {S_END, 0, 0, 0, 0, 0, 0},
};

#define ROW(name, program, ...) {.arch = name, .layer = program, __VA_ARGS__}
#define RMS .norm = NORM_RMS
#define LN .norm = NORM_LAYER

static const arch_graph arches[] = {
    ROW("afmoe", sandwich_unnamed, RMS, .input = IN_SCALED, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS,
        .rope = ROPE_NOT_EVERY_4, .gating = GATE_KEY_SIGMOID, .norm_w = BY_KEY, .w_scale = YES),
    ROW("apertus", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .factors = true, .ffn = FFN_ACT),
    ROW("arcee", pre_norm, RMS, .ffn = FFN_RELU_SQR),
    ROW("arctic", arctic_layer, RMS, .norm_w = YES),
    ROW("arwkv7", NULL, RMS, .rwkv = RWKV7_A),
    ROW("baichuan", pre_norm, RMS, .rope = ROPE_IF_32),
    ROW("bailingmoe", pre_norm, RMS, .norm_w = BY_KEY, .w_scale = YES),
    ROW("bailingmoe2", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .gating = GATE_KEY,
        .norm_w = BY_KEY, .w_scale = YES),
    ROW("bailingmoe3", pre_norm, RMS, .mla = true, .rows = ROWS_AFTER_NORM, .gating = GATE_KEY, .norm_w = BY_KEY,
        .w_scale = YES, .kda = KDA_BAILING, .swiglu_clamp = true),
    ROW("bert", post_norm_sums, LN, .input = IN_BERT, .rope = ROPE_NONE, .ffn = FFN_ACT, .output = OUT_LAST_LAYER,
        .unclamped = true),
    ROW("bitnet", pre_norm, RMS, .output = OUT_BY_EMBD),
    ROW("bloom", pre_norm, LN, .input = IN_NORMED, .rope = ROPE_NONE, .ffn = FFN_ACT),
    ROW("chameleon", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_LAYER, .img_logits = true),
    ROW("chatglm", pre_norm, RMS, .ffn = FFN_FUSED_GLU),
    ROW("codeshell", pre_norm, LN, .ffn = FFN_ACT),
    ROW("cogvlm", pre_norm_all_rows, RMS),
    ROW("cohere2", parallel_ffn_inp, LN, .rope = ROPE_SWA_ONLY, .output = OUT_SCALE),
    ROW("cohere2moe", parallel_ffn_inp, RMS, .output = OUT_SCALE, .rows = ROWS_AFTER_NORM,
        .gating = GATE_KEY, .norm_w = BY_KEY, .w_scale = YES, .moe_scaled = true),
    ROW("command-r", parallel_ffn_inp, LN, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_LAYER, .output = OUT_SCALE),
    ROW("dbrx", pre_norm_out_named, LN, .norm_w = YES),
    ROW("deci", pre_norm, RMS, .factors = true),
    ROW("deepseek", pre_norm, RMS, .w_scale = YES),
    ROW("deepseek2", pre_norm, RMS, .mla = true, .gating = GATE_KEY, .norm_w = BY_KEY, .w_scale = YES),
    ROW("deepseek2-ocr", pre_norm, RMS, .gating = GATE_KEY, .norm_w = BY_KEY, .w_scale = YES),
    ROW("dots1", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .gating = GATE_KEY, .norm_w = BY_KEY,
        .w_scale = YES),
    ROW("dream", pre_norm, RMS),
    ROW("ernie4_5", pre_norm, RMS),
    ROW("ernie4_5-moe", pre_norm, RMS, .norm_w = YES),
    ROW("eurobert", pre_norm, RMS, .output = OUT_EMBEDDINGS, .unclamped = true),
    ROW("exaone", pre_norm, RMS),
    ROW("exaone-moe", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .rope = ROPE_SWA_ONLY,
        .factors = true, .gating = GATE_KEY, .norm_w = BY_KEY, .w_scale = YES),
    ROW("exaone4", post_norms_only, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .rope = ROPE_SWA_ONLY,
        .factors = true),
    ROW("falcon", parallel_ffn_attn, LN, .ffn = FFN_ACT),
    ROW("falcon-h1", attn_beside_ssm, RMS),
    ROW("gemma", pre_norm, RMS, .input = IN_SCALED, .q_scale = true),
    ROW("gemma-embedding", post_norms, RMS, .input = IN_SCALED, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS,
        .q_scale = true, .output = OUT_EMBEDDINGS),
    ROW("gemma2", post_norms, RMS, .input = IN_SCALED, .q_scale = true, .output = OUT_SOFTCAP),
    ROW("gemma3", post_norms, RMS, .input = IN_SCALED, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS,
        .q_scale = true, .output = OUT_SOFTCAP_KEY),
    ROW("gemma3n", NULL, RMS, .input = IN_SCALED, .unclamped = true, .gemma3n = true),
    ROW("gemma4", post_norms_per_layer, RMS, .input = IN_SCALED, .qk_type = NORM_RMS, .factors = true,
        .factors_not_swa = true, .output = OUT_SOFTCAP_UNLESS_OFF, .rows = ROWS_AFTER_NORM, .gemma4 = true,
        .unclamped = true),
    ROW("glm4", post_norms_layer_named, RMS, .ffn = FFN_FUSED_GLU, .mrope = BY_KEY),
    ROW("glm4moe", pre_norm_post_named, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS,
        .gating = GATE_KEY_SIGMOID, .norm_w = BY_KEY, .w_scale = YES, .mrope = BY_KEY),
    ROW("gpt-oss", pre_norm_post_named, RMS, .gating = GATE_SOFTMAX_WEIGHT),
    ROW("gpt2", pre_norm, LN, .input = IN_POSITIONS, .rope = ROPE_NONE, .ffn = FFN_ACT),
    ROW("gptneox", parallel_own_norm, LN, .sequential = pre_norm, .ffn = FFN_ACT),
    ROW("granite", pre_norm_scaled, RMS, .input = IN_SCALED_BY_KEY, .factors = true, .output = OUT_SCALE_ALWAYS,
        .res_scale = BY_KEY),
    ROW("granite_swa", pre_norm_scaled, RMS, .input = IN_SCALED_BY_KEY, .factors = true, .rope = ROPE_BY_PATTERN,
        .output = OUT_SCALE_ALWAYS, .res_scale = BY_KEY, .norm_w = YES),
    ROW("granitehybrid", pre_norm_scaled, RMS, .input = IN_SCALED_BY_KEY, .factors = true, .output = OUT_SCALE_ALWAYS,
        .res_scale = BY_KEY, .norm_w = YES),
    ROW("granitemoe", pre_norm_scaled, RMS, .input = IN_SCALED_BY_KEY, .factors = true, .output = OUT_SCALE_ALWAYS,
        .res_scale = BY_KEY, .norm_w = YES, .w_scale = YES),
    ROW("grok", pre_post_norm, RMS, .input = IN_SCALED, .ffn = FFN_GATED, .output = OUT_SCALE_CAP_BY_KEY, .norm_w = YES,
        .grok = true),
    ROW("grovemoe", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .norm_w = YES, .grovemoe = true),
    ROW("hrm_text", pre_norm, RMS, .input = IN_SCALED_BY_KEY, .output = OUT_UNNORMED, .rows = ROWS_BEFORE_NORM,
        .hrm = true),
    ROW("hunyuan-dense", pre_norm, RMS, .qk_norm = QK_AFTER_ROPE, .qk_type = NORM_RMS),
    ROW("hunyuan-moe", pre_norm, RMS, .qk_norm = QK_AFTER_ROPE, .qk_type = NORM_RMS, .norm_w = YES),
    ROW("hunyuan_vl", pre_norm, RMS, .qk_norm = QK_AFTER_ROPE, .qk_type = NORM_RMS, .mrope = BY_KEY),
    ROW("hy_v3", pre_norm_all_rows, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .gating = GATE_KEY_SIGMOID,
        .norm_w = BY_KEY, .w_scale = YES, .rows = ROWS_AFTER_NORM),
    ROW("internlm2", pre_norm, RMS),
    ROW("jais", pre_norm, LN, .rope = ROPE_NONE),
    ROW("jais2", pre_norm, LN, .ffn = FFN_RELU_SQR),
    ROW("jamba", pre_norm_residual_before, RMS, .rope = ROPE_NONE, .w_scale = YES),
    ROW("jina-bert-v2", post_norm_sums, LN, .input = IN_BERT, .rope = ROPE_NONE, .ffn = FFN_ACT,
        .output = OUT_LAST_LAYER, .unclamped = true),
    ROW("jina-bert-v3", post_norm_sums, LN, .input = IN_BERT, .ffn = FFN_ACT, .output = OUT_LAST_LAYER,
        .unclamped = true),
    ROW("kimi-k3", NULL, RMS, .mla = true, .rows = ROWS_BEFORE_NORM, .gating = GATE_KEY, .norm_w = BY_KEY,
        .w_scale = YES, .kda = KDA_K3),
    ROW("kimi-linear", pre_norm, RMS, .mla = true, .gating = GATE_KEY_SIGMOID, .norm_w = BY_KEY, .w_scale = YES,
        .kda = KDA_KIMI),
    ROW("laguna", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .gating = GATE_KEY_SIGMOID,
        .norm_w = BY_KEY, .w_scale = YES),
    ROW("lfm2", pre_norm_residual_before, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .output = OUT_EMBD_NORM),
    ROW("lfm2moe", pre_norm_residual_before, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS,
        .output = OUT_EMBD_NORM, .gating = GATE_KEY, .norm_w = YES),
    ROW("llada", pre_norm, RMS),
    ROW("llada-moe", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS),
    ROW("llama", pre_norm, RMS, .factors = true),
    ROW("llama-embed", pre_norm, RMS, .factors = true, .output = OUT_EMBEDDINGS, .cacheless = true),
    ROW("llama4", pre_norm, RMS, .factors = true, .rope = ROPE_NOT_FULL, .gating = GATE_SIGMOID, .llama4 = true),
    ROW("maincoder", pre_norm, RMS, .qk_norm = QK_AFTER_ROPE, .qk_type = NORM_RMS),
    ROW("mamba", one_mixer_rows, RMS),
    ROW("mamba2", one_mixer_rows, RMS),
    ROW("maple", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .rope = ROPE_SWA_ONLY, .norm_w = YES),
    ROW("mellum", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .norm_w = YES),
    ROW("mimo2", pre_norm, RMS, .gating = GATE_SIGMOID, .norm_w = YES),
    ROW("minicpm", pre_norm_scaled, RMS, .input = IN_SCALED, .factors = true, .output = OUT_SCALE_ALWAYS,
        .res_scale = YES),
    ROW("minicpm3", pre_norm_scaled, RMS, .input = IN_SCALED, .output = OUT_SCALED_NORM, .res_scale = YES,
        .latent_kv = true),
    ROW("minimax-01", normed_residuals, RMS, .res_scale = YES, .norm_w = YES, .w_scale = YES, .lightning = true),
    ROW("minimax-m2", pre_norm, RMS, .qk_norm = QK_WHOLE, .qk_type = NORM_RMS, .gating = GATE_KEY, .norm_w = YES),
    ROW("mistral3", pre_norm, RMS, .factors = true),
    ROW("mistral4", pre_norm, RMS, .mla = true, .gating = GATE_KEY, .norm_w = BY_KEY, .w_scale = YES,
        .down_f32 = true),
    ROW("modern-bert", pre_norm_where_any, LN, .input = IN_NORMED, .ffn = FFN_FUSED_GLU, .output = OUT_EMBEDDINGS,
        .unclamped = true),
    ROW("mpt", pre_norm, LN, .input = IN_POSITIONS_IF_ANY, .rope = ROPE_NONE, .ffn = FFN_ACT),
    ROW("muse-glimmer", sandwich_unnamed, RMS, .input = IN_RMS_NORMED, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS,
        .rope = ROPE_SWA_ONLY, .output = OUT_SCALE_SOFTCAP),
    ROW("nemotron", pre_norm, LN, .ffn = FFN_RELU_SQR),
    ROW("nemotron_h", one_mixer, RMS, .rope = ROPE_NONE, .ffn = FFN_RELU_SQR, .rows = ROWS_AFTER_NORM),
    ROW("nemotron_h_moe", one_mixer, RMS, .rope = ROPE_NONE, .ffn = FFN_RELU_SQR, .rows = ROWS_AFTER_NORM,
        .gating = GATE_SIGMOID, .norm_w = BY_KEY, .w_scale = YES),
    ROW("neo-bert", pre_norm, RMS, .ffn = FFN_FUSED_GLU, .output = OUT_EMBEDDINGS, .unclamped = true),
    ROW("nomic-bert", post_norm_sums, LN, .input = IN_BERT, .output = OUT_LAST_LAYER, .unclamped = true),
    ROW("nomic-bert-moe", post_norm_sums, LN, .input = IN_BERT, .ffn = FFN_ACT, .output = OUT_LAST_LAYER,
        .unclamped = true),
    ROW("olmo", pre_norm, LN),
    ROW("olmo2", post_norms_only, RMS, .qk_norm = QK_WHOLE, .qk_type = NORM_RMS),
    ROW("olmoe", pre_norm, RMS, .qk_norm = QK_WHOLE, .qk_type = NORM_RMS),
    ROW("openelm", pre_norm_residual_first_attn, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS,
        .qkv_heads_first = true),
    ROW("orion", pre_norm, LN),
    ROW("paddleocr", pre_norm, RMS, .mrope = YES),
    ROW("pangu-embedded", pre_norm, RMS),
    ROW("phi2", parallel_attn_ffn, LN, .q_scale = true, .ffn = FFN_ACT, .output = OUT_BIAS),
    ROW("phi3", pre_norm_residual_first, RMS, .q_scale = true, .ffn = FFN_FUSED_GLU),
    ROW("phimoe", pre_norm_residual_first, RMS, .q_scale = true, .output = OUT_BIAS, .norm_w = YES),
    ROW("plamo", parallel_ffn_attn, RMS),
    ROW("plamo2", post_norms_layer_named, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .ffn = FFN_FUSED_GLU,
        .plamo2 = true),
    ROW("plamo3", post_norms_layer_named, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .ffn = FFN_FUSED_GLU),
    ROW("pockettts", pre_norm, LN, .ffn = FFN_ACT),
    ROW("qwen", pre_norm, RMS),
    ROW("qwen2", pre_norm, RMS, .output = OUT_BIAS),
    ROW("qwen2moe", pre_norm, RMS),
    ROW("qwen2vl", pre_norm, RMS, .mrope = YES),
    ROW("qwen3", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS),
    ROW("qwen35", pre_norm_post_named, RMS, .mrope = YES, .rows = ROWS_AFTER_NORM, .qwen35 = DELTA_QWEN35),
    ROW("qwen35moe", pre_norm_post_named, RMS, .mrope = YES, .rows = ROWS_AFTER_NORM, .norm_w = YES,
        .qwen35 = DELTA_QWEN35),
    ROW("qwen3moe", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .norm_w = YES),
    ROW("qwen3next", pre_norm_post_named, RMS, .rows = ROWS_AFTER_NORM, .norm_w = YES, .qwen35 = DELTA_QWEN3NEXT),
    ROW("qwen3tts", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .mrope = YES,
        .output = OUT_UNPADDED),
    ROW("qwen3vl", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .mrope = YES),
    ROW("qwen3vlmoe", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .mrope = YES, .norm_w = YES),
    ROW("refact", pre_norm, RMS, .rope = ROPE_NONE, .bias_free = true),
    ROW("rnd1", pre_norm, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .norm_w = YES),
    ROW("rwkv6", NULL, LN, .input = IN_NORMED_FIRST, .rwkv = RWKV6),
    ROW("rwkv6qwen2", NULL, RMS, .rwkv = RWKV6_QWEN2),
    ROW("rwkv7", NULL, LN, .input = IN_NORMED_FIRST, .rwkv = RWKV7),
    ROW("seed_oss", pre_norm_post_named, RMS),
    ROW("smallthinker", routed_early, RMS, .rope = ROPE_SWA_ONLY, .gating = GATE_KEY, .norm_w = YES),
    ROW("smollm3", pre_norm, RMS, .rope = ROPE_NOT_EVERY_4),
    ROW("spark2_5", pre_norm, RMS),
    ROW("stablelm", stablelm_layer, LN, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_LAYER),
    ROW("starcoder", pre_norm, LN, .input = IN_POSITIONS, .rope = ROPE_NONE, .ffn = FFN_ACT),
    ROW("starcoder2", pre_norm, LN, .ffn = FFN_ACT),
    ROW("step35", pre_norm_all_rows, RMS, .qk_norm = QK_BEFORE_ROPE, .qk_type = NORM_RMS, .factors = true,
        .factors_not_swa = true, .rows = ROWS_BEFORE_NORM, .gating = GATE_KEY_SIGMOID, .norm_w = BY_KEY,
        .w_scale = YES, .swiglu_clamp = true),
    ROW("t5", t5_decoder, RMS, .rope = ROPE_NONE, .t5 = true),
    ROW("t5encoder", pre_norm, RMS, .rope = ROPE_NONE, .output = OUT_EMBEDDINGS, .cacheless = true,
        .t5 = true),
    ROW("talkie", pre_norm_skip, RMS, .input = IN_RMS_NORMED, .qk_norm = QK_AFTER_ROPE, .qk_type = NORM_RMS,
        .output = OUT_SCALE_ALWAYS, .k_bare_norm = true),
    ROW("wavtokenizer-dec", NULL, LN, .wavtokenizer = true),
    ROW("xverse", pre_norm, RMS),
};

const arch_graph *ggfs_llm_arch(ggp_str arch)
{
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++) {
        if (arch.len == strlen(arches[i].arch) && memcmp(arch.ptr, arches[i].arch, arch.len) == 0)
            return &arches[i];
    }
    return NULL;
}

/* ---- the layer's steps ---- */

/* ROPE_NOT_FULL: whether layer il takes RoPE (n_no_rope_layer_step: 4
 * with sliding layers, else all of them). */
static bool roped(const builder *b, uint32_t il)
{
    const uint32_t step = b->m->rules->swa.layers > 0 ? 4 : b->m->n_trunk;
    return step > 0 && (il + 1) % step != 0;
}

static uint32_t rope(builder *b, uint32_t il, uint32_t x)
{
    const arch_graph *r = b->row;
    // (ROPE_SWA_ONLY: the sliding layers only, where the model has any)
    const bool unroped_full = b->m->rules->swa.layers > 0 && !b->m->rules->layer[il].sliding;
    if (r->rope == ROPE_NONE || (r->rope == ROPE_SWA_ONLY && unroped_full) ||
        (r->rope == ROPE_NOT_EVERY_4 && (il + 1) % 4 == 0) || (r->rope == ROPE_IF_32 && b->m->n_layer != 32) ||
        (r->rope == ROPE_BY_PATTERN && b->m->unroped[il]) || (r->rope == ROPE_NOT_FULL && !roped(b, il)))
        return x;
    const bool factors = r->factors && !(r->factors_not_swa && b->m->rules->layer[il].sliding);
    return ggfs_rope(b->g, x, b->inp_pos, factors ? ggfs_llm_rope_factors(b, il) : GGFS_NO_TENSOR);
}

/* A bias of the layer, unless the row takes none. */
static uint32_t bias(builder *b, uint32_t il, ggfs_lw kind)
{
    return b->row->bias_free ? GGFS_NO_TENSOR : ggfs_llm_wt(b, il, kind);
}

/* A per-head norm of Q or K, where the model has its weight. */
static uint32_t qk_norm(builder *b, uint32_t il, uint32_t x, ggfs_lw w)
{
    if (!ggfs_llm_has(b, il, w))
        return x;
    // (chameleon's have biases)
    const uint32_t bias = b->row->img_logits ? ggfs_llm_wt(b, il, w == LW_Q_NORM ? LW_Q_NORM_B : LW_K_NORM_B)
                                             : GGFS_NO_TENSOR;
    return ggfs_llm_norm(b, x, ggfs_llm_wt(b, il, w), bias, b->row->qk_type, (int)il);
}

/* The attention's output gated by an activation (sigmoid, softplus) of
 * the layer's normed input x through attn_gate: per head where the gate
 * has a row per head, else per element. */
static uint32_t gated(builder *b, uint32_t il, uint32_t attn, uint32_t x)
{
    ggfs_cgraph *g = b->g;
    // (laguna's softplus fuses with the MUL as a sigmoid does)
    const uint32_t gate = ggfs_unary(g, UN_SIGMOID, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_ATTN_GATE), x));
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    if (attn == GGFS_NO_TENSOR || gate == GGFS_NO_TENSOR || g->t[gate].ne[0] != (int64_t)l->n_head)
        return ggfs_binary_op(g, GOP_MUL, attn, gate);
    const int64_t t = g->t[attn].ne[1], head = g->t[attn].ne[0] / (l->n_head ? l->n_head : 1);
    const uint32_t heads = ggfs_binary_op(g, GOP_MUL, ggfs_reshape(g, attn, head, l->n_head, t, 1),
                                          ggfs_reshape(g, gate, 1, l->n_head, t, 1));
    return ggfs_reshape(g, heads, head * l->n_head, t, 1, 1);
}

/* gemma4's: Q and K normed and rotated, V (K's where the layer has no V)
 * normed without a weight. A layer reading another's cache (its KV
 * shared) is not modelled: the graph fails. */
static uint32_t gemma4_attention(builder *b, uint32_t il, uint32_t cur)
{
    if (b->m->rules->layer[il].cache == GGFS_LAYER_NO_KV) {
        b->g->failed = true;
        return GGFS_NO_TENSOR;
    }
    qkv x = ggfs_llm_heads(b, il, ggfs_llm_qkv(b, il, cur, false));
    x.q = rope(b, il, qk_norm(b, il, x.q, LW_Q_NORM));
    x.k = rope(b, il, qk_norm(b, il, x.k, LW_K_NORM));
    x.v = ggfs_unary_op(b->g, GOP_RMS_NORM, x.v);
    return ggfs_llm_attn(b, il, x, ggfs_llm_wt(b, il, LW_WO), GGFS_NO_TENSOR);
}

/* qwen35's attention: Q's projection twice as wide, each head's Q then
 * its gate; Q and K normed and rotated; the heads' output times the
 * gate's sigmoid, then projected. */
static uint32_t q_gated_attention(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    const int64_t hd = l->head_k, n = l->n_head, t = b->n_tokens;
    const uint32_t full = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQ), cur);
    qkv x = {GGFS_NO_TENSOR, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WK), cur),
             ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WV), cur)};
    if (full == GGFS_NO_TENSOR || g->t[full].ne[0] != 2 * hd * n) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const int64_t ne[4] = {hd, n, t, 1};
    const uint64_t nb[4] = {4, ggfs_row_size(GT_F32, 2 * hd), g->t[full].nb[1], g->t[full].nb[1] * (uint64_t)t};
    // (qwen3next's views are of the projection cut into heads)
    const uint32_t heads = b->row->qwen35 == DELTA_QWEN3NEXT ? ggfs_reshape(g, full, 2 * hd, n, t, 1) : full;
    x.q = ggfs_view_nd(g, heads, ne, nb, 0);
    const uint32_t gate = ggfs_cont_2d(g, ggfs_view_nd(g, heads, ne, nb, ggfs_row_size(GT_F32, hd)), hd * n, t);
    x.k = ggfs_reshape(g, x.k, hd, l->n_head_kv, t, 1);
    x.v = ggfs_reshape(g, x.v, l->head_v, l->n_head_kv, t, 1);
    x.q = rope(b, il, qk_norm(b, il, x.q, LW_Q_NORM));
    x.k = rope(b, il, qk_norm(b, il, x.k, LW_K_NORM));
    uint32_t out = ggfs_llm_attn(b, il, x, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
    out = ggfs_binary_op(g, GOP_MUL, out, ggfs_unary(g, UN_SIGMOID, gate));
    return ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WO), out);
}

/* T5's position bias: each head's bias for each pair of a cell and a
 * token's bucket (the layer's table, or layer 0's), as [cells, tokens,
 * heads]; the encoder's cells are the ubatch's tokens. */
static uint32_t position_bias(builder *b, uint32_t il)
{
    ggfs_cgraph *g = b->g;
    const int64_t cells = g->t[b->pos_bucket].ne[0], t = b->n_tokens;
    const uint32_t table = ggfs_llm_wt(b, ggfs_llm_has(b, il, LW_ATTN_REL_B) ? il : 0, LW_ATTN_REL_B);
    const uint32_t bias = ggfs_get_rows(g, table, ggfs_reshape(g, b->pos_bucket, cells * t, 1, 1, 1));
    if (bias == GGFS_NO_TENSOR) {
        g->failed = true;
        return bias;
    }
    const uint32_t heads = ggfs_reshape(g, bias, g->t[bias].ne[0], cells, t, 1);
    return ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, heads, 2, 0, 1, 3));
}

static uint32_t recurrent(builder *b, uint32_t il, uint32_t cur);
static uint32_t self_attention(builder *b, uint32_t il, uint32_t cur);

static uint32_t attention(builder *b, uint32_t il, uint32_t cur)
{
    const arch_graph *r = b->row;
    if (r->kda && ggfs_llm_has(b, il, LW_SSM_CONV1D_Q))
        return ggfs_llm_kda(b, il, cur);
    if (r->mla)
        return ggfs_llm_attn_mla(b, il, cur);
    if (r->latent_kv)
        return ggfs_llm_attn(b, il, ggfs_llm_qkv_latent(b, il, cur), ggfs_llm_wt(b, il, LW_WO), GGFS_NO_TENSOR);
    if (r->gemma4)
        return gemma4_attention(b, il, cur);
    if (r->qwen35)
        return ggfs_llm_has(b, il, LW_SSM_BETA) || ggfs_llm_has(b, il, LW_SSM_BA) ? ggfs_llm_gated_delta_net(b, il, cur)
                                                                                : q_gated_attention(b, il, cur);
    if (r->t5) {
        b->kq_bias = position_bias(b, il);
        return ggfs_llm_attn(b, il, ggfs_llm_qkv(b, il, cur, true), ggfs_llm_wt(b, il, LW_WO), GGFS_NO_TENSOR);
    }
    // a recurrent layer's mixer in its place (hybrid models)
    const uint32_t mixer = recurrent(b, il, cur);
    return mixer != GGFS_NO_TENSOR || b->g->failed ? mixer : self_attention(b, il, cur);
}

/* A layer's recurrent mixer over cur, where it has one: else none. */
static uint32_t recurrent(builder *b, uint32_t il, uint32_t cur)
{
    if (ggfs_llm_has(b, il, LW_SSM_X))
        return b->plamo2 ? ggfs_llm_mamba_plamo2(b, il, cur) : ggfs_llm_mamba(b, il, cur);
    if (b->row->lightning && ggfs_llm_has(b, il, LW_ATTN_NORM_2))
        return ggfs_llm_lightning(b, il, cur);
    if (ggfs_llm_has(b, il, LW_SSM_IN))
        return ggfs_llm_mamba2(b, il, cur);
    if (ggfs_llm_has(b, il, LW_SHORTCONV_IN))
        return ggfs_llm_shortconv(b, il, cur);
    return GGFS_NO_TENSOR;
}

/* build_qkv, RoPE and the row's norms, build_attn. */
static uint32_t self_attention(builder *b, uint32_t il, uint32_t cur)
{
    const arch_graph *r = b->row;
    qkv x = ggfs_llm_qkv(b, il, cur, r->qk_norm != QK_WHOLE);
    if (r->qk_norm == QK_WHOLE) {
        x.q = qk_norm(b, il, x.q, LW_Q_NORM);
        x.k = qk_norm(b, il, x.k, LW_K_NORM);
        x = ggfs_llm_heads(b, il, x);
    }
    if (r->llama4) {
        if (roped(b, il)) {
            x.q = rope(b, il, x.q);
            x.k = rope(b, il, x.k);
            // (use_kq_norm: not in its model of 128 experts)
            if (b->m->n_expert != 128) {
                x.q = ggfs_unary_op(b->g, GOP_RMS_NORM, x.q);
                x.k = ggfs_unary_op(b->g, GOP_RMS_NORM, x.k);
            }
        } else {
            x.q = ggfs_binary_op(b->g, GOP_MUL, x.q, b->attn_scale);
        }
    } else if (r->qk_norm == QK_BEFORE_ROPE) {
        x.q = qk_norm(b, il, x.q, LW_Q_NORM);
        x.q = rope(b, il, x.q);
        x.k = qk_norm(b, il, x.k, LW_K_NORM);
        x.k = rope(b, il, x.k);
    } else {
        x.q = rope(b, il, x.q);
        x.k = rope(b, il, x.k);
        if (r->qk_norm == QK_AFTER_ROPE) {
            x.q = qk_norm(b, il, x.q, LW_Q_NORM);
            x.k = r->k_bare_norm && !ggfs_llm_has(b, il, LW_K_NORM) ? ggfs_unary_op(b->g, GOP_RMS_NORM, x.k)
                                                                     : qk_norm(b, il, x.k, LW_K_NORM);
        }
    }
    if (r->q_scale)
        x.q = ggfs_unary_op(b->g, GOP_SCALE, x.q);
    uint32_t out;
    if (ggfs_llm_has(b, il, LW_ATTN_SUB_NORM)) {
        // bitnet: the heads' output normed, then projected
        out = ggfs_llm_attn(b, il, x, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
        out = ggfs_llm_norm(b, out, ggfs_llm_wt(b, il, LW_ATTN_SUB_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        out = ggfs_llm_mm(b, il, LW_WO, LW_WO_S, out);
    } else if (ggfs_llm_has(b, il, LW_ATTN_GATE)) {
        out = ggfs_llm_attn(b, il, x, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
        out = ggfs_llm_mm(b, il, LW_WO, LW_WO_S, gated(b, il, out, cur));
    } else {
        out = ggfs_llm_attn(b, il, x, ggfs_llm_wt(b, il, LW_WO), bias(b, il, LW_BO));
    }
    return b->m->value_scale ? ggfs_unary_op(b->g, GOP_SCALE, out) : out;
}

/* build_moe_ffn: the router's probabilities, the top experts by them,
 * their weights; each token through its experts (gate, up, their product,
 * down) weighted; the experts' outputs added up. */
static uint32_t experts_by(builder *b, uint32_t il, uint32_t cur, uint32_t logits);

/* The router reads the block's input; the experts read it projected to
 * their latent width where the model has that projection, and their sum
 * is projected back. */
static uint32_t experts(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const uint32_t in =
        ggfs_llm_has(b, il, LW_FFN_LATENT_DOWN) ? ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_LATENT_DOWN), cur) : cur;
    const uint32_t logits = ggfs_llm_bias(b, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_GATE_INP), cur),
                                          ggfs_llm_wt(b, il, LW_FFN_GATE_INP_B));
    uint32_t out = experts_by(b, il, in, logits);
    if (ggfs_llm_has(b, il, LW_FFN_ROUTED_NORM))
        out = ggfs_llm_norm(b, out, ggfs_llm_wt(b, il, LW_FFN_ROUTED_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    return ggfs_llm_has(b, il, LW_FFN_LATENT_UP) ? ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_LATENT_UP), out) : out;
}

/* The activation of a block without a gate: relu then squared where the
 * row's feed-forward block is, else the one unary op. */
static uint32_t activation(builder *b, uint32_t x)
{
    // (the others' activation, gelu or silu, feeds a product, not a MUL)
    const uint32_t act = ggfs_unary(b->g, b->row->ffn == FFN_RELU_SQR ? UN_RELU : UN_OTHER, x);
    return b->row->ffn == FFN_RELU_SQR ? ggfs_unary_op(b->g, GOP_SQR, act) : act;
}

/* The gated product of gate and up; where the row clamps them and the
 * layer's limit for these blocks (which: CLAMP_EXPERTS or CLAMP_OTHERS)
 * is given, silu(gate) and up each clamped (in place), then multiplied. */
static uint32_t swiglu(builder *b, uint32_t il, uint8_t which, uint32_t gate, uint32_t up)
{
    ggfs_cgraph *g = b->g;
    if (b->situ) {
        // (kimi-k3's situ: the gate capped by tanh times its sigmoid, times up capped where linear_beta is)
        const uint32_t capped = ggfs_unary_op(g, GOP_SCALE, ggfs_unary(g, UN_TANH, ggfs_unary_op(g, GOP_SCALE, gate)));
        const uint32_t act = ggfs_binary_op(g, GOP_MUL, capped, ggfs_unary(g, UN_SIGMOID, gate));
        if (b->m->situ_linear)
            up = ggfs_unary_op(g, GOP_SCALE, ggfs_unary(g, UN_TANH, ggfs_unary_op(g, GOP_SCALE, up)));
        return ggfs_binary_op(g, GOP_MUL, act, up);
    }
    if (!b->row->swiglu_clamp || !(b->m->clamped[il] & which))
        return ggfs_binary_op(g, GOP_GLU, gate, up);
    return ggfs_binary_op(g, GOP_MUL, ggfs_clamp_view(g, ggfs_unary(g, UN_SILU, gate)), ggfs_clamp_view(g, up));
}

/* The chosen experts' weights w times x, plus their bias wb where the
 * model has one. */
static uint32_t expert_mm(builder *b, uint32_t il, ggfs_lw w, ggfs_lw wb, uint32_t x, uint32_t selected)
{
    const uint32_t y = ggfs_mul_mat_id(b->g, ggfs_llm_wt(b, il, w), x, selected);
    return ggfs_llm_has(b, il, wb) ? ggfs_add_id(b->g, y, ggfs_llm_wt(b, il, wb), selected) : y;
}

/* The same, by the router's logits given. */
static uint32_t experts_by(builder *b, uint32_t il, uint32_t cur, uint32_t logits)
{
    const ggfs_llm_model *m = b->m;
    const arch_graph *r = b->row;
    ggfs_cgraph *g = b->g;
    if (cur == GGFS_NO_TENSOR || m->n_expert == 0 || m->n_expert_used == 0)
        return GGFS_NO_TENSOR;
    const int64_t d = g->t[cur].ne[0], t = g->t[cur].ne[1], e = m->n_expert;
    int64_t k = m->n_expert_used;
    // grovemoe's adjugate experts: as many as the routed ones here (fewer, chosen by divided indices, and fewer
    // used than the views take, are not modelled)
    const ggfs_lw up_w = b->adjugate ? LW_FFN_UP_CHEXPS : LW_FFN_UP_EXPS,
                  gate_w = b->adjugate ? LW_FFN_GATE_CHEXPS : LW_FFN_GATE_EXPS,
                  down_w = b->adjugate ? LW_FFN_DOWN_CHEXPS : LW_FFN_DOWN_EXPS;
    if (b->adjugate && ggfs_llm_layer_weight(m, il, up_w)->ne[2] != e) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const bool sigmoid = r->gating == GATE_SIGMOID || (r->gating == GATE_KEY && m->gating == 2) ||
                         (r->gating == GATE_KEY_SIGMOID && (m->gating == 2 || m->gating == 0));
    const uint32_t probs = r->gating == GATE_SOFTMAX_WEIGHT ? logits
                           : sigmoid ? ggfs_unary(g, UN_SIGMOID, logits)
                                     : ggfs_soft_max_ext(g, logits, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
    // (llama4: chosen by the logits; grovemoe: by their sigmoid)
    uint32_t choose = r->llama4 ? logits : r->grovemoe ? ggfs_unary(g, UN_SIGMOID, logits) : probs;
    if (ggfs_llm_has(b, il, LW_EXP_PROBS_B))
        choose = ggfs_binary_op(g, GOP_ADD, probs, ggfs_llm_wt(b, il, LW_EXP_PROBS_B));
    // ggml_argsort_top_k: the sorted indices, the first k of each row
    const uint32_t sorted = ggfs_argsort(g, choose);
    if (sorted == GGFS_NO_TENSOR)
        return sorted;
    const ggfs_gt *st = &g->t[sorted];
    const int64_t ne_sel[4] = {k, t, 1, 1};
    const uint64_t nb_sel[4] = {st->nb[0], st->nb[1], st->nb[2], st->nb[3]};
    const uint32_t selected = ggfs_view_nd(g, sorted, ne_sel, nb_sel, 0);
    uint32_t weights = ggfs_get_rows(g, ggfs_reshape(g, probs, 1, e, t, 1), selected);
    if (r->gating == GATE_SOFTMAX_WEIGHT) {
        const uint32_t w2 = ggfs_soft_max_ext(g, ggfs_reshape(g, weights, k, t, 1, 1), GGFS_NO_TENSOR, GGFS_NO_TENSOR);
        weights = ggfs_reshape(g, w2, 1, k, t, 1);
    }
    if (r->norm_w == YES || (r->norm_w == BY_KEY && m->norm_w)) {
        const uint32_t w2 = ggfs_reshape(g, weights, k, t, 1, 1);
        const uint32_t sum = ggfs_unary_op(g, GOP_CLAMP, ggfs_sum_rows(g, w2));
        weights = ggfs_reshape(g, ggfs_binary_op(g, GOP_DIV, w2, sum), 1, k, t, 1);
    }
    if (r->w_scale != NO && m->w_scale != 0 && m->w_scale != 1)
        weights = ggfs_unary_op(g, GOP_SCALE, weights);
    ggfs_expand(g, weights);
    uint32_t rows = ggfs_reshape(g, cur, d, 1, t, 1);
    // llama4: each token's copies weighted before the experts, not their outputs after
    if (r->llama4)
        rows = ggfs_binary_op(g, GOP_MUL, ggfs_repeat_4d(g, rows, d, k, t, 1), weights);
    uint32_t act;
    if (ggfs_llm_has(b, il, LW_FFN_GATE_UP_EXPS)) {
        // gate and up fused: their halves, as views
        const uint32_t gu = ggfs_mul_mat_id(g, ggfs_llm_wt(b, il, LW_FFN_GATE_UP_EXPS), rows, selected);
        if (gu == GGFS_NO_TENSOR)
            return gu;
        const ggfs_gt *x = &g->t[gu];
        const int64_t ne_half[4] = {x->ne[0] / 2, x->ne[1], x->ne[2], 1};
        const uint64_t nb_half[4] = {x->nb[0], x->nb[1], x->nb[2], x->nb[2] * (uint64_t)x->ne[2]};
        const uint32_t gate = ggfs_view_nd(g, gu, ne_half, nb_half, 0);
        const uint32_t up = ggfs_view_nd(g, gu, ne_half, nb_half, ggfs_row_size(GT_F32, ne_half[0]));
        act = ggfs_binary_op(g, GOP_GLU, gate, up);
    } else {
        const uint32_t up = expert_mm(b, il, up_w, LW_FFN_UP_EXPS_B, rows, selected);
        // (without gates: silu of up)
        act = ggfs_llm_has(b, il, gate_w)
                  ? swiglu(b, il, CLAMP_EXPERTS, expert_mm(b, il, gate_w, LW_FFN_GATE_EXPS_B, rows, selected), up)
                  : activation(b, up);
    }
    uint32_t out = expert_mm(b, il, down_w, LW_FFN_DOWN_EXPS_B, act, selected);
    // (mistral4: its input may exceed f16's range)
    if (r->down_f32 && out != GGFS_NO_TENSOR)
        g->t[g->t[out].op == GOP_ADD_ID ? g->t[out].src[0] : out].flags |= GFLAG_PREC_F32;
    if (!r->llama4)
        out = ggfs_binary_op(g, GOP_MUL, out, weights);
    ggfs_expand(g, out);
    if (out == GGFS_NO_TENSOR)
        return out;
    // each expert's share, then their sum
    const ggfs_gt *o = &g->t[out];
    const int64_t ne_view[4] = {d, t, 1, 1};
    const uint64_t nb_view[4] = {o->nb[0], o->nb[2], o->nb[2] * (uint64_t)t, o->nb[2] * (uint64_t)t};
    const uint64_t step = o->nb[1];
    uint32_t views[64] = {GGFS_NO_TENSOR};
    const int64_t n_views = k < 64 ? k : 64;
    for (int64_t i = 0; i < n_views; i++) {
        views[i] = ggfs_view_nd(g, out, ne_view, nb_view, (uint64_t)i * step);
        ggfs_expand(g, views[i]);
    }
    uint32_t sum = views[0];
    for (int64_t i = 1; i < n_views; i++) {
        sum = ggfs_binary_op(g, GOP_ADD, sum, views[i]);
        ggfs_expand(g, sum);
    }
    return k == 1 ? ggfs_unary_op(g, GOP_CONT, sum) : sum;
}

/* grovemoe's: the routed experts, then the adjugate experts over their
 * output, by the same logits; the second scaled and added. */
static uint32_t grove_experts(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const uint32_t logits = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_GATE_INP), cur);
    const uint32_t routed = experts_by(b, il, cur, logits);
    b->adjugate = true;
    const uint32_t adjugate = experts_by(b, il, routed, logits);
    b->adjugate = false;
    return ggfs_binary_op(g, GOP_ADD, routed, ggfs_unary_op(g, GOP_SCALE, adjugate));
}

/* The shared expert beside the routed ones: a feed-forward block (gated
 * where it has a gate), itself gated by sigmoid(ffn_gate_inp_shexp . x) where the model has that. */
static uint32_t shared_expert(builder *b, uint32_t il, uint32_t cur, uint32_t routed)
{
    ggfs_cgraph *g = b->g;
    // (kimi: build_ffn over absent weights, its activation alone)
    if (!ggfs_llm_has(b, il, LW_FFN_UP_SHEXP))
        return b->row->kda == KDA_KIMI ? ggfs_binary_op(g, GOP_ADD, routed, activation(b, cur)) : routed;
    uint32_t gate_in = GGFS_NO_TENSOR, gate = GGFS_NO_TENSOR;
    if (ggfs_llm_has(b, il, LW_FFN_GATE_INP_SHEXP)) {
        gate_in = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_GATE_INP_SHEXP), cur);
        // (qwen2moe's sigmoid as silu(x) / x; qwen35's a sigmoid)
        gate = b->row->qwen35 ? ggfs_unary(g, UN_SIGMOID, gate_in)
                              : ggfs_binary_op(g, GOP_DIV, ggfs_unary(g, UN_SILU, gate_in), gate_in);
    }
    const uint32_t up = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_UP_SHEXP), cur);
    // without a gate: the activation of up, or where the row's blocks are
    // gated, the gated product of up's halves (gate and up fused)
    uint32_t act;
    if (ggfs_llm_has(b, il, LW_FFN_GATE_SHEXP))
        act = swiglu(b, il, CLAMP_OTHERS, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_GATE_SHEXP), cur), up);
    else
        act = b->row->ffn == FFN_GATED ? ggfs_glu_halves(g, up) : activation(b, up);
    uint32_t shared = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_DOWN_SHEXP), act);
    if (gate != GGFS_NO_TENSOR)
        shared = ggfs_binary_op(g, GOP_MUL, shared, gate);
    return ggfs_binary_op(g, GOP_ADD, routed, shared);
}

static uint32_t dense(builder *b, uint32_t il, uint32_t cur);

static uint32_t ffn(builder *b, uint32_t il, uint32_t cur);

uint32_t ggfs_llm_ffn(builder *b, uint32_t il, uint32_t cur)
{
    return ffn(b, il, cur);
}

/* build_ffn: up, the gate or activation, down, each with its bias; in a
 * layer with a router, the experts instead. */
static uint32_t ffn(builder *b, uint32_t il, uint32_t cur)
{
    if (ggfs_llm_has(b, il, LW_FFN_GATE_INP)) {
        // (gemma4's layers with experts, a dense block beside them, are not modelled)
        if (b->row->gemma4) {
            b->g->failed = true;
            return GGFS_NO_TENSOR;
        }
        if (b->row->grovemoe)
            return grove_experts(b, il, cur);
        uint32_t out = shared_expert(b, il, cur, experts(b, il, cur));
        // grok: a dense block beside them where the layer has one, the sum scaled
        if (b->row->grok && ggfs_llm_has(b, il, LW_FFN_UP))
            out = ggfs_unary_op(b->g, GOP_SCALE, ggfs_binary_op(b->g, GOP_ADD, dense(b, il, cur), out));
        return b->row->moe_scaled ? ggfs_unary_op(b->g, GOP_SCALE, out) : out;
    }
    return dense(b, il, cur);
}

/* build_ffn's dense block. */
static uint32_t dense(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    // (a weight the layer lacks is skipped, as build_ffn does: a layer
    // without any is its activation alone)
    uint32_t up = ggfs_llm_has(b, il, LW_FFN_UP) ? ggfs_llm_bias(b, ggfs_llm_mm(b, il, LW_FFN_UP, LW_FFN_UP_S, cur),
                                                                 bias(b, il, LW_FFN_UP_B))
                                                 : cur;
    switch (b->row->ffn) {
    case FFN_GATED:
        if (!ggfs_llm_has(b, il, LW_FFN_GATE)) {
            cur = ggfs_unary(g, UN_OTHER, up);
            break;
        }
        cur = ggfs_llm_bias(b, ggfs_llm_mm(b, il, LW_FFN_GATE, LW_FFN_GATE_S, cur), bias(b, il, LW_FFN_GATE_B));
        cur = swiglu(b, il, CLAMP_OTHERS, cur, up);
        break;
    case FFN_RELU_SQR:
        cur = ggfs_unary_op(g, GOP_SQR, ggfs_unary(g, UN_RELU, up));
        break;
    case FFN_FUSED_GLU:
        cur = ggfs_glu_halves(g, up);
        break;
    default:
        cur = ggfs_unary(g, UN_OTHER, up); // (gelu, silu or relu: a product reads it)
        break;
    }
    // bitnet: normed before down
    if (ggfs_llm_has(b, il, LW_FFN_SUB_NORM))
        cur = ggfs_llm_norm(b, cur, ggfs_llm_wt(b, il, LW_FFN_SUB_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    if (!ggfs_llm_has(b, il, LW_FFN_DOWN))
        return cur;
    cur = ggfs_llm_mm(b, il, LW_FFN_DOWN, LW_FFN_DOWN_S, cur);
    return ggfs_llm_bias(b, cur, bias(b, il, LW_FFN_DOWN_B));
}

/* gemma4: the layer's slice of the per-layer inputs, gated by cur, projected and normed, added to cur; then
 * the layer's output scale. */
static uint32_t per_layer(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    if (ggfs_llm_has(b, il, LW_PL_INP_GATE)) {
        if (b->per_layer == GGFS_NO_TENSOR || cur == GGFS_NO_TENSOR) {
            g->failed = true;
            return GGFS_NO_TENSOR;
        }
        const ggfs_gt *p = &g->t[b->per_layer];
        const int64_t w = p->ne[0], t = p->ne[1];
        const int64_t ne[4] = {w, t, 1, 1};
        const uint64_t nb[4] = {4, p->nb[1], p->nb[1] * (uint64_t)t, p->nb[1] * (uint64_t)t};
        const uint32_t slice = ggfs_view_nd(g, b->per_layer, ne, nb, (uint64_t)il * p->nb[2]);
        uint32_t gate = ggfs_unary(g, UN_GELU, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_PL_INP_GATE), cur));
        gate = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_PL_PROJ), ggfs_binary_op(g, GOP_MUL, gate, slice));
        gate = ggfs_llm_norm(b, gate, ggfs_llm_wt(b, il, LW_PL_POST_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        cur = ggfs_binary_op(g, GOP_ADD, cur, gate);
    }
    if (ggfs_llm_has(b, il, LW_OUT_SCALE))
        cur = ggfs_binary_op(g, GOP_MUL, cur, ggfs_llm_wt(b, il, LW_OUT_SCALE));
    return cur;
}

uint32_t ggfs_llm_per_layer_inputs(builder *b, uint32_t embd)
{
    const ggfs_llm_model *m = b->m;
    ggfs_cgraph *g = b->g;
    if (m->per_layer_tok_embd.bytes == 0)
        return GGFS_NO_TENSOR;
    const int64_t n = m->n_layer, w = n ? m->per_layer_tok_embd.ne[0] / n : 0, t = b->n_tokens;
    const ggfs_home first = b->i_gpu_start == 0 ? HOME_GPU : HOME_HOST;
    const uint32_t tokens = ggfs_new(g, GT_I32, t, 1, 1, 1);
    ggfs_set_input(g, tokens);
    uint32_t pl = ggfs_get_rows(g, ggfs_llm_held(b, &m->per_layer_tok_embd, HOME_HOST), tokens);
    pl = ggfs_unary_op(g, GOP_SCALE, ggfs_reshape(g, pl, w, n, t, 1));
    ggfs_expand(g, pl);
    uint32_t proj = ggfs_unary_op(g, GOP_SCALE, ggfs_mul_mat(g, ggfs_llm_held(b, &m->per_layer_proj, first), embd));
    proj = ggfs_llm_norm(b, ggfs_reshape(g, proj, w, n, t, 1), ggfs_llm_held(b, &m->per_layer_proj_norm, first),
                         GGFS_NO_TENSOR, NORM_RMS, -1);
    pl = ggfs_unary_op(g, GOP_SCALE, ggfs_binary_op(g, GOP_ADD, proj, pl));
    pl = ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, pl, 0, 2, 1, 3));
    if (pl == GGFS_NO_TENSOR)
        g->failed = true;
    return pl;
}

static uint32_t layer_weight_or_none(builder *b, uint32_t il, uint8_t kind)
{
    return kind == NO_W ? GGFS_NO_TENSOR : ggfs_llm_wt(b, il, (ggfs_lw)kind);
}

static void run_layer(builder *b, uint32_t il, uint32_t reg[R_COUNT])
{
    ggfs_cgraph *g = b->g;
    const bool last = il + 1 == b->m->n_trunk;
    const step *program = b->row->sequential && !b->m->par_res ? b->row->sequential : b->row->layer;
    for (const step *s = program; s->op != S_END && !g->failed; s++) {
        switch (s->op) {
        case S_COPY:
            reg[s->dst] = reg[s->a];
            break;
        case S_NORM:
        case S_NORM_OUT:
            reg[s->dst] = ggfs_llm_norm(b, reg[s->a], layer_weight_or_none(b, il, s->w),
                                        layer_weight_or_none(b, il, s->wb), b->row->norm,
                                        s->op == S_NORM ? (int)il : -1);
            break;
        case S_ATTN:
            reg[s->dst] = attention(b, il, reg[s->a]);
            break;
        case S_SELF_ATTN:
            reg[s->dst] = self_attention(b, il, reg[s->a]);
            break;
        case S_CROSS:
            reg[s->dst] = ggfs_llm_cross_attn(b, il, reg[s->a]);
            if (reg[s->dst] == GGFS_NO_TENSOR)
                g->failed = true;
            break;
        case S_RECURRENT:
            reg[s->dst] = recurrent(b, il, reg[s->a]);
            if (reg[s->dst] == GGFS_NO_TENSOR)
                g->failed = true;
            break;
        case S_LAST_ROWS:
            for (int k = 0; last && b->row->rows == ROWS_LAST_LAYER && k < 3; k++) {
                // (a, b, c: in that order)
                const uint8_t r = k == 0 ? s->a : k == 1 ? s->b : s->c;
                if (r != R_NONE)
                    reg[r] = ggfs_get_rows(g, reg[r], b->out_ids);
            }
            break;
        case S_ADD:
            reg[s->dst] = ggfs_binary_op(g, GOP_ADD, reg[s->a], reg[s->b]);
            break;
        case S_FFN:
            reg[s->dst] = ffn(b, il, reg[s->a]);
            break;
        case S_DENSE:
            reg[s->dst] = dense(b, il, reg[s->a]);
            break;
        case S_EXPERTS:
            reg[s->dst] = experts(b, il, reg[s->a]);
            break;
        case S_ROUTE:
            reg[s->dst] = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_FFN_GATE_INP), reg[s->a]);
            break;
        case S_ROUTED:
            reg[s->dst] = experts_by(b, il, reg[s->a], reg[s->b]);
            break;
        case S_BLOCK:
            reg[s->dst] = ggfs_llm_has(b, il, LW_FFN_UP) || ggfs_llm_has(b, il, LW_FFN_GATE_INP)
                              ? ffn(b, il, reg[s->a])
                              : attention(b, il, reg[s->a]);
            break;
        case S_NORM_OR:
            reg[s->dst] = ggfs_llm_has(b, il, (ggfs_lw)s->w)
                              ? ggfs_llm_norm(b, reg[s->a], ggfs_llm_wt(b, il, (ggfs_lw)s->w),
                                              layer_weight_or_none(b, il, s->wb), b->row->norm, (int)il)
                              : reg[s->b];
            break;
        case S_PER_LAYER:
            reg[s->dst] = per_layer(b, il, reg[s->a]);
            break;
        case S_NORM_EITHER:
            reg[s->dst] = ggfs_llm_norm(b, reg[s->a], ggfs_llm_wt(b, il, ggfs_llm_has(b, il, s->w) ? s->w : s->wb),
                                        GGFS_NO_TENSOR, b->row->norm, (int)il);
            break;
        case S_MUL_W:
            reg[s->dst] = ggfs_binary_op(g, GOP_MUL, reg[s->a], ggfs_llm_wt(b, il, (ggfs_lw)s->w));
            break;
        case S_RES_SCALE:
            if (b->row->res_scale == YES || (b->row->res_scale == BY_KEY && b->m->residual_scale))
                reg[s->dst] = ggfs_unary_op(g, GOP_SCALE, reg[s->a]);
            else
                reg[s->dst] = reg[s->a];
            break;
        default:
            break;
        }
    }
}

/* hrm_text's passes over the high state (the embeddings) and the low one
 * (z_l_init, an input on the host): each pass's stack runs over their sum;
 * its output, normed without a weight, is the new low state, or the high
 * one in a cycle's last pass. Returns the last high state. */
static uint32_t hrm_passes(builder *b, uint32_t reg[R_COUNT])
{
    const ggfs_llm_model *m = b->m;
    ggfs_cgraph *g = b->g;
    if (m->hrm_stack == 0) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    uint32_t high = reg[R_INP], low = ggfs_llm_held(b, &m->hrm_z_l_init, HOME_HOST);
    for (uint32_t il = 0; il < m->n_trunk && !g->failed; il++) {
        if (il % m->hrm_stack == 0)
            reg[R_INP] = ggfs_binary_op(g, GOP_ADD, high, low);
        run_layer(b, il, reg);
        if ((il + 1) % m->hrm_stack != 0)
            continue;
        const uint32_t out = ggfs_unary_op(g, GOP_RMS_NORM, reg[R_INP]);
        if (il / m->hrm_stack % (m->hrm_l_cycles + 1) == m->hrm_l_cycles)
            high = out;
        else
            low = out;
    }
    return high;
}

static uint32_t input(builder *b, uint32_t ctx)
{
    const ggfs_llm_model *m = b->m;
    ggfs_cgraph *g = b->g;
    uint32_t cur = ggfs_llm_inp_embd(b);
    if (b->row->input == IN_SCALED || (b->row->input == IN_SCALED_BY_KEY && m->embedding_scale))
        cur = ggfs_unary_op(g, GOP_SCALE, cur);
    if (b->row->input == IN_RMS_NORMED)
        cur = ggfs_unary_op(g, GOP_RMS_NORM, cur);
    if (b->row->input == IN_BERT && m->token_types.bytes) {
        const int64_t ne[4] = {m->token_types.ne[0], 1, 1, 1};
        const uint64_t row = ggfs_row_size(GT_F32, ne[0]);
        const uint64_t nb[4] = {4, row, row, row};
        cur = ggfs_binary_op(g, GOP_ADD, cur, ggfs_view_nd(g, ggfs_llm_held(b, &m->token_types, HOME_HOST), ne, nb, 0));
    }
    // (token_embd_norm is layer 0's)
    const ggfs_home first = b->i_gpu_start == 0 ? HOME_GPU : HOME_HOST;
    if (b->row->input == IN_NORMED || b->row->input == IN_NORMED_FIRST)
        cur = ggfs_llm_norm(b, cur, ggfs_llm_held(b, &m->tok_embd_norm, first),
                            ggfs_llm_held(b, &m->tok_embd_norm_b, first), NORM_LAYER,
                            b->row->input == IN_NORMED_FIRST ? 0 : -1);
    ggfs_llm_inputs(b, ctx);
    if (b->row->lightning)
        ggfs_llm_lightning_inputs(b);
    if (b->row->gemma4)
        b->per_layer = ggfs_llm_per_layer_inputs(b, cur);
    if (b->row->t5) {
        b->pos_bucket = ggfs_new(g, GT_I32, b->base.n_kv, b->n_tokens, 1, 1);
        ggfs_set_input(g, b->pos_bucket);
        // a decoder's cross attention over the encoder's output, as long as the trained context
        if (m->decoder) {
            const int64_t n_enc = m->rules->n_ctx_train;
            b->cross_embd = ggfs_new(g, GT_F32, m->tok_embd.ne[0], n_enc, 1, 1);
            b->cross_mask = ggfs_new(g, b->flash_off_late ? GT_F32 : GT_F16, n_enc, b->n_tokens, 1, 1);
            ggfs_set_input(g, b->cross_embd);
            ggfs_set_input(g, b->cross_mask);
        }
    }
    if (b->row->llama4) {
        b->attn_scale = ggfs_new(g, GT_F32, 1, 1, b->n_tokens, 1);
        ggfs_set_input(g, b->attn_scale);
    }
    if (b->row->input == IN_POSITIONS || (b->row->input == IN_POSITIONS_IF_ANY && m->pos_embd.bytes > 0))
        cur = ggfs_binary_op(g, GOP_ADD, cur, ggfs_get_rows(g, ggfs_llm_held(b, &m->pos_embd, HOME_HOST), b->inp_pos));
    if (b->row->input == IN_BERT) {
        if (m->pos_embd.bytes)
            cur = ggfs_binary_op(g, GOP_ADD, ggfs_get_rows(g, ggfs_llm_held(b, &m->pos_embd, HOME_HOST), b->inp_pos),
                                 cur);
        cur = ggfs_llm_norm(b, cur, ggfs_llm_held(b, &m->tok_embd_norm, first),
                            ggfs_llm_held(b, &m->tok_embd_norm_b, first), NORM_LAYER, 0);
    }
    return cur;
}

static void output(builder *b, uint32_t cur)
{
    const ggfs_llm_model *m = b->m;
    ggfs_cgraph *g = b->g;
    const ggfs_home home = ggfs_llm_output_home(b);
    if (b->row->output == OUT_LAST_LAYER) {
        ggfs_set_output(g, cur);
        ggfs_expand(g, cur);
        return;
    }
    if (b->row->output == OUT_UNPADDED && m->output.bytes && m->output.ne[1] != m->tok_embd.ne[1]) {
        g->failed = true;
        return;
    }
    if (b->row->rows == ROWS_BEFORE_NORM)
        cur = ggfs_get_rows(g, cur, b->out_ids);
    const ggfs_llm_weight *norm = b->row->output == OUT_EMBD_NORM ? &m->tok_embd_norm : &m->output_norm;
    if (b->row->output != OUT_UNNORMED)
        cur = ggfs_llm_norm(b, cur, ggfs_llm_held(b, norm, home), ggfs_llm_held(b, &m->output_norm_b, home),
                            b->row->norm, -1);
    ggfs_set_output(g, cur);
    if (b->row->output == OUT_EMBEDDINGS) {
        ggfs_expand(g, cur);
        return;
    }
    if (b->row->rows == ROWS_AFTER_NORM)
        cur = ggfs_get_rows(g, cur, b->out_ids);
    // without output.weight, a copy of the token embeddings on the output's device
    if (b->row->output == OUT_SCALED_NORM)
        cur = ggfs_unary_op(g, GOP_SCALE, cur);
    if (b->row->output == OUT_BY_EMBD)
        cur = ggfs_mul_mat(g, ggfs_llm_held(b, &m->tok_embd, HOME_HOST), cur);
    else
        cur = ggfs_mul_mat(g, ggfs_llm_held(b, m->output.bytes ? &m->output : &m->tok_embd, home), cur);
    switch (b->row->output) {
    case OUT_BIAS:
        cur = ggfs_llm_bias(b, cur, ggfs_llm_held(b, &m->output_b, home));
        break;
    case OUT_SCALE:
    case OUT_SCALE_ALWAYS:
        if (m->logit_scale || b->row->output == OUT_SCALE_ALWAYS)
            cur = ggfs_unary_op(g, GOP_SCALE, cur);
        break;
    case OUT_SCALE_SOFTCAP:
    case OUT_SOFTCAP_UNLESS_OFF:
    case OUT_SCALE_CAP_BY_KEY:
        if (b->row->output != OUT_SOFTCAP_UNLESS_OFF)
            cur = ggfs_unary_op(g, GOP_SCALE, cur);
        if (!m->softcap_off && (b->row->output != OUT_SCALE_CAP_BY_KEY || m->softcap))
            cur = ggfs_unary_op(g, GOP_SCALE, ggfs_unary(g, UN_TANH, ggfs_unary_op(g, GOP_SCALE, cur)));
        break;
    case OUT_SOFTCAP:
    case OUT_SOFTCAP_KEY:
        if (b->row->output == OUT_SOFTCAP || m->softcap)
            cur = ggfs_unary_op(g, GOP_SCALE, ggfs_unary(g, UN_TANH, ggfs_unary_op(g, GOP_SCALE, cur)));
        break;
    default:
        break;
    }
    if (b->row->img_logits) {
        // a plain tensor of 8192 floats clamped (a view: ggml clamps in place), set into the logits
        const uint32_t img = ggfs_new(g, GT_F32, 8192, 1, 1, 1);
        cur = ggfs_set_1d(g, cur, ggfs_clamp_view(g, img));
    }
    ggfs_set_output(g, cur);
    ggfs_expand(g, cur);
}

void ggfs_llm_build(builder *b, uint32_t ctx)
{
    b->mrope = b->row->mrope == YES || (b->row->mrope == BY_KEY && b->m->rope_sections);
    b->qkv_heads_first = b->row->qkv_heads_first;
    b->cacheless = b->row->cacheless;
    b->v_from_k = b->row->gemma4;
    b->unclamped = b->row->unclamped;
    b->no_flash = b->kq_capped = b->row->grok;
    // llama.cpp's auto flash attention probes a token's graph: a decoder's cross attention, its products
    // over the whole encoder's output, runs on the GPU, away from a layer on the host, which turns flash
    // attention off (unless a quantized V cache forces it on)
    b->flash_off_late = b->m->decoder && b->cache_type == GT_F16 && b->i_gpu_start > 0;
    b->mla_unroped = b->row->kda == KDA_KIMI || b->row->kda == KDA_K3;
    b->kda_k3 = b->situ = b->row->kda == KDA_K3;
    b->kda_bounded = b->row->kda == KDA_BAILING;
    b->plamo2 = b->row->plamo2;
    b->gdn_repeat = b->row->qwen35 == DELTA_QWEN3NEXT;
    b->kq_bias = b->pos_bucket = b->cross_embd = b->cross_mask = GGFS_NO_TENSOR;
    b->per_layer = GGFS_NO_TENSOR;
    b->la.slopes = GGFS_NO_TENSOR;
    uint32_t reg[R_COUNT];
    for (int i = 0; i < R_COUNT; i++)
        reg[i] = GGFS_NO_TENSOR;
    // (chameleon's norms after the blocks are not modelled)
    if (b->row->img_logits && b->m->swin_norm)
        b->g->failed = true;
    reg[R_INP] = input(b, ctx);
    reg[R_SKP] = reg[R_INP];
    if (b->row->hrm) {
        output(b, hrm_passes(b, reg));
        return;
    }
    if (b->row->kda == KDA_K3) {
        output(b, ggfs_llm_kimi_k3_layers(b, reg[R_INP]));
        return;
    }
    if (b->row->gemma3n) {
        ggfs_llm_gemma3n(b, reg[R_INP]);
        return;
    }
    if (b->row->wavtokenizer) {
        ggfs_llm_wavtokenizer(b, reg[R_INP]);
        return;
    }
    if (b->row->rwkv) {
        output(b, ggfs_llm_rwkv_layers(b, reg[R_INP], (rwkv_kind)b->row->rwkv, (norm_type)b->row->norm));
        return;
    }
    for (uint32_t il = 0; il < b->m->n_trunk && !b->g->failed; il++)
        run_layer(b, il, reg);
    output(b, reg[R_INP]);
}
