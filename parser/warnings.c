/*
 * The warnings view: what is odd in a file but not a reason to refuse it,
 * one finding a line, each line starting with the byte offset it is about:
 *
 *   offset 1234: key 'x' appears again (first at offset 56): VALUE
 *   offset 1300: key 'tokenizer.chat_template' at byte 9 of its value: attribute '__class__' begins with '_'
 *   offset 1400: key 'tokenizer.ggml.eos_token_id': token id 32000 is outside the vocabulary (32000 tokens)
 *   offset 2300: tensor 'y': unknown type 99, its size is unknown
 *   offset 4096: tensor 'b' data [4096, 4160) overlaps tensor 'a' data [4064, 4128)
 *   offset 8192: 100 bytes after the end of the tensor data
 *
 * Lines come in that order, which is also the order of their offsets:
 * keys (a chat template's findings after its key, by their offset in its
 * value; the tokenizer's at their key, tokenizer.c), then tensor
 * descriptors, then data. Finding overlaps sorts the tensors by offset,
 * so it is done here, when the view is read, and not when the file is
 * opened.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ggp_i.h"
#include "ggt.h"

static void put(ggp_sink *sink, const char *s, size_t n)
{
    if (n)
        sink->write(sink, s, n);
}


/* A name in quotes, escaped as array strings are, so the line stays one. */
static void put_name(ggp_str name, ggp_sink *sink)
{
    put(sink, "'", 1);
    ggp_render_line_escaped(name, sink);
    put(sink, "'", 1);
}

static void put_repeat(const ggp_file *f, const ggp_kv_repeat *r, ggp_sink *sink)
{
    ggp_sink_printf(sink, "offset %" PRIu64 ": key ", r->kv.offset);
    put_name(r->kv.key, sink);
    ggp_sink_printf(sink, " appears again (first at offset %" PRIu64 "): ", r->first_offset);
    ggp_render_one_line(f, &r->kv.value, sink);
    put(sink, "\n", 1);
}

typedef struct template_lines {
    ggp_sink *sink;
    const ggp_kv *kv;
} template_lines;

static void put_template_finding(void *ctx, const ggt_finding *t)
{
    const template_lines *l = ctx;
    const ggp_str name = {t->name.ptr, t->name.len};
    ggp_sink_printf(l->sink, "offset %" PRIu64 ": key ", l->kv->value.offset + t->at);
    put_name(l->kv->key, l->sink);
    ggp_sink_printf(l->sink, " at byte %" PRIu64 " of its value: %s ", t->at, t->what);
    if (t->name.len == 0) {
        ggp_sink_printf(l->sink, "%s", t->how);
    } else if (t->source) {
        ggp_sink_printf(l->sink, "%s ", t->how);
        ggp_render_line_escaped(name, l->sink);
    } else {
        put_name(name, l->sink);
        ggp_sink_printf(l->sink, "%s %s", t->cut ? "..." : "", t->how);
    }
    put(l->sink, t->cut && t->source ? "...\n" : "\n", t->cut && t->source ? 4 : 1);
}

/* A chat template's findings (ggt.h), every occurrence's: which
 * one a reader takes differs between readers. */
static bool put_template(const ggp_file *f, const ggp_kv *kv, ggp_sink *sink)
{
    if (kv->value.type != GGP_V_STRING || !ggt_is_chat_template_key((ggt_str){kv->key.ptr, kv->key.len}))
        return true;
    const ggp_str s = ggp_value_str(f, &kv->value);
    template_lines l = {sink, kv};
    return ggt_audit(s.ptr, s.len, put_template_finding, &l);
}

/* The keys' lines in file order: repeats, and chat templates' findings. */
static bool put_keys(const ggp_file *f, ggp_sink *sink)
{
    uint64_t i = 0, j = 0;
    const uint64_t n = ggp_kv_count(f), m = ggp_kv_repeat_count(f);
    while (i < n || j < m) {
        const ggp_kv *first = i < n ? ggp_kv_at(f, i) : NULL;
        const ggp_kv_repeat *again = j < m ? ggp_kv_repeat_at(f, j) : NULL;
        if (first && (!again || first->offset < again->kv.offset)) {
            if (!put_template(f, first, sink))
                return false;
            ggp_tokenizer_warnings(f, first, sink);
            i++;
        } else {
            put_repeat(f, again, sink);
            if (!put_template(f, &again->kv, sink))
                return false;
            j++;
        }
    }
    return true;
}

