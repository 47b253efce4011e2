/*
 * gemma3n's graph as tensor shapes (llm_build.h), after
 * src/models/gemma3n.cpp: the embeddings kept as four "altup" streams
 * (the active one and three projected from it), each layer predicting
 * them, running attention, a low-rank "laurel" branch and the feed-forward
 * block on the active one, correcting them, and mixing in its slice of the
 * per-layer inputs; the streams merged back for the output.
 */
#include "model/llm_build.h"

/* llama_hparams' gemma3n defaults, which no key sets. */
enum { N_ALTUP = 4, I_ALTUP_ACT = 0, N_LAYER_SPARSITY = 10, N_LAYER_KV_FROM_START = 20 };

static uint32_t wt(builder *b, uint32_t il, ggfs_lw kind)
{
    return ggfs_llm_wt(b, il, kind);
}

static uint32_t rms(builder *b, uint32_t x, uint32_t w, int il)
{
    return ggfs_llm_norm(b, x, w, GGFS_NO_TENSOR, NORM_RMS, il);
}

/* gemma3n_view_2d_slice: x's idx-th [ne0, ne1] plane. */
static uint32_t slice(builder *b, uint32_t x, int64_t idx)
{
    if (x == GGFS_NO_TENSOR)
        return x;
    const ggfs_gt *t = &b->g->t[x];
    return ggfs_llm_view(b, x, t->ne[0], t->ne[1], 1, 1, t->nb[1], t->nb[2], t->nb[2],
                         ggfs_row_size(GT_F32, t->ne[0] * t->ne[1] * idx));
}

/* The planes after the first: [ne0, ne1, ne2 - 1]. */
static uint32_t rest(builder *b, uint32_t x)
{
    if (x == GGFS_NO_TENSOR)
        return x;
    const ggfs_gt *t = &b->g->t[x];
    const uint64_t plane = ggfs_row_size(GT_F32, t->ne[0] * t->ne[1]);
    return ggfs_llm_view(b, x, t->ne[0], t->ne[1], t->ne[2] - 1, 1, ggfs_row_size(GT_F32, t->ne[0]), plane,
                         plane * (uint64_t)(t->ne[2] - 1), plane);
}

/* calc_magnitude: each row's L2 norm. */
static uint32_t magnitude(ggfs_cgraph *g, uint32_t x)
{
    return ggfs_unary_op(g, GOP_SQRT, ggfs_sum_rows(g, ggfs_unary_op(g, GOP_SQR, x)));
}

/* x rescaled to the magnitude target: x * target / |x|. */
static uint32_t rescaled(ggfs_cgraph *g, uint32_t x, uint32_t target)
{
    return ggfs_binary_op(g, GOP_DIV, ggfs_binary_op(g, GOP_MUL, x, target), magnitude(g, x));
}

/* altup_compute_router_modalities: [altups, tokens]. */
static uint32_t modalities(builder *b, uint32_t il, uint32_t x)
{
    ggfs_cgraph *g = b->g;
    const uint32_t in = ggfs_unary_op(g, GOP_SCALE, rms(b, x, wt(b, il, LW_ALTUP_ROUTER_NORM), (int)il));
    return ggfs_unary(g, UN_TANH, ggfs_mul_mat(g, wt(b, il, LW_ALTUP_ROUTER), in));
}

static uint32_t altup_predict(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    uint32_t coefs = ggfs_mul_mat(g, wt(b, il, LW_ALTUP_PREDICT_COEF), modalities(b, il, slice(b, cur, I_ALTUP_ACT)));
    coefs = ggfs_reshape(g, coefs, N_ALTUP, N_ALTUP, b->n_tokens, 1);
    const uint32_t permuted = ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, cur, 1, 2, 0, 3));
    uint32_t predictions = ggfs_mul_mat(g, permuted, coefs);
    predictions = ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, predictions, 0, 2, 1, 3));
    return ggfs_binary_op(g, GOP_ADD, predictions, cur);
}

