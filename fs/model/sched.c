/*
 * llama.cpp's scheduler over a graph of shapes (sched.h). The passes are
 * ggml-backend.cpp's ggml_backend_sched_split_graph's, in its order; the
 * reordering is ggml-vulkan.cpp's ggml_vk_graph_optimize's.
 */
#include "model/sched.h"

#include <stdlib.h>
#include <string.h>

#include "model/galloc.h"

enum { GPU, CPU, N_BACKENDS }; // in priority order: the host comes last

/* The buffers' alignments: Vulkan's device buffer type and its host one. */
static const uint64_t alignments[N_BACKENDS] = {16, 64};

/* ggml's op offload: a GPU takes an op whose weight is on the host when
 * its batch is at least this (ggml-vulkan's op_offload_min_batch_size). */
#define OFFLOAD_MIN_BATCH 32

typedef struct split {
    int backend;
    uint32_t start, end; // node positions
    uint32_t *inputs;
    uint32_t n_inputs, cap_inputs;
} split;

typedef struct sched {
    ggfs_cgraph *g;
    bool *placed;             // per tensor, for the reordering: already in the new order
    uint32_t *base;           // per tensor, for the reordering: the tensor whose memory it is
    uint8_t *n_src;           // per tensor, for the reordering: its sources' count, trailing absent ones not
    // the reordering's allocation dependencies: keep[i] stays live until
    // node until[i] has run (ggml_backend_graph_optimize_params.add_alloc_dep)
    uint32_t *dep_until, *dep_keep;
    uint32_t n_deps, cap_deps;
    uint32_t n_original;      // tensors before the copies
    uint32_t *copy[N_BACKENDS]; // per original tensor: its copy for a backend's split
    split *splits;
    uint32_t n_splits, cap_splits;
    bool failed;
} sched;

static ggfs_gt *T(const sched *s, uint32_t i)
{
    return &s->g->t[i];
}

static bool grow(sched *s, void **array, uint32_t *cap, uint32_t need, size_t size)
{
    const bool grown = ggfs_grow(array, cap, need, size, 16);
    if (!grown)
        s->failed = true;
    return grown;
}

/* The memory a tensor (or the tensor it views) already has. */
static uint8_t home_of(const sched *s, uint32_t t)
{
    const ggfs_gt *x = T(s, t);
    return x->view_src != GGFS_NO_TENSOR ? T(s, x->view_src)->home : x->home;
}

/* ggml_backend_supports_buft: the GPU uses its own memory, the host its. */
static bool backend_uses(int backend, uint8_t home)
{
    return backend == GPU ? home == HOME_GPU : home == HOME_HOST;
}

/* ggml_vk_get_op_batch_size. */
static int64_t batch_size(const ggfs_gt *t)
{
    switch (t->op) {
    case GOP_GET_ROWS:
        return 0;
    case GOP_MUL_MAT:
        return t->ne[1];
    case GOP_ROPE:
    case GOP_MUL_MAT_ID:
        return t->ne[2];
    default:
        return t->ne[1] * t->ne[2] * t->ne[3];
    }
}

bool ggfs_sched_gpu_runs_scan(bool per_head_a, int64_t d_state, int64_t head_dim)
{
    return per_head_a && (d_state == 128 || d_state == 256) && head_dim % 16 == 0;
}

/* ggml_backend_supports_op: the host runs every op; the GPU (Vulkan's
 * supports_op) every op here but those it has no shader for: a gated
 * linear attention over heads not 64 wide, an experts' product at f32
 * precision, a sum of other than 4 checkpoints (dsv4_hc_pre), a scan of
 * Mamba-1 (A a matrix, not a number per head) or of a state or head of
 * another width. */
static bool supports(const sched *s, int backend, uint32_t t)
{
    const ggfs_gt *x = T(s, t);
    if (backend == CPU)
        return true;
    if (x->op == GOP_GATED_LINEAR_ATTN)
        return T(s, x->src[0])->ne[0] == 64;
    if (x->op == GOP_MUL_MAT_ID)
        return !(x->flags & GFLAG_PREC_F32);
    if (x->op == GOP_DSV4_HC_PRE)
        return T(s, x->src[0])->ne[1] == 4; // (its shaders' checkpoints)
    if (x->op != GOP_SSM_SCAN)
        return true;
    const ggfs_gt *states = T(s, x->src[0]), *a = T(s, x->src[3]);
    // (A one number a head: a row of one float, as ggml checks it by its stride)
    return ggfs_sched_gpu_runs_scan(a->ne[0] == 1, states->ne[0], states->ne[1]);
}

/* ggml_backend_sched_backend_from_buffer: the device whose memory it is,
 * if that device runs op (else -1: the tensor is copied to where op runs). */
static int backend_from_home(const sched *s, uint8_t home, uint32_t op)
{
    const int b = home == HOME_GPU ? GPU : home == HOME_HOST ? CPU : -1;
    return b != -1 && supports(s, b, op) ? b : -1;
}

