/*
 * llm_graph_context's helpers as tensor shapes (llm_build.h), after
 * src/llama-graph.cpp and src/llama-kv-cache.cpp: one sequence, flash
 * attention on, the reserve's worst case (n_ubatch tokens, each an
 * output, over the whole cache).
 */
#include <string.h>

#include "model/llm_build.h"

const ggfs_llm_weight *ggfs_llm_layer_weight(const ggfs_llm_model *m, uint32_t il, ggfs_lw kind)
{
    return &m->layers[(size_t)m->block[il] * LW_COUNT + kind];
}

bool ggfs_llm_has(const builder *b, uint32_t il, ggfs_lw kind)
{
    return ggfs_llm_layer_weight(b->m, il, kind)->bytes > 0;
}

static ggfs_home layer_home(const builder *b, uint32_t il)
{
    return il >= b->i_gpu_start ? HOME_GPU : HOME_HOST;
}

ggfs_home ggfs_llm_output_home(const builder *b)
{
    return b->i_gpu_start <= b->m->n_layer ? HOME_GPU : HOME_HOST;
}

uint32_t ggfs_llm_held(builder *b, const ggfs_llm_weight *w, ggfs_home home)
{
    if (w->bytes == 0)
        return GGFS_NO_TENSOR;
    const int64_t ne1 = w->ne[1] ? w->ne[1] : 1, ne2 = w->ne[2] ? w->ne[2] : 1;
    const uint32_t t = ggfs_new_held(b->g, GT_WEIGHT, home, w->bytes, w->ne[0], ne1, ne2);
    // (f32 elements: its type, to the ops that ask)
    if (t != GGFS_NO_TENSOR && w->bytes == 4 * (uint64_t)(w->ne[0] * ne1 * ne2))
        b->g->t[t].flags |= GFLAG_F32_DATA;
    return t;
}

uint32_t ggfs_llm_wt(builder *b, uint32_t il, ggfs_lw kind)
{
    // (on the device of the block that holds it)
    const uint32_t block = b->m->block[il];
    uint32_t *made = &b->weights[(size_t)block * LW_COUNT + kind];
    if (*made == 0) {
        const ggfs_llm_weight *w = ggfs_llm_layer_weight(b->m, il, kind);
        const uint32_t t = ggfs_llm_held(b, w, w->host_only ? HOME_HOST : layer_home(b, block));
        if (t == GGFS_NO_TENSOR)
            return t;
        *made = t + 1;
    }
    return *made - 1;
}

/* cb: names a tensor; with every layer on the GPU, a layer's "norm" runs
 * on its layer's device (llama_context::graph_get_cb). */
void ggfs_llm_cb(builder *b, uint32_t t, const char *name, int il)
{
    ggfs_set_name(b->g, t, name, il);
    if (t != GGFS_NO_TENSOR && b->full_offload && il >= 0 && strcmp(name, "norm") == 0)
        b->g->t[t].backend = 0; // the GPU
}

uint32_t ggfs_llm_norm(builder *b, uint32_t cur, uint32_t w, uint32_t wb, norm_type type, int il)
{
    cur = ggfs_unary_op(b->g, type == NORM_RMS ? GOP_RMS_NORM : GOP_NORM, cur);
    if (w != GGFS_NO_TENSOR || wb != GGFS_NO_TENSOR)
        ggfs_llm_cb(b, cur, "norm", il);
    if (w != GGFS_NO_TENSOR)
        cur = ggfs_binary_op(b->g, GOP_MUL, cur, w);
    if (wb != GGFS_NO_TENSOR)
        cur = ggfs_binary_op(b->g, GOP_ADD, cur, wb);
    return cur;
}

uint32_t ggfs_llm_bias(builder *b, uint32_t cur, uint32_t bias)
{
    return bias == GGFS_NO_TENSOR ? cur : ggfs_binary_op(b->g, GOP_ADD, cur, bias);
}

uint32_t ggfs_llm_mm(builder *b, uint32_t il, ggfs_lw w, ggfs_lw ws, uint32_t cur)
{
    cur = ggfs_mul_mat(b->g, ggfs_llm_wt(b, il, w), cur);
    return ggfs_llm_has(b, il, ws) ? ggfs_binary_op(b->g, GOP_MUL, cur, ggfs_llm_wt(b, il, ws)) : cur;
}

/* build_inp_embd: the tokens' embeddings looked up on the host, the
 * embeddings input beside them. */
uint32_t ggfs_llm_inp_embd(builder *b)
{
    const ggfs_llm_model *m = b->m;
    const uint32_t tokens = ggfs_new(b->g, GT_I32, b->n_tokens, 1, 1, 1);
    ggfs_set_input(b->g, tokens);
    const uint32_t embd = ggfs_new(b->g, GT_F32, m->tok_embd.ne[0], b->n_tokens, 1, 1);
    ggfs_set_input(b->g, embd);
    const ggfs_home home = m->embd_from_output ? ggfs_llm_output_home(b) : HOME_HOST;
    const uint32_t cur = ggfs_get_rows(b->g, ggfs_llm_held(b, &m->tok_embd, home), tokens);
    ggfs_expand(b->g, cur);
    ggfs_expand(b->g, embd);
    ggfs_llm_cb(b, cur, "embd", -1);
    return cur;
}

/* llama_kv_cache's attn_rot_k and attn_rot_v: a quantized cache whose
 * layers' heads are all of one size, a multiple of 64, stores its rows
 * rotated; K's rotation is the largest power of two dividing the head. */
static void rotations(builder *b, cache_inputs *c, int layer_cache)
{
    const ggfs_memory_rules *r = b->m->rules;
    int64_t head_k = 0, head_v = 0;
    for (uint32_t il = 0; il < r->n_layer; il++) {
        const ggfs_layer_memory *l = &r->layer[il];
        if (l->cache != layer_cache)
            continue;
        head_k = head_k == 0 || head_k == (int64_t)l->head_k ? (int64_t)l->head_k : -1;
        head_v = head_v == 0 || head_v == (int64_t)l->head_v ? (int64_t)l->head_v : -1;
    }
    c->k_rot = c->v_rot = GGFS_NO_TENSOR;
    if (b->cache_type == GT_F16)
        return;
    if (head_k > 0 && head_k % 64 == 0) {
        int64_t n = 64;
        while (head_k % (2 * n) == 0)
            n *= 2;
        c->k_rot = ggfs_new(b->g, GT_F32, n, n, 1, 1);
        ggfs_set_input(b->g, c->k_rot);
    }
    if (head_v > 0 && head_v % 64 == 0) {
        c->v_rot = ggfs_new(b->g, GT_F32, 64, 64, 1, 1);
        ggfs_set_input(b->g, c->v_rot);
    }
}

static void cache_inputs_new(builder *b, cache_inputs *c, int64_t n_kv, int layer_cache)
{
    ggfs_cgraph *g = b->g;
    c->n_kv = n_kv;
    c->k_idxs = ggfs_new(g, GT_I64, b->n_tokens, 1, 1, 1);
    // (a transposed V cache takes each of its elements' rows: n_embd_v_gqa_max a token)
    int64_t v_rows = 1;
    for (uint32_t il = 0; b->no_flash && il < b->m->n_layer; il++) {
        const ggfs_layer_memory *l = &b->m->rules->layer[il];
        v_rows = (int64_t)l->head_v * l->n_head_kv > v_rows ? (int64_t)l->head_v * l->n_head_kv : v_rows;
    }
    c->v_idxs = ggfs_new(g, GT_I64, b->n_tokens * v_rows, 1, 1, 1);
    // flash attention's mask is f16, the softmax's f32
    c->kq_mask = ggfs_new(g, b->no_flash || b->flash_off_late ? GT_F32 : GT_F16, n_kv, b->n_tokens, 1, 1);
    ggfs_set_input(g, c->k_idxs);
    ggfs_set_input(g, c->v_idxs);
    ggfs_set_input(g, c->kq_mask);
    rotations(b, c, layer_cache);
}

/* Whether t is missing (the graph failed before it was made): the graph
 * fails, and nothing may read t. */
static bool failed(builder *b, uint32_t t)
{
    if (t == GGFS_NO_TENSOR)
        b->g->failed = true;
    return b->g->failed;
}

/* ggml_view_1d. */
static uint32_t view1(builder *b, uint32_t a, int64_t n, uint64_t offset)
{
    if (failed(b, a))
        return GGFS_NO_TENSOR;
    const uint64_t size = b->g->t[a].nb[0];
    const int64_t ne[4] = {n, 1, 1, 1};
    const uint64_t nb[4] = {size, size * (uint64_t)n, size * (uint64_t)n, size * (uint64_t)n};
    return ggfs_view_nd(b->g, a, ne, nb, offset);
}

/* The inputs the layers share (build_inp_pos, build_attn_inp_kv or its
 * sliding-window twin, build_inp_out_ids). */
void ggfs_llm_inputs(builder *b, uint32_t ctx)
{
    ggfs_cgraph *g = b->g;
    ggfs_memory m;
    ggfs_memory_at(b->m->rules, ctx, &m);
    b->inp_pos = ggfs_new(g, GT_I32, b->n_tokens * (b->mrope ? 4 : 1), 1, 1, 1);
    ggfs_set_input(g, b->inp_pos);
    b->no_cache = b->cacheless || (m.kv_layers == 0 && m.swa_layers == 0 && m.recurrent == 0);
    if (b->no_cache) {
        // build_attn_inp_no_cache: the ubatch masked against itself
        b->base.n_kv = b->n_tokens;
        b->base.kq_mask = ggfs_new(g, GT_F16, b->n_tokens, b->n_tokens, 1, 1);
        b->base.k_rot = b->base.v_rot = GGFS_NO_TENSOR;
        ggfs_set_input(g, b->base.kq_mask);
        // and a second for the sliding layers, where the model has any
        b->swa.kq_mask = GGFS_NO_TENSOR;
        for (uint32_t il = 0; il < b->m->n_layer && b->swa.kq_mask == GGFS_NO_TENSOR; il++) {
            if (b->m->rules->layer[il].sliding) {
                b->swa.kq_mask = ggfs_new(g, GT_F16, b->n_tokens, b->n_tokens, 1, 1);
                ggfs_set_input(g, b->swa.kq_mask);
            }
        }
    } else {
        cache_inputs_new(b, &b->base, (int64_t)m.context, GGFS_LAYER_FULL);
    }
    if (m.swa_layers > 0 && !b->no_cache)
        cache_inputs_new(b, &b->swa, (int64_t)m.swa_cells, GGFS_LAYER_SWA);
    b->out_ids = ggfs_new(g, GT_I32, b->n_outputs, 1, 1, 1);
    ggfs_set_input(g, b->out_ids);
    if (m.recurrent > 0) {
        // build_rs_inp: one sequence's row of state, and the others' (none)
        const uint32_t s_copy = ggfs_new(g, GT_I32, 1, 1, 1, 1);
        ggfs_set_input(g, s_copy);
        b->s_copy_main = view1(b, s_copy, 1, 0);
        b->s_copy_extra = view1(b, s_copy, 0, 4);
    }
}

