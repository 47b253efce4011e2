/*
 * Tensor shapes as ggml makes them (cgraph.h). Each operation below names
 * the ggml function whose result it copies.
 */
#include "model/cgraph.h"

#include <stdlib.h>
#include <string.h>

/* Block size and bytes per block of each type (ggml's type traits). */
static const struct {
    uint32_t block, size;
} traits[] = {
    [GT_F32] = {1, 4}, [GT_F16] = {1, 2}, [GT_I32] = {1, 4}, [GT_I64] = {1, 8},
    [GT_Q8_0] = {32, 34}, [GT_Q4_0] = {32, 18}, [GT_WEIGHT] = {1, 1},
};

void ggfs_cgraph_init(ggfs_cgraph *g)
{
    memset(g, 0, sizeof *g);
}

void ggfs_cgraph_free(ggfs_cgraph *g)
{
    free(g->t);
    free(g->nodes);
    free(g->leafs);
    memset(g, 0, sizeof *g);
}

bool ggfs_grow(void **array, uint32_t *cap, uint32_t need, size_t size, uint32_t first)
{
    if (need <= *cap)
        return true;
    uint32_t n = *cap ? *cap : first;
    while (n < need && n <= UINT32_MAX / 2)
        n *= 2;
    void *p = n >= need ? realloc(*array, (size_t)n * size) : NULL;
    if (!p)
        return false;
    *array = p;
    *cap = n;
    return true;
}

static bool reserve(ggfs_cgraph *g, void **array, uint32_t *cap, uint32_t need, size_t size)
{
    const bool grown = ggfs_grow(array, cap, need, size, 256);
    if (!grown)
        g->failed = true;
    return grown;
}

uint64_t ggfs_row_size(ggfs_type type, int64_t n)
{
    return (uint64_t)n / traits[type].block * traits[type].size;
}

/* ggml_nbytes. */
static uint64_t nbytes(const ggfs_gt *t)
{
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] <= 0)
            return 0;
    }
    const uint32_t block = traits[t->type].block;
    uint64_t n;
    int first;
    if (block == 1) {
        n = traits[t->type].size;
        first = 0;
    } else {
        n = (uint64_t)t->ne[0] * t->nb[0] / block;
        first = 1;
    }
    for (int i = first; i < 4; i++)
        n += (uint64_t)(t->ne[i] - 1) * t->nb[i];
    return n;
}

static void contiguous_strides(ggfs_gt *t)
{
    t->nb[0] = traits[t->type].size;
    t->nb[1] = t->nb[0] * (uint64_t)(t->ne[0] / traits[t->type].block);
    for (int i = 2; i < 4; i++)
        t->nb[i] = t->nb[i - 1] * (uint64_t)t->ne[i - 1];
}

/* ggml_new_tensor_impl: a view's source is always the tensor that owns
 * the memory. Returns GGFS_NO_TENSOR when out of memory. */
/* The largest dimension and element count a graph's tensor may have: a
 * model's keys and shapes are hostile, and beyond these no real model
 * goes; products of two dimensions, or a tensor's elements, then fit in
 * an int64_t. */
#define DIM_MAX (INT64_C(1) << 31)
#define ELEMENTS_MAX (INT64_C(1) << 48)

static uint32_t new_tensor(ggfs_cgraph *g, ggfs_type type, const int64_t shape[4], uint32_t view_src, uint64_t view_offs)
{
    int64_t ne[4]; // (shape may point into g->t, which may move)
    memcpy(ne, shape, sizeof ne);
    // (a dimension may be 0: the scheduler's rows of other sequences, none with one)
    int64_t elements = 1;
    for (int i = 0; i < 4 && !g->failed; i++) {
        if (ne[i] < 0 || ne[i] > DIM_MAX || (ne[i] > 0 && ne[i] > ELEMENTS_MAX / elements))
            g->failed = true;
        else if (ne[i] > 0)
            elements *= ne[i];
    }
    if (g->failed || !reserve(g, (void **)&g->t, &g->cap, g->n + 1, sizeof *g->t))
        return GGFS_NO_TENSOR;
    if (view_src != GGFS_NO_TENSOR && g->t[view_src].view_src != GGFS_NO_TENSOR) {
        view_offs += g->t[view_src].view_offs;
        view_src = g->t[view_src].view_src;
    }
    ggfs_gt *t = &g->t[g->n];
    memset(t, 0, sizeof *t);
    for (int i = 0; i < GGFS_GALLOC_SRCS; i++)
        t->src[i] = GGFS_NO_TENSOR;
    memcpy(t->ne, ne, sizeof t->ne);
    t->type = (uint8_t)type;
    t->view_src = view_src;
    t->view_offs = view_offs;
    t->backend = -1;
    t->layer = -1;
    contiguous_strides(t);
    t->bytes = nbytes(t);
    return g->n++;
}