/* ggml_backend_sched_backend_id_from_cur. */
static int backend_from_cur(const sched *s, uint32_t t)
{
    const ggfs_gt *x = T(s, t);
    int b = backend_from_home(s, home_of(s, t), t);
    if (b != -1)
        return b;
    if (x->flags & GFLAG_INPUT)
        return CPU;
    // ROPE's and FLASH_ATTN_EXT's small sources (rope factors, sinks) do
    // not choose
    if (x->op == GOP_ROPE || x->op == GOP_FLASH_ATTN_EXT)
        return -1;
    for (int i = 0; i < GGFS_GALLOC_SRCS; i++) {
        if (x->src[i] == GGFS_NO_TENSOR)
            continue;
        const ggfs_gt *src = T(s, x->src[i]);
        if (!(src->flags & GFLAG_WEIGHT))
            continue;
        b = backend_from_home(s, src->home, t);
        if (b == CPU && supports(s, GPU, t) && batch_size(x) >= OFFLOAD_MIN_BATCH)
            return GPU;
        return b;
    }
    return -1;
}

/* ggml_backend_sched_buffer_supported. */
static bool buffer_supported(const sched *s, uint32_t t, int backend)
{
    const uint8_t home = home_of(s, t);
    if (home != HOME_NONE)
        return backend_uses(backend, home);
    int b = T(s, t)->backend;
    if (b == -1 && T(s, t)->view_src != GGFS_NO_TENSOR)
        b = T(s, T(s, t)->view_src)->backend;
    return b == backend;
}

static bool is_view(const sched *s, uint32_t t)
{
    return ggfs_is_view_op((ggfs_op)T(s, t)->op);
}

/* Pass 2: each assigned node's device spreads to the unassigned nodes
 * after (down) or before it, the GPU's first and then any. */
static void expand(sched *s, bool down, bool gpu_only)
{
    const ggfs_cgraph *g = s->g;
    int cur = -1;
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const uint32_t n = g->nodes[down ? k : g->n_nodes - 1 - k];
        if (is_view(s, n))
            continue;
        if (T(s, n)->backend != -1)
            cur = gpu_only && T(s, n)->backend == CPU ? -1 : T(s, n)->backend;
        else if (cur != -1 && supports(s, cur, n))
            T(s, n)->backend = (int8_t)cur;
    }
}

/* Pass 3: a node nothing placed goes where most of its sources are. */
static void place_rest(sched *s)
{
    const ggfs_cgraph *g = s->g;
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        const uint32_t n = g->nodes[k];
        if (is_view(s, n) || T(s, n)->backend != -1)
            continue;
        int best = -1;
        for (int b = 0; b < N_BACKENDS; b++) {
            if (!supports(s, b, n))
                continue;
            int supported = 0;
            for (int i = 0; i < GGFS_GALLOC_SRCS; i++) {
                const uint32_t src = T(s, n)->src[i];
                if (src == GGFS_NO_TENSOR)
                    continue;
                const bool assigned = T(s, src)->backend != -1 ||
                                      (T(s, src)->view_src != GGFS_NO_TENSOR && T(s, T(s, src)->view_src)->backend != -1);
                if (assigned && buffer_supported(s, src, b))
                    supported++;
            }
            if (supported > best) {
                best = supported;
                T(s, n)->backend = (int8_t)b;
            }
        }
    }
}

/* Pass 4: views go with their sources, sources with their users. */
static void place_sources(sched *s)
{
    const ggfs_cgraph *g = s->g;
    for (uint32_t k = 0; k < g->n_nodes; k++) {
        ggfs_gt *n = T(s, g->nodes[k]);
        if (n->view_src != GGFS_NO_TENSOR && n->backend == -1)
            n->backend = T(s, n->view_src)->backend;
        for (int i = 0; i < GGFS_GALLOC_SRCS; i++) {
            if (n->src[i] == GGFS_NO_TENSOR)
                continue;
            ggfs_gt *src = T(s, n->src[i]);
            if (src->backend == -1)
                src->backend = src->view_src != GGFS_NO_TENSOR ? T(s, src->view_src)->backend : n->backend;
        }
        if (n->backend == -1)
            n->backend = supports(s, GPU, g->nodes[k]) ? GPU : CPU;
    }
}

static split *new_split(sched *s, int backend, uint32_t start)
{
    if (!grow(s, (void **)&s->splits, &s->cap_splits, s->n_splits + 1, sizeof *s->splits))
        return NULL;
    split *sp = &s->splits[s->n_splits++];
    memset(sp, 0, sizeof *sp);
    sp->backend = backend;
    sp->start = start;
    return sp;
}

/* Pass 5: runs of nodes on one device; a weight of the other device
 * starts a new split once the split has inputs (so that the copies of the
 * weights before it can be freed); each split copies in the sources it
 * has on the other device, once. */
