/*
 * The views for tools that the parser writes: metadata.json, the rows of
 * tensors.tsv, the f32.npy header and the warnings; and what they rest on:
 * repeated keys that no longer refuse a file, and ik_llama.cpp's type ids.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"

/* ==== A small GGUF writer ==== */

typedef struct builder {
    unsigned char b[8192];
    size_t n;
} builder;

static void put_bytes(builder *w, const void *p, size_t n)
{
    if (w->n + n > sizeof w->b)
        abort();
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void put_u8(builder *w, uint8_t v) { put_bytes(w, &v, 1); }
static void put_u32(builder *w, uint32_t v) { put_bytes(w, &v, 4); }
static void put_u64(builder *w, uint64_t v) { put_bytes(w, &v, 8); }

static void put_str(builder *w, const char *s)
{
    put_u64(w, strlen(s));
    put_bytes(w, s, strlen(s));
}

static void begin(builder *w, uint64_t n_tensors, uint64_t n_kv)
{
    w->n = 0;
    put_bytes(w, "GGUF", 4);
    put_u32(w, 3);
    put_u64(w, n_tensors);
    put_u64(w, n_kv);
}

/* A key and its value type; returns the key's offset. */
static size_t key(builder *w, const char *k, uint32_t type)
{
    const size_t at = w->n;
    put_str(w, k);
    put_u32(w, type);
    return at;
}

static void tensor(builder *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
                   uint64_t offset)
{
    put_str(w, name);
    put_u32(w, n_dims);
    for (uint32_t i = 0; i < n_dims; i++)
        put_u64(w, ne[i]);
    put_u32(w, type);
    put_u64(w, offset);
}

static void pad_to(builder *w, size_t alignment)
{
    while (w->n % alignment)
        put_u8(w, 0);
}

static void zeros(builder *w, size_t n)
{
    while (n--)
        put_u8(w, 0);
}

/* ==== A sink into a buffer ==== */

typedef struct text {
    ggp_sink sink;
    char buf[8192];
    size_t len;
} text;

static void append(ggp_sink *sink, const char *bytes, size_t len)
{
    text *t = (text *)sink;
    if (t->len + len >= sizeof t->buf)
        abort();
    memcpy(t->buf + t->len, bytes, len);
    t->len += len;
    t->buf[t->len] = '\0';
}

static void text_init(text *t)
{
    t->sink.write = append;
    t->len = 0;
    t->buf[0] = '\0';
}

static ggp_file *open_or_say(const builder *w)
{
    ggp_error err;
    ggp_file *f = ggp_open_mem(w->b, w->n, &err);
    if (!f)
        fprintf(stderr, "open failed at %" PRIu64 ": %s\n", err.offset, err.msg);
    return f;
}

static int warnings_are(const ggp_file *f, const char *want)
{
    text t;
    text_init(&t);
    EXPECT(ggp_render_warnings(f, &t.sink));
    EXPECT_STR(t.buf, want);
    ggp_counting_sink c;
    ggp_counting_sink_init(&c);
    EXPECT(ggp_render_warnings(f, &c.sink));
    EXPECT_EQ(c.total, strlen(want));
    return 1;
}

/* ==== Repeated keys ==== */

static int test_repeated_key_opens(void)
{
    builder w;
    begin(&w, 0, 5);
    const size_t a1 = key(&w, "a", 0);
    put_u8(&w, 1);
    key(&w, "b", 8);
    put_str(&w, "x");
    const size_t a2 = key(&w, "a", 0);
    put_u8(&w, 2);
    key(&w, "c", 4);
    put_u32(&w, 7);
    const size_t b2 = key(&w, "b", 8);
    put_str(&w, "line\none");
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    // Each key once, in file order, first occurrences.
    EXPECT_EQ(ggp_kv_count(f), 3);
    EXPECT_EQ(ggp_kv_count_in_header(f), 5);
    EXPECT(ggp_kv_at(f, 0)->key.len == 1 && ggp_kv_at(f, 0)->key.ptr[0] == 'a');
    EXPECT(ggp_kv_at(f, 1)->key.ptr[0] == 'b');
    EXPECT(ggp_kv_at(f, 2)->key.ptr[0] == 'c');
    EXPECT(ggp_kv_at(f, 3) == NULL);
    const ggp_kv *a = ggp_kv_find(f, "a", 1);
    EXPECT(a == ggp_kv_at(f, 0));
    EXPECT_EQ(a->offset, a1);
    EXPECT_EQ(ggp_value_u64(f, &a->value), 1);
    EXPECT(ggp_kv_find(f, "c", 1) == ggp_kv_at(f, 2));
    // The repeats, in file order.
    EXPECT_EQ(ggp_kv_repeat_count(f), 2);
    const ggp_kv_repeat *r = ggp_kv_repeat_at(f, 0);
    EXPECT_EQ(r->kv.offset, a2);
    EXPECT_EQ(r->first_offset, a1);
    EXPECT_EQ(ggp_value_u64(f, &r->kv.value), 2);
    EXPECT_EQ(ggp_kv_repeat_at(f, 1)->kv.offset, b2);
    EXPECT(ggp_kv_repeat_at(f, 2) == NULL);
    char want[256];
    snprintf(want, sizeof want,
             "offset %zu: key 'a' appears again (first at offset %zu): 2\n"
             "offset %zu: key 'b' appears again (first at offset %zu): line\\none\n",
             a2, a1, b2, a1 + 1 + 8 + 4 + 1);
    EXPECT(warnings_are(f, want));
    ggp_close(f);
    return 1;
}

static int test_repeated_array_key_warns_as_json(void)
{
    builder w;
    begin(&w, 0, 2);
    const size_t first = key(&w, "t", 9);
    put_u32(&w, 8);
    put_u64(&w, 1);
    put_str(&w, "a");
    const size_t again = key(&w, "t", 9);
    put_u32(&w, 8);
    put_u64(&w, 3);
    put_str(&w, "x\"y");
    put_str(&w, "tab\there");
    put_str(&w, "\xff");
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    char want[256];
    snprintf(want, sizeof want,
             "offset %zu: key 't' appears again (first at offset %zu): [\"x\\\"y\",\"tab\\there\",\"\\udcff\"]\n",
             again, first);
    EXPECT(warnings_are(f, want));
    ggp_close(f);
    return 1;
}

static int test_repeated_alignment_first_wins_and_is_checked(void)
{
    builder w;
    begin(&w, 0, 2);
    key(&w, "general.alignment", 4);
    put_u32(&w, 64);
    key(&w, "general.alignment", 4);
    put_u32(&w, 16);
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    EXPECT_EQ(ggp_alignment(f), 64);
    EXPECT_EQ(ggp_kv_count(f), 1);
    ggp_close(f);

    begin(&w, 0, 2);
    key(&w, "general.alignment", 4);
    put_u32(&w, 64);
    const size_t bad = w.n + 8 + 17 + 4;
    key(&w, "general.alignment", 4);
    put_u32(&w, 48);
    ggp_error err;
    f = ggp_open_mem(w.b, w.n, &err);
    EXPECT(f == NULL);
    EXPECT_EQ(err.code, GGP_ERR_ALIGNMENT);
    EXPECT_EQ(err.offset, bad);
    return 1;
}

/* ==== Chat templates ==== */

/* A string key; returns the file offset of its value's bytes. */
static size_t str_key(builder *w, const char *k, const char *v)
{
    key(w, k, 8);
    put_u64(w, strlen(v));
    const size_t at = w->n;
    put_bytes(w, v, strlen(v));
    return at;
}

static int test_chat_template_findings_in_key_order(void)
{
    builder w;
    char want[2048];
    begin(&w, 0, 6);
    const size_t name1 = key(&w, "general.name", 8);
    put_str(&w, "m");
    const size_t t1 = str_key(&w, "tokenizer.chat_template", "{{ x.__class__ }}{{ y['_a\nb'] }}");
    const size_t name2 = key(&w, "general.name", 8);
    put_str(&w, "again");
    const size_t t2_key = w.n;
    const size_t t2 = str_key(&w, "tokenizer.chat_template", "{{ z|attr(n) }}");
    const size_t t3 = str_key(&w, "tokenizer.chat_template.tool_use", "{{ m|map(attribute='a._b') }}");
    str_key(&w, "tokenizer.chat_templates", "{{ not.__audited }}");
    snprintf(want, sizeof want,
             "offset %zu: key 'tokenizer.chat_template' at byte 5 of its value: attribute '__class__' begins with '_'\n"
             "offset %zu: key 'tokenizer.chat_template' at byte 22 of its value: subscript '_a\\nb' begins with '_'\n"
             "offset %zu: key 'general.name' appears again (first at offset %zu): again\n"
             "offset %zu: key 'tokenizer.chat_template' appears again (first at offset %zu): {{ z|attr(n) }}\n"
             "offset %zu: key 'tokenizer.chat_template' at byte 10 of its value: attr filter name is computed: n\n"
             "offset %zu: key 'tokenizer.chat_template.tool_use' at byte 19 of its value: map attribute 'a._b' has a part beginning with '_'\n",
             t1 + 5, t1 + 22, name2, name1, t2_key, t1 - 8 - 4 - 23 - 8, t2 + 10, t3 + 19);
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    EXPECT(warnings_are(f, want));
    ggp_close(f);
    return 1;
}

/* ==== Other warnings ==== */

static int test_no_warnings_for_a_clean_file(void)
{
    builder w;
    begin(&w, 2, 1);
    key(&w, "general.name", 8);
    put_str(&w, "clean");
    const uint64_t ne[] = {8};
    tensor(&w, "a", 1, ne, 0, 0);
    tensor(&w, "b", 1, ne, 0, 64); // a gap is not a finding
    pad_to(&w, 32);
    zeros(&w, 64 + 32);
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    EXPECT(warnings_are(f, ""));
    ggp_close(f);
    return 1;
}

static int test_overlapping_tensors_are_named(void)
{
    builder w;
    begin(&w, 4, 0);
    const uint64_t wide[] = {16}, narrow[] = {8};
    tensor(&w, "wide", 1, wide, 0, 0);      // [0, 64)
    tensor(&w, "inside", 1, narrow, 0, 32); // [32, 64): inside wide
    tensor(&w, "same", 1, wide, 0, 0);      // [0, 64): on top of wide
    tensor(&w, "after", 1, narrow, 0, 64);  // [64, 96): touches, no overlap
    pad_to(&w, 32);
    const size_t data = w.n;
    zeros(&w, 96);
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    char want[512];
    snprintf(want, sizeof want,
             "offset %zu: tensor 'same' data [%zu, %zu) overlaps tensor 'wide' data [%zu, %zu)\n"
             "offset %zu: tensor 'inside' data [%zu, %zu) overlaps tensor 'wide' data [%zu, %zu)\n",
             data, data, data + 64, data, data + 64, data + 32, data + 32, data + 64, data,
             data + 64);
    EXPECT(warnings_are(f, want));
    ggp_close(f);
    return 1;
}

static int test_unknown_type_and_trailing_bytes(void)
{
    builder w;
    const uint64_t ne[] = {8};
    // Trailing bytes past the padding of the last tensor's data.
    begin(&w, 1, 0);
    tensor(&w, "t", 1, ne, 0, 0);
    pad_to(&w, 32);
    const size_t data = w.n;
    zeros(&w, 32 + 5);
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    char want[256];
    snprintf(want, sizeof want, "offset %zu: 5 bytes after the end of the tensor data\n", data + 32);
    EXPECT(warnings_are(f, want));
    ggp_close(f);

    // The padding ggml writes after the last tensor is not a finding.
    begin(&w, 1, 0);
    const uint64_t ten[] = {10};
    tensor(&w, "t", 1, ten, 0, 0);
    pad_to(&w, 32);
    zeros(&w, 64);
    f = open_or_say(&w);
    EXPECT(f != NULL);
    EXPECT(warnings_are(f, ""));
    ggp_close(f);

    // Without tensors: bytes past the padded descriptors.
    begin(&w, 0, 1);
    key(&w, "k", 0);
    put_u8(&w, 1);
    const size_t end = w.n;
    zeros(&w, 40);
    f = open_or_say(&w);
    EXPECT(f != NULL);
    const size_t padded = (end + 31) / 32 * 32;
    snprintf(want, sizeof want, "offset %zu: %zu bytes after the end of the header\n", padded,
             end + 40 - padded);
    EXPECT(warnings_are(f, want));
    ggp_close(f);

    // An unknown type: named by the offset of its type field; what follows
    // it may be its data, so no trailing bytes.
    begin(&w, 1, 0);
    const size_t desc = w.n;
    tensor(&w, "odd", 1, ne, 999, 0);
    pad_to(&w, 32);
    zeros(&w, 100);
    f = open_or_say(&w);
    EXPECT(f != NULL);
    snprintf(want, sizeof want, "offset %zu: tensor 'odd': unknown type 999, its size is unknown\n",
             desc + 8 + 3 + 4 + 8);
    EXPECT(warnings_are(f, want));
    ggp_close(f);
    return 1;
}

/* ==== ik_llama.cpp types ==== */

static int test_ik_llama_types_known_by_size(void)
{
    // iq4_ks (144): blocks of 256 in 136 bytes, 4 bytes of row scale first.
    const ggp_type_info *ti = ggp_type_lookup(144);
    EXPECT(ti != NULL);
    EXPECT_STR(ti->name, "iq4_ks");
    EXPECT_EQ(ti->block_elems, 256);
    EXPECT_EQ(ti->block_bytes, 136);
    EXPECT_EQ(ti->row_meta_bytes, 4);
    EXPECT_EQ(ti->origin, GGP_ORIGIN_IK_LLAMA);
    // ggml's ids win: 39 is ggml's mxfp4, 36 stays withdrawn.
    EXPECT_EQ(ggp_type_lookup(39)->origin, GGP_ORIGIN_GGML);
    EXPECT_STR(ggp_type_lookup(39)->name, "mxfp4");
    EXPECT(ggp_type_lookup(36) == NULL && ggp_type_is_removed(36));
    EXPECT(ggp_type_lookup(142) == NULL); // withdrawn by ik_llama.cpp
    EXPECT(ggp_type_lookup(96) == NULL);
    EXPECT_STR(ggp_type_lookup(230)->name, "bf16_r16");
    EXPECT_STR(ggp_type_lookup(399)->name, "q8_k_r8");
    EXPECT(ggp_type_lookup(400) == NULL);

    builder w;
    begin(&w, 2, 0);
    const uint64_t ne[] = {512, 3}, small[] = {8};
    tensor(&w, "ik", 2, ne, 144, 0);        // 3 rows of 4 + 2 * 136 bytes = 828
    tensor(&w, "next", 1, small, 0, 832);
    pad_to(&w, 32);
    const size_t data = w.n;
    zeros(&w, 832 + 32);
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    const ggp_tensor *t = ggp_tensor_at(f, 0);
    EXPECT_EQ(t->bytes, 828);
    EXPECT(t->data != NULL);
    EXPECT_STR(ggp_tensor_f32_unavailable(f, t), "ik_llama.cpp type, no ggml dequantizer");
    float out[4];
    EXPECT_EQ(ggp_tensor_read_f32(f, t, 0, 4, out), GGP_ERR_UNSUPPORTED);
    EXPECT(warnings_are(f, ""));
    ggp_close(f);

    // Its data past the end of the file is refused, so the size is used.
    begin(&w, 1, 0);
    tensor(&w, "ik", 2, ne, 144, 0);
    const size_t offset_field = w.n - 8;
    pad_to(&w, 32);
    zeros(&w, 827);
    ggp_error err;
    f = ggp_open_mem(w.b, w.n, &err);
    EXPECT(f == NULL);
    EXPECT_EQ(err.code, GGP_ERR_DATA);
    EXPECT_EQ(err.offset, offset_field);
    (void)data;

    // A row that is not whole blocks is refused, as for ggml's types.
    begin(&w, 1, 0);
    const uint64_t ragged[] = {300};
    tensor(&w, "ik", 1, ragged, 144, 0);
    pad_to(&w, 32);
    zeros(&w, 1024);
    f = ggp_open_mem(w.b, w.n, &err);
    EXPECT(f == NULL);
    EXPECT(strstr(err.msg, "iq4_ks block size 256") != NULL);
    return 1;
}

static int test_empty_tensor_of_row_meta_type_has_no_bytes(void)
{
    builder w;
    begin(&w, 1, 0);
    const uint64_t ne[] = {256, 0};
    tensor(&w, "empty", 2, ne, 145, 0);
    pad_to(&w, 32);
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    EXPECT_EQ(ggp_tensor_at(f, 0)->bytes, 0);
    ggp_close(f);
    return 1;
}

/* ==== metadata.json ==== */

static int metadata_json_is(const builder *w, const char *want)
{
    ggp_file *f = open_or_say(w);
    EXPECT(f != NULL);
    text t;
    text_init(&t);
    ggp_render_metadata_json(f, &t.sink);
    ggp_counting_sink c;
    ggp_counting_sink_init(&c);
    ggp_render_metadata_json(f, &c.sink);
    ggp_close(f);
    EXPECT_STR(t.buf, want);
    EXPECT_EQ(c.total, strlen(want));
    return 1;
}

static int test_metadata_json(void)
{
    builder w;
    begin(&w, 0, 0);
    EXPECT(metadata_json_is(&w, "{}\n"));

    begin(&w, 0, 12);
    key(&w, "u64", 10);
    put_u64(&w, UINT64_MAX);
    key(&w, "i64", 11);
    put_u64(&w, (uint64_t)INT64_MIN);
    key(&w, "f32", 6);
    const float tenth = 0.1f;
    put_bytes(&w, &tenth, 4);
    key(&w, "nan", 6);
    const float nan = NAN;
    put_bytes(&w, &nan, 4);
    key(&w, "neg_inf", 12);
    const double neg_inf = -INFINITY;
    put_bytes(&w, &neg_inf, 8);
    key(&w, "big", 12);
    const double big = 1e16;
    put_bytes(&w, &big, 8);
    key(&w, "yes", 7);
    put_u8(&w, 1);
    key(&w, "s", 8);
    put_str(&w, "q\"b\\n\nt\t\x01\x7f\xc3\xa9\xff");
    key(&w, "key \"quoted\"\n", 5);
    put_u32(&w, (uint32_t)-5);
    key(&w, "empty", 9);
    put_u32(&w, 4);
    put_u64(&w, 0);
    key(&w, "nested", 9); // [[1, 2], [], [[true]]]
    put_u32(&w, 9);
    put_u64(&w, 3);
    put_u32(&w, 1);
    put_u64(&w, 2);
    put_u8(&w, 0xff);
    put_u8(&w, 0x80);
    put_u32(&w, 8);
    put_u64(&w, 0);
    put_u32(&w, 9);
    put_u64(&w, 1);
    put_u32(&w, 7);
    put_u64(&w, 1);
    put_u8(&w, 1);
    key(&w, "floats", 9);
    put_u32(&w, 6);
    put_u64(&w, 3);
    const float fs[3] = {INFINITY, -0.0f, 1e-5f};
    put_bytes(&w, fs, sizeof fs);
    EXPECT(metadata_json_is(&w, "{\n"
                                "  \"u64\": 18446744073709551615,\n"
                                "  \"i64\": -9223372036854775808,\n"
                                "  \"f32\": 0.1,\n"
                                "  \"nan\": NaN,\n"
                                "  \"neg_inf\": -Infinity,\n"
                                "  \"big\": 1e+16,\n"
                                "  \"yes\": true,\n"
                                "  \"s\": \"q\\\"b\\\\n\\nt\\t\\u0001\\u007f\xc3\xa9\\udcff\",\n"
                                "  \"key \\\"quoted\\\"\\n\": -5,\n"
                                "  \"empty\": [],\n"
                                "  \"nested\": [[-1,-128],[],[[true]]],\n"
                                "  \"floats\": [Infinity,-0,1e-05]\n"
                                "}\n"));
    return 1;
}

static int test_metadata_json_lists_first_occurrences(void)
{
    builder w;
    begin(&w, 0, 3);
    key(&w, "a", 0);
    put_u8(&w, 1);
    key(&w, "b", 0);
    put_u8(&w, 2);
    key(&w, "a", 0);
    put_u8(&w, 3);
    EXPECT(metadata_json_is(&w, "{\n  \"a\": 1,\n  \"b\": 2\n}\n"));
    return 1;
}

/* ==== tensors.tsv ==== */

static int test_tsv_rows(void)
{
    builder w;
    begin(&w, 3, 0);
    const uint64_t mat[] = {64, 3}, vec[] = {8};
    tensor(&w, "blk.0\tw\n", 2, mat, 2, 0);  // q4_0: 3 rows of 2 blocks of 18 bytes
    tensor(&w, "scalar", 0, NULL, 0, 128);
    tensor(&w, "odd", 1, vec, 1000, 160);
    pad_to(&w, 32);
    const size_t data = w.n;
    zeros(&w, 192);
    ggp_file *f = open_or_say(&w);
    EXPECT(f != NULL);
    text t;
    text_init(&t);
    ggp_render_tsv_header(&t.sink);
    for (uint64_t i = 0; i < ggp_tensor_count(f); i++)
        ggp_render_tsv_row(ggp_tensor_at(f, i), 2, &t.sink);
    char want[512];
    snprintf(want, sizeof want,
             "name\ttype\tshape\telements\tbytes\toffset\tshard\n"
             "blk.0\\tw\\n\tq4_0\t64,3\t192\t108\t%zu\t2\n"
             "scalar\tf32\t\t1\t4\t%zu\t2\n"
             "odd\tunknown(1000)\t8\t8\tunknown\t%zu\t2\n",
             data, data + 128, data + 160);
    EXPECT_STR(t.buf, want);
    ggp_close(f);
    return 1;
}

/* ==== f32.npy header ==== */

static int npy_header_is(uint32_t n_dims, const int64_t *ne, const char *dict)
{
    ggp_tensor t = {0};
    t.n_dims = n_dims;
    for (int i = 0; i < GGP_MAX_DIMS; i++)
        t.ne[i] = i < (int)n_dims ? ne[i] : 1;
    char buf[GGP_NPY_HEADER_MAX];
    const size_t n = ggp_npy_header(&t, buf);
    EXPECT(n % 64 == 0 && n >= 64 && n <= GGP_NPY_HEADER_MAX);
    EXPECT(memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
    EXPECT_EQ((unsigned char)buf[8] | (unsigned char)buf[9] << 8, n - 10);
    EXPECT(memcmp(buf + 10, dict, strlen(dict)) == 0);
    for (size_t i = 10 + strlen(dict); i < n - 1; i++)
        EXPECT(buf[i] == ' ');
    EXPECT(buf[n - 1] == '\n');
    return 1;
}

static int test_npy_header(void)
{
    const int64_t ne2[] = {4096, 11}, ne1[] = {7}, ne4[] = {2, 3, 5, 7};
    EXPECT(npy_header_is(0, NULL, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }"));
    EXPECT(npy_header_is(1, ne1, "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }"));
    EXPECT(npy_header_is(2, ne2, "{'descr': '<f4', 'fortran_order': False, 'shape': (11, 4096), }"));
    EXPECT(npy_header_is(4, ne4, "{'descr': '<f4', 'fortran_order': False, 'shape': (7, 5, 3, 2), }"));
    const int64_t huge[] = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
    EXPECT(npy_header_is(4, huge, "{'descr': '<f4', 'fortran_order': False, 'shape': "
                                  "(9223372036854775807, 9223372036854775807, 9223372036854775807, "
                                  "9223372036854775807), }"));
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_repeated_key_opens();
    ok &= test_repeated_array_key_warns_as_json();
    ok &= test_repeated_alignment_first_wins_and_is_checked();
    ok &= test_no_warnings_for_a_clean_file();
    ok &= test_chat_template_findings_in_key_order();
    ok &= test_overlapping_tensors_are_named();
    ok &= test_unknown_type_and_trailing_bytes();
    ok &= test_ik_llama_types_known_by_size();
    ok &= test_empty_tensor_of_row_meta_type_has_no_bytes();
    ok &= test_metadata_json();
    ok &= test_metadata_json_lists_first_occurrences();
    ok &= test_tsv_rows();
    ok &= test_npy_header();
    printf("views: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