/* llama_mul_mat_hadamard: cur's rows rotated by rot. */
static uint32_t hadamard(builder *b, uint32_t cur, uint32_t rot)
{
    ggfs_cgraph *g = b->g;
    if (cur == GGFS_NO_TENSOR || rot == GGFS_NO_TENSOR)
        return cur;
    const int64_t n = g->t[rot].ne[0], rows = ggfs_nelements(g, cur) / n;
    int64_t ne[4];
    memcpy(ne, g->t[cur].ne, sizeof ne);
    uint32_t res = ggfs_is_contiguous(g, cur) ? ggfs_reshape(g, cur, n, rows, 1, 1) : ggfs_cont_2d(g, cur, n, rows);
    res = ggfs_mul_mat(g, rot, res);
    return ggfs_reshape(g, res, ne[0], ne[1], ne[2], ne[3]);
}

uint32_t ggfs_llm_rope_factors(builder *b, uint32_t il)
{
    return ggfs_llm_held(b, &b->m->rope_freqs, layer_home(b, il));
}

/* Whether layer il's heads are of sizes and counts a real model has (the
 * keys are hostile): products of them then fit in an int64_t. */
#define HEADS_MAX (1u << 16)

static bool heads_fit(builder *b, uint32_t il)
{
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    const bool fit = l->head_k <= HEADS_MAX && l->head_v <= HEADS_MAX && l->n_head <= HEADS_MAX &&
                     l->n_head_kv <= HEADS_MAX;
    if (!fit)
        b->g->failed = true;
    return fit;
}

/* build_qkv's clamp of each projection where the keys give clamp_kqv. */
static uint32_t clamped(builder *b, uint32_t x)
{
    return b->m->clamp_kqv && !b->unclamped ? ggfs_unary_op(b->g, GOP_CLAMP, x) : x;
}

/* build_qkv: separate or fused projections, their biases, as heads or
 * (without reshape) as rows, those of a fused one made contiguous. */
qkv ggfs_llm_qkv(builder *b, uint32_t il, uint32_t cur, bool reshape)
{
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    ggfs_cgraph *g = b->g;
    if (!heads_fit(b, il))
        return (qkv){GGFS_NO_TENSOR, GGFS_NO_TENSOR, GGFS_NO_TENSOR};
    const int64_t hq = l->head_k, nq = l->n_head, hk = l->head_k, nk = l->n_head_kv, hv = l->head_v,
                  nv = l->n_head_kv;
    qkv r;
    if (ggfs_llm_has(b, il, LW_WQKV)) {
        const uint32_t x = clamped(
            b, ggfs_llm_bias(b, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQKV), cur), ggfs_llm_wt(b, il, LW_BQKV)));
        if (x == GGFS_NO_TENSOR)
            return (qkv){GGFS_NO_TENSOR, GGFS_NO_TENSOR, GGFS_NO_TENSOR};
        if (b->qkv_heads_first) {
            // openelm: the fused rows as [head, heads, tokens], then views of that
            const uint32_t h = ggfs_reshape(g, x, hq, nq + 2 * nk, b->n_tokens, 1);
            if (failed(b, h))
                return (qkv){GGFS_NO_TENSOR, GGFS_NO_TENSOR, GGFS_NO_TENSOR};
            const uint64_t h1 = g->t[h].nb[1], h2 = g->t[h].nb[2], h3 = g->t[h].nb[3];
            r.q = ggfs_llm_view(b, h, hq, nq, b->n_tokens, 1, h1, h2, h3, 0);
            r.k = ggfs_llm_view(b, h, hk, nk, b->n_tokens, 1, h1, h2, h3, h1 * (uint64_t)nq);
            r.v = ggfs_llm_view(b, h, hv, nv, b->n_tokens, 1, h1, h2, h3, h1 * (uint64_t)(nq + nk));
            return r;
        }
        const uint64_t nb1 = g->t[x].nb[1];
        if (!reshape) {
            const int64_t widths[3] = {hq * nq, hk * nk, hv * nv};
            uint32_t rows[3];
            uint64_t offset = 0;
            for (int i = 0; i < 3; i++) {
                const int64_t ne[4] = {widths[i], b->n_tokens, 1, 1};
                const uint64_t nb[4] = {4, nb1, nb1 * (uint64_t)b->n_tokens, nb1 * (uint64_t)b->n_tokens};
                rows[i] = ggfs_view_nd(g, x, ne, nb, offset);
                offset += ggfs_row_size(GT_F32, widths[i]);
            }
            for (int i = 0; i < 3; i++)
                rows[i] = ggfs_cont_2d(g, rows[i], widths[i], b->n_tokens);
            return (qkv){rows[0], rows[1], rows[2]};
        }
        const int64_t neq[4] = {hq, nq, b->n_tokens, 1}, nek[4] = {hk, nk, b->n_tokens, 1},
                      nev[4] = {hv, nv, b->n_tokens, 1};
        const uint64_t nbq[4] = {4, ggfs_row_size(GT_F32, hq), nb1, nb1 * (uint64_t)b->n_tokens};
        const uint64_t nbk[4] = {4, ggfs_row_size(GT_F32, hk), nb1, nb1 * (uint64_t)b->n_tokens};
        const uint64_t nbv[4] = {4, ggfs_row_size(GT_F32, hv), nb1, nb1 * (uint64_t)b->n_tokens};
        r.q = ggfs_view_nd(g, x, neq, nbq, 0);
        r.k = ggfs_view_nd(g, x, nek, nbk, ggfs_row_size(GT_F32, hq * nq));
        r.v = ggfs_view_nd(g, x, nev, nbv, ggfs_row_size(GT_F32, hq * nq + hk * nk));
        return r;
    }
    r.q = clamped(b, ggfs_llm_bias(b, ggfs_llm_mm(b, il, LW_WQ, LW_WQ_S, cur), ggfs_llm_wt(b, il, LW_BQ)));
    r.k = clamped(b, ggfs_llm_bias(b, ggfs_llm_mm(b, il, LW_WK, LW_WK_S, cur), ggfs_llm_wt(b, il, LW_BK)));
    r.v = b->v_from_k && !ggfs_llm_has(b, il, LW_WV)
              ? r.k
              : clamped(b, ggfs_llm_bias(b, ggfs_llm_mm(b, il, LW_WV, LW_WV_S, cur), ggfs_llm_wt(b, il, LW_BV)));
    return reshape ? ggfs_llm_heads(b, il, r) : r;
}

qkv ggfs_llm_heads(builder *b, uint32_t il, qkv x)
{
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    x.q = ggfs_reshape(b->g, x.q, l->head_k, l->n_head, b->n_tokens, 1);
    x.k = ggfs_reshape(b->g, x.k, l->head_k, l->n_head_kv, b->n_tokens, 1);
    x.v = ggfs_reshape(b->g, x.v, l->head_v, l->n_head_kv, b->n_tokens, 1);
    return x;
}

/* The layer's K or V cache: [n_embd_gqa, cells], on its layer's device. */
static uint32_t cache(builder *b, uint32_t il, const cache_inputs *c, int64_t n_embd_gqa)
{
    return ggfs_new_held(b->g, b->cache_type, layer_home(b, il), 0, n_embd_gqa, c->n_kv, 1);
}

/* get_k / get_v: the cache as [head, heads, cells]. */
static uint32_t cache_heads(builder *b, uint32_t c, const cache_inputs *in, int64_t head, int64_t heads)
{
    if (failed(b, c))
        return GGFS_NO_TENSOR;
    const ggfs_type t = b->cache_type;
    const int64_t ne[4] = {head, heads, in->n_kv, 1};
    const uint64_t nb[4] = {b->g->t[c].nb[0], ggfs_row_size(t, head), ggfs_row_size(t, head * heads),
                            ggfs_row_size(t, head * heads * in->n_kv)};
    return ggfs_view_nd(b->g, c, ne, nb, 0);
}

/* cpy_k / cpy_v: the new rows stored into the cache. */
static uint32_t store(builder *b, uint32_t c, uint32_t cur, uint32_t idxs)
{
    if (cur == GGFS_NO_TENSOR)
        return cur;
    const ggfs_gt *x = &b->g->t[cur];
    const int64_t ne[4] = {x->ne[0] * x->ne[1], x->ne[2], 1, 1};
    const uint64_t nb[4] = {x->nb[0], x->nb[2], x->nb[2] * (uint64_t)x->ne[2], x->nb[2] * (uint64_t)x->ne[2]};
    return ggfs_set_rows(b->g, c, ggfs_view_nd(b->g, cur, ne, nb, 0), idxs);
}

/* build_attn over the KV cache, flash attention: Q, V and K expanded in
 * that order (Q, K and V over the sliding-window caches), K and V
 * stored, then attention over the whole cache. */
/* build_attn_mha's Q: one stream (a view of it), then the heads first. */
static uint32_t q_heads_first(builder *b, uint32_t q)
{
    if (q == GGFS_NO_TENSOR) {
        b->g->failed = true;
        return q;
    }
    const ggfs_gt *qt = &b->g->t[q];
    const int64_t ne[4] = {qt->ne[0], qt->ne[1], qt->ne[2], 1};
    const uint64_t nb[4] = {qt->nb[0], qt->nb[1], qt->nb[2], qt->nb[3]};
    return ggfs_permute(b->g, ggfs_view_nd(b->g, q, ne, nb, 0), 0, 2, 1, 3);
}

