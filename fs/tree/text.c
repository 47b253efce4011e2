/*
 * The synthesized text files. header, info and shards/FILE are a few
 * `key: value` lines; metadata/KEY is the parser's rendering of the value;
 * metadata.json, tensors.tsv and warnings are the parser's views over the
 * whole model (every shard, for a split set); memory/CTX and memory.tsv
 * are memory_files.h's; tokenizer/'s files are its views of the keys
 * (parser/tokenizer.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree/memory_files.h"
#include "tree/offload_files.h"
#include "tree/names.h"
#include "tree/text.h"

static void put(ggp_sink *sink, const char *s)
{
    sink->write(sink, s, strlen(s));
}


void ggfs_shape_text(const ggp_tensor *t, char *buf, size_t bufsize)
{
    size_t o = 0;
    buf[0] = '\0';
    for (uint32_t j = 0; j < t->n_dims && o < bufsize; j++)
        o += (size_t)snprintf(buf + o, bufsize - o, j ? " %" PRId64 : "%" PRId64, t->ne[j]);
}

/* The header lines of one file, with the counts and size given. */
static void render_header_lines(const ggp_file *f, uint64_t tensor_count, uint64_t file_size, ggp_sink *sink)
{
    ggp_sink_printf(sink, "version: %" PRIu32 "\n", ggp_version(f));
    ggp_sink_printf(sink, "byte_order: %s\n", ggp_byte_order_of(f) == GGP_BIG ? "big" : "little");
    ggp_sink_printf(sink, "tensor_count: %" PRIu64 "\n", tensor_count);
    ggp_sink_printf(sink, "kv_count: %" PRIu64 "\n", ggp_kv_count_in_header(f));
    ggp_sink_printf(sink, "alignment: %" PRIu32 "\n", ggp_alignment(f));
    ggp_sink_printf(sink, "data_offset: %" PRIu64 "\n", ggp_data_offset(f));
    ggp_sink_printf(sink, "file_size: %" PRIu64 "\n", file_size);
}

/* The model's header: shard 1's (as edited), with the counts of the whole
 * set. */
static void render_header(const ggfs_model *m, const ggfs_view *view, ggp_sink *sink)
{
    const uint64_t size = m->total_size - m->shards[0].source->size + view->keys_file_size;
    render_header_lines(view->keys, m->n_tensors, size, sink);
    if (ggfs_model_is_split(m))
        ggp_sink_printf(sink, "shards: %" PRIu32 "\n", m->n_shards);
}

/* shards/FILE: that shard's own header, and where it is. */
static void render_shard(const ggfs_shard *s, ggp_sink *sink)
{
    render_header_lines(s->file, ggp_tensor_count(s->file), s->source->size, sink);
    put(sink, "path: ");
    put(sink, s->source->name);
    put(sink, "\n");
}

static void render_info(const ggfs_model *m, const ggp_tensor *t, uint32_t shard, ggp_sink *sink)
{
    put(sink, "name: ");
    ggp_render_line_escaped(t->name, sink);
    if (t->type)
        ggp_sink_printf(sink, "\ntype: %s\n", t->type->name);
    else
        ggp_sink_printf(sink, "\ntype: unknown(%" PRIu32 ")\n", t->type_id);
    char shape[96];
    ggfs_shape_text(t, shape, sizeof shape);
    ggp_sink_printf(sink, "shape: %s\n", shape);
    ggp_sink_printf(sink, "elements: %" PRIu64 "\n", t->elements);
    if (t->type)
        ggp_sink_printf(sink, "bytes: %" PRIu64 "\n", t->bytes);
    else
        put(sink, "bytes: unknown\n");
    ggp_sink_printf(sink, "offset: %" PRIu64 "\n", t->offset);
    if (ggfs_model_is_split(m))
        ggp_sink_printf(sink, "shard: %" PRIu32 "\n", shard + 1);
    const char *why = ggp_tensor_f32_unavailable(m->shards[shard].file, t);
    if (why)
        ggp_sink_printf(sink, "f32: none, %s\n", why);
}

static void render_tsv(const ggfs_model *m, ggp_sink *sink)
{
    ggp_render_tsv_header(sink);
    uint32_t shard;
    for (uint64_t i = 0; i < m->n_tensors; i++) {
        const ggp_tensor *t = ggfs_model_tensor(m, i, &shard);
        ggp_render_tsv_row(t, shard + 1, sink);
    }
}

/* Passes text on with `prefix` at the start of every line. */
typedef struct prefix_sink {
    ggp_sink sink;
    ggp_sink *out;
    const char *prefix;
    bool line_start;
} prefix_sink;

static void prefix_write(ggp_sink *sink, const char *bytes, size_t len)
{
    prefix_sink *p = (prefix_sink *)sink;
    while (len > 0) {
        if (p->line_start) {
            put(p->out, p->prefix);
            p->line_start = false;
        }
        const char *nl = memchr(bytes, '\n', len);
        const size_t n = nl ? (size_t)(nl - bytes) + 1 : len;
        p->out->write(p->out, bytes, n);
        p->line_start = nl != NULL;
        bytes += n, len -= n;
    }
}

