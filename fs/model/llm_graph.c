/*
 * A model read for its graph, and the compute buffers of that graph
 * (llm_graph.h): llm_arches.c builds it with llm_build.c's helpers, then
 * the scheduler and ggml's allocator (sched.h) size it.
 */
#include "model/llm_graph.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/llm_build.h"
#include "model/host_weights.h"
#include "model/sched.h"

static const char *const lw_names[LW_COUNT] = {
    [LW_ATTN_NORM] = "attn_norm.weight",     [LW_ATTN_NORM_B] = "attn_norm.bias",
    [LW_WQ] = "attn_q.weight",               [LW_WK] = "attn_k.weight",
    [LW_WV] = "attn_v.weight",               [LW_WQKV] = "attn_qkv.weight",
    [LW_BQ] = "attn_q.bias",                 [LW_BK] = "attn_k.bias",
    [LW_BV] = "attn_v.bias",                 [LW_BQKV] = "attn_qkv.bias",
    [LW_Q_NORM] = "attn_q_norm.weight",      [LW_K_NORM] = "attn_k_norm.weight",
    [LW_WO] = "attn_output.weight",          [LW_BO] = "attn_output.bias",
    [LW_ATTN_POST_NORM] = "post_attention_norm.weight",
    [LW_FFN_NORM] = "ffn_norm.weight",       [LW_FFN_NORM_B] = "ffn_norm.bias",
    [LW_FFN_GATE] = "ffn_gate.weight",       [LW_FFN_UP] = "ffn_up.weight",
    [LW_FFN_DOWN] = "ffn_down.weight",       [LW_FFN_GATE_B] = "ffn_gate.bias",
    [LW_FFN_UP_B] = "ffn_up.bias",           [LW_FFN_DOWN_B] = "ffn_down.bias",
    [LW_FFN_POST_NORM] = "post_ffw_norm.weight",
    [LW_FFN_GATE_INP] = "ffn_gate_inp.weight",  [LW_FFN_GATE_EXPS] = "ffn_gate_exps.weight",
    [LW_FFN_UP_EXPS] = "ffn_up_exps.weight",    [LW_FFN_DOWN_EXPS] = "ffn_down_exps.weight",
    [LW_EXP_PROBS_B] = "exp_probs_b.bias",      [LW_FFN_GATE_SHEXP] = "ffn_gate_shexp.weight",
    [LW_FFN_UP_SHEXP] = "ffn_up_shexp.weight",  [LW_FFN_DOWN_SHEXP] = "ffn_down_shexp.weight",
    [LW_FFN_GATE_INP_SHEXP] = "ffn_gate_inp_shexp.weight",
    [LW_ATTN_OUT_NORM] = "attn_output_norm.weight", [LW_FFN_NORM_EXPS] = "ffn_norm_exps.weight",
    [LW_FFN_GATE_UP_EXPS] = "ffn_gate_up_exps.weight",
    [LW_WQ_A] = "attn_q_a.weight",              [LW_Q_A_NORM] = "attn_q_a_norm.weight",
    [LW_WQ_B] = "attn_q_b.weight",              [LW_WKV_A_MQA] = "attn_kv_a_mqa.weight",
    [LW_KV_A_NORM] = "attn_kv_a_norm.weight",   [LW_WK_B] = "attn_k_b.weight",
    [LW_WV_B] = "attn_v_b.weight",
    [LW_SSM_IN] = "ssm_in.weight",              [LW_SSM_CONV1D] = "ssm_conv1d.weight",
    [LW_SSM_CONV1D_B] = "ssm_conv1d.bias",      [LW_SSM_DT_B] = "ssm_dt.bias",
    [LW_SSM_A] = "ssm_a",                       [LW_SSM_D] = "ssm_d",
    [LW_SSM_NORM] = "ssm_norm.weight",          [LW_SSM_OUT] = "ssm_out.weight",
    [LW_SHORTCONV_IN] = "shortconv.in_proj.weight", [LW_SHORTCONV_CONV] = "shortconv.conv.weight",
    [LW_SHORTCONV_OUT] = "shortconv.out_proj.weight",
    [LW_FFN_LATENT_DOWN] = "ffn_latent_down.weight", [LW_FFN_LATENT_UP] = "ffn_latent_up.weight",
    [LW_ATTN_SUB_NORM] = "attn_sub_norm.weight",  [LW_FFN_SUB_NORM] = "ffn_sub_norm.weight",
    [LW_WQ_S] = "attn_q.scale",                 [LW_WK_S] = "attn_k.scale",
    [LW_WV_S] = "attn_v.scale",                 [LW_WO_S] = "attn_output.scale",
    [LW_FFN_GATE_S] = "ffn_gate.scale",         [LW_FFN_UP_S] = "ffn_up.scale",
    [LW_FFN_DOWN_S] = "ffn_down.scale",
    [LW_ATTN_GATE] = "attn_gate.weight",        [LW_ATTN_SINKS] = "attn_sinks.weight",
    [LW_FFN_GATE_INP_B] = "ffn_gate_inp.bias",  [LW_FFN_GATE_EXPS_B] = "ffn_gate_exps.bias",
    [LW_FFN_UP_EXPS_B] = "ffn_up_exps.bias",    [LW_FFN_DOWN_EXPS_B] = "ffn_down_exps.bias",
    [LW_WKV_B] = "attn_kv_b.weight",
    [LW_PL_INP_GATE] = "inp_gate.weight",       [LW_PL_PROJ] = "proj.weight",
    [LW_PL_POST_NORM] = "post_norm.weight",     [LW_OUT_SCALE] = "layer_output_scale.weight",
    [LW_ATTN_OUT_NORM_B] = "attn_output_norm.bias", [LW_LAYER_OUT_NORM] = "layer_output_norm.weight",
    [LW_LAYER_OUT_NORM_B] = "layer_output_norm.bias",
    [LW_ATTN_REL_B] = "attn_rel_b.weight",
    [LW_SSM_ALPHA] = "ssm_alpha.weight",        [LW_SSM_BETA] = "ssm_beta.weight",
    [LW_SSM_BA] = "ssm_ba.weight",
    [LW_Q_NORM_B] = "attn_q_norm.bias",         [LW_K_NORM_B] = "attn_k_norm.bias",
    [LW_FFN_GATE_CHEXPS] = "ffn_gate_chexps.weight", [LW_FFN_UP_CHEXPS] = "ffn_up_chexps.weight",
    [LW_FFN_DOWN_CHEXPS] = "ffn_down_chexps.weight",
    [LW_SSM_CONV1D_Q] = "ssm_conv1d_q.weight",  [LW_SSM_CONV1D_K] = "ssm_conv1d_k.weight",
    [LW_SSM_CONV1D_V] = "ssm_conv1d_v.weight",  [LW_SSM_F_A] = "ssm_f_a.weight",
    [LW_SSM_F_B] = "ssm_f_b.weight",            [LW_SSM_G_A] = "ssm_g_a.weight",
    [LW_SSM_G_B] = "ssm_g_b.weight",
    [LW_SSM_X] = "ssm_x.weight",                [LW_SSM_DT] = "ssm_dt.weight",
    [LW_SSM_DT_NORM] = "ssm_dt_norm.weight",    [LW_SSM_B_NORM] = "ssm_b_norm.weight",
    [LW_SSM_C_NORM] = "ssm_c_norm.weight",
    [LW_ALTUP_CORRECT_COEF] = "altup_correct_coef.weight", [LW_ALTUP_CORRECT_SCALE] = "altup_correct_scale.weight",
    [LW_ALTUP_PREDICT_COEF] = "altup_predict_coef.weight", [LW_ALTUP_ROUTER] = "altup_router.weight",
    [LW_ALTUP_ROUTER_NORM] = "altup_router_norm.weight",   [LW_LAUREL_L] = "laurel_l.weight",
    [LW_LAUREL_R] = "laurel_r.weight",                     [LW_LAUREL_POST_NORM] = "laurel_post_norm.weight",
    [LW_ATTN_RES_SCORE] = "attn_res_score.weight", [LW_FFN_RES_SCORE] = "ffn_res_score.weight",
    [LW_SSM_G] = "ssm_g.weight",                   [LW_FFN_ROUTED_NORM] = "ffn_routed_norm.weight",
    [LW_CROSS_NORM] = "cross_attn_norm.weight", [LW_CROSS_Q] = "cross_attn_q.weight",
    [LW_CROSS_K] = "cross_attn_k.weight",       [LW_CROSS_V] = "cross_attn_v.weight",
    [LW_CROSS_O] = "cross_attn_o.weight",
    [LW_ATTN_NORM_2] = "attn_norm_2.weight",
    [LW_ATTN_NORM_2_B] = "attn_norm_2.bias",
    [LW_TM_LERP_X] = "time_mix_lerp_x.weight",
    [LW_TM_LERP_W] = "time_mix_lerp_w.weight",
    [LW_TM_LERP_K] = "time_mix_lerp_k.weight",
    [LW_TM_LERP_V] = "time_mix_lerp_v.weight",
    [LW_TM_LERP_R] = "time_mix_lerp_r.weight",
    [LW_TM_LERP_G] = "time_mix_lerp_g.weight",
    [LW_TM_LERP_FUSED] = "time_mix_lerp_fused.weight",
    [LW_TM_W0] = "time_mix_w0.weight",
    [LW_TM_W1] = "time_mix_w1.weight",
    [LW_TM_W2] = "time_mix_w2.weight",
    [LW_TM_A0] = "time_mix_a0.weight",
    [LW_TM_A1] = "time_mix_a1.weight",
    [LW_TM_A2] = "time_mix_a2.weight",
    [LW_TM_V0] = "time_mix_v0.weight",
    [LW_TM_V1] = "time_mix_v1.weight",
    [LW_TM_V2] = "time_mix_v2.weight",
    [LW_TM_G1] = "time_mix_g1.weight",
    [LW_TM_G2] = "time_mix_g2.weight",
    [LW_TM_K_K] = "time_mix_k_k.weight",
    [LW_TM_K_A] = "time_mix_k_a.weight",
    [LW_TM_R_K] = "time_mix_r_k.weight",
    [LW_TM_DECAY] = "time_mix_decay.weight",
    [LW_TM_DECAY_W1] = "time_mix_decay_w1.weight",
    [LW_TM_DECAY_W2] = "time_mix_decay_w2.weight",
    [LW_TM_FIRST] = "time_mix_first.weight",
    [LW_TM_RECEPTANCE] = "time_mix_receptance.weight",
    [LW_TM_RECEPTANCE_B] = "time_mix_receptance.bias",
    [LW_TM_KEY] = "time_mix_key.weight",
    [LW_TM_KEY_B] = "time_mix_key.bias",
    [LW_TM_VALUE] = "time_mix_value.weight",
    [LW_TM_VALUE_B] = "time_mix_value.bias",
    [LW_TM_GATE] = "time_mix_gate.weight",
    [LW_TM_LN] = "time_mix_ln.weight",
    [LW_TM_LN_B] = "time_mix_ln.bias",
    [LW_TM_OUTPUT] = "time_mix_output.weight",
    [LW_CM_LERP_K] = "channel_mix_lerp_k.weight",
    [LW_CM_LERP_R] = "channel_mix_lerp_r.weight",
    [LW_CM_RECEPTANCE] = "channel_mix_receptance.weight",
    [LW_CM_KEY] = "channel_mix_key.weight",
    [LW_CM_VALUE] = "channel_mix_value.weight",
};