/* build_attn_mha's output: the heads' rows flattened, expanded. */
static uint32_t heads_flat(builder *b, uint32_t cur)
{
    if (cur == GGFS_NO_TENSOR)
        return cur;
    const ggfs_gt *c = &b->g->t[cur];
    cur = ggfs_reshape(b->g, cur, c->ne[0] * c->ne[1], c->ne[2] * c->ne[3], 1, 1);
    ggfs_expand(b->g, cur);
    return cur;
}

/* build_attn without a cache: Q, K and V expanded in that order, K and V
 * cast to f16 for flash attention. */
static uint32_t attn_no_cache(builder *b, uint32_t il, qkv x, uint32_t sinks)
{
    ggfs_cgraph *g = b->g;
    ggfs_expand(g, x.q);
    ggfs_expand(g, x.k);
    ggfs_expand(g, x.v);
    const uint32_t q = q_heads_first(b, x.q);
    uint32_t k = ggfs_permute(g, x.k, 0, 2, 1, 3);
    uint32_t v = ggfs_permute(g, x.v, 0, 2, 1, 3);
    k = ggfs_cast(g, k, GT_F16);
    v = ggfs_cast(g, v, GT_F16);
    const uint32_t mask = b->m->rules->layer[il].sliding ? b->swa.kq_mask : b->base.kq_mask;
    return ggfs_flash_attn_ext(g, q, k, v, mask, sinks);
}

/* build_attn without flash attention: V stored transposed (each element
 * a row), the scores K.Q (capped where the row says), their softmax over
 * the mask, V times them, the heads' rows made contiguous. */
static uint32_t attn_scores(builder *b, uint32_t il, const cache_inputs *in, qkv x, uint32_t ck, uint32_t cv)
{
    ggfs_cgraph *g = b->g;
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    const int64_t t = b->n_tokens, v_gqa = (int64_t)l->head_v * l->n_head_kv;
    ggfs_expand(g, store(b, ck, x.k, in->k_idxs));
    if (failed(b, cv) || failed(b, x.v))
        return GGFS_NO_TENSOR;
    // cpy_v: the cache and the new rows as columns of one element
    const uint32_t v_col = ggfs_reshape(g, ggfs_reshape(g, x.v, v_gqa, t, 1, 1), 1, v_gqa * t, 1, 1);
    const uint32_t cache_col = ggfs_reshape(g, cv, 1, ggfs_nelements(g, cv), 1, 1);
    ggfs_expand(g, ggfs_set_rows(g, cache_col, v_col, in->v_idxs));
    const uint32_t q = q_heads_first(b, x.q);
    const uint32_t k = ggfs_permute(g, cache_heads(b, ck, in, l->head_k, l->n_head_kv), 0, 2, 1, 3);
    uint32_t kq = ggfs_mul_mat(g, k, q);
    if (b->kq_capped)
        kq = ggfs_unary_op(g, GOP_SCALE, ggfs_unary(g, UN_TANH, ggfs_unary_op(g, GOP_SCALE, kq)));
    if (b->kq_bias != GGFS_NO_TENSOR)
        kq = ggfs_binary_op(g, GOP_ADD, kq, b->kq_bias);
    kq = ggfs_soft_max_ext(g, kq, in->kq_mask, ggfs_llm_wt(b, il, LW_ATTN_SINKS));
    // get_v, transposed: [cells, heads, head]
    const ggfs_type type = b->cache_type;
    const int64_t ne[4] = {in->n_kv, l->n_head_kv, l->head_v, 1};
    const uint64_t nb[4] = {g->t[cv].nb[0], ggfs_row_size(type, in->n_kv * l->head_v), ggfs_row_size(type, in->n_kv),
                            ggfs_row_size(type, in->n_kv * v_gqa)};
    const uint32_t v = ggfs_permute(g, ggfs_view_nd(g, cv, ne, nb, 0), 0, 2, 1, 3);
    const uint32_t kqv = ggfs_permute(g, ggfs_mul_mat(g, v, kq), 0, 2, 1, 3);
    if (failed(b, kqv))
        return GGFS_NO_TENSOR;
    const uint32_t cur = ggfs_cont_2d(g, kqv, g->t[kqv].ne[0] * g->t[kqv].ne[1], t);
    ggfs_expand(g, cur);
    return cur;
}

/* build_attn without a cache and without flash attention (T5's, whose
 * scores take a bias): K.Q plus the bias, their softmax, V (transposed,
 * contiguous) times them, the heads' rows made contiguous. */
/* build_attn_mha without flash attention over the cache (V stored as
 * rows), the scores biased (T5's decoder). */
static uint32_t attn_biased_scores(builder *b, uint32_t il, const cache_inputs *in, uint32_t ck, uint32_t cv, qkv x)
{
    ggfs_cgraph *g = b->g;
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    const uint32_t q = q_heads_first(b, x.q);
    const uint32_t k = ggfs_permute(g, cache_heads(b, ck, in, l->head_k, l->n_head_kv), 0, 2, 1, 3);
    const uint32_t v = ggfs_permute(g, cache_heads(b, cv, in, l->head_v, l->n_head_kv), 0, 2, 1, 3);
    uint32_t kq = ggfs_binary_op(g, GOP_ADD, ggfs_mul_mat(g, k, q), b->kq_bias);
    kq = ggfs_soft_max_ext(g, kq, in->kq_mask, ggfs_llm_wt(b, il, LW_ATTN_SINKS));
    const uint32_t v_cont = ggfs_unary_op(g, GOP_CONT, ggfs_transpose(g, v));
    const uint32_t kqv = ggfs_permute(g, ggfs_mul_mat(g, v_cont, kq), 0, 2, 1, 3);
    if (failed(b, kqv))
        return GGFS_NO_TENSOR;
    const uint32_t cur = ggfs_cont_2d(g, kqv, g->t[kqv].ne[0] * g->t[kqv].ne[1], b->n_tokens);
    ggfs_expand(g, cur);
    return cur;
}

static uint32_t attn_no_cache_scores(builder *b, uint32_t il, qkv x)
{
    ggfs_cgraph *g = b->g;
    ggfs_expand(g, x.q);
    ggfs_expand(g, x.k);
    ggfs_expand(g, x.v);
    const uint32_t q = q_heads_first(b, x.q);
    uint32_t kq = ggfs_mul_mat(g, ggfs_permute(g, x.k, 0, 2, 1, 3), q);
    kq = ggfs_binary_op(g, GOP_ADD, kq, b->kq_bias);
    const uint32_t mask = b->m->rules->layer[il].sliding ? b->swa.kq_mask : b->base.kq_mask;
    kq = ggfs_soft_max_ext(g, kq, mask, ggfs_llm_wt(b, il, LW_ATTN_SINKS));
    const uint32_t v = ggfs_unary_op(g, GOP_CONT, ggfs_transpose(g, ggfs_permute(g, x.v, 0, 2, 1, 3)));
    const uint32_t kqv = ggfs_permute(g, ggfs_mul_mat(g, v, kq), 0, 2, 1, 3);
    if (failed(b, kqv))
        return GGFS_NO_TENSOR;
    const uint32_t cur = ggfs_cont_2d(g, kqv, g->t[kqv].ne[0] * g->t[kqv].ne[1], b->n_tokens);
    ggfs_expand(g, cur);
    return cur;
}

uint32_t ggfs_llm_attn_reused(builder *b, uint32_t il, uint32_t src, uint32_t q, uint32_t wo)
{
    ggfs_cgraph *g = b->g;
    const ggfs_layer_memory *l = &b->m->rules->layer[src];
    if (!heads_fit(b, il) || src >= b->m->n_layer)
        return GGFS_NO_TENSOR;
    const bool iswa = b->swa.n_kv > 0;
    const cache_inputs *in = iswa && l->cache == GGFS_LAYER_SWA ? &b->swa : &b->base;
    ggfs_expand(g, q);
    const uint32_t ck = cache(b, src, in, (int64_t)l->head_k * l->n_head_kv);
    const uint32_t cv = cache(b, src, in, (int64_t)l->head_v * l->n_head_kv);
    const uint32_t k = ggfs_permute(g, cache_heads(b, ck, in, l->head_k, l->n_head_kv), 0, 2, 1, 3);
    const uint32_t v = ggfs_permute(g, cache_heads(b, cv, in, l->head_v, l->n_head_kv), 0, 2, 1, 3);
    const uint32_t cur = heads_flat(b, ggfs_flash_attn_ext(g, q_heads_first(b, q), k, v, in->kq_mask, GGFS_NO_TENSOR));
    return ggfs_mul_mat(g, wo, cur);
}

uint32_t ggfs_llm_attn(builder *b, uint32_t il, qkv x, uint32_t wo, uint32_t wo_b)
{
    ggfs_cgraph *g = b->g;
    if (b->no_cache && b->kq_bias != GGFS_NO_TENSOR) {
        const uint32_t cur = attn_no_cache_scores(b, il, x);
        return wo == GGFS_NO_TENSOR ? cur : ggfs_llm_bias(b, ggfs_mul_mat(g, wo, cur), wo_b);
    }
    if (b->no_cache) {
        const uint32_t cur = heads_flat(b, attn_no_cache(b, il, x, ggfs_llm_wt(b, il, LW_ATTN_SINKS)));
        return wo == GGFS_NO_TENSOR ? cur : ggfs_llm_bias(b, ggfs_mul_mat(g, wo, cur), wo_b);
    }
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    if (!heads_fit(b, il))
        return GGFS_NO_TENSOR;
    const bool iswa = b->swa.n_kv > 0;
    const cache_inputs *in = iswa && l->cache == GGFS_LAYER_SWA ? &b->swa : &b->base;
    x.q = hadamard(b, x.q, in->k_rot);
    x.k = hadamard(b, x.k, in->k_rot);
    x.v = hadamard(b, x.v, in->v_rot);
    ggfs_expand(g, x.q);
    ggfs_expand(g, iswa ? x.k : x.v);
    ggfs_expand(g, iswa ? x.v : x.k);
    const uint32_t ck = cache(b, il, in, (int64_t)l->head_k * l->n_head_kv);
    const uint32_t cv = cache(b, il, in, (int64_t)l->head_v * l->n_head_kv);
    if (b->no_flash) {
        const uint32_t cur = attn_scores(b, il, in, x, ck, cv);
        return wo == GGFS_NO_TENSOR ? cur : ggfs_llm_bias(b, ggfs_mul_mat(g, wo, cur), wo_b);
    }
    ggfs_expand(g, store(b, ck, x.k, in->k_idxs));
    ggfs_expand(g, store(b, cv, x.v, in->v_idxs));
    if (b->kq_bias != GGFS_NO_TENSOR) {
        const uint32_t cur = attn_biased_scores(b, il, in, ck, cv, x);
        return wo == GGFS_NO_TENSOR ? cur : ggfs_llm_bias(b, ggfs_mul_mat(g, wo, cur), wo_b);
    }
    const uint32_t q = q_heads_first(b, x.q);
    const uint32_t k = ggfs_permute(g, cache_heads(b, ck, in, l->head_k, l->n_head_kv), 0, 2, 1, 3);
    const uint32_t v = ggfs_permute(g, cache_heads(b, cv, in, l->head_v, l->n_head_kv), 0, 2, 1, 3);
    uint32_t cur = heads_flat(b, ggfs_flash_attn_ext(g, q, k, v, in->kq_mask, ggfs_llm_wt(b, il, LW_ATTN_SINKS)));
    cur = hadamard(b, cur, in->v_rot);
    // (without wo: the heads' output, projected by the caller)
    if (wo == GGFS_NO_TENSOR)
        return cur;
    cur = ggfs_mul_mat(g, wo, cur);
    return ggfs_llm_bias(b, cur, wo_b);
}

