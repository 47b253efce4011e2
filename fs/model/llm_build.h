/*
 * What llm_graph.c, llm_build.c and llm_arches.c share: the model as the
 * graph sees it, the builder's state for one graph, llm_graph_context's
 * helpers (llm_build.c) and the architectures' table (llm_arches.c).
 */
#ifndef GGFS_MODEL_LLM_BUILD_H
#define GGFS_MODEL_LLM_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"
#include "model/cgraph.h"
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
    LW_FFN_GATE_INP,   // the experts' router
    LW_FFN_GATE_EXPS,
    LW_FFN_UP_EXPS,
    LW_FFN_DOWN_EXPS,
    LW_EXP_PROBS_B,    // the router's bias for choosing
    LW_FFN_GATE_SHEXP, // the shared expert
    LW_FFN_UP_SHEXP,
    LW_FFN_DOWN_SHEXP,
    LW_FFN_GATE_INP_SHEXP, // the shared expert's gate
    LW_ATTN_OUT_NORM,  // dbrx's norm before the feed-forward block
    LW_FFN_NORM_EXPS,  // arctic's norm before its experts
    LW_FFN_GATE_UP_EXPS, // the experts' gate and up, fused
    LW_WQ_A,           // multi-head latent attention: Q through a low rank
    LW_Q_A_NORM,
    LW_WQ_B,
    LW_WKV_A_MQA,      // K and V's latent, with K's rotary part
    LW_KV_A_NORM,
    LW_WK_B,           // the latent's K per head (absorbed into Q)
    LW_WV_B,           // and its V per head
    LW_SSM_IN,         // Mamba-2's projection in
    LW_SSM_CONV1D,
    LW_SSM_CONV1D_B,
    LW_SSM_DT_B,
    LW_SSM_A,
    LW_SSM_D,
    LW_SSM_NORM,
    LW_SSM_OUT,
    LW_SHORTCONV_IN,   // lfm2's short convolution
    LW_SHORTCONV_CONV,
    LW_SHORTCONV_OUT,
    LW_FFN_LATENT_DOWN, // the experts' input projected to a latent width
    LW_FFN_LATENT_UP,   // and their output back
    LW_ATTN_SUB_NORM,   // bitnet's norms before the attention's and the block's down projections
    LW_FFN_SUB_NORM,
    LW_WQ_S,            // a projection's scale, multiplied after it (bitnet's)
    LW_WK_S,
    LW_WV_S,
    LW_WO_S,
    LW_FFN_GATE_S,
    LW_FFN_UP_S,
    LW_FFN_DOWN_S,
    LW_ATTN_GATE,       // the attention's output gate, from the layer's normed input
    LW_ATTN_SINKS,      // the attention's sinks
    LW_FFN_GATE_INP_B,  // the router's bias, and the experts' (gpt-oss)
    LW_FFN_GATE_EXPS_B,
    LW_FFN_UP_EXPS_B,
    LW_FFN_DOWN_EXPS_B,
    LW_WKV_B,           // a latent's K and V for every head, decompressed (minicpm3)
    LW_PL_INP_GATE,     // the per-layer input's gate, projection and norm (gemma4)
    LW_PL_PROJ,
    LW_PL_POST_NORM,
    LW_OUT_SCALE,       // the layer's output scale
    LW_ATTN_OUT_NORM_B, // bert's norms after the attention's sum and the layer's
    LW_LAYER_OUT_NORM,
    LW_LAYER_OUT_NORM_B,
    LW_ATTN_REL_B,      // T5's relative positions' bias per head (layer 0's where a layer has none)
    LW_SSM_ALPHA,       // a gated delta net's decay and update rate (qwen35)
    LW_SSM_BETA,
    LW_SSM_BA,          // the two, fused per group of heads (qwen3next)
    LW_Q_NORM_B,        // the per-head norms' biases (chameleon's)
    LW_K_NORM_B,
    LW_FFN_GATE_CHEXPS, // grovemoe's adjugate experts
    LW_FFN_UP_CHEXPS,
    LW_FFN_DOWN_CHEXPS,
    LW_SSM_CONV1D_Q,    // kimi's delta attention: a conv each for Q, K and V, low-rank gates
    LW_SSM_CONV1D_K,
    LW_SSM_CONV1D_V,
    LW_SSM_F_A,
    LW_SSM_F_B,
    LW_SSM_G_A,
    LW_SSM_G_B,
    LW_SSM_X,           // Mamba-1's projections of the conv's output to dt, B and C, and of dt up
    LW_SSM_DT,
    LW_SSM_DT_NORM,     // and the norms of dt, B and C (jamba's)
    LW_SSM_B_NORM,
    LW_SSM_C_NORM,
    LW_ATTN_NORM_2,     // RWKV's: the norm before the channel mix
    LW_ATTN_NORM_2_B,
    LW_TM_LERP_X,       // the time mix's interpolations
    LW_TM_LERP_W,
    LW_TM_LERP_K,
    LW_TM_LERP_V,
    LW_TM_LERP_R,
    LW_TM_LERP_G,
    LW_TM_LERP_FUSED,
    LW_TM_W0,           // its low-rank projections (decay, a, v, g)
    LW_TM_W1,
    LW_TM_W2,
    LW_TM_A0,
    LW_TM_A1,
    LW_TM_A2,
    LW_TM_V0,
    LW_TM_V1,
    LW_TM_V2,
    LW_TM_G1,
    LW_TM_G2,
    LW_TM_K_K,
    LW_TM_K_A,
    LW_TM_R_K,
    LW_TM_DECAY,
    LW_TM_DECAY_W1,
    LW_TM_DECAY_W2,
    LW_TM_FIRST,
    LW_TM_RECEPTANCE,
    LW_TM_RECEPTANCE_B,
    LW_TM_KEY,
    LW_TM_KEY_B,
    LW_TM_VALUE,
    LW_TM_VALUE_B,
    LW_TM_GATE,
    LW_TM_LN,
    LW_TM_LN_B,
    LW_TM_OUTPUT,
    LW_CM_LERP_K,       // the channel mix's
    LW_CM_LERP_R,
    LW_CM_RECEPTANCE,
    LW_CM_KEY,
    LW_CM_VALUE,
    LW_ALTUP_CORRECT_COEF,  // gemma3n's altup and laurel
    LW_ALTUP_CORRECT_SCALE,
    LW_ALTUP_PREDICT_COEF,
    LW_ALTUP_ROUTER,
    LW_ALTUP_ROUTER_NORM,
    LW_LAUREL_L,
    LW_LAUREL_R,
    LW_LAUREL_POST_NORM,
    LW_ATTN_RES_SCORE,      // kimi-k3's scores of the residual checkpoints, its full gate, its experts' norm
    LW_FFN_RES_SCORE,
    LW_SSM_G,
    LW_FFN_ROUTED_NORM,
    LW_CROSS_NORM,          // T5's decoder: the cross attention's norm and projections
    LW_CROSS_Q,
    LW_CROSS_K,
    LW_CROSS_V,
    LW_CROSS_O,
    LW_PN_NORM1,        // wavtokenizer-dec's: posnet.N.* (its residual blocks, attention, norm)
    LW_PN_NORM1_B,
    LW_PN_CONV1,
    LW_PN_CONV1_B,
    LW_PN_NORM2,
    LW_PN_NORM2_B,
    LW_PN_CONV2,
    LW_PN_CONV2_B,
    LW_PN_ATTN_NORM,
    LW_PN_ATTN_NORM_B,
    LW_PN_ATTN_Q,
    LW_PN_ATTN_Q_B,
    LW_PN_ATTN_K,
    LW_PN_ATTN_K_B,
    LW_PN_ATTN_V,
    LW_PN_ATTN_V_B,
    LW_PN_ATTN_O,
    LW_PN_ATTN_O_B,
    LW_PN_NORM,
    LW_PN_NORM_B,
    LW_CN_DW,           // and convnext.N.*
    LW_CN_DW_B,
    LW_CN_NORM,
    LW_CN_NORM_B,
    LW_CN_PW1,
    LW_CN_PW1_B,
    LW_CN_PW2,
    LW_CN_PW2_B,
    LW_CN_GAMMA,
    LW_COUNT
} ggfs_lw;