static void split_graph(sched *s)
{
    ggfs_cgraph *g = s->g;
    uint32_t k = 0;
    while (k < g->n_nodes && is_view(s, g->nodes[k]))
        k++;
    split *sp = new_split(s, k < g->n_nodes ? T(s, g->nodes[k])->backend : GPU, 0);
    for (; sp && k < g->n_nodes && !s->failed; k++) {
        const uint32_t n = g->nodes[k];
        if (is_view(s, n))
            continue;
        const int backend = T(s, n)->backend;
        bool renew = false;
        if (backend == sp->backend && sp->n_inputs > 0) {
            for (int i = 0; i < GGFS_GALLOC_SRCS && !renew; i++) {
                const uint32_t src = T(s, n)->src[i];
                renew = src != GGFS_NO_TENSOR && T(s, src)->flags & GFLAG_WEIGHT &&
                        T(s, src)->backend != sp->backend && !buffer_supported(s, src, sp->backend);
            }
        }
        if (backend != sp->backend || renew) {
            sp->end = k;
            if (!(sp = new_split(s, backend, k)))
                break;
        }
        for (int i = 0; i < GGFS_GALLOC_SRCS; i++) {
            const uint32_t src = T(s, n)->src[i];
            if (src == GGFS_NO_TENSOR || src >= s->n_original || T(s, src)->backend == sp->backend ||
                buffer_supported(s, src, sp->backend))
                continue;
            if (s->copy[sp->backend][src] == GGFS_NO_TENSOR) {
                const uint32_t c = ggfs_dup_layout(g, src);
                if (c == GGFS_NO_TENSOR ||
                    !grow(s, (void **)&sp->inputs, &sp->cap_inputs, sp->n_inputs + 1, sizeof *sp->inputs)) {
                    s->failed = true;
                    return;
                }
                T(s, c)->backend = (int8_t)sp->backend;
                T(s, c)->name = T(s, src)->name;
                s->copy[sp->backend][src] = c;
                sp->inputs[sp->n_inputs++] = src;
            }
            T(s, n)->src[i] = s->copy[sp->backend][src];
        }
    }
    if (sp)
        sp->end = g->n_nodes;
}

/* ---- Vulkan's graph_optimize, over one split's nodes ---- */

typedef struct reorder {
    sched *s;
    const uint32_t *nodes; // the split's nodes, in the scheduler's order
    uint32_t n;
    uint32_t *deps;   // per node j: bit d - 1 set when node j depends on node j - d (d <= WINDOW)
    uint16_t *starts; // per node j: bit p set when pattern p's ops start at j
    bool *used;
    bool *placed; // per tensor: already in the new order
} reorder;

static uint8_t op_at(const reorder *r, uint32_t i)
{
    return T(r->s, r->nodes[i])->op;
}

static bool is_empty(const ggfs_gt *t)
{
    return t->op == GOP_NONE || ggfs_is_view_op((ggfs_op)t->op);
}

/* Whether dst must come after src: a source, or memory one writes that
 * the other reads through a view. */
static bool is_src_of(const sched *s, uint32_t dst, uint32_t src)
{
    const ggfs_gt *d = T(s, dst), *x = T(s, src);
    const uint32_t *base = s->base;
    const uint32_t bd = base[dst], bs = base[src];
    const int n = s->n_src[dst] > s->n_src[src] ? s->n_src[dst] : s->n_src[src];
    if (is_empty(d) || is_empty(x)) {
        for (int i = 0; i < n; i++) {
            if (d->src[i] == src)
                return true;
        }
        return bd == bs;
    }
    for (int i = 0; i < n; i++) {
        if (d->src[i] == src)
            return true;
        if (d->src[i] != GGFS_NO_TENSOR && base[d->src[i]] == bs)
            return true;
        if (x->src[i] != GGFS_NO_TENSOR && bd == base[x->src[i]])
            return true;
    }
    return bd == bs;
}

/* The per-tensor facts the reordering asks again and again. */
static bool index_tensors(sched *s)
{
    const ggfs_cgraph *g = s->g;
    s->base = malloc((g->n ? g->n : 1) * sizeof *s->base);
    s->n_src = malloc(g->n ? g->n : 1);
    if (!s->base || !s->n_src)
        return false;
    for (uint32_t i = 0; i < g->n; i++) {
        s->base[i] = g->t[i].view_src != GGFS_NO_TENSOR ? g->t[i].view_src : i;
        uint8_t n = 0;
        for (int k = 0; k < GGFS_GALLOC_SRCS; k++) {
            if (g->t[i].src[k] != GGFS_NO_TENSOR)
                n = (uint8_t)(k + 1);
        }
        s->n_src[i] = n;
    }
    return true;
}

/* Whether pattern p's ops start at start, none of its nodes placed. */
static bool match(const reorder *r, size_t p, uint32_t len, uint32_t start)
{
    if (start + len > r->n || !(r->starts[start] >> p & 1))
        return false;
    for (uint32_t j = 0; j < len; j++) {
        if (r->used[start + j])
            return false;
    }
    return true;
}

/* The fusion patterns graph_optimize keeps together, in its order: the
 * experts' routing first (whose outside sources are kept alive until its
 * last node, or a SCALE after it), then the norms'. */
static const uint8_t topk_moe_early_softmax_norm[] = {GOP_SOFT_MAX, GOP_RESHAPE,  GOP_ARGSORT, GOP_VIEW,
                                                      GOP_GET_ROWS, GOP_RESHAPE,  GOP_SUM_ROWS, GOP_CLAMP,
                                                      GOP_DIV,      GOP_RESHAPE};