static uint32_t view3(builder *b, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, uint64_t nb1, uint64_t nb2,
                      uint64_t offset)
{
    const int64_t ne[4] = {ne0, ne1, ne2, 1};
    const uint64_t nb[4] = {4, nb1, nb2, nb2 * (uint64_t)ne2};
    return ggfs_view_nd(b->g, a, ne, nb, offset);
}

qkv ggfs_llm_qkv_latent(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const qkv none = {GGFS_NO_TENSOR, GGFS_NO_TENSOR, GGFS_NO_TENSOR};
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    const ggfs_llm_weight *kv_a = ggfs_llm_layer_weight(b->m, il, LW_WKV_A_MQA),
                          *kv_b = ggfs_llm_layer_weight(b->m, il, LW_WKV_B);
    if (!heads_fit(b, il))
        return none;
    // the shapes, from the weights: R the latent, P the rotated part, N the rest of K's head
    const int64_t t = b->n_tokens, h = l->n_head, kh = l->head_k, vh = l->head_v, r = kv_b->ne[0],
                  p = kv_a->ne[1] - r, n = kh - p;
    if (kv_a->bytes == 0 || kv_b->bytes == 0 || p <= 0 || n < 0 || kv_b->ne[1] != h * (n + vh)) {
        g->failed = true;
        return none;
    }
    uint32_t q = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQ_A), cur);
    q = ggfs_llm_norm(b, q, ggfs_llm_wt(b, il, LW_Q_A_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    q = ggfs_reshape(g, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQ_B), q), kh, h, t, 1);
    const uint32_t kvp = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WKV_A_MQA), cur);
    if (failed(b, q) || failed(b, kvp))
        return none;
    const uint64_t kv_row = g->t[kvp].nb[1];
    const int64_t ne_c[4] = {r, t, 1, 1};
    const uint64_t nb_c[4] = {4, kv_row, kv_row * (uint64_t)t, kv_row * (uint64_t)t};
    uint32_t kvc = ggfs_view_nd(g, kvp, ne_c, nb_c, 0);
    const uint32_t k_pe = view3(b, kvp, p, 1, t, kv_row, kv_row, ggfs_row_size(GT_F32, r));
    kvc = ggfs_llm_norm(b, kvc, ggfs_llm_wt(b, il, LW_KV_A_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    const uint32_t kv = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WKV_B), kvc);
    if (failed(b, kv))
        return none;
    const uint64_t head_row = ggfs_row_size(GT_F32, n + vh), all_rows = ggfs_row_size(GT_F32, (n + vh) * h);
    const uint32_t k_nope = view3(b, kv, n, h, t, head_row, all_rows, 0);
    const uint32_t v = ggfs_unary_op(g, GOP_CONT, view3(b, kv, vh, h, t, head_row, all_rows, ggfs_row_size(GT_F32, n)));
    q = ggfs_rope(g, q, b->inp_pos, GGFS_NO_TENSOR);
    const uint32_t k_rot = ggfs_rope(g, k_pe, b->inp_pos, GGFS_NO_TENSOR);
    const uint32_t k = ggfs_concat0(g, k_nope, ggfs_repeat_4d(g, k_rot, p, h, t, 1));
    return (qkv){q, k, v};
}

uint32_t ggfs_llm_attn_mla(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_llm_weight *wk_b = ggfs_llm_layer_weight(b->m, il, LW_WK_B),
                          *wv_b = ggfs_llm_layer_weight(b->m, il, LW_WV_B);
    const ggfs_llm_weight *wq = ggfs_llm_layer_weight(b->m, il, ggfs_llm_has(b, il, LW_WQ) ? LW_WQ : LW_WQ_B);
    if (!heads_fit(b, il))
        return GGFS_NO_TENSOR;
    const int64_t t = b->n_tokens, h = b->m->rules->layer[il].n_head;
    // the shapes, from the weights: N the head's unrotated part, R the latent
    const int64_t n = wk_b->ne[0], r = wk_b->ne[1], kh = h ? wq->ne[1] / h : 0, p = kh - n;
    if (wk_b->bytes == 0 || wv_b->bytes == 0 || kh <= 0 || p <= 0) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const int64_t c = r + p;
    uint32_t q;
    if (ggfs_llm_has(b, il, LW_WQ)) {
        q = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQ), cur);
    } else {
        q = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQ_A), cur);
        q = ggfs_llm_norm(b, q, ggfs_llm_wt(b, il, LW_Q_A_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        q = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQ_B), q);
    }
    q = ggfs_reshape(g, q, kh, h, t, 1);
    const uint32_t kvp = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WKV_A_MQA), cur);
    if (q == GGFS_NO_TENSOR || kvp == GGFS_NO_TENSOR)
        return GGFS_NO_TENSOR;
    const uint64_t kv_row = g->t[kvp].nb[1], q1 = g->t[q].nb[1], q2 = g->t[q].nb[2];
    const int64_t ne_c[4] = {r, t, 1, 1};
    const uint64_t nb_c[4] = {4, kv_row, kv_row * (uint64_t)t, kv_row * (uint64_t)t};
    const uint32_t kv_cmpr = ggfs_view_nd(g, kvp, ne_c, nb_c, 0);
    uint32_t k_pe = view3(b, kvp, p, 1, t, kv_row, kv_row, ggfs_row_size(GT_F32, r));
    if (!b->mla_unroped)
        k_pe = ggfs_rope(g, k_pe, b->inp_pos, GGFS_NO_TENSOR);
    const uint32_t kv_normed =
        ggfs_llm_norm(b, kv_cmpr, ggfs_llm_wt(b, il, LW_KV_A_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    // Q's unrotated part through each head's K (the absorption), beside its rotated part
    const uint32_t q_nope = view3(b, q, n, h, t, q1, q2, 0);
    uint32_t q_pe = view3(b, q, p, h, t, q1, q2, ggfs_row_size(GT_F32, n));
    if (!b->mla_unroped)
        q_pe = ggfs_rope(g, q_pe, b->inp_pos, GGFS_NO_TENSOR);
    const uint32_t q_abs = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WK_B), ggfs_permute(g, q_nope, 0, 2, 1, 3));
    const uint32_t qc = ggfs_concat0(g, ggfs_permute(g, q_abs, 0, 2, 1, 3), q_pe);
    const uint32_t vc = ggfs_reshape(g, kv_normed, r, 1, t, 1);
    const uint32_t kc = ggfs_concat0(g, vc, k_pe);
    // build_attn over the K-only cache: Q, V, K expanded, K stored
    ggfs_expand(g, qc);
    ggfs_expand(g, vc);
    ggfs_expand(g, kc);
    if (qc == GGFS_NO_TENSOR || kc == GGFS_NO_TENSOR)
        return GGFS_NO_TENSOR;
    const cache_inputs *in = &b->base;
    const uint32_t kcache = cache(b, il, in, c);
    if (failed(b, kcache))
        return GGFS_NO_TENSOR;
    const int64_t ne_k[4] = {c, t, 1, 1};
    const uint64_t kc2 = g->t[kc].nb[2];
    const uint64_t nb_k[4] = {4, kc2, kc2 * (uint64_t)t, kc2 * (uint64_t)t};
    ggfs_expand(g, ggfs_set_rows(g, kcache, ggfs_view_nd(g, kc, ne_k, nb_k, 0), in->k_idxs));
    const ggfs_type ct = b->cache_type;
    const int64_t ne_kv[4] = {c, 1, in->n_kv, 1};
    const uint64_t nb_kv[4] = {g->t[kcache].nb[0], ggfs_row_size(ct, c), ggfs_row_size(ct, c),
                               ggfs_row_size(ct, c * in->n_kv)};
    const uint32_t k = ggfs_view_nd(g, kcache, ne_kv, nb_kv, 0);
    const int64_t ne_v[4] = {r, 1, in->n_kv, 1};
    const uint32_t v = ggfs_view_nd(g, k, ne_v, nb_kv, 0);
    uint32_t out = ggfs_flash_attn_ext(g, q_heads_first(b, qc), ggfs_permute(g, k, 0, 2, 1, 3),
                                       ggfs_permute(g, v, 0, 2, 1, 3), in->kq_mask, GGFS_NO_TENSOR);
    // back from the latent to each head's V
    out = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WV_B), ggfs_permute(g, out, 0, 2, 1, 3));
    out = heads_flat(b, ggfs_unary_op(g, GOP_CONT, ggfs_permute(g, out, 0, 2, 1, 3)));
    if (ggfs_llm_has(b, il, LW_ATTN_GATE) && b->kda_k3) {
        // (kimi-k3) the output times a sigmoid of the input's gate
        out = ggfs_binary_op(g, GOP_MUL, out,
                             ggfs_unary(g, UN_SIGMOID, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_ATTN_GATE), cur)));
    } else if (ggfs_llm_has(b, il, LW_ATTN_GATE)) {
        // (bailingmoe3) each head's output times a sigmoid of the input's gate
        const int64_t vh = g->t[out].ne[0] / h;
        uint32_t gate = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_ATTN_GATE), cur);
        gate = ggfs_unary(g, UN_SIGMOID, ggfs_reshape(g, gate, 1, h, t, 1));
        out = ggfs_binary_op(g, GOP_MUL, ggfs_reshape(g, out, vh, h, t, 1), gate);
        out = ggfs_cont_2d(g, out, vh * h, t);
    }
    return ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WO), out);
}

