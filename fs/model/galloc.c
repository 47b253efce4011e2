/*
 * ggml's graph allocator replayed over a graph of shapes (galloc.h). Each
 * step is ggml-alloc.c's own: ggml_gallocr_alloc_graph_impl's three passes,
 * ggml_gallocr_allocate_node's in-place rule, and the dynamic allocator's
 * best fit over free blocks kept in offset order.
 */
#include "model/galloc.h"

#include <stdlib.h>
#include <string.h>

/* A buffer's free blocks in offset order; the last is endless (one chunk
 * of ggml's, which no compute buffer here outgrows). */
typedef struct free_blocks {
    uint64_t (*block)[2]; // offset, size
    uint32_t n, cap;
    uint64_t alignment, size;
} free_blocks;

typedef struct tensor_state {
    int32_t children, views;
    bool allocated; // ggml's hash_node.allocated: the allocator's own, and live
    uint8_t buffer;
    uint64_t offset;
} tensor_state;

typedef struct replay {
    const ggfs_galloc_graph *g;
    tensor_state *state;
    free_blocks buffers[GGFS_GALLOC_BUFFERS];
    uint32_t n_buffers;
    ggfs_galloc_grown *grown;
    void *data;
    uint32_t *live; // scratch for grown
    bool failed;
} replay;

static uint64_t aligned(const free_blocks *f, uint64_t n)
{
    return (n + f->alignment - 1) / f->alignment * f->alignment;
}

static bool insert_block(replay *r, free_blocks *f, uint32_t at, uint64_t offset, uint64_t size)
{
    if (f->n == f->cap) {
        const uint32_t cap = f->cap ? 2 * f->cap : 16;
        void *p = realloc(f->block, cap * sizeof *f->block);
        if (!p) {
            r->failed = true;
            return false;
        }
        f->block = p;
        f->cap = cap;
    }
    memmove(f->block + at + 1, f->block + at, (f->n - at) * sizeof *f->block);
    f->block[at][0] = offset;
    f->block[at][1] = size;
    f->n++;
    return true;
}

static void remove_block(free_blocks *f, uint32_t at)
{
    memmove(f->block + at, f->block + at + 1, (f->n - at - 1) * sizeof *f->block);
    f->n--;
}

static void report_growth(replay *r, uint32_t buffer)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->g->n_tensors; i++) {
        if (r->state[i].allocated && r->state[i].buffer == buffer)
            r->live[n++] = i;
    }
    r->grown(r->data, buffer, r->buffers[buffer].size, r->live, n);
}

/* ggml_dyn_tallocr_alloc: the smallest block that fits but the last (the
 * later of equal ones), or else the last, which grows the buffer. */
static uint64_t alloc_bytes(replay *r, uint32_t buffer, uint64_t bytes)
{
    free_blocks *f = &r->buffers[buffer];
    const uint64_t size = aligned(f, bytes);
    uint32_t best = f->n - 1;
    uint64_t best_size = UINT64_MAX;
    for (uint32_t i = 0; i + 1 < f->n; i++) {
        if (f->block[i][1] >= size && f->block[i][1] <= best_size) {
            best = i;
            best_size = f->block[i][1];
        }
    }
    const uint64_t offset = f->block[best][0];
    f->block[best][0] += size;
    f->block[best][1] -= size;
    if (f->block[best][1] == 0)
        remove_block(f, best);
    if (offset + size > f->size)
        f->size = offset + size;
    return offset;
}