/* A result of op on sources srcs: a new tensor unless g failed. */
static uint32_t with_op(ggfs_cgraph *g, uint32_t t, ggfs_op op, uint32_t s0, uint32_t s1, uint32_t s2)
{
    if (t == GGFS_NO_TENSOR)
        return t;
    g->t[t].op = (uint8_t)op;
    g->t[t].src[0] = s0;
    g->t[t].src[1] = s1;
    g->t[t].src[2] = s2;
    return t;
}

/* Whether an operation cannot be made: out of memory before, or a source
 * it needs is missing (a weight the model lacks), which fails the graph:
 * a graph built without it would be another. */
static bool bad(ggfs_cgraph *g, uint32_t a)
{
    if (a == GGFS_NO_TENSOR)
        g->failed = true;
    return g->failed;
}

uint32_t ggfs_new(ggfs_cgraph *g, ggfs_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return new_tensor(g, type, ne, GGFS_NO_TENSOR, 0);
}

uint32_t ggfs_new_held(ggfs_cgraph *g, ggfs_type type, ggfs_home home, uint64_t bytes, int64_t ne0, int64_t ne1,
                       int64_t ne2)
{
    const uint32_t t = ggfs_new(g, type, ne0, ne1, ne2, 1);
    if (t != GGFS_NO_TENSOR) {
        g->t[t].home = (uint8_t)home;
        if (type == GT_WEIGHT) {
            g->t[t].bytes = bytes;
            g->t[t].flags |= GFLAG_WEIGHT;
        }
    }
    return t;
}

void ggfs_set_name(ggfs_cgraph *g, uint32_t t, const char *name, int layer)
{
    if (!bad(g, t)) {
        g->t[t].name = name;
        g->t[t].layer = (int16_t)layer;
    }
}

void ggfs_set_input(ggfs_cgraph *g, uint32_t t)
{
    if (!bad(g, t))
        g->t[t].flags |= GFLAG_INPUT;
}

void ggfs_set_output(ggfs_cgraph *g, uint32_t t)
{
    if (!bad(g, t))
        g->t[t].flags |= GFLAG_OUTPUT;
}

/* ggml_dup_tensor: a's type and shape, contiguous. */
static uint32_t dup_tensor(ggfs_cgraph *g, uint32_t a)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    const int64_t *ne = g->t[a].ne;
    return ggfs_new(g, (ggfs_type)g->t[a].type, ne[0], ne[1], ne[2], ne[3]);
}

uint32_t ggfs_dup_layout(ggfs_cgraph *g, uint32_t a)
{
    const uint32_t t = dup_tensor(g, a);
    if (t != GGFS_NO_TENSOR) {
        memcpy(g->t[t].nb, g->t[a].nb, sizeof g->t[t].nb);
        g->t[t].bytes = g->t[a].type == GT_WEIGHT ? g->t[a].bytes : nbytes(&g->t[t]);
    }
    return t;
}

uint32_t ggfs_get_rows(ggfs_cgraph *g, uint32_t a, uint32_t rows)
{
    if (bad(g, a) || bad(g, rows))
        return GGFS_NO_TENSOR;
    const int64_t ne[4] = {g->t[a].ne[0], g->t[rows].ne[0], g->t[rows].ne[1], g->t[rows].ne[2]};
    const ggfs_type type = g->t[a].type == GT_I32 ? GT_I32 : GT_F32;
    return with_op(g, new_tensor(g, type, ne, GGFS_NO_TENSOR, 0), GOP_GET_ROWS, a, rows, GGFS_NO_TENSOR);
}

uint32_t ggfs_set_rows(ggfs_cgraph *g, uint32_t dst, uint32_t src, uint32_t rows)
{
    // (the destination its third source, as ggml has it)
    return with_op(g, ggfs_view_tensor(g, dst), GOP_SET_ROWS, src, rows, dst);
}