/* wavtokenizer-dec's blocks' weights, by their names after posnet.N. and convnext.N. */
static const char *const posnet_names[LW_COUNT] = {
    [LW_PN_NORM1] = "norm1.weight",
    [LW_PN_NORM1_B] = "norm1.bias",
    [LW_PN_CONV1] = "conv1.weight",
    [LW_PN_CONV1_B] = "conv1.bias",
    [LW_PN_NORM2] = "norm2.weight",
    [LW_PN_NORM2_B] = "norm2.bias",
    [LW_PN_CONV2] = "conv2.weight",
    [LW_PN_CONV2_B] = "conv2.bias",
    [LW_PN_ATTN_NORM] = "attn_norm.weight",
    [LW_PN_ATTN_NORM_B] = "attn_norm.bias",
    [LW_PN_ATTN_Q] = "attn_q.weight",
    [LW_PN_ATTN_Q_B] = "attn_q.bias",
    [LW_PN_ATTN_K] = "attn_k.weight",
    [LW_PN_ATTN_K_B] = "attn_k.bias",
    [LW_PN_ATTN_V] = "attn_v.weight",
    [LW_PN_ATTN_V_B] = "attn_v.bias",
    [LW_PN_ATTN_O] = "attn_output.weight",
    [LW_PN_ATTN_O_B] = "attn_output.bias",
    [LW_PN_NORM] = "norm.weight",
    [LW_PN_NORM_B] = "norm.bias",
};
static const char *const convnext_names[LW_COUNT] = {
    [LW_CN_DW] = "dw.weight",
    [LW_CN_DW_B] = "dw.bias",
    [LW_CN_NORM] = "norm.weight",
    [LW_CN_NORM_B] = "norm.bias",
    [LW_CN_PW1] = "pw1.weight",
    [LW_CN_PW1_B] = "pw1.bias",
    [LW_CN_PW2] = "pw2.weight",
    [LW_CN_PW2_B] = "pw2.bias",
    [LW_CN_GAMMA] = "gamma.weight",
};

