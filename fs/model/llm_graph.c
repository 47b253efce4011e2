/*
 * llama.cpp's graphs as tensor shapes (llm_graph.h). The helpers follow
 * llm_graph_context's (src/llama-graph.cpp) and the KV cache's
 * (src/llama-kv-cache.cpp) for one sequence, flash attention on, the
 * reserve's worst case: n_ubatch tokens, each an output, over the whole
 * cache. One row per architecture names the builder its graph follows.
 */
#include "model/llm_graph.h"

#include <stdlib.h>
#include <string.h>

#include "model/cgraph.h"
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
};

typedef struct builder builder;

/* One architecture's graph: the builder its src/models/ file follows. */
typedef struct arch_graph {
    const char *arch;
    void (*build)(builder *b);
} arch_graph;

struct ggfs_llm_model {
    const ggfs_memory_rules *rules;
    const arch_graph *graph;
    uint32_t n_layer;
    ggfs_llm_weight *layers; // n_layer rows of LW_COUNT
    ggfs_llm_weight tok_embd, output_norm, output_norm_b, output, rope_freqs;
};

struct builder {
    const ggfs_llm_model *m;
    ggfs_cgraph *g;
    int64_t n_tokens, n_kv, n_outputs;
    ggfs_type cache_type;
    uint32_t i_gpu_start;
    bool full_offload;
    uint32_t inp_pos, k_idxs, v_idxs, kq_mask, out_ids;
    uint32_t k_rot, v_rot; // a quantized cache's Hadamard rotations, or none
};

/* ---- the model's weights ---- */

static const ggfs_llm_weight *layer_weight(const ggfs_llm_model *m, uint32_t il, ggfs_lw kind)
{
    return &m->layers[(size_t)il * LW_COUNT + kind];
}

static bool has(const builder *b, uint32_t il, ggfs_lw kind)
{
    return layer_weight(b->m, il, kind)->bytes > 0;
}

static ggfs_home layer_home(const builder *b, uint32_t il)
{
    return il >= b->i_gpu_start ? HOME_GPU : HOME_HOST;
}

static ggfs_home output_home(const builder *b)
{
    return b->i_gpu_start <= b->m->n_layer ? HOME_GPU : HOME_HOST;
}

static uint32_t held(builder *b, const ggfs_llm_weight *w, ggfs_home home)
{
    if (w->bytes == 0)
        return GGFS_NO_TENSOR;
    return ggfs_new_held(b->g, GT_WEIGHT, home, w->bytes, w->ne[0], w->ne[1] ? w->ne[1] : 1, w->ne[2] ? w->ne[2] : 1);
}

/* Layer il's weight of a kind, or GGFS_NO_TENSOR. */
static uint32_t weight(builder *b, uint32_t il, ggfs_lw kind)
{
    return held(b, layer_weight(b->m, il, kind), layer_home(b, il));
}

/* ---- llm_graph_context's helpers ---- */

/* cb: names a tensor; with every layer on the GPU, a layer's "norm" runs
 * on its layer's device (llama_context::graph_get_cb). */
static void cb(builder *b, uint32_t t, const char *name, int il)
{
    ggfs_set_name(b->g, t, name, il);
    if (t != GGFS_NO_TENSOR && b->full_offload && il >= 0 && strcmp(name, "norm") == 0)
        b->g->t[t].backend = 0; // the GPU
}

typedef enum norm_type { NORM_PLAIN, NORM_RMS } norm_type;

static uint32_t build_norm(builder *b, uint32_t cur, uint32_t w, uint32_t wb, norm_type type, int il)
{
    cur = ggfs_unary_op(b->g, type == NORM_RMS ? GOP_RMS_NORM : GOP_NORM, cur);
    if (w != GGFS_NO_TENSOR || wb != GGFS_NO_TENSOR)
        cb(b, cur, "norm", il);
    if (w != GGFS_NO_TENSOR)
        cur = ggfs_binary_op(b->g, GOP_MUL, cur, w);
    if (wb != GGFS_NO_TENSOR)
        cur = ggfs_binary_op(b->g, GOP_ADD, cur, wb);
    return cur;
}