uint32_t ggfs_llm_cross_attn(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    if (!heads_fit(b, il) || b->cross_embd == GGFS_NO_TENSOR)
        return GGFS_NO_TENSOR;
    const int64_t t = b->n_tokens, n_enc = g->t[b->cross_embd].ne[1];
    uint32_t q = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_CROSS_Q), cur);
    uint32_t k = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_CROSS_K), b->cross_embd);
    uint32_t v = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_CROSS_V), b->cross_embd);
    q = ggfs_reshape(g, q, l->head_k, l->n_head, t, 1);
    k = ggfs_reshape(g, k, l->head_k, l->n_head_kv, n_enc, 1);
    v = ggfs_reshape(g, v, l->head_v, l->n_head_kv, n_enc, 1);
    ggfs_expand(g, q);
    ggfs_expand(g, k);
    ggfs_expand(g, v);
    q = q_heads_first(b, q);
    k = ggfs_permute(g, k, 0, 2, 1, 3);
    v = ggfs_permute(g, v, 0, 2, 1, 3);
    if (b->flash_off_late) {
        // the scores softmaxed, V's rows made columns
        const uint32_t kq = ggfs_soft_max_ext(g, ggfs_mul_mat(g, k, q), b->cross_mask, GGFS_NO_TENSOR);
        const uint32_t v_cont = ggfs_unary_op(g, GOP_CONT, ggfs_transpose(g, v));
        const uint32_t kqv = ggfs_permute(g, ggfs_mul_mat(g, v_cont, kq), 0, 2, 1, 3);
        if (failed(b, kqv))
            return GGFS_NO_TENSOR;
        cur = ggfs_cont_2d(g, kqv, g->t[kqv].ne[0] * g->t[kqv].ne[1], t);
        ggfs_expand(g, cur);
    } else {
        k = ggfs_cast(g, k, GT_F16);
        v = ggfs_cast(g, v, GT_F16);
        cur = heads_flat(b, ggfs_flash_attn_ext(g, q, k, v, b->cross_mask, GGFS_NO_TENSOR));
    }
    return ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_CROSS_O), cur);
}

/* ---- recurrent layers ---- */

uint32_t ggfs_llm_state(builder *b, uint32_t il, int64_t width)
{
    return ggfs_new_held(b->g, GT_F32, il >= b->i_gpu_start ? HOME_GPU : HOME_HOST, 0, width, 1, 1);
}

uint32_t ggfs_llm_build_rs(builder *b, uint32_t s, int64_t width, uint32_t *scan_src)
{
    ggfs_cgraph *g = b->g;
    if (failed(b, s) || (scan_src && failed(b, scan_src[0])))
        return GGFS_NO_TENSOR;
    const uint32_t states = ggfs_reshape(g, s, width, 1, 1, 1);
    ggfs_expand(g, ggfs_scale_inplace(g, view1(b, states, width, 0)));
    uint32_t rows;
    if (scan_src) {
        const int64_t *sh = g->t[scan_src[0]].ne; // the shape the scan wants
        scan_src[0] = ggfs_reshape(g, states, sh[0], sh[1], sh[2], 1);
        scan_src[6] = b->s_copy_main;
        rows = ggfs_ssm_scan(g, scan_src);
    } else {
        rows = ggfs_get_rows(g, states, b->s_copy_main);
    }
    ggfs_expand(g, rows);
    const uint32_t extra = ggfs_get_rows(g, states, b->s_copy_extra);
    const int64_t ne[4] = {width, 0, 1, 1};
    const uint64_t row = ggfs_row_size(GT_F32, width);
    const uint64_t nb[4] = {4, row, 0, 0};
    ggfs_expand(g, ggfs_cpy(g, extra, ggfs_view_nd(g, s, ne, nb, row)));
    return rows;
}

uint32_t ggfs_llm_view(builder *b, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, uint64_t nb1,
                       uint64_t nb2, uint64_t nb3, uint64_t offset)
{
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    const uint64_t nb[4] = {4, nb1, nb2, nb3};
    return ggfs_view_nd(b->g, a, ne, nb, offset);
}

/* A conv's input: the kept columns (d_conv - 1 a channel) before the new
 * ones (x_t: the tokens' rows transposed); its last d_conv - 1 columns
 * copied back into the state r_l, at offset, as one row (flat) or as
 * columns. */
static uint32_t conv_input(builder *b, uint32_t kept, uint32_t x_t, int64_t d_conv, int64_t channels, uint32_t r_l,
                           uint64_t offset, bool flat)
{
    ggfs_cgraph *g = b->g;
    const uint32_t conv_x = ggfs_concat0(g, kept, x_t);
    if (failed(b, conv_x))
        return GGFS_NO_TENSOR;
    const uint64_t cn1 = g->t[conv_x].nb[1], cn2 = g->t[conv_x].nb[2], rn1 = g->t[r_l].nb[1];
    const uint32_t last =
        ggfs_llm_view(b, conv_x, d_conv - 1, channels, 1, 1, cn1, cn2, cn2, ggfs_row_size(GT_F32, b->n_tokens));
    const uint32_t dst = flat ? ggfs_llm_view(b, r_l, (d_conv - 1) * channels, 1, 1, 1, rn1, rn1, rn1, offset)
                              : ggfs_llm_view(b, r_l, d_conv - 1, channels, 1, 1, ggfs_row_size(GT_F32, d_conv - 1),
                                              rn1, rn1, offset);
    ggfs_expand(g, ggfs_cpy(g, last, dst));
    return conv_x;
}

/* The conv's kept columns, d_conv - 1 a channel, read from the state r_l. */
static uint32_t conv_kept(builder *b, uint32_t r_l, int64_t d_conv, int64_t channels)
{
    return ggfs_reshape(b->g, ggfs_llm_build_rs(b, r_l, (d_conv - 1) * channels, NULL), d_conv - 1, channels, 1,
                        1);
}

/* The scan over the state s_l (width floats a sequence): its output,
 * y_len floats and then the new state, which is copied back into s_l. */
static uint32_t scan_keeping_state(builder *b, uint32_t s_l, int64_t width, int64_t y_len, uint32_t *scan)
{
    ggfs_cgraph *g = b->g;
    const uint32_t y_ssm = ggfs_llm_build_rs(b, s_l, width, scan);
    if (y_ssm == GGFS_NO_TENSOR)
        return y_ssm;
    const uint64_t row = ggfs_row_size(GT_F32, width);
    ggfs_expand(g, ggfs_cpy(g, ggfs_llm_view(b, y_ssm, width, 1, 1, 1, row, row, row, ggfs_row_size(GT_F32, y_len)),
                            ggfs_llm_view(b, s_l, width, 1, 1, 1, g->t[s_l].nb[1], row, row, 0)));
    return y_ssm;
}