/* ---- reading the model ---- */

static bool name_is(ggp_str name, const char *s)
{
    return name.len == strlen(s) && memcmp(name.ptr, s, name.len) == 0;
}

static void set_weight(ggfs_llm_weight *w, const ggp_tensor *t)
{
    for (int i = 0; i < 3; i++)
        w->ne[i] = t->ne[i];
    w->bytes = t->bytes;
}

/* blk.N.KIND: N and KIND's index, or false. */
static bool layer_kind(ggp_str name, uint32_t n_layer, bool decoder, uint32_t *il, ggfs_lw *kind)
{
    // (an encoder's layers, T5's enc.blk.N, or where the file has a decoder, its dec.blk.N)
    if (name.len > 8 && memcmp(name.ptr, decoder ? "dec." : "enc.", 4) == 0) {
        name.ptr += 4;
        name.len -= 4;
    }
    // (wavtokenizer-dec's blocks: posnet.N, convnext.N, with names of their own)
    const char *const *names = lw_names;
    size_t i = 0;
    if (name.len > 7 && memcmp(name.ptr, "posnet.", 7) == 0)
        names = posnet_names, i = 7;
    else if (name.len > 9 && memcmp(name.ptr, "convnext.", 9) == 0)
        names = convnext_names, i = 9;
    else if (name.len >= 5 && memcmp(name.ptr, "blk.", 4) == 0)
        i = 4;
    else
        return false;
    const size_t digits = i;
    uint64_t n = 0;
    for (; i < name.len && name.ptr[i] >= '0' && name.ptr[i] <= '9' && n < n_layer; i++)
        n = n * 10 + (uint64_t)(name.ptr[i] - '0');
    if (i == digits || i >= name.len || name.ptr[i] != '.' || n >= n_layer)
        return false;
    const ggp_str rest = {name.ptr + i + 1, name.len - i - 1};
    for (int k = 0; k < LW_COUNT; k++) {
        if (names[k] && name_is(rest, names[k])) {
            *il = (uint32_t)n;
            *kind = (ggfs_lw)k;
            return true;
        }
    }
    if (names != lw_names)
        return false;
    // names some loaders give without ".weight" (plamo3's norms)
    static const struct {
        const char *name;
        ggfs_lw kind;
    } bare[] = {{"post_attention_norm", LW_ATTN_POST_NORM}, {"post_ffw_norm", LW_FFN_POST_NORM},
                {"exp_probs_b", LW_EXP_PROBS_B}, {"attn_sinks", LW_ATTN_SINKS},
                {"attn_o.weight", LW_WO}, // (T5's)
                // (plamo2's)
                {"ssm_dt_norm", LW_SSM_DT_NORM}, {"ssm_b_norm", LW_SSM_B_NORM}, {"ssm_c_norm", LW_SSM_C_NORM},
                // (kimi-k3's)
                {"ffn_routed_down.weight", LW_FFN_LATENT_DOWN}, {"ffn_routed_up.weight", LW_FFN_LATENT_UP}};
    for (size_t k = 0; k < sizeof bare / sizeof bare[0]; k++) {
        if (name_is(rest, bare[k].name)) {
            *il = (uint32_t)n;
            *kind = bare[k].kind;
            return true;
        }
    }
    return false;
}

