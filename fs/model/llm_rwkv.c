/*
 * The RWKV layers as tensor shapes (llm_build.h), after src/models/
 * rwkv6-base.cpp, rwkv7-base.cpp and their four graphs: a time mix over
 * each token and the one before it (the last token's row kept as the
 * layer's token shift), then a channel mix (rwkv6, rwkv7) or a
 * feed-forward block (rwkv6qwen2, arwkv7).
 */
#include "model/llm_build.h"

static uint32_t mul_w(builder *b, uint32_t il, uint32_t x, ggfs_lw w)
{
    return ggfs_binary_op(b->g, GOP_MUL, x, ggfs_llm_wt(b, il, w));
}

static uint32_t mm(builder *b, uint32_t il, ggfs_lw w, uint32_t x)
{
    return ggfs_mul_mat(b->g, ggfs_llm_wt(b, il, w), x);
}

/* x plus the layer's bias w, where it has one. */
static uint32_t plus_bias(builder *b, uint32_t il, uint32_t x, ggfs_lw w)
{
    return ggfs_llm_has(b, il, w) ? ggfs_binary_op(b->g, GOP_ADD, x, ggfs_llm_wt(b, il, w)) : x;
}

static uint32_t unary(builder *b, ggfs_unary_kind kind, uint32_t x)
{
    return ggfs_unary(b->g, kind, x);
}

/* The i-th of a tensor's planes of [n_embd, tokens]. */
static uint32_t plane(builder *b, uint32_t x, int64_t n_embd, int i)
{
    const int64_t t = b->n_tokens;
    const uint64_t nb1 = b->g->t[x].nb[1];
    return ggfs_llm_view(b, x, n_embd, t, 1, 1, nb1, nb1 * (uint64_t)t, nb1 * (uint64_t)t,
                         ggfs_row_size(GT_F32, n_embd * t * i));
}

/* The wkv op's output rows (each token's) and its state, kept. */
static uint32_t wkv_output(builder *b, uint32_t out, uint32_t s_l, int64_t n_embd, int64_t head)
{
    ggfs_cgraph *g = b->g;
    const int64_t t = b->n_tokens, width = n_embd * head;
    const uint64_t row = ggfs_row_size(GT_F32, n_embd * t), st = ggfs_row_size(GT_F32, width);
    const uint32_t cur = ggfs_llm_view(b, out, n_embd * t, 1, 1, 1, row, row, row, 0);
    const uint32_t state = ggfs_llm_view(b, out, width, 1, 1, 1, st, st, st, row);
    ggfs_expand(g, ggfs_cpy(g, state, ggfs_llm_view(b, s_l, width, 1, 1, 1, st, st, st, 0)));
    return cur;
}

/* The wkv's output normed per head (a group norm), where the layer has
 * time_mix_ln, else as it is; as [n_embd, tokens]. */
static uint32_t group_norm(builder *b, uint32_t il, uint32_t cur, int64_t n_embd, int64_t head, bool normed)
{
    ggfs_cgraph *g = b->g;
    const int64_t t = b->n_tokens;
    if (!normed)
        return ggfs_reshape(g, cur, n_embd, t, 1, 1);
    cur = ggfs_unary_op(g, GOP_NORM, ggfs_reshape(g, cur, head, n_embd / head, t, 1));
    cur = ggfs_reshape(g, cur, n_embd, t, 1, 1);
    return ggfs_binary_op(g, GOP_ADD, mul_w(b, il, cur, LW_TM_LN), ggfs_llm_wt(b, il, LW_TM_LN_B));
}

/* build_rwkv6_time_mix over the normed input cur and the tokens before
 * (x_prev); qrwkv (rwkv6qwen2: no time_mix_first) takes the gated linear
 * attention instead of wkv6. */
