/*
 * A graph of tensor shapes built as ggml builds its graphs: each operation
 * makes a tensor of the type, shape and strides ggml gives it (ggml.c),
 * views share their source's memory, and ggml_build_forward_expand's
 * depth-first walk orders the nodes and leafs. Nothing is computed: the
 * graph is what llama.cpp's scheduler splits and ggml's allocator places
 * (model/sched.h), so that offload/ knows the compute buffers' sizes.
 */
#ifndef GGFS_MODEL_CGRAPH_H
#define GGFS_MODEL_CGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/galloc.h"

/* ggml's ops, those llama.cpp's graphs use here (names as ggml_op_name). */
typedef enum ggfs_op {
    GOP_NONE,
    GOP_GET_ROWS,
    GOP_SET_ROWS,
    GOP_NORM,
    GOP_RMS_NORM,
    GOP_ADD,
    GOP_MUL,
    GOP_SCALE,
    GOP_MUL_MAT,
    GOP_RESHAPE,
    GOP_VIEW,
    GOP_PERMUTE,
    GOP_TRANSPOSE,
    GOP_CONT,
    GOP_CPY,
    GOP_ROPE,
    GOP_FLASH_ATTN_EXT,
    GOP_SOFT_MAX,
    GOP_GLU,
    GOP_UNARY,
    GOP_SQR,
    GOP_SQRT,
    GOP_CLAMP,
    GOP_DIV,
    GOP_ARGSORT,
    GOP_SUM_ROWS,
    GOP_MUL_MAT_ID,
    GOP_CONCAT,
    GOP_SSM_CONV,
    GOP_SSM_SCAN,
    GOP_REPEAT,
    GOP_ADD_ID,
    GOP_GATED_DELTA_NET,
    GOP_SET,
    GOP_SUB,
    GOP_L2_NORM,
    GOP_RWKV_WKV6,
    GOP_GATED_LINEAR_ATTN,
    GOP_RWKV_WKV7,
    GOP_IM2COL,
    GOP_GROUP_NORM,
    GOP_MEAN,
    GOP_DSV4_HC_PRE,
    GOP_COUNT
} ggfs_op;

/* A UNARY op's function, where the scheduler cares: Vulkan fuses GELU,
 * SIGMOID, SILU and SOFTPLUS with a MUL after them. */
typedef enum ggfs_unary_kind { UN_OTHER, UN_GELU, UN_SIGMOID, UN_SILU, UN_SOFTPLUS, UN_RELU, UN_TANH, UN_EXP, UN_NEG }
    ggfs_unary_kind;

/* Element types: those of activations and caches; a weight's own type
 * matters only by its bytes (GT_WEIGHT). */
typedef enum ggfs_type { GT_F32, GT_F16, GT_I32, GT_I64, GT_Q8_0, GT_Q4_0, GT_WEIGHT } ggfs_type;

/* Where a tensor's memory is before the graph is allocated. */
typedef enum ggfs_home {
    HOME_NONE,     // the allocator places it
    HOME_HOST,     // a weight or cache in host memory
    HOME_GPU,      // a weight or cache on the GPU
} ggfs_home;

// WEIGHT: in a model's buffer (usage WEIGHTS); F32_DATA: a weight whose elements are f32; PREC_F32: a
// product's second source at f32 precision (ggml_prec_set_src)
enum { GFLAG_INPUT = 1, GFLAG_OUTPUT = 2, GFLAG_WEIGHT = 4, GFLAG_F32_DATA = 8, GFLAG_PREC_F32 = 16 };

typedef struct ggfs_gt {
    int64_t ne[4];
    uint64_t nb[4];
    uint64_t bytes;   // ggml_nbytes (a weight's: its bytes in the file)
    uint64_t view_offs;
    uint32_t src[GGFS_GALLOC_SRCS];
    uint32_t view_src; // GGFS_GALLOC_NONE: not a view
    uint32_t uses;     // its uses as a source by the graph's nodes (ggml's use_counts)
    uint8_t op, type, home, flags;
    uint8_t unary;     // ggfs_unary_kind, of a UNARY op
    int8_t backend;    // the scheduler's choice, -1 before it
    bool visited;
    int16_t layer;     // the layer that named it, -1 for none
    const char *name;  // the name llama.cpp gives it (a static string)
} ggfs_gt;