/* The model's weights outside the layers, by name. */
static void set_named(ggfs_llm_model *m, const ggp_tensor *t)
{
    static const struct {
        const char *name;
        size_t offset;
    } named[] = {
        {"token_embd.weight", offsetof(ggfs_llm_model, tok_embd)},
        {"token_embd_norm.weight", offsetof(ggfs_llm_model, tok_embd_norm)},
        {"token_embd_norm.bias", offsetof(ggfs_llm_model, tok_embd_norm_b)},
        {"position_embd.weight", offsetof(ggfs_llm_model, pos_embd)},
        {"output_norm.weight", offsetof(ggfs_llm_model, output_norm)},
        {"enc.output_norm.weight", offsetof(ggfs_llm_model, output_norm)}, // neo-bert's
        {"dec.output_norm.weight", offsetof(ggfs_llm_model, output_norm)}, // T5's decoder's
        {"output_norm.bias", offsetof(ggfs_llm_model, output_norm_b)},
        {"output.weight", offsetof(ggfs_llm_model, output)},
        {"output.bias", offsetof(ggfs_llm_model, output_b)},
        {"rope_freqs.weight", offsetof(ggfs_llm_model, rope_freqs)},
        {"per_layer_token_embd.weight", offsetof(ggfs_llm_model, per_layer_tok_embd)},
        {"token_types.weight", offsetof(ggfs_llm_model, token_types)},
        {"hrm.z_l_init", offsetof(ggfs_llm_model, hrm_z_l_init)},
        {"conv1d.weight", offsetof(ggfs_llm_model, conv1d)},
        {"altup_proj.weight", offsetof(ggfs_llm_model, altup_proj)},
        {"output_res_score.weight", offsetof(ggfs_llm_model, output_res_score)},
        {"altup_unembd_proj.weight", offsetof(ggfs_llm_model, altup_unembd_proj)},
        {"conv1d.bias", offsetof(ggfs_llm_model, conv1d_b)},
        {"per_layer_model_proj.weight", offsetof(ggfs_llm_model, per_layer_proj)},
        {"per_layer_proj_norm.weight", offsetof(ggfs_llm_model, per_layer_proj_norm)},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        if (name_is(t->name, named[i].name))
            set_weight((ggfs_llm_weight *)((char *)m + named[i].offset), t);
    }
}