static uint32_t time_mix6(builder *b, uint32_t il, uint32_t cur, uint32_t x_prev, int64_t head)
{
    ggfs_cgraph *g = b->g;
    const ggfs_llm_weight *w1 = ggfs_llm_layer_weight(b->m, il, LW_TM_W1),
                          *w2 = ggfs_llm_layer_weight(b->m, il, LW_TM_W2);
    const int64_t n_embd = g->t[cur].ne[0], t = b->n_tokens, h = n_embd / head;
    const int64_t h_kv = b->m->rules->layer[il].n_head_kv;
    const bool qrwkv = !ggfs_llm_has(b, il, LW_TM_FIRST);
    // (no KV heads given: as many as the heads)
    if (w1->ne[1] % 5 || (h_kv != 0 && h % h_kv)) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    uint32_t sx = ggfs_binary_op(g, GOP_SUB, x_prev, cur);
    sx = ggfs_reshape(g, sx, n_embd, t, 1, 1);
    cur = ggfs_reshape(g, cur, n_embd, t, 1, 1);
    uint32_t xxx = ggfs_binary_op(g, GOP_ADD, mul_w(b, il, sx, LW_TM_LERP_X), cur);
    xxx = ggfs_reshape(g, unary(b, UN_TANH, mm(b, il, LW_TM_W1, xxx)), w1->ne[1] / 5, 1, 5, t);
    xxx = ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, xxx, 0, 1, 3, 2));
    xxx = ggfs_mul_mat(g, ggfs_reshape(g, ggfs_llm_wt(b, il, LW_TM_W2), w2->ne[0], w2->ne[1], 1, 5), xxx);
    uint32_t x[5]; // w, k, v, r, g
    if (ggfs_llm_has(b, il, LW_TM_LERP_FUSED)) {
        sx = ggfs_reshape(g, sx, n_embd, 1, t, 1);
        cur = ggfs_reshape(g, cur, n_embd, 1, t, 1);
        xxx = ggfs_binary_op(g, GOP_ADD, xxx, ggfs_llm_wt(b, il, LW_TM_LERP_FUSED));
        xxx = ggfs_binary_op(g, GOP_ADD, ggfs_binary_op(g, GOP_MUL, xxx, sx), cur);
        for (int i = 0; i < 5; i++)
            x[i] = plane(b, xxx, n_embd, i);
    } else {
        static const ggfs_lw lerp[5] = {LW_TM_LERP_W, LW_TM_LERP_K, LW_TM_LERP_V, LW_TM_LERP_R, LW_TM_LERP_G};
        for (int i = 0; i < 5; i++)
            x[i] = plane(b, xxx, n_embd, i);
        for (int i = 0; i < 5; i++) {
            const uint32_t lerped = ggfs_binary_op(g, GOP_ADD, x[i], ggfs_llm_wt(b, il, lerp[i]));
            x[i] = ggfs_binary_op(g, GOP_ADD, ggfs_binary_op(g, GOP_MUL, lerped, sx), cur);
        }
    }
    uint32_t r = plus_bias(b, il, mm(b, il, LW_TM_RECEPTANCE, x[3]), LW_TM_RECEPTANCE_B);
    uint32_t k = plus_bias(b, il, mm(b, il, LW_TM_KEY, x[1]), LW_TM_KEY_B);
    uint32_t v = plus_bias(b, il, mm(b, il, LW_TM_VALUE, x[2]), LW_TM_VALUE_B);
    const uint32_t gate = unary(b, qrwkv ? UN_SIGMOID : UN_SILU, mm(b, il, LW_TM_GATE, x[4]));
    if (h_kv != 0 && h_kv != h) {
        k = ggfs_repeat_4d(g, ggfs_reshape(g, k, head, 1, h_kv, t), head, h / h_kv, h_kv, t);
        v = ggfs_repeat_4d(g, ggfs_reshape(g, v, head, 1, h_kv, t), head, h / h_kv, h_kv, t);
    }
    k = ggfs_reshape(g, k, head, h, t, 1);
    v = ggfs_reshape(g, v, head, h, t, 1);
    r = ggfs_reshape(g, r, head, h, t, 1);
    uint32_t w = mm(b, il, LW_TM_DECAY_W2, unary(b, UN_TANH, mm(b, il, LW_TM_DECAY_W1, x[0])));
    w = ggfs_binary_op(g, GOP_ADD, w, ggfs_llm_wt(b, il, LW_TM_DECAY));
    w = ggfs_reshape(g, unary(b, UN_EXP, unary(b, UN_NEG, unary(b, UN_EXP, w))), head, h, t, 1);
    if (qrwkv)
        k = ggfs_binary_op(g, GOP_SUB, k, ggfs_binary_op(g, GOP_MUL, k, w));
    const uint32_t s_l = ggfs_llm_state(b, il, n_embd * head);
    const uint32_t state = ggfs_llm_build_rs(b, s_l, n_embd * head, NULL);
    uint32_t out;
    if (qrwkv) {
        const uint32_t src[5] = {k, v, r, w, state};
        out = ggfs_wkv(g, GOP_GATED_LINEAR_ATTN, src, 5);
    } else {
        const uint32_t src[6] = {k, v, r, ggfs_llm_wt(b, il, LW_TM_FIRST), w, state};
        out = ggfs_wkv(g, GOP_RWKV_WKV6, src, 6);
    }
    if (out == GGFS_NO_TENSOR) {
        g->failed = true;
        return out;
    }
    cur = group_norm(b, il, wkv_output(b, out, s_l, n_embd, head), n_embd, head, !qrwkv);
    cur = mm(b, il, LW_TM_OUTPUT, ggfs_binary_op(g, GOP_MUL, cur, gate));
    return ggfs_reshape(g, cur, n_embd, t, 1, 1);
}

