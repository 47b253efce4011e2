/*
 * Reading text back into values (ggp_parse_text): every type, the limits
 * of each integer type, the float forms render.c writes, escaped strings in
 * arrays, nested arrays as JSON lines, version 1 and big-endian encodings,
 * and refusals that name the line and the byte. With files as arguments,
 * every key of every file is rendered, parsed back and compared with its
 * bytes in the file.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"

#define NO_LIMIT ((size_t)1 << 30)

/* Parses text as type and checks the encoding against want[0, want_len). */
static int parses_to(const char *text, size_t len, ggp_value_type type, uint32_t version,
                     ggp_byte_order order, const void *want, size_t want_len)
{
    ggp_bytes out = {0};
    ggp_error err;
    const ggp_err code = ggp_parse_text(text, len, type, version, order, NO_LIMIT, &out, &err);
    if (code != GGP_OK)
        fprintf(stderr, "'%.*s': %s\n", (int)len, text, err.msg);
    EXPECT_EQ(code, GGP_OK);
    const int same = out.len == want_len && memcmp(out.data, want, want_len) == 0;
    if (!same) {
        fprintf(stderr, "'%.*s' gave", (int)len, text);
        for (size_t i = 0; i < out.len; i++)
            fprintf(stderr, " %02x", out.data[i]);
        fprintf(stderr, "\n");
    }
    free(out.data);
    EXPECT(same);
    return 1;
}

static int v3(const char *text, ggp_value_type type, const void *want, size_t want_len)
{
    return parses_to(text, strlen(text), type, 3, GGP_LITTLE, want, want_len);
}

/* Parsing fails with code, at offset, with a message containing phrase. */
static int refuses(const char *text, ggp_value_type type, ggp_err code, uint64_t offset, const char *phrase)
{
    ggp_bytes out = {0};
    ggp_error err;
    EXPECT_EQ(ggp_parse_text(text, strlen(text), type, 3, GGP_LITTLE, NO_LIMIT, &out, &err), code);
    EXPECT_EQ(err.code, code);
    EXPECT_EQ(out.len, 0);
    free(out.data);
    if (!strstr(err.msg, phrase))
        fprintf(stderr, "'%s': message '%s' lacks '%s'\n", text, err.msg, phrase);
    EXPECT(strstr(err.msg, phrase) != NULL);
    EXPECT_EQ(err.offset, offset);
    return 1;
}

static const ggp_value_type U8 = {0, GGP_V_U8}, I8 = {0, GGP_V_I8}, U16 = {0, GGP_V_U16},
                            U32 = {0, GGP_V_U32}, I32 = {0, GGP_V_I32}, U64 = {0, GGP_V_U64},
                            I64 = {0, GGP_V_I64}, F32 = {0, GGP_V_F32}, F64 = {0, GGP_V_F64},
                            BOOL = {0, GGP_V_BOOL}, STR = {0, GGP_V_STRING};

/* ==== Scalars ==== */

static int test_integers_and_their_limits(void)
{
    return v3("255\n", U8, "\xff", 1) && v3("0", U8, "\0", 1) && v3("-128\n", I8, "\x80", 1) &&
           v3("65535\n", U16, "\xff\xff", 2) && v3("4294967295\n", U32, "\xff\xff\xff\xff", 4) &&
           v3("-2147483648\n", I32, "\0\0\0\x80", 4) &&
           v3("18446744073709551615\n", U64, "\xff\xff\xff\xff\xff\xff\xff\xff", 8) &&
           v3("-9223372036854775808\n", I64, "\0\0\0\0\0\0\0\x80", 8) && v3("007\n", U8, "\x07", 1) &&
           refuses("300\n", U8, GGP_ERR_TEXT, 0, "'300' does not fit in u8 (0 to 255)") &&
           refuses("5000000000\n", U32, GGP_ERR_TEXT, 0, "does not fit in u32") &&
           refuses("-1\n", U8, GGP_ERR_TEXT, 0, "does not fit") &&
           refuses("128", I8, GGP_ERR_TEXT, 0, "does not fit in i8") &&
           refuses("18446744073709551616", U64, GGP_ERR_TEXT, 0, "does not fit") &&
           refuses("99999999999999999999999", I64, GGP_ERR_TEXT, 0, "does not fit") &&
           refuses("1.5\n", U32, GGP_ERR_TEXT, 0, "is not a u32") &&
           refuses(" 1\n", U32, GGP_ERR_TEXT, 0, "is not a u32") &&
           refuses("\n", U32, GGP_ERR_TEXT, 0, "is not a u32") &&
           refuses("1\n2\n", U32, GGP_ERR_TEXT, 1, "a u32 is one line") &&
           refuses("0x10", U32, GGP_ERR_TEXT, 0, "is not a u32");
}