static uint32_t with_bias(builder *b, uint32_t cur, uint32_t bias)
{
    return bias == GGFS_NO_TENSOR ? cur : ggfs_binary_op(b->g, GOP_ADD, cur, bias);
}

/* build_inp_embd: the tokens' embeddings looked up on the host, the
 * embeddings input beside them. */
static uint32_t build_inp_embd(builder *b)
{
    const ggfs_llm_model *m = b->m;
    const uint32_t tokens = ggfs_new(b->g, GT_I32, b->n_tokens, 1, 1, 1);
    ggfs_set_input(b->g, tokens);
    const uint32_t embd = ggfs_new(b->g, GT_F32, m->tok_embd.ne[0], b->n_tokens, 1, 1);
    ggfs_set_input(b->g, embd);
    const uint32_t cur = ggfs_get_rows(b->g, held(b, &m->tok_embd, HOME_HOST), tokens);
    ggfs_expand(b->g, cur);
    ggfs_expand(b->g, embd);
    cb(b, cur, "embd", -1);
    return cur;
}

/* The inputs every attention layer shares (build_inp_pos,
 * build_attn_inp_kv, build_inp_out_ids): flash attention's f16 mask. */
static void build_inputs(builder *b)
{
    ggfs_cgraph *g = b->g;
    b->inp_pos = ggfs_new(g, GT_I32, b->n_tokens, 1, 1, 1);
    b->k_idxs = ggfs_new(g, GT_I64, b->n_tokens, 1, 1, 1);
    b->v_idxs = ggfs_new(g, GT_I64, b->n_tokens, 1, 1, 1);
    b->kq_mask = ggfs_new(g, GT_F16, b->n_kv, b->n_tokens, 1, 1);
    b->out_ids = ggfs_new(g, GT_I32, b->n_outputs, 1, 1, 1);
    ggfs_set_input(g, b->inp_pos);
    ggfs_set_input(g, b->k_idxs);
    ggfs_set_input(g, b->v_idxs);
    ggfs_set_input(g, b->kq_mask);
    ggfs_set_input(g, b->out_ids);
    // llama_kv_cache's attn_rot_k and attn_rot_v: a quantized cache whose
    // layers' heads are all of one size, a multiple of 64, stores its rows
    // rotated; K's rotation is the largest power of two dividing the head
    b->k_rot = b->v_rot = GGFS_NO_TENSOR;
    const ggfs_memory_rules *r = b->m->rules;
    int64_t head_k = 0, head_v = 0;
    for (uint32_t il = 0; il < r->n_layer; il++) {
        const ggfs_layer_memory *l = &r->layer[il];
        if (l->cache == GGFS_LAYER_NO_KV)
            continue;
        head_k = head_k == 0 || head_k == (int64_t)l->head_k ? (int64_t)l->head_k : -1;
        head_v = head_v == 0 || head_v == (int64_t)l->head_v ? (int64_t)l->head_v : -1;
    }
    if (b->cache_type == GT_F16)
        return;
    if (head_k > 0 && head_k % 64 == 0) {
        int64_t n = 64;
        while (head_k % (2 * n) == 0)
            n *= 2;
        b->k_rot = ggfs_new(g, GT_F32, n, n, 1, 1);
        ggfs_set_input(g, b->k_rot);
    }
    if (head_v > 0 && head_v % 64 == 0) {
        b->v_rot = ggfs_new(g, GT_F32, 64, 64, 1, 1);
        ggfs_set_input(g, b->v_rot);
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

static uint32_t rope_factors(builder *b, uint32_t il)
{
    return held(b, &b->m->rope_freqs, layer_home(b, il));
}

typedef struct qkv {
    uint32_t q, k, v;
} qkv;

/* build_qkv: separate or fused projections, their biases, as heads. */
static qkv build_qkv(builder *b, uint32_t il, uint32_t cur)
{
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    ggfs_cgraph *g = b->g;
    const int64_t hq = l->head_k, nq = l->n_head, hk = l->head_k, nk = l->n_head_kv, hv = l->head_v,
                  nv = l->n_head_kv;
    qkv r;
    if (has(b, il, LW_WQKV)) {
        const uint32_t x = with_bias(b, ggfs_mul_mat(g, weight(b, il, LW_WQKV), cur), weight(b, il, LW_BQKV));
        if (x == GGFS_NO_TENSOR)
            return (qkv){GGFS_NO_TENSOR, GGFS_NO_TENSOR, GGFS_NO_TENSOR};
        const uint64_t nb1 = g->t[x].nb[1];
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
    r.q = with_bias(b, ggfs_mul_mat(g, weight(b, il, LW_WQ), cur), weight(b, il, LW_BQ));
    r.k = with_bias(b, ggfs_mul_mat(g, weight(b, il, LW_WK), cur), weight(b, il, LW_BK));
    r.v = with_bias(b, ggfs_mul_mat(g, weight(b, il, LW_WV), cur), weight(b, il, LW_BV));
    r.q = ggfs_reshape(g, r.q, hq, nq, b->n_tokens, 1);
    r.k = ggfs_reshape(g, r.k, hk, nk, b->n_tokens, 1);
    r.v = ggfs_reshape(g, r.v, hv, nv, b->n_tokens, 1);
    return r;
}

/* The layer's K or V cache: [n_embd_gqa, cells], on its layer's device. */
static uint32_t cache(builder *b, uint32_t il, int64_t n_embd_gqa)
{
    return ggfs_new_held(b->g, b->cache_type, layer_home(b, il), 0, n_embd_gqa, b->n_kv, 1);
}

/* get_k / get_v: the cache as [head, heads, cells]. */
static uint32_t cache_heads(builder *b, uint32_t c, int64_t head, int64_t heads)
{
    const ggfs_type t = b->cache_type;
    const int64_t ne[4] = {head, heads, b->n_kv, 1};
    const uint64_t nb[4] = {b->g->t[c].nb[0], ggfs_row_size(t, head),
                            ggfs_row_size(t, head * heads), ggfs_row_size(t, head * heads * b->n_kv)};
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
 * that order, K and V stored, then attention over the whole cache. */
static uint32_t build_attn(builder *b, uint32_t il, qkv x, uint32_t wo, uint32_t wo_b)
{
    ggfs_cgraph *g = b->g;
    const ggfs_layer_memory *l = &b->m->rules->layer[il];
    x.q = hadamard(b, x.q, b->k_rot);
    x.k = hadamard(b, x.k, b->k_rot);
    x.v = hadamard(b, x.v, b->v_rot);
    ggfs_expand(g, x.q);
    ggfs_expand(g, x.v);
    ggfs_expand(g, x.k);
    const uint32_t ck = cache(b, il, (int64_t)l->head_k * l->n_head_kv);
    const uint32_t cv = cache(b, il, (int64_t)l->head_v * l->n_head_kv);
    ggfs_expand(g, store(b, ck, x.k, b->k_idxs));
    ggfs_expand(g, store(b, cv, x.v, b->v_idxs));
    if (x.q == GGFS_NO_TENSOR)
        return GGFS_NO_TENSOR;
    // build_attn_mha: Q as one stream, then the heads first
    const ggfs_gt *qt = &g->t[x.q];
    const int64_t ne[4] = {qt->ne[0], qt->ne[1], qt->ne[2], 1};
    const uint64_t nb[4] = {qt->nb[0], qt->nb[1], qt->nb[2], qt->nb[3]};
    uint32_t q = ggfs_permute(g, ggfs_view_nd(g, x.q, ne, nb, 0), 0, 2, 1, 3);
    uint32_t k = ggfs_permute(g, cache_heads(b, ck, l->head_k, l->n_head_kv), 0, 2, 1, 3);
    uint32_t v = ggfs_permute(g, cache_heads(b, cv, l->head_v, l->n_head_kv), 0, 2, 1, 3);
    uint32_t cur = ggfs_flash_attn_ext(g, q, k, v, b->kq_mask, GGFS_NO_TENSOR);
    if (cur == GGFS_NO_TENSOR)
        return cur;
    const ggfs_gt *c = &g->t[cur];
    cur = ggfs_reshape(g, cur, c->ne[0] * c->ne[1], c->ne[2] * c->ne[3], 1, 1);
    ggfs_expand(g, cur);
    cur = hadamard(b, cur, b->v_rot);
    cur = ggfs_mul_mat(g, wo, cur);
    return with_bias(b, cur, wo_b);
}

typedef enum ffn_op { FFN_SILU, FFN_GELU } ffn_op;

/* build_ffn with a parallel gate (LLM_FFN_PAR) or none. */
static uint32_t build_ffn(builder *b, uint32_t il, uint32_t cur, ffn_op op)
{
    ggfs_cgraph *g = b->g;
    uint32_t tmp = with_bias(b, ggfs_mul_mat(g, weight(b, il, LW_FFN_UP), cur), weight(b, il, LW_FFN_UP_B));
    if (has(b, il, LW_FFN_GATE)) {
        cur = with_bias(b, ggfs_mul_mat(g, weight(b, il, LW_FFN_GATE), cur), weight(b, il, LW_FFN_GATE_B));
        cur = ggfs_binary_op(g, GOP_GLU, cur, tmp); // swiglu_split / geglu_split
    } else {
        cur = ggfs_unary_op(g, GOP_UNARY, tmp);
    }
    (void)op;
    cur = ggfs_mul_mat(g, weight(b, il, LW_FFN_DOWN), cur);
    return with_bias(b, cur, weight(b, il, LW_FFN_DOWN_B));
}

/* The output: the final norm, then the logits (result_norm and
 * result_output, the graph's outputs). */
static void build_output(builder *b, uint32_t cur, norm_type type)
{
    const ggfs_llm_model *m = b->m;
    cur = build_norm(b, cur, held(b, &m->output_norm, output_home(b)), held(b, &m->output_norm_b, output_home(b)),
                     type, -1);
    ggfs_set_output(b->g, cur);
    // without output.weight, a copy of the token embeddings on the output's device
    const ggfs_llm_weight *w = m->output.bytes ? &m->output : &m->tok_embd;
    cur = ggfs_mul_mat(b->g, held(b, w, output_home(b)), cur);
    ggfs_set_output(b->g, cur);
    ggfs_expand(b->g, cur);
}

/* ---- the architectures' graphs ---- */

/* src/models/llama.cpp: pre-norm attention with RoPE, then a gated
 * feed-forward block, each added to the residual. */
static void build_llama(builder *b)
{
    ggfs_cgraph *g = b->g;
    uint32_t inp = build_inp_embd(b);
    build_inputs(b);
    const uint32_t n_layer = b->m->n_layer;
    for (uint32_t il = 0; il < n_layer && !g->failed; il++) {
        uint32_t residual = inp;
        uint32_t cur = build_norm(b, inp, weight(b, il, LW_ATTN_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        qkv x = build_qkv(b, il, cur);
        x.q = ggfs_rope(g, x.q, b->inp_pos, rope_factors(b, il));
        x.k = ggfs_rope(g, x.k, b->inp_pos, rope_factors(b, il));
        cur = build_attn(b, il, x, weight(b, il, LW_WO), weight(b, il, LW_BO));
        if (il == n_layer - 1) {
            cur = ggfs_get_rows(g, cur, b->out_ids);
            residual = ggfs_get_rows(g, residual, b->out_ids);
        }
        const uint32_t ffn_inp = ggfs_binary_op(g, GOP_ADD, cur, residual);
        cur = build_norm(b, ffn_inp, weight(b, il, LW_FFN_NORM), GGFS_NO_TENSOR, NORM_RMS, (int)il);
        cur = build_ffn(b, il, cur, FFN_SILU);
        inp = ggfs_binary_op(g, GOP_ADD, cur, ffn_inp);
    }
    build_output(b, inp, NORM_RMS);
}

static const arch_graph graphs[] = {
    {"llama", build_llama},
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
static bool layer_kind(ggp_str name, uint32_t n_layer, uint32_t *il, ggfs_lw *kind)
{
    if (name.len < 5 || memcmp(name.ptr, "blk.", 4) != 0)
        return false;
    size_t i = 4;
    uint64_t n = 0;
    for (; i < name.len && name.ptr[i] >= '0' && name.ptr[i] <= '9' && n < n_layer; i++)
        n = n * 10 + (uint64_t)(name.ptr[i] - '0');
    if (i == 4 || i >= name.len || name.ptr[i] != '.' || n >= n_layer)
        return false;
    const ggp_str rest = {name.ptr + i + 1, name.len - i - 1};
    for (int k = 0; k < LW_COUNT; k++) {
        if (name_is(rest, lw_names[k])) {
            *il = (uint32_t)n;
            *kind = (ggfs_lw)k;
            return true;
        }
    }
    return false;
}

ggfs_llm_model *ggfs_llm_model_new(const ggp_file *const *files, uint32_t n_files, const ggfs_memory_rules *rules,
                                   ggp_str arch)
{
    ggfs_llm_model *m = calloc(1, sizeof *m);
    if (!m || !(m->layers = calloc((size_t)(rules->n_layer ? rules->n_layer : 1) * LW_COUNT, sizeof *m->layers))) {
        ggfs_llm_model_free(m);
        return NULL;
    }
    m->rules = rules;
    m->n_layer = rules->n_layer;
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
        if (name_is(arch, graphs[i].arch))
            m->graph = &graphs[i];
    }
    for (uint32_t f = 0; f < n_files; f++) {
        for (uint64_t j = 0; j < ggp_tensor_count(files[f]); j++) {
            const ggp_tensor *t = ggp_tensor_at(files[f], j);
            uint32_t il;
            ggfs_lw kind;
            if (layer_kind(t->name, m->n_layer, &il, &kind))
                set_weight(&m->layers[(size_t)il * LW_COUNT + kind], t);
            else if (name_is(t->name, "token_embd.weight"))
                set_weight(&m->tok_embd, t);
            else if (name_is(t->name, "output_norm.weight"))
                set_weight(&m->output_norm, t);
            else if (name_is(t->name, "output_norm.bias"))
                set_weight(&m->output_norm_b, t);
            else if (name_is(t->name, "output.weight"))
                set_weight(&m->output, t);
            else if (name_is(t->name, "rope_freqs.weight"))
                set_weight(&m->rope_freqs, t);
        }
    }
    return m;
}

void ggfs_llm_model_free(ggfs_llm_model *m)
{
    if (!m)
        return;
    free(m->layers);
    free(m);
}

bool ggfs_llm_has_graph(const ggfs_llm_model *m)
{
    return m->graph != NULL && m->tok_embd.bytes > 0;
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
        .g = &g,
        .n_tokens = ctx < 512 ? ctx : 512,
        .n_kv = ((int64_t)ctx + 255) / 256 * 256,
        .cache_type = cache_types[cache],
        .i_gpu_start = i_gpu_start,
        .full_offload = i_gpu_start == 0,
    };
    b.n_outputs = b.n_tokens;
    m->graph->build(&b);
    const bool ok = !g.failed && ggfs_sched_reserve(&g, gpu, host);
    ggfs_cgraph_free(&g);
    // Vulkan's host buffer type allocates 32 bytes more than asked
    if (ok && *host)
        *host += 32;
    return ok;
}
