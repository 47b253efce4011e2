/*
 * wavtokenizer-dec's graph as tensor shapes (llm_build.h), after
 * src/models/wavtokenizer-dec.cpp: the embeddings through a 1D
 * convolution, the position net (residual blocks of group norms and
 * convolutions, an attention over the sequence, a norm), then ConvNeXt
 * blocks (a depthwise convolution, a norm and a feed-forward block, scaled),
 * the output's projection and bias.
 */
#include "model/llm_build.h"

static uint32_t wt(builder *b, uint32_t il, ggfs_lw kind)
{
    return ggfs_llm_wt(b, il, kind);
}

static uint32_t transposed(ggfs_cgraph *g, uint32_t x)
{
    return ggfs_unary_op(g, GOP_CONT, ggfs_transpose(g, x));
}

/* ggml_conv_1d_ph: kernel k over x [length, channels], padded by half
 * the kernel: im2col, then one product. */
static uint32_t conv(ggfs_cgraph *g, uint32_t k, uint32_t x)
{
    if (k == GGFS_NO_TENSOR || x == GGFS_NO_TENSOR)
        return GGFS_NO_TENSOR;
    const int64_t *kn = g->t[k].ne;
    const int64_t kw = kn[0], ic = kn[1], oc = kn[2];
    const uint32_t cols = ggfs_im2col_1d(g, k, x, kw / 2);
    if (cols == GGFS_NO_TENSOR)
        return cols;
    const int64_t *cn = g->t[cols].ne;
    const int64_t len = cn[1], n = cn[2];
    const uint32_t y = ggfs_mul_mat(g, ggfs_reshape(g, cols, cn[0], cn[2] * cn[1], 1, 1),
                                    ggfs_reshape(g, k, kw * ic, oc, 1, 1));
    return ggfs_reshape(g, y, len, oc, n, 1);
}

/* ggml_conv_1d_dw_ph: a kernel per channel. */
static uint32_t conv_dw(ggfs_cgraph *g, uint32_t k, uint32_t x)
{
    if (k == GGFS_NO_TENSOR || x == GGFS_NO_TENSOR)
        return GGFS_NO_TENSOR;
    const int64_t *xn = g->t[x].ne;
    const uint32_t cols = ggfs_im2col_1d(g, k, ggfs_reshape(g, x, xn[0], 1, xn[1], xn[2]), g->t[k].ne[0] / 2);
    const uint32_t y = ggfs_mul_mat(g, cols, k);
    return y == GGFS_NO_TENSOR ? y : ggfs_reshape(g, y, g->t[y].ne[0], g->t[y].ne[2], 1, 1);
}

/* build_norm's LLM_NORM_GROUP, with weight and bias (named as the layer's, 0). */
static uint32_t group_norm(builder *b, uint32_t x, uint32_t w, uint32_t wb)
{
    ggfs_cgraph *g = b->g;
    if (x == GGFS_NO_TENSOR)
        return x;
    const int64_t *xn = g->t[x].ne;
    x = ggfs_unary_op(g, GOP_GROUP_NORM, ggfs_reshape(g, x, xn[0], 1, xn[1], 1));
    x = x == GGFS_NO_TENSOR ? x : ggfs_reshape(g, x, g->t[x].ne[0], g->t[x].ne[2], 1, 1);
    ggfs_llm_cb(b, x, "norm", 0);
    return ggfs_llm_bias(b, ggfs_binary_op(g, GOP_MUL, x, w), wb);
}

/* x times its sigmoid. */
static uint32_t swish(ggfs_cgraph *g, uint32_t x)
{
    return ggfs_binary_op(g, GOP_MUL, ggfs_unary(g, UN_SIGMOID, x), x);
}

