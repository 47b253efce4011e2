/*
 * The text forms of metadata values: shortest round-trip floats, escaped
 * strings in arrays, nested arrays as JSON lines, and sizes that equal the
 * rendered length.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"

/* ==== A tiny GGUF writer for one key ==== */

typedef struct builder {
    unsigned char b[4096];
    size_t n;
} builder;

static void put_bytes(builder *w, const void *p, size_t n)
{
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void put_u32(builder *w, uint32_t v) { put_bytes(w, &v, 4); }
static void put_u64(builder *w, uint64_t v) { put_bytes(w, &v, 8); }

static void put_str(builder *w, const char *s, size_t n)
{
    put_u64(w, n);
    put_bytes(w, s, n);
}

/* Starts a v3 file with one key whose type and value the caller writes. */
static void begin(builder *w, uint32_t type)
{
    w->n = 0;
    put_bytes(w, "GGUF", 4);
    put_u32(w, 3);
    put_u64(w, 0);
    put_u64(w, 1);
    put_str(w, "k", 1);
    put_u32(w, type);
}

typedef struct text {
    ggp_sink sink;
    char buf[2048];
    size_t len;
} text;

static void append(ggp_sink *sink, const char *bytes, size_t len)
{
    text *t = (text *)sink;
    memcpy(t->buf + t->len, bytes, len);
    t->len += len;
    t->buf[t->len] = '\0';
}

/* Renders the one key of w and checks it against want and its size. */
static int renders_as(const builder *w, const char *want)
{
    ggp_error err;
    ggp_file *f = ggp_open_mem(w->b, w->n, &err);
    if (!f)
        fprintf(stderr, "open failed: %s\n", err.msg);
    EXPECT(f != NULL);
    text t = {{append}, "", 0};
    ggp_render(f, &ggp_kv_at(f, 0)->value, &t.sink);
    const uint64_t size = ggp_render_size(f, &ggp_kv_at(f, 0)->value);
    ggp_close(f);
    EXPECT_STR(t.buf, want);
    EXPECT_EQ(size, strlen(want));
    return 1;
}

/* ==== Floats ==== */

static int f32_is(float x, const char *want)
{
    char buf[48];
    ggp_format_f32(x, buf);
    EXPECT_STR(buf, want);
    EXPECT(isnan(x) || strtof(buf, NULL) == x);
    return 1;
}

static int f64_is(double x, const char *want)
{
    char buf[48];
    ggp_format_f64(x, buf);
    EXPECT_STR(buf, want);
    return 1;
}

static int test_f32_shortest_round_trip(void)
{
    return f32_is(1e-05f, "1e-05") && f32_is(0.1f, "0.1") && f32_is(10000.0f, "10000") &&
           f32_is(1.0f, "1") && f32_is(-2.5f, "-2.5") && f32_is(0.0001f, "0.0001") &&
           f32_is(16777216.0f, "16777216") && f32_is(1e16f, "1e+16") &&
           f32_is(3.4028235e38f, "3.4028235e+38") && f32_is(1e-45f, "1e-45") &&
           f32_is(500000.0f, "500000") && f32_is(-0.0f, "-0") && f32_is(0.0f, "0") &&
           f32_is(NAN, "nan") && f32_is(-NAN, "nan") && f32_is(INFINITY, "inf") &&
           f32_is(-INFINITY, "-inf") && f32_is(1.17549435e-38f, "1.1754944e-38");
}

static int test_f64_shortest_round_trip(void)
{
    return f64_is(0.1, "0.1") && f64_is(1e-300, "1e-300") && f64_is(5e-324, "5e-324") &&
           f64_is(1.7976931348623157e308, "1.7976931348623157e+308") &&
           f64_is(123456789012345680.0, "1.2345678901234568e+17") &&
           f64_is(1e15, "1000000000000000") && f64_is(0.30000000000000004, "0.30000000000000004");
}

/* The fewest digits found by trying every count in turn, as the text is
 * defined: the search render.c does must give the same. */
static void shortest_by_every_count(double x, bool single, char *sci)
{
    const int max_digits = single ? 9 : 17;
    for (int p = 1;; p++) {
        snprintf(sci, 48, "%.*e", p - 1, x);
        const bool back = single ? strtof(sci, NULL) == (float)x : strtod(sci, NULL) == x;
        if (p == max_digits || back)
            return;
    }
}

/* The significant digits of a number's text: no sign, point, exponent,
 * or leading and trailing zeros. */
static void digits_of(const char *text, char *out)
{
    size_t n = 0;
    for (const char *s = text; *s && *s != 'e'; s++) {
        if (*s >= '0' && *s <= '9' && (n > 0 || *s != '0'))
            out[n++] = *s;
    }
    while (n > 0 && out[n - 1] == '0')
        n--;
    out[n] = '\0';
}

static int test_shortest_is_the_fewest_digits(void)
{
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 150000; i++) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        const bool single = i % 2 == 0;
        double x;
        if (single) {
            uint32_t bits = (uint32_t)state;
            if (i % 8 == 0)
                bits &= 0xff800000u; // powers of two too
            float f;
            memcpy(&f, &bits, sizeof f);
            x = f;
        } else {
            uint64_t bits = state;
            if (i % 8 == 1)
                bits &= UINT64_C(0xfff0000000000000);
            memcpy(&x, &bits, sizeof x);
        }
        if (isnan(x) || isinf(x))
            continue;
        char got[48], ref[48], want[48], have[48];
        if (single)
            ggp_format_f32((float)x, got);
        else
            ggp_format_f64(x, got);
        shortest_by_every_count(x, single, ref);
        digits_of(ref, want);
        digits_of(got, have);
        if (strcmp(want, have) != 0)
            fprintf(stderr, "%s %a: %s, every count gives %s\n", single ? "f32" : "f64", x, got, ref);
        EXPECT_STR(have, want);
        EXPECT(single ? strtof(got, NULL) == (float)x : strtod(got, NULL) == x);
    }
    return 1;
}

