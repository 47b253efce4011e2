/*
 * galloc-replay: replays ggml's graph allocator (fs/model/galloc.c, the
 * replay offload/ uses) over the graphs compute_graph_log.c logged from
 * llama.cpp, beside the bytes ggml itself reserved for each buffer.
 *
 *   usage: galloc-replay [--check] LOG
 *
 * Without --check: for each graph and buffer, the replay's bytes and
 * ggml's, and the tensors live when the buffer last grew (a tensor placed
 * in a source's memory is listed under that source's name). With --check:
 * one line per buffer where the two differ, then a count; exit status 1
 * when any did. A line "# TEXT" in the log names what follows (the client
 * writes the model, -ngl and context there).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/galloc.h"

#define MAX_BUFFERS GGFS_GALLOC_BUFFERS

typedef struct buffer_kind {
    char name[64];
    uint64_t alignment;
} buffer_kind;

/* One of ggml's graph allocators: it keeps its buffers from graph to
 * graph and grows them, so each reserve reports the largest size yet. */
typedef struct allocator {
    uint64_t id;
    buffer_kind buffers[MAX_BUFFERS];
    uint32_t n_buffers;
    uint64_t largest[MAX_BUFFERS];
} allocator;

typedef struct layout {
    char type[16];
    long long ne[4];
    unsigned long long nb[4];
} layout;

typedef struct peak {
    uint64_t size;
    uint32_t *live;
    uint32_t n_live;
} peak;

typedef struct graph {
    uint64_t galloc;
    ggfs_galloc_tensor *tensors;
    uint64_t *ids;
    uint64_t (*links)[GGFS_GALLOC_SRCS + 1]; // the sources' ids, then the view's source's
    char **names, **ops, **shapes;
    uint32_t n_tensors, cap;
    uint32_t *leafs, *nodes;
    uint32_t n_leafs, n_nodes, cap_leafs, cap_nodes;
    layout *layouts;
    uint32_t n_layouts, cap_layouts;
    uint64_t ggml_size[MAX_BUFFERS];
    peak peaks[MAX_BUFFERS];
} graph;

typedef struct tool {
    const char *path;
    unsigned long line;
    allocator *allocators;
    uint32_t n_allocators, cap_allocators;
    char label[512];
    bool check;
    unsigned graphs, buffers, differences;
} tool;

static void die(const tool *t, const char *why)
{
    fprintf(stderr, "galloc-replay: %s: line %lu: %s\n", t->path, t->line, why);
    exit(2);
}

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t size)
{
    if (need <= *cap)
        return p;
    uint32_t cap2 = *cap ? *cap : 64;
    while (cap2 < need)
        cap2 *= 2;
    void *q = realloc(p, (size_t)cap2 * size);
    if (!q) {
        fputs("galloc-replay: out of memory\n", stderr);
        exit(2);
    }
    *cap = cap2;
    return q;
}

static uint64_t parse_id(const char *s)
{
    return strcmp(s, "(nil)") == 0 ? 0 : strtoull(s, NULL, 16);
}

static bool in_place_op(const char *op)
{
    static const char *const ops[] = {"FILL", "SCALE", "DIAG_MASK_ZERO", "DIAG_MASK_INF", "ADD", "ADD_ID",
                                      "ADD1", "SUB", "MUL", "DIV", "SQR", "SQRT", "LOG", "UNARY", "ROPE",
                                      "ROPE_BACK", "SILU_BACK", "RMS_NORM", "RMS_NORM_BACK", "CLAMP",
                                      "SOFT_MAX", "SOFT_MAX_BACK"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (strcmp(op, ops[i]) == 0)
            return true;
    }
    return false;
}

static uint32_t find_tensor(const graph *g, uint64_t id)
{
    for (uint32_t i = g->n_tensors; i-- > 0;) {
        if (g->ids[i] == id)
            return i;
    }
    return GGFS_GALLOC_NONE;
}

static uint32_t intern_layout(graph *g, const layout *l)
{
    for (uint32_t i = 0; i < g->n_layouts; i++) {
        if (memcmp(&g->layouts[i], l, sizeof *l) == 0)
            return i;
    }
    g->layouts = grow(g->layouts, &g->cap_layouts, g->n_layouts + 1, sizeof *g->layouts);
    g->layouts[g->n_layouts] = *l;
    return g->n_layouts++;
}

