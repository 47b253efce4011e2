/*
 * LD_PRELOAD shim for scripts/tools/compute-graph: logs each graph that
 * llama.cpp's scheduler hands ggml's graph allocator (ggml_gallocr_reserve_n)
 * and the buffer sizes the allocator then reserves, to the file named by
 * $COMPUTE_GRAPH_LOG:
 *
 *   BUFT galloc index name alignment          one per buffer of an allocator
 *   GRAPH galloc n_nodes n_leafs
 *   L|N index id op type ne0..3 nb0..3 flags has_data view_src view_offs buffer nbytes [ src... ] name
 *   SIZE index bytes                          per buffer, after the reserve
 *   END
 *
 * Tensors are named by address (id), as the graph links them. Node loads
 * llama.cpp's libraries with RTLD_LOCAL, so the real functions are looked
 * up in the loaded libggml-base by path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"

/* The start of ggml's struct ggml_cgraph (ggml-impl.h, not installed). */
struct cgraph_start {
    int size, n_nodes, n_leafs;
    struct ggml_tensor **nodes, **grads, **grad_accs, **leafs;
};

struct shim {
    void *base;
    FILE *out;
    struct {
        ggml_gallocr_t galloc;
        int n_buffers;
    } gallocs[64];
    int n_gallocs;
};

/* The shim's own state: one process, set up on first use. */
static struct shim shim;

static int find_base(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (strstr(info->dlpi_name, "libggml-base")) {
        shim.base = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
        return 1;
    }
    return 0;
}

static void *real(const char *name)
{
    if (!shim.base)
        dl_iterate_phdr(find_base, NULL);
    void *p = shim.base ? dlsym(shim.base, name) : NULL;
    if (!p) {
        fprintf(stderr, "compute_graph_log: %s not found\n", name);
        abort();
    }
    return p;
}

static FILE *log_file(void)
{
    if (!shim.out) {
        const char *path = getenv("COMPUTE_GRAPH_LOG");
        shim.out = fopen(path ? path : "/dev/null", "a");
        if (!shim.out)
            abort();
    }
    return shim.out;
}

static void log_tensor(FILE *f, char kind, int i, const struct ggml_tensor *t, int buffer)
{
    size_t (*nbytes)(const struct ggml_tensor *) = real("ggml_nbytes");
    const char *(*op_name)(enum ggml_op) = real("ggml_op_name");
    const char *(*type_name)(enum ggml_type) = real("ggml_type_name");
    fprintf(f, "%c %d %p %s %s %lld %lld %lld %lld %zu %zu %zu %zu %d %d %p %zu %d %zu [", kind, i, (const void *)t,
            op_name(t->op), type_name(t->type), (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
            (long long)t->ne[3], t->nb[0], t->nb[1], t->nb[2], t->nb[3], (int)t->flags, t->data != NULL,
            (const void *)t->view_src, t->view_offs, buffer, nbytes(t));
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        if (t->src[j])
            fprintf(f, " %p", (const void *)t->src[j]);
    }
    fprintf(f, " ] %s\n", t->name);
}

ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t *bufts, int n_bufs)
{
    ggml_gallocr_t (*new_n)(ggml_backend_buffer_type_t *, int) = real("ggml_gallocr_new_n");
    const char *(*name)(ggml_backend_buffer_type_t) = real("ggml_backend_buft_name");
    size_t (*alignment)(ggml_backend_buffer_type_t) = real("ggml_backend_buft_get_alignment");
    ggml_gallocr_t galloc = new_n(bufts, n_bufs);
    // the last 64 allocators, newest last: one process may make hundreds,
    // and a new one may have a freed one's address
    const int ring = (int)(sizeof shim.gallocs / sizeof shim.gallocs[0]);
    shim.gallocs[shim.n_gallocs % ring].galloc = galloc;
    shim.gallocs[shim.n_gallocs % ring].n_buffers = n_bufs;
    shim.n_gallocs++;
    FILE *f = log_file();
    for (int i = 0; i < n_bufs; i++)
        fprintf(f, "BUFT %p %d %s %zu\n", (void *)galloc, i, name(bufts[i]), alignment(bufts[i]));
    fflush(f);
    return galloc;
}

bool ggml_gallocr_reserve_n(ggml_gallocr_t galloc, struct ggml_cgraph *graph, const int *node_buffer_ids,
                            const int *leaf_buffer_ids)
{
    bool (*reserve_n)(ggml_gallocr_t, struct ggml_cgraph *, const int *, const int *) = real("ggml_gallocr_reserve_n");
    size_t (*buffer_size)(ggml_gallocr_t, int) = real("ggml_gallocr_get_buffer_size");
    FILE *f = log_file();
    const struct cgraph_start *g = (const struct cgraph_start *)graph;
    fprintf(f, "GRAPH %p %d %d\n", (void *)galloc, g->n_nodes, g->n_leafs);
    for (int i = 0; i < g->n_leafs; i++)
        log_tensor(f, 'L', i, g->leafs[i], leaf_buffer_ids ? leaf_buffer_ids[i] : 0);
    for (int i = 0; i < g->n_nodes; i++)
        log_tensor(f, 'N', i, g->nodes[i], node_buffer_ids ? node_buffer_ids[i] : 0);
    const bool ok = reserve_n(galloc, graph, node_buffer_ids, leaf_buffer_ids);
    int n_buffers = 1;
    const int ring = (int)(sizeof shim.gallocs / sizeof shim.gallocs[0]);
    for (int k = shim.n_gallocs > ring ? shim.n_gallocs - ring : 0; k < shim.n_gallocs; k++) {
        if (shim.gallocs[k % ring].galloc == galloc)
            n_buffers = shim.gallocs[k % ring].n_buffers;
    }
    for (int i = 0; i < n_buffers; i++)
        fprintf(f, "SIZE %d %zu\n", i, buffer_size(galloc, i));
    fprintf(f, "END\n");
    fflush(f);
    return ok;
}