static int f32_bits(const char *text, uint32_t bits)
{
    return v3(text, F32, &bits, 4);
}

static int f64_bits(const char *text, uint64_t bits)
{
    return v3(text, F64, &bits, 8);
}

static int test_floats_in_every_rendered_form(void)
{
    return f32_bits("0.1\n", 0x3dcccccd) && f32_bits("1e-05\n", 0x3727c5ac) && f32_bits("10000", 0x461c4000) &&
           f32_bits("-0\n", 0x80000000) && f32_bits("nan\n", 0x7fc00000) && f32_bits("NaN", 0x7fc00000) &&
           f32_bits("inf\n", 0x7f800000) && f32_bits("-inf\n", 0xff800000) &&
           f32_bits("Infinity", 0x7f800000) && f32_bits("-Infinity", 0xff800000) &&
           f32_bits("1e-45\n", 0x00000001) && f32_bits("3.4028235e+38\n", 0x7f7fffff) &&
           f32_bits("1e-50\n", 0) && f32_bits(".5", 0x3f000000) && f32_bits("2.", 0x40000000) &&
           f64_bits("0.1\n", 0x3fb999999999999a) && f64_bits("5e-324\n", 1) &&
           f64_bits("1.7976931348623157e+308\n", 0x7fefffffffffffff) &&
           f64_bits("1e39\n", 0x48078287f49c4a1d) &&
           refuses("1e39\n", F32, GGP_ERR_TEXT, 0, "does not fit in f32") &&
           refuses("1e309\n", F64, GGP_ERR_TEXT, 0, "does not fit in f64") &&
           refuses("0x1p3\n", F64, GGP_ERR_TEXT, 0, "is not a f64") &&
           refuses("infinity\n", F32, GGP_ERR_TEXT, 0, "is not a f32") &&
           refuses("nan(1)\n", F32, GGP_ERR_TEXT, 0, "is not a f32") &&
           refuses("1e\n", F32, GGP_ERR_TEXT, 0, "is not a f32") && refuses(".\n", F32, GGP_ERR_TEXT, 0, "not a f32");
}

static int test_bools_and_strings(void)
{
    return v3("true\n", BOOL, "\1", 1) && v3("false", BOOL, "\0", 1) &&
           refuses("1\n", BOOL, GGP_ERR_TEXT, 0, "is not a bool") &&
           refuses("True\n", BOOL, GGP_ERR_TEXT, 0, "is not a bool") &&
           v3("llama\n", STR, "\5\0\0\0\0\0\0\0llama", 13) && v3("", STR, "\0\0\0\0\0\0\0\0", 8) &&
           v3("\n", STR, "\0\0\0\0\0\0\0\0", 8) && v3("a\n\n", STR, "\2\0\0\0\0\0\0\0a\n", 10) &&
           v3("no newline", STR, "\12\0\0\0\0\0\0\0no newline", 18) &&
           parses_to("a\0\xff\\n\n", 6, STR, 3, GGP_LITTLE, "\5\0\0\0\0\0\0\0a\0\xff\\n", 13);
}

/* ==== Arrays ==== */