static void free_graph(graph *g)
{
    for (uint32_t i = 0; i < g->n_tensors; i++) {
        free(g->names[i]);
        free(g->ops[i]);
        free(g->shapes[i]);
    }
    for (int b = 0; b < MAX_BUFFERS; b++)
        free(g->peaks[b].live);
    free(g->tensors);
    free(g->ids);
    free(g->links);
    free(g->names);
    free(g->ops);
    free(g->shapes);
    free(g->leafs);
    free(g->nodes);
    free(g->layouts);
    memset(g, 0, sizeof *g);
}

/* "L|N index id op type ne0..3 nb0..3 flags has_data view_src view_offs buffer nbytes [ src... ] name":
 * the tensor's index in g, added if new. Its sources and view source are
 * linked once the graph is read (link_tensors): a device's reordering of
 * its nodes may put a view before its source. */
static uint32_t parse_tensor(tool *t, graph *g, char *line)
{
    char kind, op[32], type[16], id[32], view_src[32];
    int index, flags, has_data, buffer, used = 0;
    layout l = {0};
    unsigned long long view_offs, nbytes;
    if (sscanf(line, "%c %d %31s %31s %15s %lld %lld %lld %lld %llu %llu %llu %llu %d %d %31s %llu %d %llu [%n",
               &kind, &index, id, op, type, &l.ne[0], &l.ne[1], &l.ne[2], &l.ne[3], &l.nb[0], &l.nb[1], &l.nb[2],
               &l.nb[3], &flags, &has_data, view_src, &view_offs, &buffer, &nbytes, &used) != 19 ||
        used == 0)
        die(t, "not a tensor line");
    memcpy(l.type, type, sizeof l.type);
    const uint64_t tid = parse_id(id);
    uint32_t i = find_tensor(g, tid);
    if (i != GGFS_GALLOC_NONE)
        return i;
    const uint32_t n = g->n_tensors + 1;
    uint32_t cap = g->cap;
    g->tensors = grow(g->tensors, &cap, n, sizeof *g->tensors);
    cap = g->cap;
    g->ids = grow(g->ids, &cap, n, sizeof *g->ids);
    cap = g->cap;
    g->names = grow(g->names, &cap, n, sizeof *g->names);
    cap = g->cap;
    g->ops = grow(g->ops, &cap, n, sizeof *g->ops);
    cap = g->cap;
    g->shapes = grow(g->shapes, &cap, n, sizeof *g->shapes);
    cap = g->cap;
    g->links = grow(g->links, &cap, n, sizeof *g->links);
    g->cap = cap;
    i = g->n_tensors++;
    ggfs_galloc_tensor *x = &g->tensors[i];
    memset(x, 0, sizeof *x);
    for (int s = 0; s < GGFS_GALLOC_SRCS; s++)
        x->src[s] = GGFS_GALLOC_NONE;
    char *p = line + used, *end = strchr(p, ']');
    if (!end)
        die(t, "no ] after the sources");
    *end = '\0';
    memset(g->links[i], 0, sizeof g->links[i]);
    int n_src = 0;
    for (char *w = strtok(p, " "); w; w = strtok(NULL, " ")) {
        if (n_src == GGFS_GALLOC_SRCS)
            die(t, "too many sources");
        g->links[i][n_src++] = parse_id(w);
    }
    g->links[i][GGFS_GALLOC_SRCS] = parse_id(view_src);
    if (buffer < 0 || buffer >= MAX_BUFFERS)
        die(t, "a buffer out of range");
    x->bytes = nbytes;
    x->view_offs = view_offs;
    x->buffer = (uint8_t)buffer;
    x->layout = intern_layout(g, &l);
    x->flags = (flags & 1 ? GGFS_GALLOC_INPUT : 0) | (flags & 2 ? GGFS_GALLOC_OUTPUT : 0) |
               (has_data ? GGFS_GALLOC_HAS_DATA : 0) | (in_place_op(op) ? GGFS_GALLOC_IN_PLACE : 0) |
               (strcmp(op, "NONE") == 0 ? GGFS_GALLOC_NO_OP : 0);
    g->ids[i] = tid;
    const char *name = end + 1;
    name += strspn(name, " ");
    g->names[i] = strndup(name, strcspn(name, "\n"));
    g->ops[i] = strdup(op);
    char shape[96];
    snprintf(shape, sizeof shape, "%s %lldx%lldx%lldx%lld", type, l.ne[0], l.ne[1], l.ne[2], l.ne[3]);
    g->shapes[i] = strdup(shape);
    if (!g->names[i] || !g->ops[i] || !g->shapes[i])
        die(t, "out of memory");
    return i;
}