static const uint8_t topk_moe_sigmoid_norm_bias[] = {GOP_UNARY,    GOP_RESHAPE,  GOP_ADD,   GOP_ARGSORT,
                                                     GOP_VIEW,     GOP_GET_ROWS, GOP_RESHAPE, GOP_SUM_ROWS,
                                                     GOP_CLAMP,    GOP_DIV,      GOP_RESHAPE};
static const uint8_t topk_moe_sqrt_softplus_norm_bias[] = {GOP_UNARY,   GOP_SQRT,     GOP_RESHAPE, GOP_ADD,
                                                           GOP_ARGSORT, GOP_VIEW,     GOP_GET_ROWS, GOP_RESHAPE,
                                                           GOP_SUM_ROWS, GOP_CLAMP,   GOP_DIV,     GOP_RESHAPE};
static const uint8_t topk_moe_early_softmax[] = {GOP_SOFT_MAX, GOP_RESHAPE, GOP_ARGSORT, GOP_VIEW, GOP_GET_ROWS};
static const uint8_t topk_moe_late_softmax[] = {GOP_ARGSORT, GOP_VIEW,     GOP_GET_ROWS,
                                                GOP_RESHAPE, GOP_SOFT_MAX, GOP_RESHAPE};
#define N_TOPK_PATTERNS 5
static const uint8_t rms_norm_mul_add_mul[] = {GOP_RMS_NORM, GOP_MUL, GOP_ADD, GOP_MUL};
static const uint8_t rms_norm_mul_add[] = {GOP_RMS_NORM, GOP_MUL, GOP_ADD};
static const uint8_t rms_norm_mul_rope_view_set_rows[] = {GOP_RMS_NORM, GOP_MUL, GOP_ROPE, GOP_VIEW, GOP_SET_ROWS};
static const uint8_t rms_norm_view_set_rows[] = {GOP_RMS_NORM, GOP_VIEW, GOP_SET_ROWS};
static const uint8_t rope_view_set_rows[] = {GOP_ROPE, GOP_VIEW, GOP_SET_ROWS};
static const struct {
    const uint8_t *ops;
    uint32_t len;
} patterns[] = {
    {topk_moe_early_softmax_norm, sizeof topk_moe_early_softmax_norm},
    {topk_moe_sigmoid_norm_bias, sizeof topk_moe_sigmoid_norm_bias},
    {topk_moe_sqrt_softplus_norm_bias, sizeof topk_moe_sqrt_softplus_norm_bias},
    {topk_moe_early_softmax, sizeof topk_moe_early_softmax},
    {topk_moe_late_softmax, sizeof topk_moe_late_softmax},
    {rms_norm_mul_add_mul, sizeof rms_norm_mul_add_mul},
    {rms_norm_mul_add, sizeof rms_norm_mul_add},
    {rms_norm_mul_rope_view_set_rows, sizeof rms_norm_mul_rope_view_set_rows},
    {rms_norm_view_set_rows, sizeof rms_norm_view_set_rows},
    {rope_view_set_rows, sizeof rope_view_set_rows},
};

/* Where each pattern's ops start, once per split. */
static void find_starts(reorder *r)
{
    for (uint32_t j = 0; j < r->n; j++) {
        uint16_t bits = 0;
        for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
            bool ops = j + patterns[p].len <= r->n;
            for (uint32_t k = 0; ops && k < patterns[p].len; k++)
                ops = op_at(r, j + k) == patterns[p].ops[k];
            if (ops)
                bits |= (uint16_t)(1u << p);
        }
        r->starts[j] = bits;
    }
}

static bool any_pattern_at(const reorder *r, uint32_t at)
{
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        if (match(r, p, patterns[p].len, at))
            return true;
    }
    return false;
}

static bool empty_or_used_between(const reorder *r, uint32_t lo, uint32_t hi)
{
    for (uint32_t v = lo; v < hi; v++) {
        if (!r->used[v] && !is_empty(T(r->s, r->nodes[v])))
            return false;
    }
    return true;
}

/* ggml_can_fuse_subgraph_ext over three nodes whose last is the output:
 * each other node used by the next ones alone, and a view's memory theirs
 * or a weight's. */
static bool can_fuse_three(const reorder *r, const uint32_t idx[3])
{
    const sched *s = r->s;
    for (int i = 0; i < 2; i++) {
        const uint32_t node = r->nodes[idx[i]];
        if (T(s, node)->flags & GFLAG_OUTPUT)
            return false;
        uint32_t uses = 0;
        for (int j = i + 1; j < 3; j++) {
            for (int k = 0; k < GGFS_GALLOC_SRCS; k++)
                uses += T(s, r->nodes[idx[j]])->src[k] == node;
        }
        if (uses != T(s, node)->uses)
            return false;
        const uint32_t v = T(s, node)->view_src;
        if (v != GGFS_NO_TENSOR && !(T(s, v)->flags & GFLAG_WEIGHT) && v != r->nodes[idx[0]] &&
            v != r->nodes[idx[1]] && v != r->nodes[idx[2]])
            return false;
    }
    return true;
}