uint32_t ggfs_llm_mamba(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_llm_model *m = b->m;
    // the shapes, from the weights: the conv's kernel and channels, the state, dt's rank
    const ggfs_llm_weight *conv1d = ggfs_llm_layer_weight(m, il, LW_SSM_CONV1D),
                          *a = ggfs_llm_layer_weight(m, il, LW_SSM_A),
                          *dt_w = ggfs_llm_layer_weight(m, il, LW_SSM_DT),
                          *x_w = ggfs_llm_layer_weight(m, il, LW_SSM_X);
    const int64_t d_conv = conv1d->ne[0], d_inner = conv1d->ne[1], ds = a->ne[0], rank = dt_w->ne[0],
                  t = b->n_tokens;
    if (!conv1d->bytes || !a->bytes || !dt_w->bytes || !x_w->bytes || a->ne[1] != d_inner || ds <= 0 ||
        rank <= 0 || x_w->ne[1] != rank + 2 * ds || d_conv < 2 || d_conv > 64 || cur == GGFS_NO_TENSOR) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const uint32_t r_l = ggfs_llm_state(b, il, (d_conv - 1) * d_inner), s_l = ggfs_llm_state(b, il, ds * d_inner);
    if (failed(b, r_l) || failed(b, s_l))
        return GGFS_NO_TENSOR;
    const uint32_t conv = conv_kept(b, r_l, d_conv, d_inner);
    cur = ggfs_reshape(g, cur, g->t[cur].ne[0], t, 1, 1);
    const uint32_t xz = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_IN), cur);
    if (xz == GGFS_NO_TENSOR)
        return xz;
    const uint64_t zn1 = g->t[xz].nb[1], zn2 = g->t[xz].nb[2];
    const uint32_t x_in = ggfs_llm_view(b, xz, d_inner, t, 1, 1, zn1, zn2, zn2, 0);
    const uint32_t z = ggfs_llm_view(b, xz, d_inner, t, 1, 1, zn1, zn2, zn2, ggfs_row_size(GT_F32, d_inner));
    const uint32_t conv_x = conv_input(b, conv, ggfs_transpose(g, x_in), d_conv, d_inner, r_l, 0, true);
    if (conv_x == GGFS_NO_TENSOR)
        return conv_x;
    uint32_t x = ggfs_binary_op(g, GOP_ADD, ggfs_ssm_conv(g, conv_x, ggfs_llm_wt(b, il, LW_SSM_CONV1D)),
                                ggfs_llm_wt(b, il, LW_SSM_CONV1D_B));
    x = ggfs_unary(g, UN_SILU, x);
    // dt, B and C from the conv's output; normed where the layer has their norms
    const uint32_t x_db = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_X), x);
    if (x_db == GGFS_NO_TENSOR)
        return x_db;
    const uint64_t dn1 = g->t[x_db].nb[1], dn2 = g->t[x_db].nb[2];
    uint32_t dt = ggfs_llm_view(b, x_db, rank, t, 1, 1, dn1, dn2, dn2, 0);
    uint32_t bb = ggfs_llm_view(b, x_db, ds, 1, t, 1, ggfs_row_size(GT_F32, ds), dn1, dn2, ggfs_row_size(GT_F32, rank));
    uint32_t cc = ggfs_llm_view(b, x_db, ds, 1, t, 1, ggfs_row_size(GT_F32, ds), dn1, dn2,
                                ggfs_row_size(GT_F32, rank + ds));
    if (ggfs_llm_has(b, il, LW_SSM_DT_NORM) && ggfs_llm_has(b, il, LW_SSM_B_NORM) &&
        ggfs_llm_has(b, il, LW_SSM_C_NORM)) {
        dt = ggfs_llm_norm(b, dt, ggfs_llm_wt(b, il, LW_SSM_DT_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        bb = ggfs_llm_norm(b, bb, ggfs_llm_wt(b, il, LW_SSM_B_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        cc = ggfs_llm_norm(b, cc, ggfs_llm_wt(b, il, LW_SSM_C_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    } else {
        dt = ggfs_unary_op(g, GOP_CONT, dt);
    }
    dt = ggfs_binary_op(g, GOP_ADD, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_DT), dt),
                        ggfs_llm_wt(b, il, LW_SSM_DT_B));
    const uint32_t x_heads = ggfs_reshape(g, x, 1, d_inner, t, 1);
    // the scan, as build_rs reads the state for it: one head per channel
    const uint32_t shape = ggfs_new(g, GT_F32, ds, 1, d_inner, 1); // (its shape only)
    uint32_t scan[7] = {shape, x_heads, dt, ggfs_llm_wt(b, il, LW_SSM_A), bb, cc, GGFS_NO_TENSOR};
    const uint32_t y_ssm = scan_keeping_state(b, s_l, ds * d_inner, d_inner * t, scan);
    if (y_ssm == GGFS_NO_TENSOR)
        return y_ssm;
    const uint64_t y_row = ggfs_row_size(GT_F32, d_inner), y_all = ggfs_row_size(GT_F32, d_inner * t);
    uint32_t y = ggfs_llm_view(b, y_ssm, d_inner, t, 1, 1, y_row, y_all, y_all, 0);
    y = ggfs_binary_op(g, GOP_ADD, y, ggfs_binary_op(g, GOP_MUL, x, ggfs_llm_wt(b, il, LW_SSM_D)));
    y = ggfs_binary_op(g, GOP_GLU, ggfs_unary_op(g, GOP_CONT, z), y);
    cur = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_OUT), y);
    return cur == GGFS_NO_TENSOR ? cur : ggfs_reshape(g, cur, g->t[cur].ne[0], t, 1, 1);
}

uint32_t ggfs_llm_mamba_plamo2(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_llm_model *m = b->m;
    // the shapes, from the weights: the conv's, the heads (A's), the state (B's norm), dt's width
    const ggfs_llm_weight *conv1d = ggfs_llm_layer_weight(m, il, LW_SSM_CONV1D),
                          *a = ggfs_llm_layer_weight(m, il, LW_SSM_A),
                          *b_norm = ggfs_llm_layer_weight(m, il, LW_SSM_B_NORM),
                          *dt_w = ggfs_llm_layer_weight(m, il, LW_SSM_DT),
                          *x_w = ggfs_llm_layer_weight(m, il, LW_SSM_X);
    const int64_t d_conv = conv1d->ne[0], d_inner = conv1d->ne[1], nh = a->ne[0], ds = b_norm->ne[0],
                  dt_dim = dt_w->ne[0], t = b->n_tokens;
    if (!conv1d->bytes || !a->bytes || !b_norm->bytes || !dt_w->bytes || !x_w->bytes || nh <= 0 || ds <= 0 ||
        d_inner % nh || x_w->ne[1] < 2 * ds + dt_dim || d_conv < 2 || d_conv > 64 || cur == GGFS_NO_TENSOR) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const int64_t hd = d_inner / nh;
    const uint32_t r_l = ggfs_llm_state(b, il, (d_conv - 1) * d_inner), s_l = ggfs_llm_state(b, il, ds * d_inner);
    if (failed(b, r_l) || failed(b, s_l))
        return GGFS_NO_TENSOR;
    const uint32_t conv = conv_kept(b, r_l, d_conv, d_inner);
    cur = ggfs_reshape(g, cur, g->t[cur].ne[0], t, 1, 1);
    // z and x interleaved per head
    uint32_t zx = ggfs_permute(g, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_IN), cur), 0, 2, 1, 3);
    zx = ggfs_cont_4d(g, zx, 2 * hd, nh, t, 1);
    if (failed(b, zx))
        return GGFS_NO_TENSOR;
    const uint64_t zn1 = g->t[zx].nb[1], zn2 = g->t[zx].nb[2], zn3 = g->t[zx].nb[3];
    uint32_t x = ggfs_llm_view(b, zx, hd, nh, t, 1, zn1, zn2, zn3, ggfs_row_size(GT_F32, hd));
    x = ggfs_cont_4d(g, x, d_inner, t, 1, 1);
    const uint32_t z = ggfs_llm_view(b, zx, hd, nh, t, 1, zn1, zn2, zn3, 0);
    const uint32_t conv_x = conv_input(b, conv, ggfs_transpose(g, x), d_conv, d_inner, r_l, 0, true);
    if (conv_x == GGFS_NO_TENSOR)
        return conv_x;
    x = ggfs_unary(g, UN_SILU, ggfs_ssm_conv(g, conv_x, ggfs_llm_wt(b, il, LW_SSM_CONV1D)));
    // B, C and dt, each normed
    const uint32_t bcdt = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_X), x);
    if (failed(b, bcdt))
        return GGFS_NO_TENSOR;
    const uint64_t bn1 = g->t[bcdt].nb[1], bn2 = g->t[bcdt].nb[2];
    uint32_t bb = ggfs_llm_view(b, bcdt, ds, t, 1, 1, bn1, bn2, bn2, 0);
    uint32_t cc = ggfs_llm_view(b, bcdt, ds, t, 1, 1, bn1, bn2, bn2, ggfs_row_size(GT_F32, ds));
    uint32_t dt = ggfs_llm_view(b, bcdt, dt_dim, t, 1, 1, bn1, bn2, bn2, ggfs_row_size(GT_F32, 2 * ds));
    bb = ggfs_llm_norm(b, bb, ggfs_llm_wt(b, il, LW_SSM_B_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    cc = ggfs_llm_norm(b, cc, ggfs_llm_wt(b, il, LW_SSM_C_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    dt = ggfs_llm_norm(b, dt, ggfs_llm_wt(b, il, LW_SSM_DT_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    dt = ggfs_binary_op(g, GOP_ADD, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_DT), dt),
                        ggfs_llm_wt(b, il, LW_SSM_DT_B));
    // (A one number a head, as a row of heads)
    const uint32_t a_heads = ggfs_reshape(g, ggfs_llm_wt(b, il, LW_SSM_A), 1, nh, 1, 1);
    const uint64_t f = 4;
    const uint32_t x_heads = ggfs_llm_view(b, x, hd, nh, t, 1, hd * f, d_inner * f, d_inner * t * f, 0);
    if (failed(b, bb) || failed(b, cc))
        return GGFS_NO_TENSOR;
    bb = ggfs_llm_view(b, bb, ds, 1, t, 1, ds * f, g->t[bb].nb[1], g->t[bb].nb[2], 0);
    cc = ggfs_llm_view(b, cc, ds, 1, t, 1, ds * f, g->t[cc].nb[1], g->t[cc].nb[2], 0);
    const uint32_t shape = ggfs_new(g, GT_F32, ds, hd, nh, 1); // (its shape only)
    uint32_t scan[7] = {shape, x_heads, dt, a_heads, bb, cc, GGFS_NO_TENSOR};
    const uint32_t y_ssm = scan_keeping_state(b, s_l, ds * d_inner, d_inner * t, scan);
    if (y_ssm == GGFS_NO_TENSOR)
        return y_ssm;
    uint32_t y = ggfs_llm_view(b, y_ssm, hd, nh, t, 1, hd * f, d_inner * f, d_inner * t * f, 0);
    const uint32_t d = ggfs_reshape(g, ggfs_llm_wt(b, il, LW_SSM_D), 1, nh, 1, 1);
    y = ggfs_binary_op(g, GOP_ADD, y, ggfs_binary_op(g, GOP_MUL, x_heads, d));
    y = ggfs_binary_op(g, GOP_GLU, ggfs_unary_op(g, GOP_CONT, z), y);
    if (failed(b, y))
        return GGFS_NO_TENSOR;
    y = ggfs_llm_view(b, y, d_inner, t, 1, 1, g->t[y].nb[2], g->t[y].nb[3], g->t[y].nb[3], 0);
    cur = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_OUT), y);
    return cur == GGFS_NO_TENSOR ? cur : ggfs_reshape(g, cur, g->t[cur].ne[0], t, 1, 1);
}

uint32_t ggfs_llm_mamba2(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_llm_model *m = b->m;
    // the shapes, from the weights
    const ggfs_llm_weight *conv1d = ggfs_llm_layer_weight(m, il, LW_SSM_CONV1D),
                          *out = ggfs_llm_layer_weight(m, il, LW_SSM_OUT),
                          *in = ggfs_llm_layer_weight(m, il, LW_SSM_IN),
                          *dt_b = ggfs_llm_layer_weight(m, il, LW_SSM_DT_B),
                          *norm = ggfs_llm_layer_weight(m, il, LW_SSM_NORM);
    const int64_t d_conv = conv1d->ne[0], cd = conv1d->ne[1], d_inner = out->ne[0], nh = dt_b->ne[0],
                  ng = norm->bytes ? norm->ne[1] : m->ssm_groups ? m->ssm_groups : 1, t = b->n_tokens;
    if (!conv1d->bytes || !out->bytes || !in->bytes || !dt_b->bytes || nh <= 0 || ng <= 0 || d_inner % nh ||
        (cd - d_inner) <= 0 || (cd - d_inner) % (2 * ng) || d_conv < 2 || d_conv > 64) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const int64_t hd = d_inner / nh, ds = (cd - d_inner) / (2 * ng);
    const uint32_t r_l = ggfs_llm_state(b, il, (d_conv - 1) * cd), s_l = ggfs_llm_state(b, il, ds * d_inner);
    if (failed(b, r_l) || failed(b, s_l))
        return GGFS_NO_TENSOR;
    const uint32_t conv = conv_kept(b, r_l, d_conv, cd);
    uint32_t zx = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_IN), cur);
    if (zx == GGFS_NO_TENSOR)
        return zx;
    zx = ggfs_reshape(g, zx, g->t[zx].ne[0], t, 1, 1);
    const uint64_t zn1 = g->t[zx].nb[1], zn2 = g->t[zx].nb[2];
    const uint32_t z = ggfs_llm_view(b, zx, hd, nh, t, 1, ggfs_row_size(GT_F32, hd), zn1, zn2, 0);
    const uint32_t xbc_in = ggfs_llm_view(b, zx, cd, t, 1, 1, zn1, zn2, zn2, ggfs_row_size(GT_F32, d_inner));
    uint32_t dt = ggfs_llm_view(b, zx, nh, t, 1, 1, zn1, zn2, zn2, ggfs_row_size(GT_F32, 2 * d_inner + 2 * ng * ds));
    const uint32_t conv_x = conv_input(b, conv, ggfs_transpose(g, xbc_in), d_conv, cd, r_l, 0, true);
    if (conv_x == GGFS_NO_TENSOR)
        return conv_x;
    uint32_t xbc = ggfs_binary_op(g, GOP_ADD, ggfs_ssm_conv(g, conv_x, ggfs_llm_wt(b, il, LW_SSM_CONV1D)),
                                  ggfs_llm_wt(b, il, LW_SSM_CONV1D_B));
    xbc = ggfs_unary(g, UN_SILU, xbc);
    if (xbc == GGFS_NO_TENSOR)
        return xbc;
    const uint64_t xn1 = g->t[xbc].nb[1], xn2 = g->t[xbc].nb[2];
    const uint32_t x = ggfs_llm_view(b, xbc, hd, nh, t, 1, ggfs_row_size(GT_F32, hd), xn1, xn2, 0);
    const uint32_t bb =
        ggfs_llm_view(b, xbc, ds, ng, t, 1, ggfs_row_size(GT_F32, ds), xn1, xn2, ggfs_row_size(GT_F32, d_inner));
    const uint32_t cc = ggfs_llm_view(b, xbc, ds, ng, t, 1, ggfs_row_size(GT_F32, ds), xn1, xn2,
                                      ggfs_row_size(GT_F32, d_inner + ng * ds));
    dt = ggfs_binary_op(g, GOP_ADD, ggfs_unary_op(g, GOP_CONT, dt), ggfs_llm_wt(b, il, LW_SSM_DT_B));
    // the scan, as build_rs reads the state for it
    const uint32_t shape = ggfs_new(g, GT_F32, ds, hd, nh, 1); // (its shape only)
    uint32_t scan[7] = {shape, x, dt, ggfs_llm_wt(b, il, LW_SSM_A), bb, cc, GGFS_NO_TENSOR};
    const uint32_t y_ssm = scan_keeping_state(b, s_l, ds * d_inner, d_inner * t, scan);
    if (y_ssm == GGFS_NO_TENSOR)
        return y_ssm;
    uint32_t y = ggfs_llm_view(b, y_ssm, hd, nh, t, 1, ggfs_row_size(GT_F32, hd), ggfs_row_size(GT_F32, hd * nh),
                               ggfs_row_size(GT_F32, hd * nh * t), 0);
    y = ggfs_binary_op(g, GOP_ADD, y, ggfs_binary_op(g, GOP_MUL, x, ggfs_llm_wt(b, il, LW_SSM_D)));
    y = ggfs_binary_op(g, GOP_GLU, ggfs_unary_op(g, GOP_CONT, z), y);
    if (norm->bytes) {
        y = ggfs_reshape(g, y, d_inner / ng, ng, t, 1);
        y = ggfs_binary_op(g, GOP_MUL, ggfs_unary_op(g, GOP_RMS_NORM, y), ggfs_llm_wt(b, il, LW_SSM_NORM));
    }
    y = ggfs_reshape(g, y, d_inner, t, 1, 1);
    return ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_OUT), y);
}