/* a2 . (a1 . x) + a0, of the layer's low-rank weights. */
static uint32_t low_rank(builder *b, uint32_t il, ggfs_lw w0, ggfs_lw w1, ggfs_lw w2, uint32_t x)
{
    return ggfs_binary_op(b->g, GOP_ADD, mm(b, il, w2, mm(b, il, w1, x)), ggfs_llm_wt(b, il, w0));
}

/* build_rwkv7_time_mix over the normed input cur and the tokens before
 * (x_prev); *v_first, the first layer's value, which the later layers'
 * values lean towards. */
static uint32_t time_mix7(builder *b, uint32_t il, uint32_t cur, uint32_t x_prev, uint32_t *v_first, int64_t head)
{
    ggfs_cgraph *g = b->g;
    const int64_t n_embd = g->t[cur].ne[0], t = b->n_tokens, h = n_embd / head;
    const bool gating = ggfs_llm_has(b, il, LW_TM_G1) && ggfs_llm_has(b, il, LW_TM_G2);
    uint32_t sx = ggfs_binary_op(g, GOP_SUB, x_prev, cur);
    sx = ggfs_repeat_4d(g, sx, n_embd, t, 1, gating ? 6 : 5);
    const uint32_t xxx = ggfs_binary_op(g, GOP_ADD, mul_w(b, il, sx, LW_TM_LERP_FUSED), cur);
    uint32_t x[6]; // r, w, k, v, a, g
    for (int i = 0; i < (gating ? 6 : 5); i++)
        x[i] = plane(b, xxx, n_embd, i);
    uint32_t r = mm(b, il, LW_TM_RECEPTANCE, x[0]);
    uint32_t w = ggfs_binary_op(g, GOP_ADD, mm(b, il, LW_TM_W2, unary(b, UN_TANH, mm(b, il, LW_TM_W1, x[1]))),
                                ggfs_llm_wt(b, il, LW_TM_W0));
    w = unary(b, UN_EXP, ggfs_unary_op(g, GOP_SCALE, unary(b, UN_SIGMOID, w))); // exp(-0.606531 sigmoid(w))
    uint32_t k = mm(b, il, LW_TM_KEY, x[2]);
    uint32_t v = mm(b, il, LW_TM_VALUE, x[3]);
    if (*v_first == GGFS_NO_TENSOR) {
        *v_first = v;
    } else {
        const uint32_t lean = unary(b, UN_SIGMOID, low_rank(b, il, LW_TM_V0, LW_TM_V1, LW_TM_V2, x[3]));
        v = ggfs_binary_op(g, GOP_ADD, v, ggfs_binary_op(g, GOP_MUL, ggfs_binary_op(g, GOP_SUB, *v_first, v), lean));
    }
    const uint32_t gate =
        gating ? mm(b, il, LW_TM_G2, unary(b, UN_SIGMOID, mm(b, il, LW_TM_G1, x[5]))) : GGFS_NO_TENSOR;
    uint32_t a = unary(b, UN_SIGMOID, low_rank(b, il, LW_TM_A0, LW_TM_A1, LW_TM_A2, x[4]));
    uint32_t kk = ggfs_reshape(g, mul_w(b, il, k, LW_TM_K_K), head, h, t, 1);
    kk = ggfs_unary_op(g, GOP_L2_NORM, kk);
    const uint32_t ka = mul_w(b, il, k, LW_TM_K_A);
    k = ggfs_binary_op(g, GOP_ADD, k, ggfs_binary_op(g, GOP_SUB, ggfs_binary_op(g, GOP_MUL, a, ka), ka));
    r = ggfs_reshape(g, r, head, h, t, 1);
    w = ggfs_reshape(g, w, head, h, t, 1);
    k = ggfs_reshape(g, k, head, h, t, 1);
    v = ggfs_reshape(g, v, head, h, t, 1);
    a = ggfs_reshape(g, a, head, h, t, 1);
    const uint32_t s_l = ggfs_llm_state(b, il, n_embd * head);
    const uint32_t state = ggfs_llm_build_rs(b, s_l, n_embd * head, NULL);
    const uint32_t src[7] = {r, w, k, v, unary(b, UN_NEG, kk), ggfs_binary_op(g, GOP_MUL, kk, a), state};
    const uint32_t out = ggfs_wkv(g, GOP_RWKV_WKV7, src, 7);
    if (out == GGFS_NO_TENSOR) {
        g->failed = true;
        return out;
    }
    const bool normed = ggfs_llm_has(b, il, LW_TM_LN) && ggfs_llm_has(b, il, LW_TM_LN_B);
    cur = group_norm(b, il, wkv_output(b, out, s_l, n_embd, head), n_embd, head, normed);
    const uint32_t r_k = ggfs_reshape(g, ggfs_llm_wt(b, il, LW_TM_R_K), head, h, 1, 1);
    const uint32_t rk = ggfs_sum_rows(g, ggfs_binary_op(g, GOP_MUL, ggfs_binary_op(g, GOP_MUL, k, r), r_k));
    cur = ggfs_binary_op(g, GOP_ADD, cur, ggfs_reshape(g, ggfs_binary_op(g, GOP_MUL, v, rk), n_embd, t, 1, 1));
    if (gating)
        cur = ggfs_binary_op(g, GOP_MUL, cur, gate);
    cur = mm(b, il, LW_TM_OUTPUT, cur);
    return ggfs_reshape(g, cur, n_embd, t, 1, 1);
}