/* add_alloc_dep, once per pair. */
static void add_dep(sched *s, uint32_t keep, uint32_t until)
{
    for (uint32_t i = 0; i < s->n_deps; i++) {
        if (s->dep_until[i] == until && s->dep_keep[i] == keep)
            return;
    }
    uint32_t cap = s->cap_deps;
    if (!grow(s, (void **)&s->dep_until, &cap, s->n_deps + 1, sizeof *s->dep_until) ||
        !grow(s, (void **)&s->dep_keep, &s->cap_deps, s->n_deps + 1, sizeof *s->dep_keep))
        return;
    s->dep_until[s->n_deps] = until;
    s->dep_keep[s->n_deps++] = keep;
}

/* keep_topk_moe_pattern's add_pattern_alloc_deps: the sources from outside
 * the routing's nodes live until its last node (or the SCALE after it). */
static void keep_routing_inputs(reorder *r, uint32_t first, uint32_t len)
{
    sched *s = r->s;
    uint32_t last = first + len - 1;
    if (last + 1 < r->n && op_at(r, last + 1) == GOP_SCALE)
        last++;
    uint32_t seen[16 * GGFS_GALLOC_SRCS], n_seen = 0;
    for (uint32_t j = first; j < first + len; j++) {
        const ggfs_gt *x = T(s, r->nodes[j]);
        for (int k = 0; k < GGFS_GALLOC_SRCS; k++) {
            const uint32_t src = x->src[k];
            bool known = src == GGFS_NO_TENSOR;
            for (uint32_t i = 0; i < n_seen && !known; i++)
                known = seen[i] == src;
            if (known || n_seen == sizeof seen / sizeof seen[0])
                continue;
            seen[n_seen++] = src;
            add_dep(s, src, r->nodes[last]);
        }
        if (n_seen < sizeof seen / sizeof seen[0])
            seen[n_seen++] = r->nodes[j];
    }
}

/* is_src_of between the split's nodes j and c < j: the window of 20 the
 * reordering looks at is asked again and again, so it is worked out once. */
#define WINDOW 20

static bool depends(const reorder *r, uint32_t j, uint32_t c)
{
    const uint32_t d = j - c;
    return d <= WINDOW ? (r->deps[j] >> (d - 1) & 1) != 0 : is_src_of(r->s, r->nodes[j], r->nodes[c]);
}

static void find_deps(reorder *r)
{
    for (uint32_t j = 0; j < r->n; j++) {
        uint32_t bits = 0;
        for (uint32_t d = 1; d <= WINDOW && d <= j; d++) {
            if (is_src_of(r->s, r->nodes[j], r->nodes[j - d]))
                bits |= UINT32_C(1) << (d - 1);
        }
        r->deps[j] = bits;
    }
}

/* Whether node j may run beside the set: every unused node before it that
 * it depends on is one it fuses with. */
static bool independent(const reorder *r, uint32_t first, uint32_t j, uint32_t last_in_set)
{
    const uint8_t oj = op_at(r, j);
    for (uint32_t c = first; c < j; c++) {
        if (r->used[c] || !depends(r, j, c))
            continue;
        const uint8_t oc = op_at(r, c);
        const bool back = c == last_in_set;
        if (back && oc == GOP_RMS_NORM && oj == GOP_MUL && empty_or_used_between(r, c + 1, j))
            continue;
        if (back && oc == GOP_UNARY && oj == GOP_MUL && empty_or_used_between(r, c + 1, j))
            continue;
        if (j == c + 1 && back &&
            ((oc == GOP_MUL_MAT && oj == GOP_ADD) || (oc == GOP_MUL_MAT_ID && oj == GOP_ADD_ID) ||
             (oc == GOP_MUL_MAT_ID && oj == GOP_MUL) || (oc == GOP_ADD && oj == GOP_ADD) ||
             (oc == GOP_SSM_CONV && oj == GOP_ADD) || (oc == GOP_SSM_CONV && oj == GOP_UNARY)))
            continue;
        return false;
    }
    return true;
}

typedef struct node_set {
    uint32_t *at;
    uint32_t n;
} node_set;

static void take(reorder *r, node_set *set, uint32_t i, bool now)
{
    set->at[set->n++] = i;
    if (now)
        r->used[i] = true;
}

static bool in_set(const node_set *set, uint32_t i)
{
    for (uint32_t k = 0; k < set->n; k++) {
        if (set->at[k] == i)
            return true;
    }
    return false;
}

/* ggml_vk_can_fuse_unary_mul: a unary Vulkan fuses, all f32, rows
 * contiguous, the MUL's other source tiling into it (or it into the
 * MUL's first). */
