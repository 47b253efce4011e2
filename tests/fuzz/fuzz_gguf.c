/*
 * The fuzz target: open from memory (and half of it as a prefix, which
 * must agree), render every value (checking that the announced size is the
 * rendered size), the views for tools (metadata.json, warnings, tensors.tsv
 * rows, f32.npy headers, stats of what was read) and dequantize ranges of
 * every tensor. The input is also audited whole as a chat template (a GGUF
 * file with a template key is rare among mutations). Built with libFuzzer
 * by run.sh; replay.c runs the same function
 * over files for builds without it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ggp.h"
#include "ggt.h"
#include "audit_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct counter {
    ggp_sink sink;
    uint64_t total;
    uint64_t checksum; // reads every byte, so a bad pointer faults here
} counter;

static void count(ggp_sink *sink, const char *bytes, size_t len)
{
    counter *c = (counter *)sink;
    for (size_t i = 0; i < len; i++)
        c->checksum += (unsigned char)bytes[i];
    c->total += len;
}

/* Dequantizes a few ranges: the start, a middle piece that does not start
 * on a block, and the end. */
static void read_ranges(const ggp_file *f, const ggp_tensor *t)
{
    enum { MAX = 4096 };
    float out[MAX];
    const uint64_t n = t->elements;
    const uint64_t head = n < MAX ? n : MAX;
    if (ggp_tensor_read_f32(f, t, 0, head, out) != GGP_OK)
        abort();
    if (n > 3) {
        const uint64_t first = n / 2 + 1;
        const uint64_t count = n - first < 300 ? n - first : 300;
        if (ggp_tensor_read_f32(f, t, first, count, out) != GGP_OK)
            abort();
        if (ggp_tensor_read_f32(f, t, n - 3, 3, out) != GGP_OK)
            abort();
    }
    if (ggp_tensor_read_f32(f, t, n, 1, out) != GGP_ERR_RANGE)
        abort();
    ggp_stats s;
    ggp_stats_init(&s);
    ggp_stats_add(&s, out, (size_t)head);
    counter c = {{count}, 0, 0};
    ggp_stats_render(&s, n > head ? n : head, &c.sink);
    if (c.total != ggp_stats_text_size(n > head ? n : head))
        abort();
}

/* The first half of the file, opened as a prefix: either it asks for more
 * bytes than it had, or its verdict is the whole file's. */
static void check_prefix(const uint8_t *data, size_t size, const ggp_file *whole,
                         const ggp_error *whole_err)
{
    const size_t avail = size / 2;
    ggp_error err;
    ggp_file *f = ggp_open_prefix(data, avail, size, &err);
    if (!f && err.code == GGP_ERR_NEED_MORE) {
        if (err.offset <= avail || err.offset > size)
            abort();
    } else if ((f != NULL) != (whole != NULL)) {
        abort();
    } else if (f) {
        if (ggp_kv_count(f) != ggp_kv_count(whole) || ggp_tensor_count(f) != ggp_tensor_count(whole) ||
            ggp_data_offset(f) != ggp_data_offset(whole))
            abort();
    } else if (err.code != whole_err->code || err.offset != whole_err->offset) {
        abort();
    }
    ggp_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    audit_check audit = {size, 0, 0};
    if (!ggt_audit(data, size, finding, &audit))
        abort();
    ggp_error err;
    ggp_file *f = ggp_open_mem(data, size, &err);
    check_prefix(data, size, f, &err);
    if (!f) {
        if (err.code == GGP_OK || err.offset > size || err.msg[0] == '\0')
            abort();
        return 0;
    }
    for (uint64_t i = 0; i < ggp_kv_count(f); i++) {
        const ggp_value *v = &ggp_kv_at(f, i)->value;
        counter c = {{count}, 0, 0};
        ggp_render(f, v, &c.sink);
        if (c.total != ggp_render_size(f, v))
            abort();
    }
    counter views = {{count}, 0, 0};
    ggp_render_metadata_json(f, &views.sink);
    if (!ggp_render_warnings(f, &views.sink))
        abort();
    ggp_render_vocab_tsv(f, &views.sink);
    if (!ggp_render_special_tokens(f, &views.sink))
        abort();
    ggp_render_tsv_header(&views.sink);
    for (uint64_t i = 0; i < ggp_tensor_count(f); i++) {
        const ggp_tensor *t = ggp_tensor_at(f, i);
        if (t->type && (t->offset + t->bytes > size || t->data != data + t->offset))
            abort();
        ggp_render_tsv_row(t, 1, &views.sink);
        char npy[GGP_NPY_HEADER_MAX];
        if (ggp_npy_header(t, npy) % 64 != 0)
            abort();
        if (!ggp_tensor_f32_unavailable(f, t))
            read_ranges(f, t);
    }
    ggp_close(f);
    return 0;
}