/* ARCH.suffix: whether the keys have it, and a boolean's value. */
static const ggp_kv *arch_key(const ggp_file *keys, ggp_str arch, const char *suffix)
{
    char name[128];
    const int n = snprintf(name, sizeof name, "%.*s.%s", (int)arch.len, arch.ptr, suffix);
    return n > 0 && (size_t)n < sizeof name ? ggp_kv_find(keys, name, (size_t)n) : NULL;
}

/* ARCH.suffix as a number, 0 when not given. */
static double float_key(const ggp_file *keys, ggp_str arch, const char *suffix)
{
    const ggp_kv *kv = arch_key(keys, arch, suffix);
    return kv && (kv->value.type == GGP_V_F32 || kv->value.type == GGP_V_F64) ? ggp_value_f64(keys, &kv->value) : 0;
}

/* A number's value (an integer, a float or a boolean); false for others. */
static bool number_of(const ggp_file *keys, const ggp_value *v, double *out)
{
    switch (v->type) {
    case GGP_V_U8: case GGP_V_U16: case GGP_V_U32: case GGP_V_U64: case GGP_V_BOOL:
        *out = (double)ggp_value_u64(keys, v);
        return true;
    case GGP_V_I8: case GGP_V_I16: case GGP_V_I32: case GGP_V_I64:
        *out = (double)ggp_value_i64(keys, v);
        return true;
    case GGP_V_F32: case GGP_V_F64:
        *out = ggp_value_f64(keys, v);
        return true;
    default:
        return false;
    }
}