static bool fuses_unary_mul(const sched *s, uint32_t unary, uint32_t mul)
{
    const ggfs_gt *u = T(s, unary), *m = T(s, mul);
    const uint8_t kind = u->unary;
    if (kind != UN_GELU && kind != UN_SIGMOID && kind != UN_SILU && kind != UN_SOFTPLUS)
        return false;
    const uint32_t other = m->src[0] == unary ? m->src[1] : m->src[0];
    if (other == GGFS_NO_TENSOR || u->type != GT_F32 || m->type != GT_F32)
        return false;
    const ggfs_gt *o = T(s, other);
    if (o->type != GT_F32 && !(o->type == GT_WEIGHT && o->flags & GFLAG_F32_DATA))
        return false;
    if (!ggfs_is_contiguous_1(s->g, other) || !ggfs_is_contiguous_1(s->g, u->src[0]))
        return false;
    return m->src[0] == unary ? ggfs_can_repeat(s->g, other, unary) : ggfs_can_repeat(s->g, unary, m->src[0]);
}

/* After j joins the set, the nodes Vulkan fuses with it pulled up beside
 * it: a RoPE of an RMS_NORM+MUL, a RoPE's or RMS_NORM's view stored with
 * SET_ROWS, the MUL or ADD after a product and its bias, the UNARY after
 * a conv and its bias, the MUL reading a UNARY. */
static void pull_fusions(reorder *r, node_set *set, uint32_t j)
{
    const sched *s = r->s;
    uint32_t rope = j;
    if (j > 0 && op_at(r, j) == GOP_MUL && op_at(r, j - 1) == GOP_RMS_NORM) {
        for (uint32_t k = j + 1; k < j + 15 && k < r->n; k++) {
            const ggfs_gt *x = T(s, r->nodes[k]);
            if (x->op == GOP_ROPE && x->src[0] == r->nodes[j] && T(s, x->src[1])->op == GOP_NONE &&
                (x->src[2] == GGFS_NO_TENSOR || T(s, x->src[2])->op == GOP_NONE)) {
                rope = k;
                take(r, set, k, true);
                break;
            }
        }
    }
    if (op_at(r, rope) == GOP_ROPE || op_at(r, rope) == GOP_RMS_NORM) {
        int64_t view = -1, set_rows = -1;
        for (uint32_t k = rope + 1; k < rope + 15 && k < r->n; k++) {
            if (r->used[k])
                continue;
            const ggfs_gt *x = T(s, r->nodes[k]);
            if (view == -1 && x->op == GOP_VIEW && x->src[0] == r->nodes[rope]) {
                view = k;
                continue;
            }
            if (view != -1 && x->op == GOP_SET_ROWS && x->src[0] == r->nodes[view]) {
                set_rows = k;
                break;
            }
        }
        if (set_rows != -1) {
            const uint32_t idx[3] = {rope, (uint32_t)view, (uint32_t)set_rows};
            bool pull = can_fuse_three(r, idx);
            for (uint32_t c = rope + 1; pull && c < (uint32_t)set_rows; c++) {
                if (!r->used[c] && c != (uint32_t)view && !is_empty(T(s, r->nodes[c])) &&
                    depends(r, (uint32_t)set_rows, c))
                    pull = false;
            }
            if (pull) {
                take(r, set, (uint32_t)view, true);
                take(r, set, (uint32_t)set_rows, true);
            }
        }
    }
    // MUL_MAT_ID + ADD_ID + MUL, and MUL_MAT + ADD + ADD: the last pulled up
    const bool id_add = j > 0 && op_at(r, j) == GOP_ADD_ID && op_at(r, j - 1) == GOP_MUL_MAT_ID;
    if (j > 0 && (id_add || (op_at(r, j) == GOP_ADD && op_at(r, j - 1) == GOP_MUL_MAT))) {
        for (uint32_t k = j + 1; k < j + 15 && k < r->n; k++) {
            const ggfs_gt *x = T(s, r->nodes[k]);
            if (x->op == (id_add ? GOP_MUL : GOP_ADD) && x->src[0] == r->nodes[j] &&
                (T(s, x->src[1])->op == GOP_NONE || r->placed[x->src[1]])) {
                take(r, set, k, true);
                break;
            }
        }
    }
    // SSM_CONV + ADD + UNARY: the UNARY pulled up
    if (j > 0 && op_at(r, j) == GOP_ADD && op_at(r, j - 1) == GOP_SSM_CONV) {
        for (uint32_t k = j + 1; k < j + 15 && k < r->n; k++) {
            const ggfs_gt *x = T(s, r->nodes[k]);
            if (x->op == GOP_UNARY && x->src[0] == r->nodes[j]) {
                take(r, set, k, true);
                break;
            }
        }
    }
    // UNARY + MUL: the MUL that reads it pulled up, its other source ready
    if (j > 0 && op_at(r, j) == GOP_UNARY) {
        const uint32_t unary = r->nodes[j];
        for (uint32_t k = j + 1; k < j + 15 && k < r->n; k++) {
            const ggfs_gt *x = T(s, r->nodes[k]);
            if (x->op != GOP_MUL || (x->src[0] != unary && x->src[1] != unary))
                continue;
            const uint32_t other = x->src[0] == unary ? x->src[1] : x->src[0];
            if ((T(s, other)->op == GOP_NONE || r->placed[other]) && fuses_unary_mul(s, unary, r->nodes[k])) {
                take(r, set, k, true);
                break;
            }
        }
    }
}