/* ggml_dyn_tallocr_free_bytes: merged with a neighbour where one touches. */
static void free_bytes(replay *r, uint32_t buffer, uint64_t offset, uint64_t bytes)
{
    free_blocks *f = &r->buffers[buffer];
    const uint64_t size = aligned(f, bytes);
    for (uint32_t i = 0; i < f->n; i++) {
        uint64_t *b = f->block[i];
        if (b[0] + b[1] == offset) {
            b[1] += size;
            if (i + 1 < f->n && b[0] + b[1] == f->block[i + 1][0]) {
                b[1] += f->block[i + 1][1];
                remove_block(f, i + 1);
            }
            return;
        }
        if (offset + size == b[0]) {
            b[0] = offset;
            b[1] += size;
            if (i > 0 && f->block[i - 1][0] + f->block[i - 1][1] == b[0]) {
                f->block[i - 1][1] += b[1];
                remove_block(f, i);
            }
            return;
        }
    }
    uint32_t at = 0;
    while (at < f->n && f->block[at][0] < offset)
        at++;
    insert_block(r, f, at, offset, size);
}

static const ggfs_galloc_tensor *tensor(const replay *r, uint32_t i)
{
    return &r->g->tensors[i];
}

static bool is_view(const replay *r, uint32_t i)
{
    return tensor(r, i)->view_src != GGFS_GALLOC_NONE;
}

/* The node takes its parent's place (owner: the parent, or the tensor the
 * parent views) and gives back what it does not need. */
static void take_place(replay *r, uint32_t node, uint32_t parent, uint32_t owner)
{
    tensor_state *o = &r->state[owner];
    r->state[node].buffer = o->buffer;
    r->state[node].offset = o->offset;
    r->state[parent].allocated = false;
    o->allocated = false;
    const free_blocks *f = &r->buffers[o->buffer];
    const uint64_t have = aligned(f, tensor(r, owner)->bytes), need = aligned(f, tensor(r, node)->bytes);
    if (have > need)
        free_bytes(r, o->buffer, o->offset + need, have - need);
}

/* ggml_gallocr_allocate_node's in-place rule: a source of the same layout,
 * the allocator's own, not an output, used by this node alone. */
static bool in_place(replay *r, uint32_t node)
{
    const ggfs_galloc_tensor *t = tensor(r, node);
    if (!(t->flags & GGFS_GALLOC_IN_PLACE))
        return false;
    for (int s = 0; s < GGFS_GALLOC_SRCS; s++) {
        const uint32_t parent = t->src[s];
        if (parent == GGFS_GALLOC_NONE || !r->state[parent].allocated)
            continue;
        const ggfs_galloc_tensor *p = tensor(r, parent);
        if (p->flags & GGFS_GALLOC_OUTPUT || (is_view(r, parent) && tensor(r, p->view_src)->flags & GGFS_GALLOC_OUTPUT))
            continue;
        if (p->layout != t->layout || r->state[parent].children != 1 || r->state[parent].views != 0)
            continue;
        if (!is_view(r, parent)) {
            take_place(r, node, parent, parent);
            return true;
        }
        const tensor_state *v = &r->state[p->view_src];
        if (v->views == 1 && v->children == 0 && p->view_offs == 0) {
            take_place(r, node, parent, p->view_src);
            return true;
        }
    }
    return false;
}

static void allocate(replay *r, uint32_t i, uint32_t buffer)
{
    tensor_state *s = &r->state[i];
    if (tensor(r, i)->flags & GGFS_GALLOC_HAS_DATA || s->allocated || is_view(r, i))
        return;
    s->allocated = true;
    if (in_place(r, i))
        return;
    const uint64_t before = r->buffers[buffer].size;
    s->buffer = (uint8_t)buffer;
    s->offset = alloc_bytes(r, buffer, tensor(r, i)->bytes);
    if (r->grown && r->buffers[buffer].size > before)
        report_growth(r, buffer);
}

static void release(replay *r, uint32_t i)
{
    if (tensor(r, i)->flags & GGFS_GALLOC_OUTPUT)
        return;
    tensor_state *s = &r->state[i];
    free_bytes(r, s->buffer, s->offset, tensor(r, i)->bytes);
    s->allocated = false;
}

/* After node's use of parent: a parent no longer used is freed, or for a
 * view, its source once the source's last view and user are done. */
