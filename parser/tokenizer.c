/*
 * The tokenizer as llama.cpp reads it from the keys, in two views
 * (tokenizer/vocab.tsv and tokenizer/special) and two warnings:
 *
 *   tokenizer.ggml.tokens        array of strings: token id i is element i
 *   tokenizer.ggml.token_type    array of integers, llama_token_type:
 *                                1 normal, 2 unknown, 3 control,
 *                                4 user_defined, 5 unused, 6 byte
 *   tokenizer.ggml.scores        array of floats
 *   tokenizer.ggml.NAME_token_id an id: bos, eos, eot, unknown, padding...;
 *                                4294967295 (or -1) is llama.cpp's "none"
 *   tokenizer.ggml.add_bos_token, add_eos_token   bools
 *   tokenizer.ggml.model, tokenizer.ggml.pre      the kind of vocabulary and
 *                                its pre-tokenizer ("gpt2" is BPE, which
 *                                needs one: llama.cpp falls back to its
 *                                default and says output will degrade)
 *
 * The three arrays are walked side by side, once: a vocabulary of 128k
 * tokens is one pass over each.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggp_i.h"

#define KEY(s) s, sizeof s - 1

static const ggp_kv *find(const ggp_file *f, const char *key, size_t len)
{
    return ggp_kv_find(f, key, len);
}

/* The tokens, when tokenizer.ggml.tokens is an array of strings. */
static const ggp_kv *tokens_of(const ggp_file *f)
{
    const ggp_kv *kv = find(f, KEY("tokenizer.ggml.tokens"));
    return kv && kv->value.type == GGP_V_ARRAY && kv->value.elem_type == GGP_V_STRING ? kv : NULL;
}

bool ggp_has_vocab(const ggp_file *f)
{
    return tokens_of(f) != NULL;
}

static bool is_integer(ggp_vtype t)
{
    return t <= GGP_V_I32 ? t != GGP_V_F32 : t == GGP_V_U64 || t == GGP_V_I64;
}

static bool is_signed(ggp_vtype t)
{
    return t == GGP_V_I8 || t == GGP_V_I16 || t == GGP_V_I32 || t == GGP_V_I64;
}

/* ==== vocab.tsv ==== */

/* An array key's iterator, when the key is an array whose elements pass
 * `fits`; false (nothing to walk) otherwise. */
static bool walk(const ggp_file *f, const char *key, size_t len, bool (*fits)(ggp_vtype), ggp_array_iter *it)
{
    const ggp_kv *kv = find(f, key, len);
    if (!kv || kv->value.type != GGP_V_ARRAY || !fits(kv->value.elem_type))
        return false;
    ggp_array_iter_init(it, f, &kv->value);
    return true;
}

static bool is_number(ggp_vtype t)
{
    return is_integer(t) || t == GGP_V_F32 || t == GGP_V_F64;
}

static void put_type(const ggp_file *f, const ggp_value *v, ggp_sink *sink)
{
    static const char *const names[] = {NULL, "normal", "unknown", "control", "user_defined", "unused", "byte"};
    if (is_signed(v->type)) {
        const int64_t t = ggp_value_i64(f, v);
        if (t > 0 && t < 7)
            ggp_sink_printf(sink, "%s", names[t]);
        else
            ggp_sink_printf(sink, "%" PRId64, t);
        return;
    }
    const uint64_t t = ggp_value_u64(f, v);
    if (t > 0 && t < 7)
        ggp_sink_printf(sink, "%s", names[t]);
    else
        ggp_sink_printf(sink, "%" PRIu64, t);
}

void ggp_render_vocab_tsv(const ggp_file *f, ggp_sink *sink)
{
    const ggp_kv *tokens = tokens_of(f);
    if (!tokens)
        return;
    sink->write(sink, "id\ttype\tscore\ttoken\n", 20);
    ggp_array_iter tok, type, score;
    bool types = walk(f, KEY("tokenizer.ggml.token_type"), is_integer, &type);
    bool scores = walk(f, KEY("tokenizer.ggml.scores"), is_number, &score);
    ggp_array_iter_init(&tok, f, &tokens->value);
    ggp_value t, e;
    for (uint64_t id = 0; ggp_array_next(&tok, &t); id++) {
        char num[24];
        const int n = snprintf(num, sizeof num, "%" PRIu64 "\t", id);
        sink->write(sink, num, (size_t)n);
        if (types && (types = ggp_array_next(&type, &e)))
            put_type(f, &e, sink);
        sink->write(sink, "\t", 1);
        if (scores && (scores = ggp_array_next(&score, &e)))
            ggp_render_one_line(f, &e, sink);
        sink->write(sink, "\t", 1);
        ggp_render_line_escaped(ggp_value_str(f, &t), sink);
        sink->write(sink, "\n", 1);
    }
}

/* ==== special ==== */

/* Whether kv is tokenizer.ggml.NAME_token_id with an integer value: its
 * NAME, and its id (*none for llama.cpp's "none"). */
static bool special_id(const ggp_file *f, const ggp_kv *kv, ggp_str *name, bool *negative, uint64_t *id,
                       bool *none)
{
    static const char prefix[] = "tokenizer.ggml.", suffix[] = "_token_id";
    const size_t p = sizeof prefix - 1, s = sizeof suffix - 1;
    const ggp_str k = kv->key;
    if (k.len <= p + s || memcmp(k.ptr, prefix, p) != 0 || memcmp(k.ptr + k.len - s, suffix, s) != 0 ||
        !is_integer(kv->value.type))
        return false;
    *name = (ggp_str){k.ptr + p, k.len - p - s};
    if (is_signed(kv->value.type)) {
        const int64_t v = ggp_value_i64(f, &kv->value);
        *negative = v < 0;
        *id = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        *none = v == -1;
    } else {
        *negative = false;
        *id = ggp_value_u64(f, &kv->value);
        *none = *id == UINT32_MAX;
    }
    return true;
}