/* Reorders nodes[0, n) as Vulkan's graph_optimize does: from the first
 * node not yet placed, up to 20 nodes on that do not depend on the ones
 * between run beside it, views after them, fusion patterns kept whole. */
static void vulkan_reorder(sched *s, uint32_t *nodes, uint32_t n)
{
    reorder r = {.s = s, .nodes = NULL, .n = n};
    uint32_t *order = malloc((size_t)n * sizeof *order), *copy = malloc((size_t)n * sizeof *copy);
    node_set set = {.at = malloc((size_t)n * sizeof *set.at)};
    r.used = calloc(n ? n : 1, sizeof *r.used);
    r.deps = malloc((n ? n : 1) * sizeof *r.deps);
    r.starts = malloc((n ? n : 1) * sizeof *r.starts);
    r.placed = s->placed;
    if (!order || !copy || !set.at || !r.used || !r.deps || !r.starts) {
        s->failed = true;
        goto out;
    }
    memcpy(copy, nodes, (size_t)n * sizeof *copy);
    r.nodes = copy;
    find_deps(&r);
    find_starts(&r);
    uint32_t n_order = 0, first = 0;
    while (first < n) {
        set.n = 0;
        bool kept = false;
        for (size_t p = 0; p < sizeof patterns / sizeof patterns[0] && !kept; p++) {
            if (match(&r, p, patterns[p].len, first)) {
                if (p < N_TOPK_PATTERNS)
                    keep_routing_inputs(&r, first, patterns[p].len);
                for (uint32_t j = 0; j < patterns[p].len; j++)
                    take(&r, &set, first + j, true);
                kept = true;
            }
        }
        if (!kept) {
            take(&r, &set, first, false);
            for (uint32_t j = first + 1; j < first + 20 && j < n; j++) {
                if (r.used[j] || is_empty(T(s, copy[j])) || any_pattern_at(&r, j))
                    continue;
                if (!independent(&r, first, j, set.at[set.n - 1]))
                    continue;
                take(&r, &set, j, false);
                pull_fusions(&r, &set, j);
            }
            // then the views, unless that splits an ADD from what follows
            if (op_at(&r, set.at[set.n - 1]) != GOP_ADD) {
                for (uint32_t j = first + 1; j < first + 20 && j < n; j++) {
                    if (r.used[j] || !is_empty(T(s, copy[j])))
                        continue;
                    bool ok = true;
                    for (uint32_t c = first; c < j && ok; c++)
                        ok = r.used[c] || !depends(&r, j, c) || in_set(&set, c);
                    if (ok)
                        take(&r, &set, j, false);
                }
            }
        }
        for (uint32_t k = 0; k < set.n; k++) {
            order[n_order++] = copy[set.at[k]];
            r.placed[copy[set.at[k]]] = true;
            r.used[set.at[k]] = true;
        }
        while (first < n && r.used[first])
            first++;
    }
    memcpy(nodes, order, (size_t)n * sizeof *nodes);
out:
    free(order);
    free(copy);
    free(set.at);
    free(r.used);
    free(r.deps);
    free(r.starts);
}

/* ---- the graph the allocator is given ---- */

/* Interned (type, shape, strides): the allocator's "same layout". */
static uint32_t layout_of(const ggfs_gt *t, const ggfs_gt **seen, uint32_t *n_seen)
{
    for (uint32_t i = 0; i < *n_seen; i++) {
        if (seen[i]->type == t->type && memcmp(seen[i]->ne, t->ne, sizeof t->ne) == 0 &&
            memcmp(seen[i]->nb, t->nb, sizeof t->nb) == 0)
            return i;
    }
    seen[*n_seen] = t;
    return (*n_seen)++;
}

/* The nodes that keep what the reordering asked alive past node until:
 * each a view of the first it keeps, with up to GGFS_GALLOC_SRCS of them
 * as sources. Returns how many were written to out. */
static uint32_t dep_nodes(sched *s, uint32_t until, int backend, uint32_t *out)
{
    ggfs_cgraph *g = s->g;
    uint32_t n = 0, dep = GGFS_NO_TENSOR, n_src = 0;
    for (uint32_t i = 0; i < s->n_deps; i++) {
        if (s->dep_until[i] != until)
            continue;
        if (dep == GGFS_NO_TENSOR || n_src == GGFS_GALLOC_SRCS) {
            if ((dep = ggfs_view_tensor(g, s->dep_keep[i])) == GGFS_NO_TENSOR)
                return n;
            T(s, dep)->backend = (int8_t)backend;
            out[n++] = dep;
            n_src = 0;
        }
        T(s, dep)->src[n_src++] = s->dep_keep[i];
    }
    return n;
}

/* ggml_backend_sched_split_graph's graph copy: each split's inputs (a
 * view holding the source until the copy, then the copy), then its nodes;
 * then ggml's allocator over it. */