uint32_t ggfs_unary_op(ggfs_cgraph *g, ggfs_op op, uint32_t a)
{
    return with_op(g, dup_tensor(g, a), op, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_unary(ggfs_cgraph *g, ggfs_unary_kind kind, uint32_t a)
{
    const uint32_t t = ggfs_unary_op(g, GOP_UNARY, a);
    if (t != GGFS_NO_TENSOR)
        g->t[t].unary = (uint8_t)kind;
    return t;
}

uint32_t ggfs_binary_op(ggfs_cgraph *g, ggfs_op op, uint32_t a, uint32_t b)
{
    if (bad(g, b))
        return GGFS_NO_TENSOR;
    return with_op(g, dup_tensor(g, a), op, a, b, GGFS_NO_TENSOR);
}

uint32_t ggfs_mul_mat(ggfs_cgraph *g, uint32_t a, uint32_t b)
{
    if (bad(g, a) || bad(g, b))
        return GGFS_NO_TENSOR;
    const int64_t ne[4] = {g->t[a].ne[1], g->t[b].ne[1], g->t[b].ne[2], g->t[b].ne[3]};
    return with_op(g, new_tensor(g, GT_F32, ne, GGFS_NO_TENSOR, 0), GOP_MUL_MAT, a, b, GGFS_NO_TENSOR);
}

uint32_t ggfs_rope(ggfs_cgraph *g, uint32_t a, uint32_t pos, uint32_t factors)
{
    if (bad(g, pos))
        return GGFS_NO_TENSOR;
    return with_op(g, dup_tensor(g, a), GOP_ROPE, a, pos, factors);
}

uint32_t ggfs_reshape(ggfs_cgraph *g, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    const uint32_t t = new_tensor(g, (ggfs_type)g->t[a].type, ne, a, 0);
    // (a weight's bytes are its file's, whatever its shape)
    if (t != GGFS_NO_TENSOR && g->t[a].type == GT_WEIGHT)
        g->t[t].bytes = g->t[a].bytes;
    return with_op(g, t, GOP_RESHAPE, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_view_nd(ggfs_cgraph *g, uint32_t a, const int64_t ne[4], const uint64_t nb[4], uint64_t offset)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    const uint32_t t = new_tensor(g, (ggfs_type)g->t[a].type, ne, a, offset);
    if (t == GGFS_NO_TENSOR)
        return t;
    memcpy(g->t[t].nb, nb, sizeof g->t[t].nb);
    g->t[t].bytes = nbytes(&g->t[t]);
    return with_op(g, t, GOP_VIEW, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_view_tensor(ggfs_cgraph *g, uint32_t a)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    const uint32_t t = new_tensor(g, (ggfs_type)g->t[a].type, g->t[a].ne, a, 0);
    if (t != GGFS_NO_TENSOR) {
        memcpy(g->t[t].nb, g->t[a].nb, sizeof g->t[t].nb);
        g->t[t].bytes = g->t[a].bytes;
    }
    return t;
}

uint32_t ggfs_permute(ggfs_cgraph *g, uint32_t a, int ax0, int ax1, int ax2, int ax3)
{
    const uint32_t t = ggfs_view_tensor(g, a);
    if (t == GGFS_NO_TENSOR)
        return t;
    const int axes[4] = {ax0, ax1, ax2, ax3};
    for (int i = 0; i < 4; i++) {
        g->t[t].ne[axes[i]] = g->t[a].ne[i];
        g->t[t].nb[axes[i]] = g->t[a].nb[i];
    }
    g->t[t].bytes = nbytes(&g->t[t]);
    return with_op(g, t, GOP_PERMUTE, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_transpose(ggfs_cgraph *g, uint32_t a)
{
    const uint32_t t = ggfs_permute(g, a, 1, 0, 2, 3);
    if (t != GGFS_NO_TENSOR)
        g->t[t].op = GOP_TRANSPOSE;
    return t;
}

uint32_t ggfs_cast(ggfs_cgraph *g, uint32_t a, ggfs_type type)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    const uint32_t t = new_tensor(g, type, g->t[a].ne, GGFS_NO_TENSOR, 0);
    // ggml_cast names the result as its own second source
    return with_op(g, t, GOP_CPY, a, t, GGFS_NO_TENSOR);
}

uint32_t ggfs_glu_halves(ggfs_cgraph *g, uint32_t a)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    const int64_t *ne = g->t[a].ne;
    const uint32_t t = ggfs_new(g, (ggfs_type)g->t[a].type, ne[0] / 2, ne[1], ne[2], ne[3]);
    return with_op(g, t, GOP_GLU, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_argsort(ggfs_cgraph *g, uint32_t a)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    return with_op(g, new_tensor(g, GT_I32, g->t[a].ne, GGFS_NO_TENSOR, 0), GOP_ARGSORT, a, GGFS_NO_TENSOR,
                   GGFS_NO_TENSOR);
}

/* An op reducing each row of a to one element. */
static uint32_t per_row(ggfs_cgraph *g, ggfs_op op, uint32_t a)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    const int64_t *ne = g->t[a].ne;
    const uint32_t t = ggfs_new(g, (ggfs_type)g->t[a].type, 1, ne[1], ne[2], ne[3]);
    return with_op(g, t, op, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_sum_rows(ggfs_cgraph *g, uint32_t a)
{
    return per_row(g, GOP_SUM_ROWS, a);
}

uint32_t ggfs_mean(ggfs_cgraph *g, uint32_t a)
{
    return per_row(g, GOP_MEAN, a);
}

uint32_t ggfs_mul_mat_id(ggfs_cgraph *g, uint32_t as, uint32_t b, uint32_t ids)
{
    if (bad(g, as) || bad(g, b) || bad(g, ids))
        return GGFS_NO_TENSOR;
    const uint32_t t = ggfs_new(g, GT_F32, g->t[as].ne[1], g->t[ids].ne[0], g->t[b].ne[2], 1);
    return with_op(g, t, GOP_MUL_MAT_ID, as, b, ids);
}

uint32_t ggfs_cpy(ggfs_cgraph *g, uint32_t a, uint32_t b)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    return with_op(g, ggfs_view_tensor(g, b), GOP_CPY, a, b, GGFS_NO_TENSOR);
}

uint32_t ggfs_scale_inplace(ggfs_cgraph *g, uint32_t a)
{
    return with_op(g, ggfs_view_tensor(g, a), GOP_SCALE, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_ssm_conv(ggfs_cgraph *g, uint32_t sx, uint32_t c)
{
    if (bad(g, sx) || bad(g, c))
        return GGFS_NO_TENSOR;
    const int64_t *ne = g->t[sx].ne;
    const uint32_t t = ggfs_new(g, GT_F32, ne[1], ne[0] - g->t[c].ne[0] + 1, ne[2], 1);
    return with_op(g, t, GOP_SSM_CONV, sx, c, GGFS_NO_TENSOR);
}

/* Whether every one of n sources is there (bad() of each). */
static bool all_there(ggfs_cgraph *g, const uint32_t *src, int n)
{
    for (int i = 0; i < n; i++) {
        if (bad(g, src[i]))
            return false;
    }
    return true;
}

/* t as op over its n sources (more than with_op's three). */
static uint32_t with_sources(ggfs_cgraph *g, uint32_t t, ggfs_op op, const uint32_t *src, int n)
{
    if (t != GGFS_NO_TENSOR)
        for (int i = 0; i < n; i++)
            g->t[t].src[i] = src[i];
    return with_op(g, t, op, src[0], src[1], src[2]);
}

uint32_t ggfs_ssm_scan(ggfs_cgraph *g, const uint32_t src[7])
{
    if (!all_there(g, src, 7))
        return GGFS_NO_TENSOR;
    // (one sequence, one state kept)
    const int64_t *s = g->t[src[0]].ne;
    const uint32_t t = ggfs_new(g, GT_F32, ggfs_nelements(g, src[1]) + s[0] * s[1] * s[2], 1, 1, 1);
    return with_sources(g, t, GOP_SSM_SCAN, src, 7);
}

uint32_t ggfs_concat(ggfs_cgraph *g, uint32_t a, uint32_t b, int dim)
{
    if (bad(g, a) || bad(g, b) || dim < 0 || dim > 3)
        return GGFS_NO_TENSOR;
    int64_t ne[4];
    memcpy(ne, g->t[a].ne, sizeof ne);
    ne[dim] += g->t[b].ne[dim];
    const uint32_t t = ggfs_new(g, (ggfs_type)g->t[a].type, ne[0], ne[1], ne[2], ne[3]);
    return with_op(g, t, GOP_CONCAT, a, b, GGFS_NO_TENSOR);
}

uint32_t ggfs_dsv4_hc_pre(ggfs_cgraph *g, uint32_t x, uint32_t weights)
{
    if (bad(g, x) || bad(g, weights))
        return GGFS_NO_TENSOR;
    const uint32_t t = ggfs_new(g, GT_F32, g->t[x].ne[0], g->t[x].ne[2], 1, 1);
    return with_op(g, t, GOP_DSV4_HC_PRE, x, weights, GGFS_NO_TENSOR);
}

uint32_t ggfs_im2col_1d(ggfs_cgraph *g, uint32_t a, uint32_t b, int64_t p)
{
    if (bad(g, a) || bad(g, b))
        return GGFS_NO_TENSOR;
    const int64_t *ka = g->t[a].ne, *xb = g->t[b].ne;
    // ggml_calc_conv_output_size, stride and dilation 1
    const int64_t out = xb[0] + 2 * p - (ka[0] - 1);
    if (out <= 0) {
        g->failed = true;
        return GGFS_NO_TENSOR;
    }
    const uint32_t t = ggfs_new(g, GT_F16, ka[1] * ka[0], out, xb[2], 1);
    return with_op(g, t, GOP_IM2COL, a, b, GGFS_NO_TENSOR);
}

uint32_t ggfs_concat0(ggfs_cgraph *g, uint32_t a, uint32_t b)
{
    return ggfs_concat(g, a, b, 0);
}

uint32_t ggfs_wkv(ggfs_cgraph *g, ggfs_op op, const uint32_t *src, int n)
{
    if (n < 3 || n > GGFS_GALLOC_SRCS || !all_there(g, src, n))
        return GGFS_NO_TENSOR;
    // one sequence: one head's rows of state kept per head
    const int64_t *k = g->t[src[op == GOP_RWKV_WKV7 ? 2 : 0]].ne;
    const uint32_t t = ggfs_new(g, GT_F32, k[0] * k[1], k[2] + k[0], 1, 1);
    return with_sources(g, t, op, src, n);
}

uint32_t ggfs_gated_delta_net(ggfs_cgraph *g, const uint32_t src[6])
{
    if (!all_there(g, src, 6))
        return GGFS_NO_TENSOR;
    // v: [head_v, heads, tokens]; one sequence
    const int64_t *v = g->t[src[2]].ne;
    const uint32_t t = ggfs_new(g, GT_F32, v[0] * v[1], v[2] + v[0], 1, 1);
    return with_sources(g, t, GOP_GATED_DELTA_NET, src, 6);
}

uint32_t ggfs_clamp_view(ggfs_cgraph *g, uint32_t a)
{
    return with_op(g, ggfs_view_tensor(g, a), GOP_CLAMP, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_set_1d(ggfs_cgraph *g, uint32_t a, uint32_t b)
{
    if (bad(g, a) || bad(g, b))
        return GGFS_NO_TENSOR;
    return with_op(g, dup_tensor(g, a), GOP_SET, a, b, GGFS_NO_TENSOR);
}

uint32_t ggfs_add_id(ggfs_cgraph *g, uint32_t a, uint32_t b, uint32_t ids)
{
    if (bad(g, a) || bad(g, b) || bad(g, ids))
        return GGFS_NO_TENSOR;
    return with_op(g, dup_tensor(g, a), GOP_ADD_ID, a, b, ids);
}

uint32_t ggfs_repeat_4d(ggfs_cgraph *g, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    return with_op(g, ggfs_new(g, (ggfs_type)g->t[a].type, ne0, ne1, ne2, ne3), GOP_REPEAT, a, GGFS_NO_TENSOR,
                   GGFS_NO_TENSOR);
}

uint32_t ggfs_cont_4d(ggfs_cgraph *g, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    if (bad(g, a))
        return GGFS_NO_TENSOR;
    const uint32_t t = ggfs_new(g, (ggfs_type)g->t[a].type, ne0, ne1, ne2, ne3);
    return with_op(g, t, GOP_CONT, a, GGFS_NO_TENSOR, GGFS_NO_TENSOR);
}

uint32_t ggfs_cont_2d(ggfs_cgraph *g, uint32_t a, int64_t ne0, int64_t ne1)
{
    return ggfs_cont_4d(g, a, ne0, ne1, 1, 1);
}

bool ggfs_is_contiguous(const ggfs_cgraph *g, uint32_t a)
{
    const ggfs_gt *t = &g->t[a];
    uint64_t next = traits[t->type].size;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] != 1 && t->nb[i] != next)
            return false;
        next *= (uint64_t)(i == 0 ? t->ne[0] / traits[t->type].block : t->ne[i]);
    }
    return true;
}

bool ggfs_is_contiguous_1(const ggfs_cgraph *g, uint32_t a)
{
    const ggfs_gt *t = &g->t[a];
    uint64_t next = traits[t->type].size;
    if (t->ne[0] != traits[t->type].block && t->nb[0] != next)
        return false;
    next *= (uint64_t)(t->ne[0] / traits[t->type].block);
    // (dimension 1 need not be contiguous)
    next = (uint64_t)t->ne[1] * t->nb[1];
    for (int i = 2; i < 4; i++) {
        if (t->ne[i] != 1 && t->nb[i] != next)
            return false;
        next *= (uint64_t)t->ne[i];
    }
    return true;
}

bool ggfs_can_repeat(const ggfs_cgraph *g, uint32_t a, uint32_t b)
{
    const int64_t *x = g->t[a].ne, *y = g->t[b].ne;
    if (ggfs_nelements(g, a) == 0)
        return ggfs_nelements(g, b) == 0;
    for (int i = 0; i < 4; i++) {
        if (y[i] % x[i] != 0)
            return false;
    }
    return true;
}

int64_t ggfs_nelements(const ggfs_cgraph *g, uint32_t a)
{
    const int64_t *ne = g->t[a].ne;
    return ne[0] * ne[1] * ne[2] * ne[3];
}

uint32_t ggfs_flash_attn_ext(ggfs_cgraph *g, uint32_t q, uint32_t k, uint32_t v, uint32_t mask, uint32_t sinks)
{
    if (bad(g, q) || bad(g, k) || bad(g, v))
        return GGFS_NO_TENSOR;
    const int64_t ne[4] = {g->t[v].ne[0], g->t[q].ne[2], g->t[q].ne[1], g->t[q].ne[3]};
    const uint32_t t = with_op(g, new_tensor(g, GT_F32, ne, GGFS_NO_TENSOR, 0), GOP_FLASH_ATTN_EXT, q, k, v);
    if (t != GGFS_NO_TENSOR) {
        g->t[t].src[3] = mask;
        g->t[t].src[4] = sinks;
    }
    return t;
}

uint32_t ggfs_soft_max_ext(ggfs_cgraph *g, uint32_t a, uint32_t mask, uint32_t sinks)
{
    return with_op(g, dup_tensor(g, a), GOP_SOFT_MAX, a, mask, sinks);
}

/* ggml_visit_parents_graph: sources first, in order; a tensor without an
 * op is a leaf. The walk keeps its own stack: a graph is as deep as its
 * model. */
typedef struct frame {
    uint32_t t;
    uint32_t next; // the next source to visit
} frame;

static void append(ggfs_cgraph *g, uint32_t t)
{
    const bool leaf = g->t[t].op == GOP_NONE;
    uint32_t **list = leaf ? &g->leafs : &g->nodes;
    uint32_t *count = leaf ? &g->n_leafs : &g->n_nodes, *cap = leaf ? &g->cap_leafs : &g->cap_nodes;
    if (reserve(g, (void **)list, cap, *count + 1, sizeof **list))
        (*list)[(*count)++] = t;
}

void ggfs_expand(ggfs_cgraph *g, uint32_t t)
{
    if (bad(g, t) || g->t[t].visited)
        return;
    frame *stack = NULL;
    uint32_t cap = 0, n = 0;
    g->t[t].visited = true;
    if (!reserve(g, (void **)&stack, &cap, 1, sizeof *stack))
        return;
    stack[n++] = (frame){t, 0};
    while (n > 0 && !g->failed) {
        frame *f = &stack[n - 1];
        const ggfs_gt *cur = &g->t[f->t];
        if (f->next == GGFS_GALLOC_SRCS) {
            append(g, f->t);
            n--;
            continue;
        }
        const uint32_t s = cur->src[f->next++];
        if (s == GGFS_NO_TENSOR)
            continue;
        g->t[s].uses++;
        if (g->t[s].visited)
            continue;
        g->t[s].visited = true;
        if (!reserve(g, (void **)&stack, &cap, n + 1, sizeof *stack))
            break;
        stack[n++] = (frame){s, 0};
    }
    free(stack);
}

bool ggfs_op_in_place(ggfs_op op)
{
    switch (op) {
    case GOP_SCALE:
    case GOP_ADD:
    case GOP_MUL:
    case GOP_UNARY:
    case GOP_SQR:
    case GOP_SQRT:
    case GOP_CLAMP:
    case GOP_DIV:
    case GOP_SUB:
    case GOP_ROPE:
    case GOP_RMS_NORM:
    case GOP_SOFT_MAX:
        return true;
    default:
        return false;
    }
}