/* ==== Values ==== */

static int test_scalars_end_in_newline(void)
{
    builder w;
    begin(&w, 4); // u32
    put_u32(&w, 4294967295u);
    if (!renders_as(&w, "4294967295\n"))
        return 0;
    begin(&w, 11); // i64
    put_u64(&w, (uint64_t)INT64_MIN);
    if (!renders_as(&w, "-9223372036854775808\n"))
        return 0;
    begin(&w, 7); // bool
    put_bytes(&w, "\1", 1);
    if (!renders_as(&w, "true\n"))
        return 0;
    begin(&w, 8); // a string is its exact bytes
    put_str(&w, "a\nb\\\xff", 5);
    return renders_as(&w, "a\nb\\\xff\n");
}

static int test_string_array_escapes_one_line_per_element(void)
{
    builder w;
    begin(&w, 9);
    put_u32(&w, 8);
    put_u64(&w, 5);
    put_str(&w, "plain \xc3\xa9", 8);   // valid UTF-8 stays as it is
    put_str(&w, "a\\b\nc\rd\te", 9);
    put_str(&w, "\x01\x7f", 2);
    put_str(&w, "\xff\xc3", 2);         // invalid UTF-8, and a cut sequence
    put_str(&w, "", 0);
    return renders_as(&w, "plain \xc3\xa9\na\\\\b\\nc\\rd\\te\n\\x01\\x7f\n\\xff\\xc3\n\n");
}

static int test_empty_array_is_empty_file(void)
{
    builder w;
    begin(&w, 9);
    put_u32(&w, 4);
    put_u64(&w, 0);
    return renders_as(&w, "");
}

static int test_number_arrays(void)
{
    builder w;
    begin(&w, 9);
    put_u32(&w, 6); // f32
    put_u64(&w, 3);
    const float v[3] = {0.1f, -INFINITY, 1e-05f};
    put_bytes(&w, v, sizeof v);
    if (!renders_as(&w, "0.1\n-inf\n1e-05\n"))
        return 0;
    begin(&w, 9);
    put_u32(&w, 1); // i8
    put_u64(&w, 2);
    put_bytes(&w, "\x80\x7f", 2);
    return renders_as(&w, "-128\n127\n");
}

static int test_nested_arrays_are_json_lines(void)
{
    builder w;
    begin(&w, 9);
    put_u32(&w, 9); // array of arrays
    put_u64(&w, 3);
    put_u32(&w, 5); // [1, -2]
    put_u64(&w, 2);
    put_u32(&w, 1);
    put_u32(&w, (uint32_t)-2);
    put_u32(&w, 8); // ["q\"", "\xff\n"]
    put_u64(&w, 2);
    put_str(&w, "q\"", 2);
    put_str(&w, "\xff\n", 2);
    put_u32(&w, 9); // [[nan], []]
    put_u64(&w, 2);
    put_u32(&w, 6);
    put_u64(&w, 1);
    const float nan = NAN;
    put_bytes(&w, &nan, 4);
    put_u32(&w, 7);
    put_u64(&w, 0);
    return renders_as(&w, "[1,-2]\n[\"q\\\"\",\"\\udcff\\n\"]\n[[NaN],[]]\n");
}

int main(void)
{
    int ok = 1;
    ok &= test_f32_shortest_round_trip();
    ok &= test_f64_shortest_round_trip();
    ok &= test_shortest_is_the_fewest_digits();
    ok &= test_scalars_end_in_newline();
    ok &= test_string_array_escapes_one_line_per_element();
    ok &= test_empty_array_is_empty_file();
    ok &= test_number_arrays();
    ok &= test_nested_arrays_are_json_lines();
    return ok ? 0 : 1;
}
