/*
 * views_dump: prints one view for tools of a GGUF file as the parser
 * renders it, for the tests to read with jq, awk, Python's json and csv,
 * and numpy. Every text view is rendered twice, into stdout and into a
 * counting sink, and the two sizes must agree (stats: with the size
 * announced before computing).
 *
 *   usage: views_dump [--scalar] FILE metadata.json|tensors.tsv|warnings
 *          views_dump [--scalar] FILE stats|f32.npy TENSOR
 *
 * --scalar uses the scalar dequantizers and stats passes instead of AVX2.
 * Exits 1 with a message on stderr when the file is refused, the tensor is
 * missing or has no f32, or a size disagrees.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggp.h"

typedef struct out_sink {
    ggp_sink sink;
    uint64_t total;
} out_sink;

static void write_out(ggp_sink *sink, const char *bytes, size_t len)
{
    ((out_sink *)sink)->total += len;
    fwrite(bytes, 1, len, stdout);
}

static int fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "views_dump: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 1;
}

typedef void render_fn(const ggp_file *f, ggp_sink *sink);

static void render_json(const ggp_file *f, ggp_sink *sink) { ggp_render_metadata_json(f, sink); }

static void render_tsv(const ggp_file *f, ggp_sink *sink)
{
    ggp_render_tsv_header(sink);
    for (uint64_t i = 0; i < ggp_tensor_count(f); i++)
        ggp_render_tsv_row(ggp_tensor_at(f, i), 1, sink);
}

static void render_warnings(const ggp_file *f, ggp_sink *sink)
{
    if (!ggp_render_warnings(f, sink)) {
        fprintf(stderr, "views_dump: out of memory\n");
        exit(1);
    }
}

static int text_view(const ggp_file *f, render_fn *render, const char *view)
{
    out_sink out = {{write_out}, 0};
    render(f, &out.sink);
    ggp_counting_sink c;
    ggp_counting_sink_init(&c);
    render(f, &c.sink);
    return c.total == out.total ? 0 : fail("%s: counted size differs from the text", view);
}

/* Streams the tensor's f32 values in chunks of an odd size, so that chunks
 * do not fall on blocks, into the npy output or the stats accumulator. */
static int tensor_view(const ggp_file *f, const ggp_tensor *t, bool npy, bool simd)
{
    if (ggp_tensor_f32_unavailable(f, t))
        return fail("tensor has no f32: %s", ggp_tensor_f32_unavailable(f, t));
    enum { CHUNK = 10007 };
    float *buf = malloc(CHUNK * sizeof *buf);
    if (!buf)
        return fail("%s", "out of memory");
    ggp_stats s;
    ggp_stats_init(&s);
    ggp_stats_set_simd(&s, simd);
    if (npy) {
        char header[GGP_NPY_HEADER_MAX];
        fwrite(header, 1, ggp_npy_header(t, header), stdout);
    }
    for (uint64_t i = 0; i < t->elements; i += CHUNK) {
        const uint64_t n = t->elements - i < CHUNK ? t->elements - i : CHUNK;
        if (ggp_tensor_read_f32(f, t, i, n, buf) != GGP_OK) {
            free(buf);
            return fail("%s", "f32 read failed");
        }
        if (npy)
            fwrite(buf, sizeof *buf, (size_t)n, stdout);
        else
            ggp_stats_add(&s, buf, (size_t)n);
    }
    free(buf);
    if (npy)
        return 0;
    out_sink out = {{write_out}, 0};
    ggp_stats_render(&s, t->elements, &out.sink);
    return out.total == ggp_stats_text_size(t->elements) ? 0 : fail("%s", "stats size differs");
}

int main(int argc, char **argv)
{
    bool simd = true;
    if (argc > 1 && strcmp(argv[1], "--scalar") == 0) {
        simd = false;
        argv++, argc--;
    }
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: views_dump [--scalar] FILE metadata.json|tensors.tsv|warnings\n"
                        "       views_dump [--scalar] FILE stats|f32.npy TENSOR\n");
        return 2;
    }
    ggp_error err;
    ggp_file *f = ggp_open(argv[1], &err);
    if (!f) {
        fprintf(stderr, "views_dump: %s: offset %" PRIu64 ": %s\n", argv[1], err.offset, err.msg);
        return 1;
    }
    ggp_file_set_simd(f, simd);
    const char *view = argv[2];
    int status;
    if (argc == 3 && strcmp(view, "metadata.json") == 0) {
        status = text_view(f, render_json, view);
    } else if (argc == 3 && strcmp(view, "tensors.tsv") == 0) {
        status = text_view(f, render_tsv, view);
    } else if (argc == 3 && strcmp(view, "warnings") == 0) {
        status = text_view(f, render_warnings, view);
    } else if (argc == 4 && (strcmp(view, "stats") == 0 || strcmp(view, "f32.npy") == 0)) {
        const ggp_tensor *t = ggp_tensor_find(f, argv[3], strlen(argv[3]));
        status = t ? tensor_view(f, t, strcmp(view, "f32.npy") == 0, simd)
                   : fail("no tensor '%s'", argv[3]);
    } else {
        status = fail("unknown view or arguments: %s", view);
    }
    ggp_close(f);
    return status;
}