typedef struct ggfs_cgraph {
    ggfs_gt *t;
    uint32_t n, cap;
    uint32_t *nodes, *leafs;
    uint32_t n_nodes, n_leafs, cap_nodes, cap_leafs;
    bool failed;       // out of memory: every later step does nothing
} ggfs_cgraph;

#define GGFS_NO_TENSOR GGFS_GALLOC_NONE

/* *array (*cap elements of size bytes) grown to hold need, doubling from
 * first: false when out of memory (or past 2^31 elements). */
bool ggfs_grow(void **array, uint32_t *cap, uint32_t need, size_t size, uint32_t first);

void ggfs_cgraph_init(ggfs_cgraph *g);
void ggfs_cgraph_free(ggfs_cgraph *g);

/* A new tensor of type and shape, contiguous. */
uint32_t ggfs_new(ggfs_cgraph *g, ggfs_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* A weight (type GT_WEIGHT, of `bytes` bytes) or a cache, in memory of
 * its own (HOME_HOST or HOME_GPU). */
uint32_t ggfs_new_held(ggfs_cgraph *g, ggfs_type type, ggfs_home home, uint64_t bytes, int64_t ne0, int64_t ne1,
                       int64_t ne2);
void ggfs_set_name(ggfs_cgraph *g, uint32_t t, const char *name, int layer);
void ggfs_set_input(ggfs_cgraph *g, uint32_t t);
void ggfs_set_output(ggfs_cgraph *g, uint32_t t);

/* The operations, with ggml's result shapes. */
uint32_t ggfs_get_rows(ggfs_cgraph *g, uint32_t a, uint32_t rows);
uint32_t ggfs_set_rows(ggfs_cgraph *g, uint32_t dst, uint32_t src, uint32_t rows);
uint32_t ggfs_unary_op(ggfs_cgraph *g, ggfs_op op, uint32_t a); // NORM, RMS_NORM, SCALE, CONT, ...
uint32_t ggfs_unary(ggfs_cgraph *g, ggfs_unary_kind kind, uint32_t a); // UNARY
uint32_t ggfs_binary_op(ggfs_cgraph *g, ggfs_op op, uint32_t a, uint32_t b); // ADD, MUL, GLU: a's shape
uint32_t ggfs_mul_mat(ggfs_cgraph *g, uint32_t a, uint32_t b);
uint32_t ggfs_rope(ggfs_cgraph *g, uint32_t a, uint32_t pos, uint32_t factors);
uint32_t ggfs_reshape(ggfs_cgraph *g, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
uint32_t ggfs_view_nd(ggfs_cgraph *g, uint32_t a, const int64_t ne[4], const uint64_t nb[4], uint64_t offset);
uint32_t ggfs_view_tensor(ggfs_cgraph *g, uint32_t a); // ggml_view_tensor: op NONE
uint32_t ggfs_permute(ggfs_cgraph *g, uint32_t a, int ax0, int ax1, int ax2, int ax3);
uint32_t ggfs_transpose(ggfs_cgraph *g, uint32_t a);
uint32_t ggfs_cast(ggfs_cgraph *g, uint32_t a, ggfs_type type);
uint32_t ggfs_flash_attn_ext(ggfs_cgraph *g, uint32_t q, uint32_t k, uint32_t v, uint32_t mask, uint32_t sinks);
uint32_t ggfs_soft_max_ext(ggfs_cgraph *g, uint32_t a, uint32_t mask, uint32_t sinks);
/* ggml_glu with one source (ggml_swiglu): its halves' gated product. */
uint32_t ggfs_glu_halves(ggfs_cgraph *g, uint32_t a);
/* ggml_argsort: i32 indices, a's shape. */
uint32_t ggfs_argsort(ggfs_cgraph *g, uint32_t a);
/* ggml_sum_rows, ggml_mean: [1, ne1, ne2, ne3]. */
uint32_t ggfs_sum_rows(ggfs_cgraph *g, uint32_t a);
uint32_t ggfs_mean(ggfs_cgraph *g, uint32_t a);
/* ggml_mul_mat_id: the experts `ids` names, [as.ne1, ids.ne0, b.ne2]. */
uint32_t ggfs_mul_mat_id(ggfs_cgraph *g, uint32_t as, uint32_t b, uint32_t ids);
/* ggml_cpy: a copied into b, the result a view of b's memory. */
uint32_t ggfs_cpy(ggfs_cgraph *g, uint32_t a, uint32_t b);
/* ggml_scale_inplace: a view of a, scaled. */
uint32_t ggfs_scale_inplace(ggfs_cgraph *g, uint32_t a);
/* ggml_ssm_conv: [sx.ne1, sx.ne0 - c.ne0 + 1, sx.ne2]. */
uint32_t ggfs_ssm_conv(ggfs_cgraph *g, uint32_t sx, uint32_t c);
/* ggml_ssm_scan: y then the final state, in one row. */
uint32_t ggfs_ssm_scan(ggfs_cgraph *g, const uint32_t src[7]);
/* ggml_concat along dimension 0, or dim. */
uint32_t ggfs_concat0(ggfs_cgraph *g, uint32_t a, uint32_t b);
uint32_t ggfs_concat(ggfs_cgraph *g, uint32_t a, uint32_t b, int dim);
/* ggml_dsv4_hc_pre: the checkpoints x [n_embd, n, tokens] summed by
 * their weights [n, tokens]: [n_embd, tokens]. */
uint32_t ggfs_dsv4_hc_pre(ggfs_cgraph *g, uint32_t x, uint32_t weights);
/* ggml_im2col of a 1D convolution (kernel a, input b, stride 1, padding
 * p), into f16: [a.ne1 * a.ne0, b's output length, b.ne2]. */
uint32_t ggfs_im2col_1d(ggfs_cgraph *g, uint32_t a, uint32_t b, int64_t p);
/* ggml_rwkv_wkv6, ggml_gated_linear_attn, ggml_rwkv_wkv7 (op) over their
 * n sources, the state last: each token's output, then the state kept,
 * as [head * heads, tokens + head] (k, src[0] of the first two and src[2]
 * of wkv7, gives head, heads and tokens). */
uint32_t ggfs_wkv(ggfs_cgraph *g, ggfs_op op, const uint32_t *src, int n);
/* ggml_gated_delta_net over q, k, v, gate, beta and state (src[0..5]):
 * each token's output, then the state kept, as [head_v * heads, tokens + head_v]. */
uint32_t ggfs_gated_delta_net(ggfs_cgraph *g, const uint32_t src[6]);
/* ggml_clamp, a view of a (ggml clamps in place). */
uint32_t ggfs_clamp_view(ggfs_cgraph *g, uint32_t a);
/* ggml_set_1d: a copy of a with b written into it. */
uint32_t ggfs_set_1d(ggfs_cgraph *g, uint32_t a, uint32_t b);
/* ggml_add_id: a plus the rows of b that ids choose. */
uint32_t ggfs_add_id(ggfs_cgraph *g, uint32_t a, uint32_t b, uint32_t ids);
/* ggml_repeat_4d: a repeated to the shape given. */
uint32_t ggfs_repeat_4d(ggfs_cgraph *g, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* ggml_cont_2d: a's elements, contiguous, as [ne0, ne1]. */
uint32_t ggfs_cont_2d(ggfs_cgraph *g, uint32_t a, int64_t ne0, int64_t ne1);
uint32_t ggfs_cont_4d(ggfs_cgraph *g, uint32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* ggml_is_contiguous; ggml_is_contiguous_1 (its rows need not be). */
bool ggfs_is_contiguous(const ggfs_cgraph *g, uint32_t a);
bool ggfs_is_contiguous_1(const ggfs_cgraph *g, uint32_t a);
/* ggml_can_repeat: b's shape a whole number of a's. */
bool ggfs_can_repeat(const ggfs_cgraph *g, uint32_t a, uint32_t b);
/* ggml_nelements. */
int64_t ggfs_nelements(const ggfs_cgraph *g, uint32_t a);
/* A tensor of the same type and strides as a (ggml_dup_tensor_layout):
 * the scheduler's copy of a split's input. */
uint32_t ggfs_dup_layout(ggfs_cgraph *g, uint32_t a);

/* ggml_build_forward_expand: t and its sources, depth first. */
void ggfs_expand(ggfs_cgraph *g, uint32_t t);

/* ggml_row_size. */
uint64_t ggfs_row_size(ggfs_type type, int64_t n);
/* ggml_op_can_inplace. */
bool ggfs_op_in_place(ggfs_op op);

/* ggml_is_view_op. */
static inline bool ggfs_is_view_op(ggfs_op op)
{
    return op == GOP_VIEW || op == GOP_RESHAPE || op == GOP_PERMUTE || op == GOP_TRANSPOSE;
}

#endif