static uint32_t altup_correct(builder *b, uint32_t il, uint32_t predictions, uint32_t activated)
{
    ggfs_cgraph *g = b->g;
    const int64_t t = b->n_tokens;
    const uint32_t mod = modalities(b, il, activated);
    uint32_t innovation = ggfs_binary_op(g, GOP_SUB, activated, slice(b, predictions, I_ALTUP_ACT));
    uint32_t coefs = ggfs_unary_op(g, GOP_SCALE, ggfs_mul_mat(g, wt(b, il, LW_ALTUP_CORRECT_COEF), mod)); // (+ 1)
    coefs = ggfs_cont_4d(g, ggfs_transpose(g, coefs), 1, t, N_ALTUP, 1);
    if (innovation == GGFS_NO_TENSOR)
        return innovation;
    innovation = ggfs_repeat_4d(g, innovation, g->t[innovation].ne[0], t, N_ALTUP, 1);
    return ggfs_binary_op(g, GOP_ADD, ggfs_binary_op(g, GOP_MUL, innovation, coefs), predictions);
}

/* laurel: a low-rank branch beside the attention. */
static uint32_t laurel(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    uint32_t x = ggfs_mul_mat(g, wt(b, il, LW_LAUREL_R), ggfs_mul_mat(g, wt(b, il, LW_LAUREL_L), cur));
    x = rms(b, x, wt(b, il, LW_LAUREL_POST_NORM), (int)il);
    return ggfs_binary_op(g, GOP_ADD, x, cur);
}

/* gaussian_topk: the values above mean + 1.645 std, less that cutoff. */
static uint32_t gaussian_topk(ggfs_cgraph *g, uint32_t x)
{
    const uint32_t mean = ggfs_mean(g, x);
    const uint32_t sqr = ggfs_unary_op(g, GOP_SQR, ggfs_binary_op(g, GOP_SUB, x, mean));
    const uint32_t std = ggfs_unary_op(g, GOP_SQRT, ggfs_unary_op(g, GOP_SCALE, ggfs_sum_rows(g, sqr)));
    const uint32_t cutoff = ggfs_binary_op(g, GOP_ADD, mean, ggfs_unary_op(g, GOP_SCALE, std));
    return ggfs_unary(g, UN_RELU, ggfs_binary_op(g, GOP_SUB, x, cutoff));
}

/* The attention of layer il over its normed input: its own cache, or
 * where it has none, the last earlier layer's of its kind. */
static uint32_t attention(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    if (l->cache == GGFS_LAYER_NO_KV) {
        const uint32_t src = N_LAYER_KV_FROM_START - (l->sliding ? 2 : 1);
        if (il < N_LAYER_KV_FROM_START || ggfs_llm_has(b, il, LW_WQKV)) {
            g->failed = true;
            return GGFS_NO_TENSOR;
        }
        uint32_t q = ggfs_reshape(g, ggfs_mul_mat(g, wt(b, il, LW_WQ), cur), l->head_k, l->n_head, b->n_tokens, 1);
        q = ggfs_rope(g, rms(b, q, wt(b, il, LW_Q_NORM), (int)il), b->inp_pos, GGFS_NO_TENSOR);
        return ggfs_llm_attn_reused(b, il, src, q, wt(b, il, LW_WO));
    }
    qkv x = ggfs_llm_qkv(b, il, cur, true);
    x.q = rms(b, x.q, wt(b, il, LW_Q_NORM), (int)il);
    x.k = rms(b, x.k, wt(b, il, LW_K_NORM), (int)il);
    x.v = ggfs_unary_op(g, GOP_RMS_NORM, x.v);
    x.q = ggfs_rope(g, x.q, b->inp_pos, GGFS_NO_TENSOR);
    x.k = ggfs_rope(g, x.k, b->inp_pos, GGFS_NO_TENSOR);
    return ggfs_llm_attn(b, il, x, wt(b, il, LW_WO), GGFS_NO_TENSOR);
}