/* ARCH.suffix per layer, as llama.cpp's get_key_or_arr reads it: an
 * array's element per layer, or one number for all. Calls set(m, il, x)
 * for each layer given a number. */
static void read_per_layer(const ggp_file *keys, ggp_str arch, const char *suffix, ggfs_llm_model *m,
                           void (*set)(ggfs_llm_model *m, uint32_t il, double x))
{
    const ggp_kv *kv = arch_key(keys, arch, suffix);
    double x;
    if (!kv)
        return;
    if (kv->value.type != GGP_V_ARRAY) {
        for (uint32_t il = 0; il < m->n_layer && number_of(keys, &kv->value, &x); il++)
            set(m, il, x);
        return;
    }
    ggp_array_iter it;
    ggp_value elem;
    ggp_array_iter_init(&it, keys, &kv->value);
    for (uint32_t il = 0; il < m->n_layer && ggp_array_next(&it, &elem); il++) {
        if (number_of(keys, &elem, &x))
            set(m, il, x);
    }
}

/* attention.rope_pattern: 0 where the layer's attention takes no RoPE. */
static void set_unroped(ggfs_llm_model *m, uint32_t il, double x)
{
    m->unroped[il] = x == 0;
}

/* swiglu_clamp_exp, swiglu_clamp_shexp: a limit above llama.cpp's 1e-6. */
static void set_clamp_exp(ggfs_llm_model *m, uint32_t il, double x)
{
    if (x > 1e-6)
        m->clamped[il] |= CLAMP_EXPERTS;
}

static void set_clamp_shexp(ggfs_llm_model *m, uint32_t il, double x)
{
    if (x > 1e-6)
        m->clamped[il] |= CLAMP_OTHERS;
}

/* ARCH.suffix as an unsigned 32-bit number, 0 when not given. */
static uint32_t u32_key(const ggp_file *keys, ggp_str arch, const char *suffix)
{
    const ggp_kv *kv = arch_key(keys, arch, suffix);
    return kv && kv->value.type == GGP_V_U32 ? (uint32_t)ggp_value_u64(keys, &kv->value) : 0;
}

/* hrm_text's passes: each high cycle runs the low stack l_cycles times,
 * then the high stack; the file's layers are those passes' cache slots,
 * and every pass runs the weights of the first low or high stack (blocks
 * [0, stack) and [stack, 2 stack)). Keys that do not add up to the
 * layers (llama.cpp's loader refuses them) leave no passes: no graph. */
static void read_hrm_passes(const ggp_file *keys, ggp_str arch, ggfs_llm_model *m)
{
    const uint64_t stack = u32_key(keys, arch, "hrm.layers_per_stack"), high = u32_key(keys, arch, "hrm.h_cycles"),
                   low = u32_key(keys, arch, "hrm.l_cycles");
    // (each factor at most the layers first, so that their product cannot wrap)
    if (stack == 0 || high == 0 || low == 0 || stack > m->n_layer || high > m->n_layer || low >= m->n_layer ||
        stack * high * (low + 1) != m->n_layer)
        return;
    m->hrm_stack = (uint32_t)stack;
    m->hrm_l_cycles = (uint32_t)low;
    for (uint32_t il = 0; il < m->n_layer; il++) {
        const uint32_t pass = il / m->hrm_stack;
        m->block[il] = (pass % (m->hrm_l_cycles + 1) == m->hrm_l_cycles ? m->hrm_stack : 0) + il % m->hrm_stack;
    }
}