/* A weight's shape and bytes; bytes 0: the model has none. */
typedef struct ggfs_llm_weight {
    int64_t ne[3];
    uint64_t bytes;
    bool host_only; // on the host whatever -ngl says (ggfs_weight_host_only)
} ggfs_llm_weight;

typedef struct ggfs_llm_model ggfs_llm_model;

/* The gated products a layer's limits clamp: the experts', the others'. */
enum { CLAMP_EXPERTS = 1, CLAMP_OTHERS = 2 };

typedef struct arch_graph arch_graph;

struct ggfs_llm_model {
    const ggfs_memory_rules *rules;
    const arch_graph *graph;
    uint32_t n_layer;
    uint32_t n_trunk;        // the layers the graph runs: the prediction layers are not
    ggfs_llm_weight *layers; // n_layer rows of LW_COUNT
    uint32_t *block;         // n_layer: the block whose weights layer il runs (itself, but for hrm_text's passes)
    uint32_t hrm_stack, hrm_l_cycles; // hrm_text's layers a stack and low passes a cycle (0: not hrm_text's)
    uint32_t wkv_head;       // ARCH.wkv.head_size (RWKV's), 0 when not given
    uint32_t rwkv_rescale;   // ARCH.rescale_every_n_layers: every that many layers' output halved (0: none)
    bool kda_lower_bound;    // ARCH.kda.gate_lower_bound given
    bool situ_linear;        // ARCH.activation.situ_linear_beta above 0: situ caps up too
    uint32_t attn_res_block; // ARCH.attn_res.block_size: kimi-k3's residual checkpoints every that many layers
    ggfs_llm_weight output_res_score; // kimi-k3's checkpoints' scores at the output
    bool *unroped;           // n_layer: the layers attention.rope_pattern gives 0
    uint8_t *clamped;        // n_layer: CLAMP_EXPERTS, CLAMP_OTHERS where swiglu_clamp_exp, _shexp give a limit
    ggfs_llm_weight tok_embd, tok_embd_norm, tok_embd_norm_b, pos_embd, output_norm, output_norm_b, output,
        output_b, rope_freqs;
    ggfs_llm_weight per_layer_tok_embd, per_layer_proj, per_layer_proj_norm; // gemma4's per-layer inputs
    ggfs_llm_weight token_types; // bert's token types' embeddings
    ggfs_llm_weight hrm_z_l_init; // hrm_text's low state before its first pass
    ggfs_llm_weight conv1d, conv1d_b; // wavtokenizer-dec's first conv
    ggfs_llm_weight altup_proj, altup_unembd_proj; // gemma3n's
    uint32_t n_posnet, n_convnext;    // and its blocks: ARCH.posnet.block_count, ARCH.convnext.block_count
    bool decoder;            // the file has a decoder (dec.blk.N, T5's): its layers are read, not the encoder's
    bool embd_from_output; // no token_embd: the output matrix's copy on its device (codeshell's loader)
    bool logit_scale;  // the keys give ARCH.logit_scale
    bool softcap;      // the keys give ARCH.final_logit_softcapping
    bool softcap_off;  // they give it as 0
    bool value_scale;  // ARCH.attention.value_scale given, not 0 or 1: the attention's output scaled
    uint32_t ssm_groups; // ARCH.ssm.group_count (0: not given)
    bool swin_norm;    // ARCH.swin_norm true (chameleon's norms after the blocks)
    bool embedding_scale, residual_scale; // the keys give ARCH.embedding_scale, ARCH.residual_scale (not 0)
    bool par_res;      // the keys give ARCH.use_parallel_residual true
    uint32_t n_expert, n_expert_used;
    uint32_t gating;   // ARCH.expert_gating_func (0: not given)
    bool norm_w;       // ARCH.expert_weights_norm
    double w_scale;    // ARCH.expert_weights_scale (0: not given)
    bool clamp_kqv;    // ARCH.attention.clamp_kqv above 0: Q, K and V clamped
    bool rope_sections; // ARCH.rope.dimension_sections' first two above 0 (use_mrope)
};