/* posnet.il: a residual block (0, 1, 3, 4), attention (2) or a norm (5). */
static uint32_t posnet(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const uint32_t in = cur;
    if (il == 5)
        return group_norm(b, cur, wt(b, il, LW_PN_NORM), wt(b, il, LW_PN_NORM_B));
    if (il == 2) {
        cur = group_norm(b, cur, wt(b, il, LW_PN_ATTN_NORM), wt(b, il, LW_PN_ATTN_NORM_B));
        uint32_t q = conv(g, wt(b, il, LW_PN_ATTN_Q), cur), k = conv(g, wt(b, il, LW_PN_ATTN_K), cur),
                 v = conv(g, wt(b, il, LW_PN_ATTN_V), cur);
        q = transposed(g, ggfs_llm_bias(b, q, wt(b, il, LW_PN_ATTN_Q_B)));
        k = transposed(g, ggfs_llm_bias(b, k, wt(b, il, LW_PN_ATTN_K_B)));
        v = ggfs_llm_bias(b, v, wt(b, il, LW_PN_ATTN_V_B));
        const uint32_t kq = ggfs_soft_max_ext(g, ggfs_mul_mat(g, k, q), GGFS_NO_TENSOR, GGFS_NO_TENSOR);
        cur = conv(g, wt(b, il, LW_PN_ATTN_O), ggfs_mul_mat(g, kq, v));
        return ggfs_binary_op(g, GOP_ADD, ggfs_llm_bias(b, cur, wt(b, il, LW_PN_ATTN_O_B)), in);
    }
    cur = swish(g, group_norm(b, cur, wt(b, il, LW_PN_NORM1), wt(b, il, LW_PN_NORM1_B)));
    cur = ggfs_llm_bias(b, conv(g, wt(b, il, LW_PN_CONV1), cur), wt(b, il, LW_PN_CONV1_B));
    cur = swish(g, group_norm(b, cur, wt(b, il, LW_PN_NORM2), wt(b, il, LW_PN_NORM2_B)));
    cur = ggfs_llm_bias(b, conv(g, wt(b, il, LW_PN_CONV2), cur), wt(b, il, LW_PN_CONV2_B));
    return ggfs_binary_op(g, GOP_ADD, cur, in);
}

/* convnext.il: its depthwise conv, norm, feed-forward block (gelu),
 * scale, added to its input. */
static uint32_t convnext(builder *b, uint32_t il, uint32_t in)
{
    ggfs_cgraph *g = b->g;
    uint32_t cur = ggfs_llm_bias(b, conv_dw(g, wt(b, il, LW_CN_DW), in), wt(b, il, LW_CN_DW_B));
    cur = ggfs_llm_norm(b, transposed(g, cur), wt(b, il, LW_CN_NORM), wt(b, il, LW_CN_NORM_B), NORM_LAYER, -1);
    cur = ggfs_llm_bias(b, ggfs_mul_mat(g, wt(b, il, LW_CN_PW1), cur), wt(b, il, LW_CN_PW1_B));
    cur = ggfs_unary(g, UN_GELU, cur);
    cur = ggfs_llm_bias(b, ggfs_mul_mat(g, wt(b, il, LW_CN_PW2), cur), wt(b, il, LW_CN_PW2_B));
    cur = ggfs_binary_op(g, GOP_MUL, cur, wt(b, il, LW_CN_GAMMA));
    return ggfs_binary_op(g, GOP_ADD, transposed(g, cur), in);
}

void ggfs_llm_wavtokenizer(builder *b, uint32_t embd)
{
    const ggfs_llm_model *m = b->m;
    ggfs_cgraph *g = b->g;
    // (the first conv and the norm between the nets are layer 0's; the output the output's)
    const ggfs_home first = b->i_gpu_start == 0 ? HOME_GPU : HOME_HOST, out = ggfs_llm_output_home(b);
    if (m->n_posnet > 6 || m->n_posnet > m->n_layer || m->n_convnext > m->n_layer) {
        g->failed = true;
        return;
    }
    uint32_t cur = conv(g, ggfs_llm_held(b, &m->conv1d, first), transposed(g, embd));
    cur = ggfs_llm_bias(b, cur, ggfs_llm_held(b, &m->conv1d_b, first));
    for (uint32_t il = 0; il < m->n_posnet && !g->failed; il++)
        cur = posnet(b, il, cur);
    cur = ggfs_llm_norm(b, transposed(g, cur), ggfs_llm_held(b, &m->tok_embd_norm, first),
                        ggfs_llm_held(b, &m->tok_embd_norm_b, first), NORM_LAYER, 0);
    cur = transposed(g, cur);
    for (uint32_t il = 0; il < m->n_convnext && !g->failed; il++)
        cur = convnext(b, il, cur);
    cur = ggfs_llm_norm(b, transposed(g, cur), ggfs_llm_held(b, &m->output_norm, out),
                        ggfs_llm_held(b, &m->output_norm_b, out), NORM_LAYER, -1);
    cur = ggfs_llm_bias(b, ggfs_mul_mat(g, ggfs_llm_held(b, &m->output, out), cur),
                        ggfs_llm_held(b, &m->output_b, out));
    if (cur == GGFS_NO_TENSOR) {
        g->failed = true;
        return;
    }
    ggfs_set_output(g, cur);
    ggfs_expand(g, cur);
}