ggfs_llm_model *ggfs_llm_model_new(const ggp_file *const *files, uint32_t n_files, const ggfs_memory_rules *rules,
                                   const ggp_file *keys, ggp_str arch)
{
    ggfs_llm_model *m = calloc(1, sizeof *m);
    if (!m || !(m->layers = calloc((size_t)(rules->n_layer ? rules->n_layer : 1) * LW_COUNT, sizeof *m->layers))) {
        ggfs_llm_model_free(m);
        return NULL;
    }
    m->rules = rules;
    m->n_layer = rules->n_layer;
    m->n_trunk = rules->n_layer - (rules->n_nextn < rules->n_layer ? rules->n_nextn : rules->n_layer);
    if (!(m->unroped = calloc(rules->n_layer ? rules->n_layer : 1, sizeof *m->unroped)) ||
        !(m->block = calloc(rules->n_layer ? rules->n_layer : 1, sizeof *m->block)) ||
        !(m->clamped = calloc(rules->n_layer ? rules->n_layer : 1, sizeof *m->clamped))) {
        ggfs_llm_model_free(m);
        return NULL;
    }
    for (uint32_t il = 0; il < m->n_layer; il++)
        m->block[il] = il;
    read_hrm_passes(keys, arch, m);
    m->wkv_head = u32_key(keys, arch, "wkv.head_size");
    m->rwkv_rescale = u32_key(keys, arch, "rescale_every_n_layers");
    m->n_posnet = u32_key(keys, arch, "posnet.block_count");
    m->kda_lower_bound = arch_key(keys, arch, "kda.gate_lower_bound") != NULL;
    m->situ_linear = float_key(keys, arch, "activation.situ_linear_beta") > 0;
    m->attn_res_block = u32_key(keys, arch, "attn_res.block_size");
    m->n_convnext = u32_key(keys, arch, "convnext.block_count");
    read_per_layer(keys, arch, "attention.rope_pattern", m, set_unroped);
    read_per_layer(keys, arch, "swiglu_clamp_exp", m, set_clamp_exp);
    read_per_layer(keys, arch, "swiglu_clamp_shexp", m, set_clamp_shexp);
    m->graph = ggfs_llm_arch(arch);
    m->logit_scale = arch_key(keys, arch, "logit_scale") != NULL;
    m->softcap = arch_key(keys, arch, "final_logit_softcapping") != NULL;
    m->softcap_off = m->softcap && float_key(keys, arch, "final_logit_softcapping") == 0;
    const ggp_kv *swin = arch_key(keys, arch, "swin_norm");
    m->swin_norm = swin && swin->value.type == GGP_V_BOOL && ggp_value_u64(keys, &swin->value) != 0;
    const ggp_kv *groups = arch_key(keys, arch, "ssm.group_count");
    m->ssm_groups = groups && groups->value.type == GGP_V_U32 ? (uint32_t)ggp_value_u64(keys, &groups->value) : 0;
    const double value_scale = float_key(keys, arch, "attention.value_scale");
    m->value_scale = value_scale != 0 && value_scale != 1;
    m->embedding_scale = float_key(keys, arch, "embedding_scale") != 0;
    m->residual_scale = float_key(keys, arch, "residual_scale") != 0;
    m->n_expert = rules->n_expert;
    m->n_expert_used = rules->n_expert_used;
    const ggp_kv *kv = arch_key(keys, arch, "expert_gating_func");
    m->gating = kv && kv->value.type == GGP_V_U32 ? (uint32_t)ggp_value_u64(keys, &kv->value) : 0;
    kv = arch_key(keys, arch, "expert_weights_norm");
    m->norm_w = kv && kv->value.type == GGP_V_BOOL && ggp_value_u64(keys, &kv->value) != 0;
    kv = arch_key(keys, arch, "attention.clamp_kqv");
    m->clamp_kqv = kv && kv->value.type == GGP_V_F32 && ggp_value_f64(keys, &kv->value) > 0;
    kv = arch_key(keys, arch, "rope.dimension_sections");
    if (kv && kv->value.type == GGP_V_ARRAY && kv->value.count >= 2) {
        ggp_array_iter it;
        ggp_value elem;
        int64_t first[2] = {0, 0};
        ggp_array_iter_init(&it, keys, &kv->value);
        for (int i = 0; i < 2 && ggp_array_next(&it, &elem); i++)
            first[i] = elem.type == GGP_V_I32   ? ggp_value_i64(keys, &elem)
                       : elem.type == GGP_V_U32 ? (int64_t)ggp_value_u64(keys, &elem)
                                                : 0;
        m->rope_sections = first[0] > 0 && first[1] > 0;
    }
    kv = arch_key(keys, arch, "expert_weights_scale");
    m->w_scale = kv && (kv->value.type == GGP_V_F32 || kv->value.type == GGP_V_F64)
                     ? ggp_value_f64(keys, &kv->value) : 0;
    const ggp_kv *par = arch_key(keys, arch, "use_parallel_residual");
    m->par_res = par && par->value.type == GGP_V_BOOL && ggp_value_u64(keys, &par->value) != 0;
    // (a decoder's graph is the one llama.cpp reserves: T5's)
    for (uint32_t f = 0; f < n_files && !m->decoder; f++) {
        for (uint64_t j = 0; j < ggp_tensor_count(files[f]) && !m->decoder; j++) {
            const ggp_str name = ggp_tensor_at(files[f], j)->name;
            m->decoder = name.len > 8 && memcmp(name.ptr, "dec.blk.", 8) == 0;
        }
    }
    for (uint32_t f = 0; f < n_files; f++) {
        for (uint64_t j = 0; j < ggp_tensor_count(files[f]); j++) {
            const ggp_tensor *t = ggp_tensor_at(files[f], j);
            uint32_t il;
            ggfs_lw kind;
            if (layer_kind(t->name, m->n_layer, m->decoder, &il, &kind)) {
                ggfs_llm_weight *w = &m->layers[(size_t)il * LW_COUNT + kind];
                set_weight(w, t);
                w->host_only = ggfs_weight_host_only(keys, arch, t);
            }
            else if (!(m->decoder && name_is(t->name, "enc.output_norm.weight")))
                set_named(m, t);
        }
    }
    // (a decoder of other depth than the cache's layers is not modelled)
    const uint32_t dec_layers = u32_key(keys, arch, "decoder_block_count");
    if (m->decoder && dec_layers != 0 && dec_layers != m->n_layer)
        m->graph = NULL;
    if (m->tok_embd.bytes == 0 && m->output.bytes > 0) {
        m->tok_embd = m->output;
        m->embd_from_output = true;
    }
    return m;
}