uint32_t ggfs_llm_gated_delta_net(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_llm_model *m = b->m;
    // the shapes, from the weights: C the conv's channels (Q, K and V), H the heads of V, G those of Q and K
    // (ssm.group_count, else H), S the head of K
    const ggfs_llm_weight *conv1d = ggfs_llm_layer_weight(m, il, LW_SSM_CONV1D),
                          *out = ggfs_llm_layer_weight(m, il, LW_SSM_OUT),
                          *dt_b = ggfs_llm_layer_weight(m, il, LW_SSM_DT_B);
    const int64_t d_conv = conv1d->ne[0], c = conv1d->ne[1], d_inner = out->ne[0], h = dt_b->ne[0],
                  ng = m->ssm_groups ? m->ssm_groups : h, t = b->n_tokens;
    const int64_t hv = h > 0 ? d_inner / h : 0, hk = ng > 0 ? (c - d_inner) / (2 * ng) : 0;
    if (!conv1d->bytes || !out->bytes || !dt_b->bytes || h <= 0 || ng <= 0 || h % ng || hv <= 0 || hk <= 0 ||
        d_inner % h || (c - d_inner) != 2 * ng * hk || d_conv < 2 || d_conv > 64) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const uint32_t r_l = ggfs_llm_state(b, il, (d_conv - 1) * c), s_l = ggfs_llm_state(b, il, hv * hv * h);
    if (failed(b, r_l) || failed(b, s_l))
        return GGFS_NO_TENSOR;
    const uint32_t mixed = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WQKV), cur);
    const uint32_t z = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_ATTN_GATE), cur);
    uint32_t beta, gate;
    if (ggfs_llm_has(b, il, LW_SSM_BA)) {
        // qwen3next: per group of heads (K's heads), its heads' beta then their alpha
        const int64_t groups = ng, per = h / ng;
        if (ggfs_llm_layer_weight(m, il, LW_SSM_BA)->ne[1] != 2 * h) {
            g->failed = true;
            return GGFS_NO_TENSOR;
        }
        const uint32_t ba = ggfs_reshape(g, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_BA), cur), 2 * per, groups, t, 1);
        if (failed(b, ba))
            return GGFS_NO_TENSOR;
        const uint64_t bn1 = g->t[ba].nb[1], bn2 = g->t[ba].nb[2], bn3 = g->t[ba].nb[3];
        beta = ggfs_unary_op(g, GOP_CONT, ggfs_llm_view(b, ba, per, groups, t, 1, bn1, bn2, bn3, 0));
        beta = ggfs_reshape(g, ggfs_unary(g, UN_SIGMOID, beta), 1, h, t, 1);
        const uint64_t alpha_at = ggfs_row_size(GT_F32, per);
        gate = ggfs_cont_2d(g, ggfs_llm_view(b, ba, per, groups, t, 1, bn1, bn2, bn3, alpha_at), h, t);
    } else {
        beta = ggfs_unary(g, UN_SIGMOID,
                          ggfs_reshape(g, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_BETA), cur), 1, h, t, 1));
        gate = ggfs_reshape(g, ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_ALPHA), cur), h, t, 1, 1);
    }
    gate = ggfs_binary_op(g, GOP_ADD, gate, ggfs_llm_wt(b, il, LW_SSM_DT_B));
    gate = ggfs_binary_op(g, GOP_MUL, ggfs_unary(g, UN_SOFTPLUS, gate), ggfs_llm_wt(b, il, LW_SSM_A));
    gate = ggfs_reshape(g, gate, 1, h, t, 1);
    // the conv over the kept columns and the new ones
    const uint32_t conv = conv_kept(b, r_l, d_conv, c);
    const uint32_t conv_x =
        conv_input(b, conv, ggfs_transpose(g, ggfs_reshape(g, mixed, c, t, 1, 1)), d_conv, c, r_l, 0, true);
    if (conv_x == GGFS_NO_TENSOR)
        return conv_x;
    const uint32_t qkv = ggfs_unary(g, UN_SILU, ggfs_ssm_conv(g, conv_x, ggfs_llm_wt(b, il, LW_SSM_CONV1D)));
    if (qkv == GGFS_NO_TENSOR)
        return qkv;
    const uint64_t xn1 = g->t[qkv].nb[1], xn2 = g->t[qkv].nb[2];
    uint32_t src[6];
    src[0] = ggfs_llm_view(b, qkv, hk, ng, t, 1, ggfs_row_size(GT_F32, hk), xn1, xn2, 0);
    src[1] = ggfs_llm_view(b, qkv, hk, ng, t, 1, ggfs_row_size(GT_F32, hk), xn1, xn2, ggfs_row_size(GT_F32, hk * ng));
    src[2] = ggfs_llm_view(b, qkv, hv, h, t, 1, ggfs_row_size(GT_F32, hv), xn1, xn2,
                           ggfs_row_size(GT_F32, 2 * hk * ng));
    // Q and K normed, scaled; where they have fewer heads than V, each repeated in place (qwen3next; qwen35's
    // fused delta net takes them as they are)
    for (int i = 0; i < 2; i++) {
        src[i] = ggfs_unary_op(g, GOP_SCALE, ggfs_unary_op(g, GOP_RMS_NORM, src[i]));
        if (ng != h && b->gdn_repeat) {
            const uint32_t one = ggfs_reshape(g, src[i], hk, 1, ng, t);
            src[i] = ggfs_reshape(g, ggfs_repeat_4d(g, one, hk, h / ng, ng, t), hk, h, t, 1);
        }
    }
    src[3] = gate;
    src[4] = beta;
    src[5] = ggfs_reshape(g, ggfs_llm_build_rs(b, s_l, hv * hv * h, NULL), hv, hv, h, 1);
    const uint32_t y = ggfs_gated_delta_net(g, src);
    if (failed(b, y))
        return GGFS_NO_TENSOR;
    // the state kept
    const uint64_t yn1 = g->t[y].nb[1], st = ggfs_row_size(GT_F32, hv * hv * h);
    ggfs_expand(g, ggfs_cpy(g, ggfs_llm_view(b, y, hv, hv, h, 1, ggfs_row_size(GT_F32, hv),
                                             ggfs_row_size(GT_F32, hv * hv), st, yn1 * (uint64_t)t),
                            ggfs_llm_view(b, s_l, hv * hv * h, 1, 1, 1, g->t[s_l].nb[1], st, st, 0)));
    // the output normed per head, gated by silu(z)
    uint32_t o = ggfs_llm_view(b, y, hv, h, t, 1, ggfs_row_size(GT_F32, hv), ggfs_row_size(GT_F32, hv * h),
                               ggfs_row_size(GT_F32, hv * h * t), 0);
    o = ggfs_llm_norm(b, o, ggfs_llm_wt(b, il, LW_SSM_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    o = ggfs_binary_op(g, GOP_MUL, o, ggfs_unary(g, UN_SILU, ggfs_reshape(g, z, hv, h, t, 1)));
    o = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_OUT), ggfs_reshape(g, o, d_inner, t, 1, 1));
    return ggfs_reshape(g, o, g->t[o].ne[0], t, 1, 1);
}