/* The inputs and sizes of one KV cache (the sliding layers' is a second). */
typedef struct cache_inputs {
    int64_t n_kv;
    uint32_t k_idxs, v_idxs, kq_mask;
    uint32_t k_rot, v_rot; // a quantized cache's Hadamard rotations, or none
} cache_inputs;

/* minimax-01's lightning attention's inputs: each head's slope, and the
 * decays of Q, K and each pair of tokens by position. */
typedef struct lightning_inputs {
    uint32_t slopes, q_decay, k_decay, diag_decay;
} lightning_inputs;

typedef struct builder {
    const ggfs_llm_model *m;
    const arch_graph *row;
    ggfs_cgraph *g;
    int64_t n_tokens, n_outputs;
    ggfs_type cache_type;
    uint32_t i_gpu_start;
    bool full_offload;
    bool mrope;        // multi-section RoPE: four positions a token
    bool cacheless;    // the architecture's attention reads no cache, even where llama.cpp makes one
    bool no_cache;     // no KV cache (diffusion and encoder models): attention over the ubatch
    bool qkv_heads_first; // a fused projection cut into heads before Q, K and V are taken (openelm)
    bool v_from_k;     // without a V projection, V is K's (gemma4)
    bool unclamped;    // Q, K and V not clamped, whatever the keys say (the architecture reads no clamp_kqv)
    bool no_flash;     // flash attention off: V cached transposed, the scores made and softmaxed (grok)
    bool flash_off_late; // flash attention resolved off after the cache was made (V cached as rows): the masks
                         // f32, the cross attention's scores made (T5's decoder)
    bool kq_capped;    // the scores capped (scale, tanh, scale) before their softmax (grok)
    uint32_t pos_bucket; // T5's relative position buckets [cells, tokens], or none
    uint32_t cross_embd, cross_mask; // T5's decoder: the encoder's output [n_embd, n_ctx_train] and its mask
    uint32_t kq_bias;    // the scores' bias in the layer being built (T5's), or none: no flash attention
    bool mla_unroped;    // multi-head latent attention without RoPE (kimi-linear)
    bool plamo2;         // the Mamba layers plamo2's
    bool kda_k3;         // Kimi's delta attention as kimi-k3 has it: its decay a bounded sigmoid where the keys
                         // give a lower bound, its output gate one full-rank projection
    bool situ;           // the gated products are situ's (kimi-k3): tanh-capped gate times its sigmoid, times
                         // the tanh-capped up
    bool kda_bounded;    // Kimi's delta attention as bailingmoe3 has it: its decay and output gate each one
                         // projection, the decay a sigmoid scaled to a lower bound
    bool gdn_repeat;     // a delta net's Q and K heads repeated to V's where fewer (qwen3next)
    bool adjugate;       // the experts being built are grovemoe's adjugate ones
    uint32_t per_layer; // gemma4's per-layer inputs [width, tokens, layers], or none
    uint32_t inp_pos, out_ids;
    uint32_t attn_scale; // llama4's temperature of the layers without RoPE, per token
    cache_inputs base, swa;
    lightning_inputs la; // (slopes GGFS_NO_TENSOR: none)
    uint32_t *weights; // per block and kind: the weight's tensor plus 1 once made (0: not yet), made once as
                       // llama.cpp's layers share one tensor where they share a weight
    uint32_t s_copy_main, s_copy_extra; // the recurrent states' rows: this sequence's, the others' (none)
} builder;