void ggfs_llm_model_free(ggfs_llm_model *m)
{
    if (!m)
        return;
    free(m->layers);
    free(m->unroped);
    free(m->block);
    free(m->clamped);
    free(m);
}

/* The most layers a graph is built for: a line's graph costs time in
 * proportion to them, and offload/CTX has a line per layer; real models
 * have at most about 130 (a hostile file more). */
#define GRAPH_LAYERS_MAX 160

bool ggfs_llm_has_graph(const ggfs_llm_model *m)
{
    return m->graph != NULL && m->tok_embd.bytes > 0 && m->n_layer <= GRAPH_LAYERS_MAX;
}

bool ggfs_llm_compute(const ggfs_llm_model *m, uint32_t ctx, int cache, uint32_t i_gpu_start, uint64_t *gpu,
                      uint64_t *host)
{
    *gpu = *host = 0;
    if (!ggfs_llm_has_graph(m))
        return false;
    static const ggfs_type cache_types[GGFS_CACHE_TYPES] = {GT_F16, GT_Q8_0, GT_Q4_0};
    ggfs_cgraph g;
    ggfs_cgraph_init(&g);
    builder b = {
        .m = m,
        .row = m->graph,
        .g = &g,
        .n_tokens = ctx < 512 ? ctx : 512,
        .cache_type = cache_types[cache],
        .i_gpu_start = i_gpu_start,
        .full_offload = i_gpu_start == 0,
    };
    b.n_outputs = b.n_tokens;
    b.weights = calloc((size_t)(m->n_layer ? m->n_layer : 1) * LW_COUNT, sizeof *b.weights);
    if (!b.weights)
        return false;
    ggfs_llm_build(&b, ctx);
    const bool ok = !g.failed && ggfs_sched_reserve(&g, gpu, host);
    free(b.weights);
    ggfs_cgraph_free(&g);
    // Vulkan's host buffer type allocates 32 bytes more than asked
    if (ok && *host)
        *host += 32;
    return ok;
}
