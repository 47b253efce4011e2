/*
 * minimax-01's lightning attention layer as tensor shapes (llm_build.h),
 * after src/models/minimax-01.cpp: a linear attention whose state decays
 * per head, computed over the ubatch as a block (the state's part, the
 * block's own part masked by a decay per pair of tokens), its output
 * normed and gated.
 */
#include "model/llm_build.h"

void ggfs_llm_lightning_inputs(builder *b)
{
    ggfs_cgraph *g = b->g;
    const int64_t h = b->m->rules->layer[0].n_head, t = b->n_tokens;
    lightning_inputs *in = &b->la;
    in->slopes = ggfs_new(g, GT_F32, h, 1, 1, 1);
    in->q_decay = ggfs_new(g, GT_F32, 1, h, t, 1);
    in->k_decay = ggfs_new(g, GT_F32, 1, h, t, 1);
    in->diag_decay = ggfs_new(g, GT_F32, t, t, h, 1);
    const uint32_t all[4] = {in->slopes, in->q_decay, in->k_decay, in->diag_decay};
    for (int i = 0; i < 4; i++)
        ggfs_set_input(g, all[i]);
}

/* exp(scale(x)): a decay at this layer's slope. */
static uint32_t decay(ggfs_cgraph *g, uint32_t x)
{
    return ggfs_unary(g, UN_EXP, ggfs_unary_op(g, GOP_SCALE, x));
}

static uint32_t heads(builder *b, uint32_t qkv, int64_t head, int64_t h, int which)
{
    const ggfs_gt *x = &b->g->t[qkv];
    return ggfs_llm_view(b, qkv, head, h, b->n_tokens, 1, x->nb[1], x->nb[2], x->nb[3],
                         ggfs_row_size(GT_F32, head * which));
}

uint32_t ggfs_llm_lightning(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    const int64_t head = l->head_k, h = l->n_head, t = b->n_tokens;
    const lightning_inputs *in = &b->la;
    if (cur == GGFS_NO_TENSOR || head <= 0 || h <= 0 || in->slopes == GGFS_NO_TENSOR) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    // the conv state (none wide) read and expanded, as llama.cpp does
    const uint32_t r_l = ggfs_llm_state(b, il, 0), s_l = ggfs_llm_state(b, il, head * head * h);
    ggfs_expand(g, ggfs_llm_build_rs(b, r_l, 0, NULL));
    const uint32_t slope_rate = ggfs_unary_op(g, GOP_SCALE, in->slopes);
    cur = ggfs_reshape(g, cur, g->t[cur].ne[0], t, 1, 1);
    uint32_t qkv = ggfs_unary(g, UN_SILU, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQKV), cur));
    qkv = ggfs_reshape(g, qkv, 3 * head, h, t, 1);
    if (qkv == GGFS_NO_TENSOR) {
        g->failed = true;
        return qkv;
    }
    const uint32_t q = heads(b, qkv, head, h, 0), k = heads(b, qkv, head, h, 1), v = heads(b, qkv, head, h, 2);
    const uint32_t kv_old = ggfs_reshape(g, ggfs_llm_build_rs(b, s_l, head * head * h, NULL), head, head, h, 1);
    // the state's part, then the block's own, masked by the decay between each pair of tokens
    const uint32_t q_s = ggfs_binary_op(g, GOP_MUL, q, decay(g, in->q_decay));
    const uint32_t none_diag = ggfs_mul_mat(g, kv_old, ggfs_permute(g, q_s, 0, 2, 1, 3));
    uint32_t qk = ggfs_mul_mat(g, ggfs_permute(g, k, 0, 2, 1, 3), ggfs_permute(g, q, 0, 2, 1, 3));
    qk = ggfs_binary_op(g, GOP_MUL, qk, decay(g, in->diag_decay));
    const uint32_t v_trans = ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, v, 1, 2, 0, 3));
    const uint32_t out = ggfs_binary_op(g, GOP_ADD, none_diag, ggfs_mul_mat(g, v_trans, qk));
    ggfs_expand(g, out);
    // the state kept: the old one decayed over the block, plus the block's keys and values
    const uint32_t block_decay = ggfs_unary(g, UN_EXP, ggfs_unary_op(g, GOP_SCALE, slope_rate));
    const uint32_t kv_old_s = ggfs_binary_op(g, GOP_MUL, kv_old, ggfs_reshape(g, block_decay, 1, 1, h, 1));
    const uint32_t k_decayed = ggfs_binary_op(g, GOP_MUL, k, decay(g, in->k_decay));
    const uint32_t k_trans = ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, k_decayed, 1, 2, 0, 3));
    const uint32_t kv_new = ggfs_binary_op(g, GOP_ADD, kv_old_s, ggfs_mul_mat(g, k_trans, v_trans));
    const uint64_t st = ggfs_row_size(GT_F32, head * head * h);
    ggfs_expand(g, ggfs_cpy(g, kv_new, ggfs_llm_view(b, s_l, head * head * h, 1, 1, 1, st, st, st, 0)));
    // the heads' output normed, gated by the input's sigmoid, projected
    uint32_t o = ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, out, 0, 2, 1, 3));
    o = ggfs_reshape(g, o, head * h, t, 1, 1);
    o = ggfs_llm_norm(b, o, ggfs_llm_wt(b, il, LW_ATTN_NORM_2), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    const uint32_t gate = ggfs_unary(g, UN_SIGMOID, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_ATTN_GATE), cur));
    o = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WO), ggfs_binary_op(g, GOP_MUL, gate, o));
    return o == GGFS_NO_TENSOR ? o : ggfs_reshape(g, o, g->t[o].ne[0], t, 1, 1);
}