typedef struct qkv {
    uint32_t q, k, v;
} qkv;

typedef enum norm_type { NORM_LAYER, NORM_RMS } norm_type;

/* The model's weights: layer il's of a kind, or GGFS_NO_TENSOR. */
const ggfs_llm_weight *ggfs_llm_layer_weight(const ggfs_llm_model *m, uint32_t il, ggfs_lw kind);
bool ggfs_llm_has(const builder *b, uint32_t il, ggfs_lw kind);
uint32_t ggfs_llm_wt(builder *b, uint32_t il, ggfs_lw kind);
uint32_t ggfs_llm_held(builder *b, const ggfs_llm_weight *w, ggfs_home home);
ggfs_home ggfs_llm_output_home(const builder *b);

/* llm_graph_context's helpers, as llama-graph.cpp has them. */
void ggfs_llm_cb(builder *b, uint32_t t, const char *name, int il);
uint32_t ggfs_llm_norm(builder *b, uint32_t cur, uint32_t w, uint32_t wb, norm_type type, int il);
uint32_t ggfs_llm_bias(builder *b, uint32_t cur, uint32_t bias);
/* build_lora_mm: the layer's weight w times cur, times w's scale (ws)
 * where the model has one. */
uint32_t ggfs_llm_mm(builder *b, uint32_t il, ggfs_lw w, ggfs_lw ws, uint32_t cur);
uint32_t ggfs_llm_inp_embd(builder *b);
void ggfs_llm_inputs(builder *b, uint32_t ctx);
/* build_qkv, as heads ([head, heads, tokens]) or, without reshape, as
 * rows; ggfs_llm_heads cuts rows into heads. */