/* Returns whether any tensor has an unknown type. */
static bool put_unknown_types(const ggp_file *f, ggp_sink *sink)
{
    bool any = false;
    for (uint64_t i = 0; i < ggp_tensor_count(f); i++) {
        const ggp_tensor *t = ggp_tensor_at(f, i);
        if (t->type)
            continue;
        any = true;
        // The type field sits just before the data offset field.
        ggp_sink_printf(sink, "offset %" PRIu64 ": tensor ", t->data_field_offset - 4);
        put_name(t->name, sink);
        ggp_sink_printf(sink, ": unknown type %" PRIu32 ", its size is unknown\n", t->type_id);
    }
    return any;
}

typedef struct extent {
    uint64_t start, end; // [start, end) of the data in the file
    uint64_t index;      // the tensor
} extent;

static int by_start(const void *a, const void *b)
{
    const extent *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void put_overlaps(const ggp_file *f, const extent *e, uint64_t n, ggp_sink *sink)
{
    // Each tensor that starts before the farthest end seen so far overlaps
    // the tensor reaching that far: one line per overlapping tensor, however
    // many others it also overlaps, so the view stays linear in the tensors.
    const extent *reach = NULL;
    for (uint64_t i = 0; i < n; i++) {
        if (reach && e[i].start < reach->end) {
            const ggp_tensor *t = ggp_tensor_at(f, e[i].index);
            const ggp_tensor *u = ggp_tensor_at(f, reach->index);
            ggp_sink_printf(sink, "offset %" PRIu64 ": tensor ", e[i].start);
            put_name(t->name, sink);
            ggp_sink_printf(sink, " data [%" PRIu64 ", %" PRIu64 ") overlaps tensor ", e[i].start, e[i].end);
            put_name(u->name, sink);
            ggp_sink_printf(sink, " data [%" PRIu64 ", %" PRIu64 ")\n", reach->start, reach->end);
        }
        if (!reach || e[i].end > reach->end)
            reach = &e[i];
    }
}

bool ggp_render_warnings(const ggp_file *f, ggp_sink *sink)
{
    const uint64_t n_tensors = ggp_tensor_count(f);
    extent *e = malloc((n_tensors ? n_tensors : 1) * sizeof *e);
    if (!e)
        return false;
    uint64_t n = 0;
    uint64_t data_end = ggp_data_offset(f);
    for (uint64_t i = 0; i < n_tensors; i++) {
        const ggp_tensor *t = ggp_tensor_at(f, i);
        if (!t->type || t->bytes == 0)
            continue;
        e[n++] = (extent){t->offset, t->offset + t->bytes, i};
        if (t->offset + t->bytes > data_end)
            data_end = t->offset + t->bytes;
    }
    qsort(e, (size_t)n, sizeof *e, by_start);

    if (!put_keys(f, sink)) {
        free(e);
        return false;
    }
    const bool unknown = put_unknown_types(f, sink);
    put_overlaps(f, e, n, sink);
    free(e);

    // ggml's writer pads the data (or, without tensors, the descriptors) to
    // the alignment, so bytes up to the next multiple are expected. After an
    // unknown type's tensor, what follows may be its data: nothing to say.
    const uint64_t a = ggp_alignment(f);
    const uint64_t padded = data_end / a * a + (data_end % a ? a : 0);
    const uint64_t size = ggp_file_size(f);
    if (!unknown && padded < size)
        ggp_sink_printf(sink, "offset %" PRIu64 ": %" PRIu64 " bytes after the end of the %s\n", padded,
             size - padded, n_tensors ? "tensor data" : "header");
    return true;
}