uint32_t ggfs_llm_kda(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_llm_model *m = b->m;
    // the shapes, from the weights: S the head (ssm_norm's), H the heads, K the conv's kernel
    const ggfs_llm_weight *wq = ggfs_llm_layer_weight(m, il, LW_WQ),
                          *conv_q = ggfs_llm_layer_weight(m, il, LW_SSM_CONV1D_Q),
                          *norm = ggfs_llm_layer_weight(m, il, LW_SSM_NORM);
    const int64_t s = norm->ne[0], d_conv = conv_q->ne[0], t = b->n_tokens;
    const int64_t h = s > 0 ? wq->ne[1] / s : 0, w = h * s;
    if (!wq->bytes || !conv_q->bytes || !norm->bytes || h <= 0 || h * s != wq->ne[1] || d_conv < 2 || d_conv > 64) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const uint32_t r_l = ggfs_llm_state(b, il, 3 * (d_conv - 1) * w), s_l = ggfs_llm_state(b, il, s * s * h);
    const uint32_t conv = ggfs_llm_build_rs(b, r_l, 3 * (d_conv - 1) * w, NULL);
    if (failed(b, conv) || failed(b, s_l))
        return GGFS_NO_TENSOR;
    static const ggfs_lw proj[3] = {LW_WQ, LW_WK, LW_WV},
                         kernel[3] = {LW_SSM_CONV1D_Q, LW_SSM_CONV1D_K, LW_SSM_CONV1D_V};
    uint32_t x[3];
    const uint64_t state_part = ggfs_row_size(GT_F32, (d_conv - 1) * w);
    for (int i = 0; i < 3; i++) {
        const uint32_t x_in = ggfs_mul_mat(g, ggfs_llm_wt(b, il, proj[i]), cur);
        const uint32_t in = ggfs_transpose(g, ggfs_reshape(g, x_in, w, t, 1, 1));
        const uint32_t kept = ggfs_llm_view(b, conv, d_conv - 1, w, 1, 1, ggfs_row_size(GT_F32, d_conv - 1), state_part,
                                            state_part, (uint64_t)i * state_part);
        const uint32_t conv_x = conv_input(b, kept, in, d_conv, w, r_l, (uint64_t)i * state_part, false);
        if (conv_x == GGFS_NO_TENSOR)
            return conv_x;
        const uint32_t k = ggfs_reshape(g, ggfs_llm_wt(b, il, kernel[i]), d_conv, w, 1, 1);
        x[i] = ggfs_unary(g, UN_SILU, ggfs_reshape(g, ggfs_ssm_conv(g, conv_x, k), w, t, 1, 1));
        x[i] = ggfs_reshape(g, x[i], s, h, t, 1);
    }
    uint32_t src[6];
    // Q and K normed, scaled; the decay from a low-rank gate; beta
    for (int i = 0; i < 2; i++)
        src[i] = ggfs_unary_op(g, GOP_SCALE, ggfs_unary_op(g, GOP_RMS_NORM, x[i]));
    src[2] = x[2];
    uint32_t decay = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_F_A), cur);
    const uint32_t a = ggfs_llm_wt(b, il, LW_SSM_A);
    if (b->kda_bounded) {
        // sigmoid(x . f_a + dt_b, times A), scaled to the gate's lower bound
        decay = ggfs_binary_op(g, GOP_ADD, decay, ggfs_llm_wt(b, il, LW_SSM_DT_B));
        decay = ggfs_binary_op(g, GOP_MUL, ggfs_reshape(g, decay, s, h, t, 1),
                               a == GGFS_NO_TENSOR ? a : ggfs_reshape(g, a, 1, h, 1, 1));
        decay = ggfs_unary_op(g, GOP_SCALE, ggfs_unary(g, UN_SIGMOID, decay));
    } else if (b->kda_k3 && m->kda_lower_bound) {
        // kimi-k3's: sigmoid(-(x . f_a . f_b + dt_b) times A), scaled to the gate's lower bound
        decay = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_F_B), decay);
        decay = ggfs_binary_op(g, GOP_ADD, decay, ggfs_llm_wt(b, il, LW_SSM_DT_B));
        decay = ggfs_binary_op(g, GOP_MUL, ggfs_reshape(g, decay, s, h, t, 1),
                               a == GGFS_NO_TENSOR ? a : ggfs_reshape(g, a, 1, h, 1, 1));
        decay = ggfs_unary_op(g, GOP_SCALE, ggfs_unary(g, UN_SIGMOID, ggfs_unary_op(g, GOP_SCALE, decay)));
    } else {
        // softplus(x . f_a . f_b + dt_b), times A
        decay = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_F_B), decay);
        decay = ggfs_unary(g, UN_SOFTPLUS, ggfs_binary_op(g, GOP_ADD, decay, ggfs_llm_wt(b, il, LW_SSM_DT_B)));
        decay = ggfs_binary_op(g, GOP_MUL, ggfs_reshape(g, decay, s, h, t, 1),
                               a == GGFS_NO_TENSOR ? a : ggfs_reshape(g, a, 1, g->t[a].ne[0], 1, 1));
    }
    src[3] = ggfs_reshape(g, decay, s, h, t, 1);
    const uint32_t beta = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_BETA), cur);
    src[4] = ggfs_unary(g, UN_SIGMOID, ggfs_reshape(g, beta, 1, h, t, 1));
    src[5] = ggfs_reshape(g, ggfs_llm_build_rs(b, s_l, s * s * h, NULL), s, s, h, 1);
    const uint32_t y = ggfs_gated_delta_net(g, src);
    if (failed(b, y))
        return GGFS_NO_TENSOR;
    const uint64_t yn1 = g->t[y].nb[1], st = ggfs_row_size(GT_F32, s * s * h);
    ggfs_expand(g, ggfs_cpy(g, ggfs_llm_view(b, y, s, s, h, 1, ggfs_row_size(GT_F32, s), ggfs_row_size(GT_F32, s * s),
                                             st, yn1 * (uint64_t)t),
                            ggfs_llm_view(b, s_l, s * s * h, 1, 1, 1, g->t[s_l].nb[1], st, st, 0)));
    uint32_t o = ggfs_llm_view(b, y, s, h, t, 1, ggfs_row_size(GT_F32, s), ggfs_row_size(GT_F32, w),
                               ggfs_row_size(GT_F32, w * t), 0);
    o = ggfs_reshape(g, ggfs_unary_op(g, GOP_CONT, o), s, h, t, 1);
    o = ggfs_llm_norm(b, o, ggfs_llm_wt(b, il, LW_SSM_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
    uint32_t gate;
    if (b->kda_bounded) {
        gate = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_G_A), cur);
    } else {
        const int64_t e = g->t[cur].ne[0];
        const uint32_t cur2 = ggfs_reshape(g, ggfs_reshape(g, cur, e, t, 1, 1), e, t, 1, 1);
        // (kimi-k3's one full-rank gate; kimi-linear's through a low rank)
        gate = b->kda_k3 ? ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_G), cur2)
                         : ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_G_B),
                                        ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SSM_G_A), cur2));
    }
    gate = ggfs_unary(g, UN_SIGMOID, ggfs_reshape(g, gate, s, h, t, 1));
    o = ggfs_cont_2d(g, ggfs_binary_op(g, GOP_MUL, o, gate), w, t);
    return ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_WO), o);
}

uint32_t ggfs_llm_shortconv(builder *b, uint32_t il, uint32_t cur)
{
    ggfs_cgraph *g = b->g;
    const ggfs_llm_weight *conv_w = ggfs_llm_layer_weight(b->m, il, LW_SHORTCONV_CONV);
    const int64_t d = b->m->rules->n_embd, t = b->n_tokens, dc = conv_w->ne[0] - 1;
    if (!conv_w->bytes || dc < 1 || dc > 64 || conv_w->ne[1] != d || d < 1) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const uint32_t r_l = ggfs_llm_state(b, il, dc * d);
    if (failed(b, r_l))
        return GGFS_NO_TENSOR;
    cur = ggfs_reshape(g, cur, d, t, 1, 1);
    const uint32_t bcx = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SHORTCONV_IN), cur);
    if (failed(b, bcx))
        return GGFS_NO_TENSOR;
    const uint64_t n1 = g->t[bcx].nb[1], n2 = g->t[bcx].nb[2];
    const uint32_t bb = ggfs_llm_view(b, bcx, d, t, 1, 1, n1, n2, n2, 0);
    const uint32_t cc = ggfs_llm_view(b, bcx, d, t, 1, 1, n1, n2, n2, ggfs_row_size(GT_F32, d));
    const uint32_t xx = ggfs_llm_view(b, bcx, d, t, 1, 1, n1, n2, n2, ggfs_row_size(GT_F32, 2 * d));
    const uint32_t bx_t = ggfs_transpose(g, ggfs_binary_op(g, GOP_MUL, bb, xx));
    uint32_t conv = ggfs_llm_build_rs(b, r_l, dc * d, NULL);
    conv = ggfs_reshape(g, conv, dc, d, 1, 1);
    const uint32_t bx = ggfs_concat0(g, conv, bx_t);
    if (failed(b, bx))
        return GGFS_NO_TENSOR;
    // the conv state kept: the last dc columns
    const uint64_t xn1 = g->t[bx].nb[1], xn2 = g->t[bx].nb[2], rn1 = g->t[r_l].nb[1];
    const uint32_t snap = ggfs_llm_view(b, bx, dc, d, 1, 1, xn1, xn2, xn2, ggfs_row_size(GT_F32, g->t[bx].ne[0] - dc));
    ggfs_expand(g, ggfs_cpy(g, snap, ggfs_llm_view(b, r_l, dc * d, 1, 1, 1, rn1, rn1, rn1, 0)));
    uint32_t y = ggfs_binary_op(g, GOP_MUL, cc, ggfs_ssm_conv(g, bx, ggfs_llm_wt(b, il, LW_SHORTCONV_CONV)));
    y = ggfs_mul_mat(g, ggfs_llm_wt(b, il, LW_SHORTCONV_OUT), y);
    return ggfs_reshape(g, y, d, t, 1, 1);
}