/* build_rwkv6_channel_mix, build_rwkv7_channel_mix (no receptance). */
static uint32_t channel_mix(builder *b, uint32_t il, uint32_t cur, uint32_t x_prev)
{
    ggfs_cgraph *g = b->g;
    const uint32_t sx = ggfs_binary_op(g, GOP_SUB, x_prev, cur);
    const uint32_t xk = ggfs_binary_op(g, GOP_ADD, mul_w(b, il, sx, LW_CM_LERP_K), cur);
    const bool v6 = ggfs_llm_has(b, il, LW_CM_RECEPTANCE);
    const uint32_t xr = v6 ? ggfs_binary_op(g, GOP_ADD, mul_w(b, il, sx, LW_CM_LERP_R), cur) : GGFS_NO_TENSOR;
    const uint32_t r = v6 ? unary(b, UN_SIGMOID, mm(b, il, LW_CM_RECEPTANCE, xr)) : GGFS_NO_TENSOR;
    const uint32_t k = ggfs_unary_op(g, GOP_SQR, unary(b, UN_RELU, mm(b, il, LW_CM_KEY, xk)));
    const uint32_t out = mm(b, il, LW_CM_VALUE, k);
    return v6 ? ggfs_binary_op(g, GOP_MUL, r, out) : out;
}

/* A [n_embd, 1, 1] view of x's token at `at`. */
static uint32_t token(builder *b, uint32_t x, int64_t at)
{
    const ggfs_gt *t = &b->g->t[x];
    return ggfs_llm_view(b, x, t->ne[0], 1, 1, 1, t->nb[1], t->nb[2], t->nb[2], (uint64_t)at * t->nb[1]);
}

/* Each token's previous one: the kept shift, then x's tokens but the last. */
static uint32_t previous(builder *b, uint32_t shift, uint32_t x)
{
    const ggfs_gt *t = &b->g->t[x];
    const uint32_t before = ggfs_llm_view(b, x, t->ne[0], b->n_tokens - 1, 1, 1, t->nb[1], t->nb[2], t->nb[2], 0);
    return ggfs_concat(b->g, shift, before, 1);
}