static int test_arrays_one_element_per_line(void)
{
    const ggp_value_type u8s = {1, GGP_V_U8}, strs = {1, GGP_V_STRING}, f32s = {1, GGP_V_F32};
    const float f[3] = {0.1f, -INFINITY, 1e-05f};
    unsigned char want[4 + 8 + 12];
    memcpy(want, "\6\0\0\0\3\0\0\0\0\0\0\0", 12);
    memcpy(want + 12, f, 12);
    return v3("", u8s, "\0\0\0\0\0\0\0\0\0\0\0\0", 12) &&
           v3("1\n2\n", u8s, "\0\0\0\0\2\0\0\0\0\0\0\0\1\2", 14) &&
           v3("1\n2", u8s, "\0\0\0\0\2\0\0\0\0\0\0\0\1\2", 14) && v3("0.1\n-inf\n1e-05\n", f32s, want, sizeof want) &&
           v3("\n", strs, "\10\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20) &&
           v3("a\\\\b\\nc\\rd\\te\n\\x01\\x7F\n", strs,
              "\10\0\0\0\2\0\0\0\0\0\0\0"
              "\11\0\0\0\0\0\0\0a\\b\nc\rd\te"
              "\2\0\0\0\0\0\0\0\1\x7f",
              12 + 17 + 10) &&
           refuses("1\n300\n", u8s, GGP_ERR_TEXT, 2, "line 2: '300' does not fit in u8") &&
           refuses("1\n\n3\n", u8s, GGP_ERR_TEXT, 2, "line 2: '' is not a u8") &&
           refuses("ok\nbad \\q\n", strs, GGP_ERR_TEXT, 7, "line 2: '\\x5cq' is no escape") &&
           refuses("a\\", strs, GGP_ERR_TEXT, 1, "a backslash ends the line") &&
           refuses("\\x4", strs, GGP_ERR_TEXT, 0, "\\x needs two hex digits");
}

static int test_arrays_of_arrays_as_json_lines(void)
{
    const ggp_value_type i32s2 = {2, GGP_V_I32}, strs2 = {2, GGP_V_STRING}, f32s3 = {3, GGP_V_F32};
    const ggp_value_type unknown = {2, GGP_V_COUNT};
    return v3("[1,-2]\n[]\n", i32s2,
              "\11\0\0\0\2\0\0\0\0\0\0\0"
              "\5\0\0\0\2\0\0\0\0\0\0\0\1\0\0\0\xfe\xff\xff\xff"
              "\5\0\0\0\0\0\0\0\0\0\0\0",
              12 + 20 + 12) &&
           v3("[\"q\\\"\", \"\\udcff\\n\\u00e9\\ud83d\\ude00\"]\n", strs2,
              "\11\0\0\0\1\0\0\0\0\0\0\0"
              "\10\0\0\0\2\0\0\0\0\0\0\0"
              "\2\0\0\0\0\0\0\0q\""
              "\10\0\0\0\0\0\0\0\xff\n\xc3\xa9\xf0\x9f\x98\x80",
              12 + 12 + 10 + 16) &&
           v3("[[NaN],[]]\n", f32s3,
              "\11\0\0\0\1\0\0\0\0\0\0\0"
              "\11\0\0\0\2\0\0\0\0\0\0\0"
              "\6\0\0\0\1\0\0\0\0\0\0\0\0\0\xc0\x7f"
              "\6\0\0\0\0\0\0\0\0\0\0\0",
              12 + 12 + 16 + 12) &&
           v3("", unknown, "\11\0\0\0\0\0\0\0\0\0\0\0", 12) &&
           refuses("[1]\n", unknown, GGP_ERR_TEXT, 1, "element type is not known") &&
           refuses("[1,2\n", i32s2, GGP_ERR_TEXT, 4, "',' or ']' was expected") &&
           refuses("[1] x\n", i32s2, GGP_ERR_TEXT, 4, "text after the array") &&
           refuses("[[1]]\n", i32s2, GGP_ERR_TEXT, 1, "'[1' is not a i32") &&
           refuses("1\n", i32s2, GGP_ERR_TEXT, 0, "an array ('[') was expected") &&
           refuses("[\"a\"]\n[\"\\udc12\"]\n", strs2, GGP_ERR_TEXT, 8, "line 2: a low surrogate alone") &&
           refuses("[\"abc]\n", strs2, GGP_ERR_TEXT, 1, "no closing quote") &&
           refuses("[1e99]\n", (ggp_value_type){2, GGP_V_F32}, GGP_ERR_TEXT, 1, "does not fit in f32");
}

static int test_version_1_and_big_endian(void)
{
    const ggp_value_type u16s = {1, GGP_V_U16};
    return parses_to("1\n2\n", 4, u16s, 1, GGP_BIG, "\0\0\0\2\0\0\0\2\0\1\0\2", 12) &&
           parses_to("ab\n", 3, STR, 1, GGP_LITTLE, "\2\0\0\0ab", 6) &&
           parses_to("ab\n", 3, STR, 3, GGP_BIG, "\0\0\0\0\0\0\0\2ab", 10) &&
           parses_to("0.1", 3, F64, 2, GGP_BIG, "\x3f\xb9\x99\x99\x99\x99\x99\x9a", 8);
}

static int test_limit_leaves_the_buffer_as_it_was(void)
{
    ggp_bytes out = {0};
    ggp_error err;
    EXPECT_EQ(ggp_parse_text("x", 1, STR, 3, GGP_LITTLE, 64, &out, &err), GGP_OK);
    EXPECT_EQ(out.len, 9);
    char big[100];
    memset(big, 'a', sizeof big);
    EXPECT_EQ(ggp_parse_text(big, sizeof big, STR, 3, GGP_LITTLE, 64, &out, &err), GGP_ERR_TOO_BIG);
    EXPECT_EQ(out.len, 9);
    EXPECT(strstr(err.msg, "more than 64 bytes") != NULL);
    free(out.data);
    return 1;
}

/* ==== Type names ==== */

static int type_name_is(const char *name, uint32_t depth, ggp_vtype leaf, const char *formatted)
{
    ggp_value_type t;
    EXPECT(ggp_value_type_parse(name, strlen(name), &t));
    EXPECT_EQ(t.depth, depth);
    EXPECT_EQ(t.leaf, leaf);
    char buf[GGP_TYPE_TEXT_SIZE];
    EXPECT_EQ(ggp_value_type_format(t, buf), strlen(formatted));
    EXPECT_STR(buf, formatted);
    return 1;
}

static int test_type_names(void)
{
    ggp_value_type t;
    return type_name_is("u8", 0, GGP_V_U8, "u8") && type_name_is("f64", 0, GGP_V_F64, "f64") &&
           type_name_is("string", 0, GGP_V_STRING, "str") && type_name_is("str", 0, GGP_V_STRING, "str") &&
           type_name_is("bool", 0, GGP_V_BOOL, "bool") &&
           type_name_is("array[string]", 1, GGP_V_STRING, "arr[str]") &&
           type_name_is("arr[arr[i32]]", 2, GGP_V_I32, "arr[arr[i32]]") &&
           type_name_is("array[arr[f32]]", 2, GGP_V_F32, "arr[arr[f32]]") &&
           type_name_is("arr[arr]", 2, GGP_V_COUNT, "arr[arr]") &&
           type_name_is("arr[arr[arr[arr[arr[arr[arr[arr[u8]]]]]]]]", 8, GGP_V_U8,
                        "arr[arr[arr[arr[arr[arr[arr[arr[u8]]]]]]]]") &&
           !ggp_value_type_parse("arr[arr[arr[arr[arr[arr[arr[arr[arr[u8]]]]]]]]]", 46, &t) &&
           !ggp_value_type_parse("arr", 3, &t) && !ggp_value_type_parse("arr[", 4, &t) &&
           !ggp_value_type_parse("arr[]", 5, &t) && !ggp_value_type_parse("u7", 2, &t) &&
           !ggp_value_type_parse("", 0, &t) && !ggp_value_type_parse("arr[u8", 6, &t) &&
           !ggp_value_type_parse("u8]", 3, &t) && !ggp_value_type_parse("U8", 2, &t);
}

/* ==== Every key of real files ==== */

typedef struct text {
    ggp_sink sink;
    char *buf;
    size_t len, cap;
} text;

static void append(ggp_sink *sink, const char *bytes, size_t len)
{
    text *t = (text *)sink;
    if (t->len + len > t->cap) {
        t->cap = (t->len + len) * 2;
        t->buf = realloc(t->buf, t->cap);
    }
    memcpy(t->buf + t->len, bytes, len);
    t->len += len;
}

/* A float NaN whose bits are not the quiet NaN is rendered "nan" and so
 * parsed back as the quiet NaN: such values compare by their text only. */
static int has_odd_nan(const ggp_file *f, const ggp_value *v)
{
    if (v->type == GGP_V_F32 || v->type == GGP_V_F64) {
        const int big = ggp_byte_order_of(f) == GGP_BIG;
        const size_t n = v->type == GGP_V_F32 ? 4 : 8;
        uint8_t quiet[8];
        const uint64_t bits = n == 4 ? 0x7fc00000u : UINT64_C(0x7ff8000000000000);
        for (size_t i = 0; i < n; i++)
            quiet[i] = (uint8_t)(bits >> (8 * (big ? n - 1 - i : i)));
        return isnan(ggp_value_f64(f, v)) && memcmp(v->data, quiet, n) != 0;
    }
    if (v->type != GGP_V_ARRAY)
        return 0;
    ggp_array_iter it;
    ggp_value e;
    ggp_array_iter_init(&it, f, v);
    while (ggp_array_next(&it, &e)) {
        if (has_odd_nan(f, &e))
            return 1;
    }
    return 0;
}

static int round_trip_file(const char *path)
{
    ggp_error err;
    ggp_file *f = ggp_open(path, &err);
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return 0;
    }
    const uint8_t *bytes = ggp_file_bytes(f);
    const uint64_t width = ggp_version(f) == 1 ? 4 : 8;
    int ok = 1;
    for (uint64_t i = 0; i < ggp_kv_count(f) && ok; i++) {
        const ggp_kv *kv = ggp_kv_at(f, i);
        text t = {{append}, NULL, 0, 0};
        ggp_render(f, &kv->value, &t.sink);
        ggp_bytes out = {0};
        const ggp_value_type type = ggp_value_type_of(f, &kv->value);
        const ggp_err code =
            ggp_parse_text(t.buf ? t.buf : "", t.len, type, ggp_version(f), ggp_byte_order_of(f), NO_LIMIT, &out, &err);
        const uint64_t start = kv->offset + width + kv->key.len + 4; // after the type field
        const uint64_t end = kv->value.offset + kv->value.size;
        if (code != GGP_OK) {
            fprintf(stderr, "%s: key %.*s: %s\n", path, (int)kv->key.len, kv->key.ptr, err.msg);
            ok = 0;
        } else if (!has_odd_nan(f, &kv->value) &&
                   (out.len != end - start || memcmp(out.data, bytes + start, out.len) != 0)) {
            fprintf(stderr, "%s: key %.*s: parsed back to other bytes\n", path, (int)kv->key.len, kv->key.ptr);
            ok = 0;
        }
        free(out.data);
        free(t.buf);
    }
    ggp_close(f);
    return ok;
}

int main(int argc, char **argv)
{
    int ok = test_integers_and_their_limits();
    ok &= test_floats_in_every_rendered_form();
    ok &= test_bools_and_strings();
    ok &= test_arrays_one_element_per_line();
    ok &= test_arrays_of_arrays_as_json_lines();
    ok &= test_version_1_and_big_endian();
    ok &= test_limit_leaves_the_buffer_as_it_was();
    ok &= test_type_names();
    for (int i = 1; i < argc; i++)
        ok &= round_trip_file(argv[i]);
    if (!ok)
        return 1;
    printf("ok\n");
    return 0;
}