/* Each tensor's sources and view source, by index. */
static void link_tensors(tool *t, graph *g)
{
    for (uint32_t i = 0; i < g->n_tensors; i++) {
        ggfs_galloc_tensor *x = &g->tensors[i];
        for (int s = 0; s < GGFS_GALLOC_SRCS && g->links[i][s]; s++) {
            x->src[s] = find_tensor(g, g->links[i][s]);
            if (x->src[s] == GGFS_GALLOC_NONE)
                die(t, "a source not in its graph");
        }
        x->view_src = GGFS_GALLOC_NONE;
        if (g->links[i][GGFS_GALLOC_SRCS]) {
            x->view_src = find_tensor(g, g->links[i][GGFS_GALLOC_SRCS]);
            if (x->view_src == GGFS_GALLOC_NONE)
                die(t, "a view's source not in its graph");
        }
    }
}

static void grown(void *data, uint32_t buffer, uint64_t size, const uint32_t *live, uint32_t n_live)
{
    peak *p = &((graph *)data)->peaks[buffer];
    uint32_t *copy = realloc(p->live, (n_live ? n_live : 1) * sizeof *copy);
    if (!copy) {
        fputs("galloc-replay: out of memory\n", stderr);
        exit(2);
    }
    memcpy(copy, live, n_live * sizeof *copy);
    p->live = copy;
    p->n_live = n_live;
    p->size = size;
}

static allocator *find_allocator(tool *t, uint64_t id)
{
    for (uint32_t i = t->n_allocators; i-- > 0;) {
        if (t->allocators[i].id == id)
            return &t->allocators[i];
    }
    return NULL;
}