static void release_parent(replay *r, uint32_t parent)
{
    tensor_state *p = &r->state[parent];
    if (--p->children != 0 || p->views != 0)
        return;
    if (is_view(r, parent)) {
        const uint32_t src = tensor(r, parent)->view_src;
        tensor_state *v = &r->state[src];
        if (--v->views == 0 && v->children == 0 && v->allocated)
            release(r, src);
    } else if (p->allocated) {
        release(r, parent);
    }
}

static bool well_formed(const ggfs_galloc_graph *g, uint32_t n_buffers)
{
    for (uint32_t i = 0; i < g->n_tensors; i++) {
        const ggfs_galloc_tensor *t = &g->tensors[i];
        if (t->buffer >= n_buffers || (t->view_src != GGFS_GALLOC_NONE && t->view_src >= g->n_tensors))
            return false;
        for (int s = 0; s < GGFS_GALLOC_SRCS; s++) {
            if (t->src[s] != GGFS_GALLOC_NONE && t->src[s] >= g->n_tensors)
                return false;
        }
    }
    for (uint32_t i = 0; i < g->n_leafs; i++) {
        if (g->leafs[i] >= g->n_tensors)
            return false;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i] >= g->n_tensors)
            return false;
    }
    return true;
}

static void run(replay *r)
{
    const ggfs_galloc_graph *g = r->g;
    for (uint32_t i = 0; i < g->n_leafs; i++)
        allocate(r, g->leafs[i], tensor(r, g->leafs[i])->buffer);
    // count children and views; place the graph's inputs first
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const uint32_t n = g->nodes[i];
        const ggfs_galloc_tensor *t = tensor(r, n);
        if (is_view(r, n) && !(t->flags & GGFS_GALLOC_NO_OP))
            r->state[t->view_src].views++;
        if (t->flags & GGFS_GALLOC_INPUT)
            allocate(r, n, t->buffer);
        for (int s = 0; s < GGFS_GALLOC_SRCS; s++) {
            if (t->src[s] == GGFS_GALLOC_NONE)
                continue;
            r->state[t->src[s]].children++;
            if (tensor(r, t->src[s])->flags & GGFS_GALLOC_INPUT)
                allocate(r, t->src[s], t->buffer);
        }
    }
    for (uint32_t i = 0; i < g->n_nodes && !r->failed; i++) {
        const uint32_t n = g->nodes[i];
        const ggfs_galloc_tensor *t = tensor(r, n);
        for (int s = 0; s < GGFS_GALLOC_SRCS; s++) {
            if (t->src[s] != GGFS_GALLOC_NONE)
                allocate(r, t->src[s], t->buffer);
        }
        allocate(r, n, t->buffer);
        for (int s = 0; s < GGFS_GALLOC_SRCS; s++) {
            if (t->src[s] != GGFS_GALLOC_NONE)
                release_parent(r, t->src[s]);
        }
    }
}

bool ggfs_galloc_replay(const ggfs_galloc_graph *g, const uint64_t *alignments, uint32_t n_buffers, uint64_t *sizes,
                        ggfs_galloc_grown *grown, void *data)
{
    if (n_buffers == 0 || n_buffers > GGFS_GALLOC_BUFFERS || !well_formed(g, n_buffers))
        return false;
    replay r = {.g = g, .n_buffers = n_buffers, .grown = grown, .data = data};
    r.state = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *r.state);
    r.live = grown ? calloc(g->n_tensors ? g->n_tensors : 1, sizeof *r.live) : NULL;
    r.failed = !r.state || (grown && !r.live);
    for (uint32_t b = 0; b < n_buffers && !r.failed; b++) {
        r.buffers[b].alignment = alignments[b] ? alignments[b] : 1;
        insert_block(&r, &r.buffers[b], 0, 0, UINT64_MAX / 2);
    }
    if (!r.failed)
        run(&r);
    for (uint32_t b = 0; b < n_buffers; b++) {
        sizes[b] = r.buffers[b].size;
        free(r.buffers[b].block);
    }
    free(r.state);
    free(r.live);
    return !r.failed;
}