static bool allocate(sched *s, uint64_t sizes[N_BACKENDS])
{
    ggfs_cgraph *g = s->g;
    uint32_t n_nodes = g->n_nodes + s->n_deps;
    for (uint32_t i = 0; i < s->n_splits; i++)
        n_nodes += 2 * s->splits[i].n_inputs;
    uint32_t *nodes = malloc((size_t)n_nodes * sizeof *nodes), k = 0;
    if (!nodes)
        return false;
    for (uint32_t i = 0; i < s->n_splits && !g->failed; i++) {
        const split *sp = &s->splits[i];
        for (uint32_t j = 0; j < sp->n_inputs; j++) {
            const uint32_t input = sp->inputs[j];
            const uint32_t dep = ggfs_view_tensor(g, input);
            if (dep == GGFS_NO_TENSOR)
                break;
            T(s, dep)->src[0] = input;
            T(s, dep)->backend = T(s, input)->backend;
            nodes[k++] = dep;
            nodes[k++] = s->copy[sp->backend][input];
        }
        for (uint32_t j = sp->start; j < sp->end && !g->failed; j++) {
            nodes[k++] = g->nodes[j];
            k += dep_nodes(s, g->nodes[j], sp->backend, nodes + k);
        }
    }
    ggfs_galloc_tensor *tensors = calloc(g->n ? g->n : 1, sizeof *tensors);
    const ggfs_gt **seen = calloc(g->n ? g->n : 1, sizeof *seen);
    bool ok = !g->failed && tensors && seen;
    uint32_t n_seen = 0;
    for (uint32_t i = 0; ok && i < g->n; i++) {
        const ggfs_gt *t = &g->t[i];
        ggfs_galloc_tensor *a = &tensors[i];
        a->bytes = t->bytes;
        a->view_offs = t->view_offs;
        memcpy(a->src, t->src, sizeof a->src);
        a->view_src = t->view_src;
        a->layout = layout_of(t, seen, &n_seen);
        a->buffer = t->backend == CPU ? CPU : GPU;
        a->flags = (t->flags & GFLAG_INPUT ? GGFS_GALLOC_INPUT : 0) | (t->flags & GFLAG_OUTPUT ? GGFS_GALLOC_OUTPUT : 0) |
                   (t->home != HOME_NONE ? GGFS_GALLOC_HAS_DATA : 0) |
                   (ggfs_op_in_place((ggfs_op)t->op) ? GGFS_GALLOC_IN_PLACE : 0) |
                   (t->op == GOP_NONE ? GGFS_GALLOC_NO_OP : 0);
    }
    if (ok) {
        const ggfs_galloc_graph gg = {tensors, g->n, g->leafs, nodes, g->n_leafs, k};
        ok = ggfs_galloc_replay(&gg, alignments, N_BACKENDS, sizes, NULL, NULL);
    }
    free(tensors);
    free(seen);
    free(nodes);
    return ok;
}

bool ggfs_sched_reserve(ggfs_cgraph *g, uint64_t *gpu, uint64_t *host)
{
    sched s = {.g = g, .n_original = g->n};
    *gpu = *host = 0;
    for (int b = 0; b < N_BACKENDS; b++) {
        s.copy[b] = malloc((g->n ? g->n : 1) * sizeof *s.copy[b]);
        if (!s.copy[b])
            s.failed = true;
        else
            memset(s.copy[b], 0xff, (g->n ? g->n : 1) * sizeof *s.copy[b]);
    }
    if (!s.failed && !g->failed) {
        // pass 1: beside the memory they use or their weights
        for (uint32_t i = 0; i < g->n_leafs; i++) {
            if (T(&s, g->leafs[i])->backend == -1)
                T(&s, g->leafs[i])->backend = (int8_t)backend_from_cur(&s, g->leafs[i]);
        }
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            if (T(&s, g->nodes[i])->backend == -1)
                T(&s, g->nodes[i])->backend = (int8_t)backend_from_cur(&s, g->nodes[i]);
        }
        // pass 2: the GPU's down and up, then any device's
        expand(&s, true, true);
        expand(&s, false, true);
        expand(&s, true, false);
        expand(&s, false, false);
        place_rest(&s);
        place_sources(&s);
        split_graph(&s);
        s.placed = calloc(g->n ? g->n : 1, sizeof *s.placed);
        s.failed |= !s.placed || !index_tensors(&s);
        for (uint32_t i = 0; i < s.n_splits && !s.failed; i++) {
            if (s.splits[i].backend == GPU)
                vulkan_reorder(&s, g->nodes + s.splits[i].start, s.splits[i].end - s.splits[i].start);
        }
    }
    uint64_t sizes[N_BACKENDS] = {0};
    const bool ok = !s.failed && !g->failed && allocate(&s, sizes);
    *gpu = sizes[GPU];
    *host = sizes[CPU];
    for (int b = 0; b < N_BACKENDS; b++)
        free(s.copy[b]);
    for (uint32_t i = 0; i < s.n_splits; i++)
        free(s.splits[i].inputs);
    free(s.splits);
    free(s.placed);
    free(s.dep_until);
    free(s.dep_keep);
    free(s.base);
    free(s.n_src);
    return ok;
}