uint32_t ggfs_llm_rwkv_layers(builder *b, uint32_t inp, rwkv_kind kind, norm_type norm)
{
    const ggfs_llm_model *m = b->m;
    ggfs_cgraph *g = b->g;
    const int64_t head = m->wkv_head, t = b->n_tokens;
    const bool v7 = kind == RWKV7 || kind == RWKV7_A, ffn = kind == RWKV6_QWEN2 || kind == RWKV7_A;
    if (inp == GGFS_NO_TENSOR || head <= 0 || g->t[inp].ne[0] % head || t < 2) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const int64_t n_embd = g->t[inp].ne[0], shifts = ffn ? 1 : 2;
    uint32_t v_first = GGFS_NO_TENSOR;
    for (uint32_t il = 0; il < m->n_trunk && !g->failed; il++) {
        const bool last = il + 1 == m->n_trunk;
        inp = ggfs_reshape(g, inp, n_embd, t, 1, 1);
        // build_rwkv_token_shift_load
        const uint32_t r_l = ggfs_llm_state(b, il, n_embd * shifts);
        uint32_t shift = ggfs_llm_build_rs(b, r_l, n_embd * shifts, NULL);
        shift = ggfs_reshape(g, shift, n_embd, shifts, 1, 1);
        const uint64_t sn1 = g->t[shift].nb[1], sn2 = g->t[shift].nb[2];
        const uint32_t att_shift = ffn ? shift : ggfs_llm_view(b, shift, n_embd, 1, 1, 1, sn1, sn2, sn2, 0);
        const uint32_t att_norm = ggfs_llm_norm(b, inp, ggfs_llm_wt(b, il, LW_ATTN_NORM),
                                                ggfs_llm_wt(b, il, LW_ATTN_NORM_B), norm, (int)il);
        uint32_t x_prev = previous(b, att_shift, att_norm);
        uint32_t cur = v7 ? time_mix7(b, il, att_norm, x_prev, &v_first, head)
                          : time_mix6(b, il, att_norm, x_prev, head);
        if (cur == GGFS_NO_TENSOR)
            return cur;
        const uint64_t r_row = ggfs_row_size(GT_F32, n_embd * shifts);
        uint32_t ffn_inp;
        if (ffn) {
            // the attention's last token kept; the feed-forward block over the sum
            const uint32_t kept = token(b, att_norm, t - 1);
            ggfs_expand(g, ggfs_cpy(g, ggfs_llm_view(b, kept, n_embd, 1, 1, 1, r_row, r_row, r_row, 0),
                                    ggfs_llm_view(b, r_l, n_embd, 1, 1, 1, r_row, r_row, r_row, 0)));
            ffn_inp = ggfs_reshape(g, ggfs_binary_op(g, GOP_ADD, cur, inp), n_embd, t, 1, 1);
            if (last)
                ffn_inp = ggfs_get_rows(g, ffn_inp, b->out_ids);
            cur = ggfs_llm_norm(b, ffn_inp, ggfs_llm_wt(b, il, LW_FFN_NORM), GGFS_NO_TENSOR, norm, (int)il);
            cur = ggfs_llm_ffn(b, il, cur);
        } else {
            ffn_inp = ggfs_binary_op(g, GOP_ADD, cur, inp);
            uint32_t ffn_norm = ggfs_llm_norm(b, ffn_inp, ggfs_llm_wt(b, il, LW_ATTN_NORM_2),
                                              ggfs_llm_wt(b, il, LW_ATTN_NORM_2_B), norm, (int)il);
            const uint32_t ffn_shift = ggfs_llm_view(b, shift, n_embd, 1, 1, 1, sn1, sn2, sn2,
                                                     ggfs_row_size(GT_F32, n_embd));
            x_prev = previous(b, ffn_shift, ffn_norm);
            // both norms' last tokens kept
            const uint32_t kept = ggfs_concat(g, token(b, att_norm, t - 1), token(b, ffn_norm, t - 1), 1);
            if (kept == GGFS_NO_TENSOR) {
                g->failed = true;
                return kept;
            }
            ggfs_expand(g, ggfs_cpy(g, ggfs_llm_view(b, kept, n_embd * 2, 1, 1, 1, r_row, r_row, r_row, 0),
                                    ggfs_llm_view(b, r_l, n_embd * 2, 1, 1, 1, r_row, r_row, r_row, 0)));
            ffn_inp = ggfs_reshape(g, ffn_inp, n_embd, t, 1, 1);
            ffn_norm = ggfs_reshape(g, ffn_norm, n_embd, t, 1, 1);
            x_prev = ggfs_reshape(g, x_prev, n_embd, t, 1, 1);
            if (last) {
                ffn_inp = ggfs_get_rows(g, ffn_inp, b->out_ids);
                ffn_norm = ggfs_get_rows(g, ffn_norm, b->out_ids);
                x_prev = ggfs_get_rows(g, x_prev, b->out_ids);
            }
            cur = channel_mix(b, il, ffn_norm, x_prev);
        }
        inp = ggfs_binary_op(g, GOP_ADD, cur, ffn_inp);
        if (m->rwkv_rescale && (il + 1) % m->rwkv_rescale == 0)
            inp = ggfs_unary_op(g, GOP_SCALE, inp);
    }
    return inp;
}