static uint32_t layer(builder *b, uint32_t il, uint32_t cur, uint32_t per_layer)
{
    ggfs_cgraph *g = b->g;
    const uint32_t predictions = altup_predict(b, il, cur);
    const uint32_t active = slice(b, predictions, I_ALTUP_ACT);
    cur = rms(b, active, wt(b, il, LW_ATTN_NORM), (int)il);
    const uint32_t laurel_out = laurel(b, il, cur);
    cur = attention(b, il, cur);
    cur = rms(b, cur, wt(b, il, LW_ATTN_POST_NORM), (int)il);
    cur = ggfs_binary_op(g, GOP_ADD, cur, active);
    const uint32_t attn_laurel = ggfs_unary_op(g, GOP_SCALE, ggfs_binary_op(g, GOP_ADD, cur, laurel_out));
    cur = rms(b, attn_laurel, wt(b, il, LW_FFN_NORM), (int)il);
    const uint32_t up = ggfs_mul_mat(g, wt(b, il, LW_FFN_UP), cur);
    uint32_t gate = ggfs_mul_mat(g, wt(b, il, LW_FFN_GATE), cur);
    if (il < N_LAYER_SPARSITY)
        gate = gaussian_topk(g, gate);
    cur = ggfs_binary_op(g, GOP_MUL, up, ggfs_unary(g, UN_GELU, gate));
    cur = rms(b, ggfs_mul_mat(g, wt(b, il, LW_FFN_DOWN), cur), wt(b, il, LW_FFN_POST_NORM), -1);
    const uint32_t corrected = altup_correct(b, il, predictions, ggfs_binary_op(g, GOP_ADD, cur, attn_laurel));
    // the corrected active stream, gated, times this layer's per-layer input, added to the other streams
    uint32_t first = ggfs_binary_op(g, GOP_MUL, slice(b, corrected, I_ALTUP_ACT), wt(b, il, LW_ALTUP_CORRECT_SCALE));
    first = ggfs_unary(g, UN_GELU, ggfs_mul_mat(g, wt(b, il, LW_PL_INP_GATE), first));
    first = ggfs_binary_op(g, GOP_MUL, first, slice(b, per_layer, il));
    first = rms(b, ggfs_mul_mat(g, wt(b, il, LW_PL_PROJ), first), wt(b, il, LW_PL_POST_NORM), (int)il);
    return ggfs_concat(g, slice(b, corrected, 0), ggfs_binary_op(g, GOP_ADD, rest(b, corrected), first), 2);
}

void ggfs_llm_gemma3n(builder *b, uint32_t embd)
{
    const ggfs_llm_model *m = b->m;
    ggfs_cgraph *g = b->g;
    const ggfs_home out = ggfs_llm_output_home(b);
    const int64_t t = b->n_tokens;
    if (embd == GGFS_NO_TENSOR || m->n_layer < N_LAYER_KV_FROM_START || m->per_layer_tok_embd.bytes == 0) {
        g->failed = true;
        return;
    }
    const uint32_t per_layer = ggfs_llm_per_layer_inputs(b, embd);
    // the other streams projected from the embeddings, at their magnitude
    const uint32_t target = magnitude(g, embd);
    uint32_t added = ggfs_mul_mat(g, ggfs_llm_held(b, &m->altup_proj, out),
                                  ggfs_repeat_4d(g, embd, g->t[embd].ne[0], t, N_ALTUP - 1, 1));
    uint32_t cur = ggfs_concat(g, embd, rescaled(g, added, target), 2);
    for (uint32_t il = 0; il < m->n_trunk && !g->failed; il++)
        cur = layer(b, il, cur, per_layer);
    // the streams merged: the others unprojected to the active one's magnitude, then the mean
    const uint32_t active_mag = magnitude(g, slice(b, cur, I_ALTUP_ACT));
    const uint32_t unembd = rescaled(g, ggfs_mul_mat(g, ggfs_llm_held(b, &m->altup_unembd_proj, out), rest(b, cur)),
                                     active_mag);
    uint32_t merged = slice(b, cur, 0);
    for (int i = 0; i < N_ALTUP - 1; i++)
        merged = ggfs_binary_op(g, GOP_ADD, merged, slice(b, unembd, i));
    merged = ggfs_get_rows(g, ggfs_unary_op(g, GOP_SCALE, merged), b->out_ids);
    cur = rms(b, merged, ggfs_llm_held(b, &m->output_norm, out), -1);
    ggfs_set_output(g, cur);
    cur = ggfs_mul_mat(g, ggfs_llm_held(b, m->output.bytes ? &m->output : &m->tok_embd, out), cur);
    cur = ggfs_unary_op(g, GOP_SCALE, ggfs_unary(g, UN_TANH, ggfs_unary_op(g, GOP_SCALE, cur)));
    if (cur == GGFS_NO_TENSOR) {
        g->failed = true;
        return;
    }
    ggfs_set_output(g, cur);
    ggfs_expand(g, cur);
}
