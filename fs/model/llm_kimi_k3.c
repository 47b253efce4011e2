/*
 * kimi-k3's layers as tensor shapes (llm_build.h), after
 * src/models/kimi-k3.cpp: Kimi's delta attention or latent attention,
 * then the feed-forward block, each reading the residual stream mixed
 * from the checkpoints banked every attn_res.block_size layers (a softmax
 * over the checkpoints' and the stream's scores).
 */
#include "model/llm_build.h"

typedef struct checkpoints {
    uint32_t stack; // [n_embd, n, tokens], or none yet
} checkpoints;

/* res_push: the layer's raw input banked. */
static void push(builder *b, checkpoints *c, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const uint32_t ckpt = ggfs_reshape(g, cur, g->t[cur].ne[0], 1, b->n_tokens, 1);
    c->stack = c->stack == GGFS_NO_TENSOR ? ckpt : ggfs_concat(g, c->stack, ckpt, 1);
}

/* The scores of x's rows: sum(rms_norm(x) * w) over each row. */
static uint32_t scores(ggfs_cgraph *g, uint32_t x, uint32_t w)
{
    return ggfs_sum_rows(g, ggfs_binary_op(g, GOP_MUL, ggfs_unary_op(g, GOP_RMS_NORM, x), w));
}

/* res_mix: the checkpoints and cur weighted by the softmax of their scores. */
static uint32_t mix(builder *b, const checkpoints *c, uint32_t cur, uint32_t w)
{
    ggfs_cgraph *g = b->g;
    if (c->stack == GGFS_NO_TENSOR || cur == GGFS_NO_TENSOR)
        return cur;
    const int64_t n = g->t[c->stack].ne[1], t = b->n_tokens;
    const uint32_t src = ggfs_reshape(g, scores(g, c->stack, w), n, t, 1, 1);
    const uint32_t probs = ggfs_soft_max_ext(g, ggfs_concat(g, src, scores(g, cur, w), 0), GGFS_NO_TENSOR,
                                             GGFS_NO_TENSOR);
    if (probs == GGFS_NO_TENSOR)
        return probs;
    const uint64_t pn1 = g->t[probs].nb[1];
    const uint32_t p_src = ggfs_unary_op(g, GOP_CONT, ggfs_llm_view(b, probs, n, t, 1, 1, pn1, pn1 * t, pn1 * t, 0));
    const uint32_t p_cur = ggfs_unary_op(g, GOP_CONT, ggfs_llm_view(b, probs, 1, t, 1, 1, pn1, pn1 * t, pn1 * t,
                                                                    ggfs_row_size(GT_F32, n)));
    const uint32_t out = ggfs_dsv4_hc_pre(g, c->stack, p_src);
    return ggfs_binary_op(g, GOP_ADD, out, ggfs_binary_op(g, GOP_MUL, cur, p_cur));
}

uint32_t ggfs_llm_kimi_k3_layers(builder *b, uint32_t inp)
{
    const ggfs_llm_model *m = b->m;
    ggfs_cgraph *g = b->g;
    const uint32_t block = m->attn_res_block;
    checkpoints c = {GGFS_NO_TENSOR};
    for (uint32_t il = 0; il < m->n_trunk && !g->failed; il++) {
        uint32_t sum = inp;
        uint32_t cur = block ? mix(b, &c, sum, ggfs_llm_wt(b, il, LW_ATTN_RES_SCORE)) : sum;
        // (a checkpoint's layer restarts the stream from its attention's output alone)
        const bool banked = block && il % block == 0;
        if (banked)
            push(b, &c, sum);
        cur = ggfs_llm_norm(b, cur, ggfs_llm_wt(b, il, LW_ATTN_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        ggfs_expand(g, cur);
        cur = ggfs_llm_has(b, il, LW_SSM_CONV1D_Q) ? ggfs_llm_kda(b, il, cur) : ggfs_llm_attn_mla(b, il, cur);
        sum = banked ? cur : ggfs_binary_op(g, GOP_ADD, sum, cur);
        cur = block ? mix(b, &c, sum, ggfs_llm_wt(b, il, LW_FFN_RES_SCORE)) : sum;
        cur = ggfs_llm_norm(b, cur, ggfs_llm_wt(b, il, LW_FFN_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        inp = ggfs_binary_op(g, GOP_ADD, sum, ggfs_llm_ffn(b, il, cur));
    }
    if (block)
        inp = mix(b, &c, inp, ggfs_llm_held(b, &m->output_res_score, ggfs_llm_output_home(b)));
    if (inp == GGFS_NO_TENSOR)
        g->failed = true;
    return inp;
}