qkv ggfs_llm_qkv(builder *b, uint32_t il, uint32_t cur, bool reshape);
qkv ggfs_llm_heads(builder *b, uint32_t il, qkv x);
uint32_t ggfs_llm_attn(builder *b, uint32_t il, qkv x, uint32_t wo, uint32_t wo_b);
/* build_attn of a layer without a cache of its own: Q (as heads) over
 * layer src's cache, nothing stored, projected by wo. */
uint32_t ggfs_llm_attn_reused(builder *b, uint32_t il, uint32_t src, uint32_t q, uint32_t wo);
/* build_mamba_layer (Mamba-1's) over the normed input cur: its conv and
 * scan states. */
uint32_t ggfs_llm_mamba(builder *b, uint32_t il, uint32_t cur);
/* plamo2's Mamba layer: Mamba-1's projections, a scan over heads as
 * Mamba-2's, dt, B and C normed. */
uint32_t ggfs_llm_mamba_plamo2(builder *b, uint32_t il, uint32_t cur);
/* build_mamba2_layer over the normed input cur: its conv and scan states. */
uint32_t ggfs_llm_mamba2(builder *b, uint32_t il, uint32_t cur);
/* A gated delta net layer (qwen35's linear attention) over the normed
 * input cur: its conv and delta states. */
uint32_t ggfs_llm_gated_delta_net(builder *b, uint32_t il, uint32_t cur);
/* Kimi's delta attention layer over the normed input cur: Q, K and V
 * each through its own conv (one conv state for the three), a gated
 * delta net with a per-element decay, its output normed and gated. */
uint32_t ggfs_llm_kda(builder *b, uint32_t il, uint32_t cur);
/* minimax-01's lightning attention layer over the normed input cur
 * (llm_lightning.c), and its inputs, made once. */