/* The findings of every shard; for a split set each line starts with the
 * shard's file name, as the offsets are that file's. Shard 1 is as
 * edited: its offsets are those of its keys' header as the view has it. */
static bool render_warnings(const ggfs_model *m, const ggfs_view *view, ggp_sink *sink)
{
    if (!ggfs_model_is_split(m)) {
        if (!ggp_render_warnings(view->keys, sink))
            return false;
        ggfs_memory_warnings_render(view->keys, sink);
        return true;
    }
    for (uint32_t k = 0; k < m->n_shards; k++) {
        char prefix[GGFS_NAME_MAX + 3];
        snprintf(prefix, sizeof prefix, "%s: ", m->shards[k].file_name);
        prefix_sink p = {{prefix_write}, sink, prefix, true};
        if (!ggp_render_warnings(k == 0 ? view->keys : m->shards[k].file, &p.sink))
            return false;
        if (k == 0)
            ggfs_memory_warnings_render(view->keys, &p.sink);
    }
    return true;
}

bool ggfs_text_render(const ggfs_tree *tree, const ggfs_view *view, ggfs_node node, ggp_sink *sink)
{
    uint32_t shard;
    uint64_t index;
    switch (node.kind) {
    case GGFS_WARNINGS:
        return render_warnings(tree->model, view, sink);
    case GGFS_METADATA_JSON:
        ggp_render_metadata_json(view->keys, sink);
        break;
    case GGFS_TENSORS_TSV:
        render_tsv(tree->model, sink);
        break;
    case GGFS_VOCAB_TSV:
        ggp_render_vocab_tsv(view->keys, sink);
        break;
    case GGFS_SPECIAL_TOKENS:
        return ggp_render_special_tokens(view->keys, sink);
    case GGFS_HEADER:
        render_header(tree->model, view, sink);
        break;
    case GGFS_SHARD:
        render_shard(&tree->model->shards[node.index], sink);
        break;
    case GGFS_TENSOR_INFO: {
        const ggp_tensor *t = ggfs_model_tensor(tree->model, node.index, &shard);
        render_info(tree->model, t, shard, sink);
        break;
    }
    case GGFS_MEMORY_CTX:
        return node.index <= UINT32_MAX &&
               ggfs_memory_ctx_render(view->keys, tree->memory_weights, (uint32_t)node.index, sink);
    case GGFS_MEMORY_TSV:
        return ggfs_memory_tsv_render(view->keys, tree->memory_weights, sink);
    case GGFS_OFFLOAD_CTX:
        return node.index <= UINT32_MAX && ggfs_offload_ctx_render(view->keys, tree->model, tree->memory_weights,
                                                                 (uint32_t)node.index, view->compute, sink);
    case GGFS_KV:
        index = ggfs_view_index_of(view, node.index);
        if (index == UINT64_MAX)
            return false;
        ggp_render(view->keys, &ggp_kv_at(view->keys, index)->value, sink);
        break;
    default:
        break;
    }
    return true;
}

uint64_t ggfs_text_size(const ggfs_tree *tree, const ggfs_view *view, ggfs_node node)
{
    ggp_counting_sink c;
    ggp_counting_sink_init(&c);
    ggfs_text_render(tree, view, node, &c.sink);
    return c.total;
}

/* ==== Texts kept with their view ==== */

int ggfs_text_view_slot(ggfs_kind kind)
{
    switch (kind) {
    case GGFS_WARNINGS: return GGFS_VIEW_WARNINGS;
    case GGFS_METADATA_JSON: return GGFS_VIEW_METADATA_JSON;
    case GGFS_VOCAB_TSV: return GGFS_VIEW_VOCAB_TSV;
    case GGFS_SPECIAL_TOKENS: return GGFS_VIEW_SPECIAL_TOKENS;
    default: return GGFS_VIEW_TENSORS_TSV;
    }
}

bool ggfs_text_is_kept(ggfs_kind kind)
{
    return kind == GGFS_VOCAB_TSV;
}

const ggfs_view_text *ggfs_text_kept(const ggfs_tree *tree, ggfs_view *view, ggfs_node node)
{
    _Atomic(ggfs_view_text *) *slot = &view->text[ggfs_text_view_slot(node.kind)];
    ggfs_view_text *kept = atomic_load_explicit(slot, memory_order_acquire);
    if (kept)
        return kept;
    ggfs_buffer b;
    ggfs_buffer_init(&b);
    const bool rendered = ggfs_text_render(tree, view, node, &b.sink);
    ggfs_view_text *text = rendered && !b.failed ? malloc(sizeof *text + b.len) : NULL;
    if (text) {
        text->len = b.len;
        if (b.len)
            memcpy(text->data, b.data, b.len);
    }
    free(b.data);
    if (!text)
        return NULL;
    if (!atomic_compare_exchange_strong_explicit(slot, &kept, text, memory_order_acq_rel, memory_order_acquire)) {
        free(text); // another thread's is kept
        return kept;
    }
    return text;
}
