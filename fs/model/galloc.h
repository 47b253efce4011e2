/*
 * ggml's graph allocator (ggml-alloc.c: ggml_gallocr_reserve_n over its
 * dynamic allocator), replayed over a graph of shapes: the bytes each of a
 * scheduler's buffers needs for one graph. A compute buffer's size is a
 * fact of the graph's order and of where the allocator's holes fall, not of
 * what is live at once alone, so offload/ replays the allocator itself.
 *
 * The rules, as ggml has them: leafs and graph inputs are placed first; a
 * node is placed after its sources, in a source's place when its op can
 * work in place and that source is the allocator's own, not an output, of
 * the same layout and used by nothing else; a tensor is freed after its
 * last user (a view frees its source when the source's last view and user
 * are done); a free block is chosen best-fit among all but the last, which
 * grows the buffer. Tensors that already have memory (weights, caches)
 * take none.
 */
#ifndef GGFS_MODEL_GALLOC_H
#define GGFS_MODEL_GALLOC_H

#include <stdbool.h>
#include <stdint.h>

#define GGFS_GALLOC_SRCS 10 // GGML_MAX_SRC
#define GGFS_GALLOC_NONE UINT32_MAX
#define GGFS_GALLOC_BUFFERS 4

enum {
    GGFS_GALLOC_INPUT = 1,     // GGML_TENSOR_FLAG_INPUT
    GGFS_GALLOC_OUTPUT = 2,    // GGML_TENSOR_FLAG_OUTPUT
    GGFS_GALLOC_HAS_DATA = 4,  // memory of its own (a weight, a cache), or a view into it
    GGFS_GALLOC_IN_PLACE = 8,  // its op may take a source's place (ggml_op_can_inplace)
    GGFS_GALLOC_NO_OP = 16,    // GGML_OP_NONE: a view of it adds no view to its source
};

typedef struct ggfs_galloc_tensor {
    uint64_t bytes;                  // ggml_nbytes
    uint64_t view_offs;              // where a view starts in its source
    uint32_t src[GGFS_GALLOC_SRCS];  // tensor indices, GGFS_GALLOC_NONE where absent
    uint32_t view_src;               // GGFS_GALLOC_NONE: not a view
    uint32_t layout;                 // equal for tensors of one type, shape and strides
    uint8_t buffer;                  // the buffer its leaf or node is given
    uint8_t flags;                   // GGFS_GALLOC_*
} ggfs_galloc_tensor;

/* A graph: its tensors, and the order of its leafs and nodes (indices). */
typedef struct ggfs_galloc_graph {
    const ggfs_galloc_tensor *tensors;
    uint32_t n_tensors;
    const uint32_t *leafs, *nodes;
    uint32_t n_leafs, n_nodes;
} ggfs_galloc_graph;

/* What is live in a buffer when it grows: called with the tensors'
 * indices, once each time the buffer's size grows. */
typedef void ggfs_galloc_grown(void *data, uint32_t buffer, uint64_t size, const uint32_t *live, uint32_t n_live);

/* The bytes each of n_buffers (at most GGFS_GALLOC_BUFFERS) buffers needs
 * for graph g, each with its alignment, into sizes[]; grown, when not
 * NULL, is told of each growth. False when out of memory, or when the
 * graph names a tensor or buffer it does not have. */
bool ggfs_galloc_replay(const ggfs_galloc_graph *g, const uint64_t *alignments, uint32_t n_buffers, uint64_t *sizes,
                        ggfs_galloc_grown *grown, void *data);

#endif