uint32_t ggfs_llm_lightning(builder *b, uint32_t il, uint32_t cur);
void ggfs_llm_lightning_inputs(builder *b);
/* lfm2's gated short convolution over the normed input cur. */
uint32_t ggfs_llm_shortconv(builder *b, uint32_t il, uint32_t cur);
/* Multi-head latent attention (deepseek2's, absorbed) from the normed
 * input cur: its K-only cache, attention per head over the latent. */
uint32_t ggfs_llm_attn_mla(builder *b, uint32_t il, uint32_t cur);
/* T5's decoder's cross attention from the normed input cur over the
 * encoder's output (flash attention, K and V cast to f16, unless it was
 * resolved off), projected. */
uint32_t ggfs_llm_cross_attn(builder *b, uint32_t il, uint32_t cur);
/* minicpm3's Q, K and V from latents, decompressed per head (no
 * absorption, an ordinary cache): the rotated part of K shared by the
 * heads. */
qkv ggfs_llm_qkv_latent(builder *b, uint32_t il, uint32_t cur);
uint32_t ggfs_llm_rope_factors(builder *b, uint32_t il);

/* A view of a, f32, of the shape and strides given. */
uint32_t ggfs_llm_view(builder *b, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, uint64_t nb1,
                       uint64_t nb2, uint64_t nb3, uint64_t offset);
/* A layer's recurrent state, [width, 1]: one sequence's row. */
uint32_t ggfs_llm_state(builder *b, uint32_t il, int64_t width);
/* build_rs: the state's row zeroed where a sequence starts, this
 * sequence's rows read (by get_rows, or by a scan given as scan_src,
 * whose first source is then the states as [ds, hd, nh, rows]), the other
 * sequences' rows copied on (none with one). */
uint32_t ggfs_llm_build_rs(builder *b, uint32_t s, int64_t width, uint32_t *scan_src);

/* The RWKV families' layers. */
typedef enum rwkv_kind {
    RWKV_NONE,
    RWKV6,       // time mix (wkv6), then channel mix; two token shifts kept
    RWKV6_QWEN2, // time mix (a gated linear attention), then the row's feed-forward block; one shift kept
    RWKV7,       // time mix (wkv7), then channel mix
    RWKV7_A,     // time mix (wkv7), then the row's feed-forward block (arwkv7)
} rwkv_kind;

/* The RWKV layers over the input embeddings inp, with the row's norm:
 * the last layer's output (llm_rwkv.c). */
uint32_t ggfs_llm_rwkv_layers(builder *b, uint32_t inp, rwkv_kind kind, norm_type norm);
/* wavtokenizer-dec's graph over the input embeddings embd, its output
 * made (llm_wavtokenizer.c). */
void ggfs_llm_wavtokenizer(builder *b, uint32_t embd);
/* gemma3n's and gemma4's per-layer inputs (build_inp_per_layer and
 * project_per_layer_inputs): each token's rows of per_layer_token_embd,
 * beside the embeddings projected per layer and normed; their sum, as
 * [width, tokens, layers], or none where the model has no such rows. */
uint32_t ggfs_llm_per_layer_inputs(builder *b, uint32_t embd);
/* gemma3n's graph over the scaled input embeddings embd, its output
 * made (llm_gemma3n.c). */
void ggfs_llm_gemma3n(builder *b, uint32_t embd);
/* kimi-k3's layers over the input embeddings, with the residual stream
 * mixed from checkpoints: the last layer's output, mixed (llm_kimi_k3.c). */
uint32_t ggfs_llm_kimi_k3_layers(builder *b, uint32_t inp);
/* build_ffn: the row's feed-forward block of layer il over cur (llm_arches.c). */
uint32_t ggfs_llm_ffn(builder *b, uint32_t il, uint32_t cur);

/* The graph of b->m's architecture, built into b->g. */
void ggfs_llm_build(builder *b, uint32_t ctx);
/* The table row of architecture arch, or NULL. */
const arch_graph *ggfs_llm_arch(ggp_str arch);

#endif