static int by_size(const void *a, const void *b, void *data)
{
    const graph *g = data;
    const uint64_t x = g->tensors[*(const uint32_t *)a].bytes, y = g->tensors[*(const uint32_t *)b].bytes;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void report(tool *t, graph *g)
{
    allocator *a = find_allocator(t, g->galloc);
    if (!a)
        die(t, "a graph of an allocator not logged");
    uint64_t alignments[MAX_BUFFERS], sizes[MAX_BUFFERS];
    for (uint32_t b = 0; b < a->n_buffers; b++)
        alignments[b] = a->buffers[b].alignment;
    const ggfs_galloc_graph gg = {g->tensors, g->n_tensors, g->leafs, g->nodes, g->n_leafs, g->n_nodes};
    if (!ggfs_galloc_replay(&gg, alignments, a->n_buffers, sizes, t->check ? NULL : grown, g))
        die(t, "the graph could not be replayed");
    if (!t->check)
        printf("graph %u (%u nodes)%s%s:\n", t->graphs, g->n_nodes, t->label[0] ? " of " : "", t->label);
    for (uint32_t b = 0; b < a->n_buffers; b++) {
        // Vulkan's host buffer type allocates 32 bytes more than asked
        const size_t name_len = strlen(a->buffers[b].name);
        if (sizes[b] && name_len >= 5 && strcmp(a->buffers[b].name + name_len - 5, "_Host") == 0)
            sizes[b] += 32;
        if (sizes[b] > a->largest[b])
            a->largest[b] = sizes[b];
        sizes[b] = a->largest[b];
        t->buffers++;
        if (sizes[b] != g->ggml_size[b]) {
            t->differences++;
            if (t->check)
                printf("%s: graph %u, %s: replay %" PRIu64 " bytes, ggml %" PRIu64 " bytes\n", t->label, t->graphs,
                       a->buffers[b].name, sizes[b], g->ggml_size[b]);
        }
        if (t->check)
            continue;
        printf("  %s: replay %" PRIu64 " bytes, ggml %" PRIu64 " bytes (the largest of its graphs); live when it last grew:\n",
               a->buffers[b].name, sizes[b], g->ggml_size[b]);
        peak *p = &g->peaks[b];
        if (p->n_live)
            qsort_r(p->live, p->n_live, sizeof *p->live, by_size, g);
        for (uint32_t k = 0; k < p->n_live; k++) {
            const uint32_t i = p->live[k];
            printf("    %10" PRIu64 "  %-14s %-28s %s\n", g->tensors[i].bytes, g->ops[i], g->shapes[i], g->names[i]);
        }
    }
    t->graphs++;
}

int main(int argc, char **argv)
{
    tool t = {0};
    int arg = 1;
    if (arg < argc && strcmp(argv[arg], "--check") == 0) {
        t.check = true;
        arg++;
    }
    if (arg + 1 != argc) {
        fputs("usage: galloc-replay [--check] LOG\n", stderr);
        return 2;
    }
    t.path = argv[arg];
    FILE *f = fopen(t.path, "r");
    if (!f) {
        perror(t.path);
        return 2;
    }
    graph g = {0};
    bool in_graph = false;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        t.line++;
        if (line[0] == '#') {
            in_graph = false; // a graph left without its end: the client crashed in it
            snprintf(t.label, sizeof t.label, "%.*s", (int)strcspn(line + 2, "\n"), line + 2);
        } else if (strncmp(line, "BUFT ", 5) == 0) {
            char id[32], name[64];
            int index;
            unsigned long long alignment;
            if (sscanf(line, "BUFT %31s %d %63s %llu", id, &index, name, &alignment) != 4 || index < 0 ||
                index >= MAX_BUFFERS)
                die(&t, "not a buffer line");
            allocator *a = find_allocator(&t, parse_id(id));
            if (a && index == 0) // a new allocator where a freed one was
                memset(a->largest, 0, sizeof a->largest);
            if (!a) {
                t.allocators = grow(t.allocators, &t.cap_allocators, t.n_allocators + 1, sizeof *t.allocators);
                a = &t.allocators[t.n_allocators++];
                memset(a, 0, sizeof *a);
                a->id = parse_id(id);
            }
            snprintf(a->buffers[index].name, sizeof a->buffers[index].name, "%s", name);
            a->buffers[index].alignment = alignment;
            if ((uint32_t)index + 1 > a->n_buffers)
                a->n_buffers = (uint32_t)index + 1;
        } else if (strncmp(line, "GRAPH ", 6) == 0) {
            char id[32];
            free_graph(&g);
            if (sscanf(line, "GRAPH %31s", id) != 1)
                die(&t, "not a graph line");
            g.galloc = parse_id(id);
            in_graph = true;
        } else if ((line[0] == 'L' || line[0] == 'N') && line[1] == ' ' && in_graph) {
            const uint32_t i = parse_tensor(&t, &g, line);
            if (line[0] == 'L') {
                g.leafs = grow(g.leafs, &g.cap_leafs, g.n_leafs + 1, sizeof *g.leafs);
                g.leafs[g.n_leafs++] = i;
            } else {
                g.nodes = grow(g.nodes, &g.cap_nodes, g.n_nodes + 1, sizeof *g.nodes);
                g.nodes[g.n_nodes++] = i;
            }
        } else if (strncmp(line, "SIZE ", 5) == 0 && in_graph) {
            int index;
            unsigned long long size;
            if (sscanf(line, "SIZE %d %llu", &index, &size) != 2 || index < 0 || index >= MAX_BUFFERS)
                die(&t, "not a size line");
            g.ggml_size[index] = size;
        } else if (strncmp(line, "END", 3) == 0 && in_graph) {
            link_tensors(&t, &g);
            report(&t, &g);
            in_graph = false;
        } else {
            die(&t, "not a line of the graph log");
        }
    }
    free(line);
    free(t.allocators);
    free_graph(&g);
    fclose(f);
    if (t.check)
        printf("%u graphs, %u buffers, %u differences\n", t.graphs, t.buffers, t.differences);
    return t.check && t.differences ? 1 : 0;
}
