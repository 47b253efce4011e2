/*
 * The tokenizer views (parser/tokenizer.c: vocab.tsv and special) over a
 * GGUF file built from the input: its first byte is the number of
 * tokenizer.ggml.*_token_id keys (at most 31), each then 5 bytes (a type
 * and an id: u32, i32 or u64, so none, negatives and ids past the end
 * come), then a byte of flags (add_bos, add_eos, whether token_type and
 * scores are there), and the rest is the vocabulary, one token a line.
 * special is checked line by line against a plain walk of the tokens for
 * each key; vocab.tsv has one line per token after its header.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct buf {
    uint8_t *b;
    size_t n, cap;
    bool failed;
} buf;

static void put(buf *w, const void *p, size_t n)
{
    if (w->failed)
        return;
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 1024;
        while (cap < w->n + n)
            cap *= 2;
        uint8_t *grown = realloc(w->b, cap);
        if (!grown) {
            w->failed = true;
            return;
        }
        w->b = grown;
        w->cap = cap;
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void put_u32(buf *w, uint32_t v) { put(w, &v, 4); }
static void put_u64(buf *w, uint64_t v) { put(w, &v, 8); }

static void put_str(buf *w, const char *s, size_t n)
{
    put_u64(w, n);
    put(w, s, n);
}

static void put_key(buf *w, const char *k, uint32_t type)
{
    put_str(w, k, strlen(k));
    put_u32(w, type);
}

typedef struct lines {
    ggp_sink sink;
    uint64_t n;
} lines;

static void count_lines(ggp_sink *sink, const char *bytes, size_t len)
{
    lines *l = (lines *)sink;
    for (size_t i = 0; i < len; i++)
        l->n += bytes[i] == '\n';
}

/* special as the plain walk writes it: for each key, the tokens walked
 * from the start to its id. */
static void reference_special(const ggp_file *f, ggp_sink *sink)
{
    const ggp_kv *tokens = ggp_kv_find(f, "tokenizer.ggml.tokens", 21);
    for (uint64_t i = 0; i < ggp_kv_count(f); i++) {
        const ggp_kv *kv = ggp_kv_at(f, i);
        const size_t p = 15, s = 9;
        const ggp_str k = kv->key;
        if (k.len <= p + s || memcmp(k.ptr, "tokenizer.ggml.", p) != 0 ||
            memcmp(k.ptr + k.len - s, "_token_id", s) != 0)
            continue;
        const bool is_signed = kv->value.type == GGP_V_I32;
        const int64_t sv = is_signed ? ggp_value_i64(f, &kv->value) : 0;
        const uint64_t id = is_signed ? (sv < 0 ? (uint64_t)0 - (uint64_t)sv : (uint64_t)sv)
                                      : ggp_value_u64(f, &kv->value);
        const bool none = is_signed ? sv == -1 : id == UINT32_MAX;
        ggp_render_line_escaped((ggp_str){k.ptr + p, k.len - p - s}, sink);
        if (none) {
            ggp_sink_printf(sink, ": -1 -\n");
            continue;
        }
        bool found = false;
        ggp_array_iter it;
        ggp_value v;
        ggp_array_iter_init(&it, f, &tokens->value);
        for (uint64_t t = 0; !(is_signed && sv < 0) && ggp_array_next(&it, &v); t++)
            if (t == id) {
                ggp_sink_printf(sink, ": %" PRIu64 " ", id);
                ggp_render_line_escaped(ggp_value_str(f, &v), sink);
                sink->write(sink, "\n", 1);
                found = true;
                break;
            }
        if (!found)
            ggp_sink_printf(sink, ": %s%" PRIu64 " -\n", is_signed && sv < 0 ? "-" : "", id);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const size_t n_special = data[0] % 32;
    if (size < 2 + 5 * n_special)
        return 0;
    const uint8_t *p = data + 1;
    const uint8_t flags = p[5 * n_special];
    const char *vocab = (const char *)p + 5 * n_special + 1, *end = (const char *)data + size;
    uint64_t n_tokens = 0;
    for (const char *c = vocab; c < end; c++)
        n_tokens += *c == '\n';
    n_tokens += vocab < end && end[-1] != '\n';

    buf w = {0};
    const bool types = flags & 4, scores = flags & 8;
    put(&w, "GGUF", 4);
    put_u32(&w, 3);
    put_u64(&w, 0);
    put_u64(&w, 1 + n_special + 2 + types + scores);
    put_key(&w, "tokenizer.ggml.tokens", 9);
    put_u32(&w, 8);
    put_u64(&w, n_tokens);
    for (const char *c = vocab; c < end;) {
        const char *nl = memchr(c, '\n', (size_t)(end - c));
        const size_t n = (size_t)((nl ? nl : end) - c);
        put_str(&w, c, n);
        c += n + 1;
    }
    for (size_t i = 0; i < n_special; i++, p += 5) {
        char key[48];
        snprintf(key, sizeof key, "tokenizer.ggml.k%zu_token_id", i);
        uint32_t id;
        memcpy(&id, p + 1, 4);
        const uint32_t type = p[0] % 3 == 0 ? 4 : p[0] % 3 == 1 ? 5 : 10;
        put_key(&w, key, type);
        if (type == 10)
            put_u64(&w, id);
        else
            put_u32(&w, id);
    }
    const uint8_t bos = flags & 1, eos = (flags >> 1) & 1;
    put_key(&w, "tokenizer.ggml.add_bos_token", 7);
    put(&w, &bos, 1);
    put_key(&w, "tokenizer.ggml.add_eos_token", 7);
    put(&w, &eos, 1);
    // Arrays shorter than the vocabulary when flags say so: views must
    // cope with a token_type or scores that ends early.
    const uint64_t n_extra = flags & 16 ? n_tokens / 2 : n_tokens;
    if (types) {
        put_key(&w, "tokenizer.ggml.token_type", 9);
        put_u32(&w, 5);
        put_u64(&w, n_extra);
        for (uint64_t i = 0; i < n_extra; i++)
            put_u32(&w, (uint32_t)(i * 7 % 9) - 1);
    }
    if (scores) {
        put_key(&w, "tokenizer.ggml.scores", 9);
        put_u32(&w, 6);
        put_u64(&w, n_extra);
        for (uint64_t i = 0; i < n_extra; i++) {
            const float s = -(float)i / 3.0f;
            put(&w, &s, 4);
        }
    }
    if (w.failed) {
        free(w.b);
        return 0;
    }
    ggp_error err;
    ggp_file *f = ggp_open_mem(w.b, w.n, &err);
    if (!f) // the builder writes only valid files
        abort();
    ggp_bytes got = {0}, want = {0};
    ggp_bytes_sink gs, ws;
    ggp_bytes_sink_init(&gs, &got);
    ggp_bytes_sink_init(&ws, &want);
    if (!ggp_render_special_tokens(f, &gs.sink))
        abort();
    reference_special(f, &ws.sink);
    ggp_sink_printf(&ws.sink, "add_bos: %s\nadd_eos: %s\n", bos ? "true" : "false", eos ? "true" : "false");
    if (!gs.failed && !ws.failed && (got.len != want.len || memcmp(got.data, want.data, got.len) != 0))
        abort();
    lines vocab_lines = {{count_lines}, 0};
    ggp_render_vocab_tsv(f, &vocab_lines.sink);
    if (vocab_lines.n != n_tokens + 1)
        abort();
    lines warnings = {{count_lines}, 0};
    if (!ggp_render_warnings(f, &warnings.sink))
        abort();
    free(got.data);
    free(want.data);
    ggp_close(f);
    free(w.b);
    return 0;
}