/* The texts of the ids the special keys name, found in one pass over the
 * tokens: the keys' ids sorted, then the array walked once up to the
 * largest. A vocabulary of a million tokens and twenty thousand keys is a
 * million steps, not one walk per key (strings vary in length, so the
 * array cannot be indexed by id). */
typedef struct wanted {
    uint64_t id;
    size_t slot; // the key's place among the special keys, in file order
} wanted;

static int by_id(const void *a, const void *b)
{
    const wanted *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* texts[slot] for each special key in file order: the token's text, or
 * {NULL, 0} when the key names no token of the vocabulary. n the number of
 * special keys. Allocated with malloc(); NULL when out of memory. */
static ggp_str *special_texts(const ggp_file *f, const ggp_kv *tokens, size_t n)
{
    ggp_str *texts = calloc(n ? n : 1, sizeof *texts);
    wanted *want = malloc((n ? n : 1) * sizeof *want);
    if (!texts || !want) {
        free(texts);
        free(want);
        return NULL;
    }
    size_t k = 0, slot = 0;
    for (uint64_t i = 0; i < ggp_kv_count(f); i++) {
        ggp_str name;
        bool negative, none;
        uint64_t id;
        if (!special_id(f, ggp_kv_at(f, i), &name, &negative, &id, &none))
            continue;
        if (!none && !negative && id < tokens->value.count)
            want[k++] = (wanted){id, slot};
        slot++;
    }
    qsort(want, k, sizeof *want, by_id);
    ggp_array_iter it;
    ggp_value v;
    ggp_array_iter_init(&it, f, &tokens->value);
    size_t j = 0;
    for (uint64_t i = 0; j < k && ggp_array_next(&it, &v); i++) {
        for (; j < k && want[j].id == i; j++) {
            const ggp_str t = ggp_value_str(f, &v);
            texts[want[j].slot] = t.ptr ? t : (ggp_str){"", 0}; // an empty token is still found
        }
    }
    free(want);
    return texts;
}

static void put_flag(const ggp_file *f, const char *key, size_t len, const char *label, ggp_sink *sink)
{
    const ggp_kv *kv = find(f, key, len);
    if (kv && kv->value.type == GGP_V_BOOL)
        ggp_sink_printf(sink, "%s: %s\n", label, kv->value.data[0] ? "true" : "false");
}

bool ggp_render_special_tokens(const ggp_file *f, ggp_sink *sink)
{
    const ggp_kv *tokens = tokens_of(f);
    if (!tokens)
        return true;
    size_t n = 0;
    ggp_str name, text;
    bool negative, none;
    uint64_t id;
    for (uint64_t i = 0; i < ggp_kv_count(f); i++)
        n += special_id(f, ggp_kv_at(f, i), &name, &negative, &id, &none);
    ggp_str *texts = special_texts(f, tokens, n);
    if (!texts)
        return false;
    for (uint64_t i = 0, slot = 0; i < ggp_kv_count(f); i++) {
        if (!special_id(f, ggp_kv_at(f, i), &name, &negative, &id, &none))
            continue;
        text = texts[slot++];
        ggp_render_line_escaped(name, sink);
        if (none)
            ggp_sink_printf(sink, ": -1 -\n");
        else if (negative || !text.ptr)
            ggp_sink_printf(sink, ": %s%" PRIu64 " -\n", negative ? "-" : "", id);
        else {
            ggp_sink_printf(sink, ": %" PRIu64 " ", id);
            ggp_render_line_escaped(text, sink);
            sink->write(sink, "\n", 1);
        }
    }
    free(texts);
    put_flag(f, KEY("tokenizer.ggml.add_bos_token"), "add_bos", sink);
    put_flag(f, KEY("tokenizer.ggml.add_eos_token"), "add_eos", sink);
    return true;
}

/* ==== warnings ==== */

static void put_key(const ggp_kv *kv, ggp_sink *sink)
{
    ggp_sink_printf(sink, "offset %" PRIu64 ": key '", kv->offset);
    ggp_render_line_escaped(kv->key, sink);
    sink->write(sink, "': ", 3);
}

void ggp_tokenizer_warnings(const ggp_file *f, const ggp_kv *kv, ggp_sink *sink)
{
    ggp_str name;
    bool negative, none;
    uint64_t id;
    const ggp_kv *tokens = tokens_of(f);
    if (tokens && special_id(f, kv, &name, &negative, &id, &none) && !none &&
        (negative || id >= tokens->value.count)) {
        put_key(kv, sink);
        ggp_sink_printf(sink, "token id %s%" PRIu64 " is outside the vocabulary (%" PRIu64 " tokens)\n",
                        negative ? "-" : "", id, tokens->value.count);
        return;
    }
    static const char model[] = "tokenizer.ggml.model";
    if (kv->key.len != sizeof model - 1 || memcmp(kv->key.ptr, model, sizeof model - 1) != 0 ||
        kv->value.type != GGP_V_STRING)
        return;
    const ggp_str m = ggp_value_str(f, &kv->value);
    const ggp_kv *pre = find(f, KEY("tokenizer.ggml.pre"));
    const bool has_pre = pre && !(pre->value.type == GGP_V_STRING && ggp_value_str(f, &pre->value).len == 0);
    if (m.len == 4 && memcmp(m.ptr, "gpt2", 4) == 0 && !has_pre) {
        put_key(kv, sink);
        ggp_sink_printf(sink, "a BPE vocabulary ('gpt2') without tokenizer.ggml.pre: llama.cpp uses its "
                              "default pre-tokenizer and output degrades\n");
    }
}
