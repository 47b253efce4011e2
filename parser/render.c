/*
 * The text of metadata/KEY: scalars as decimal text, strings as their
 * bytes, arrays one element per line (strings escaped so one line is one
 * element, inner arrays as one line of JSON). Then the same values as JSON
 * (metadata.json) and on one line (warnings). The same walk feeds either a
 * buffer or a counter, so sizes are exact without keeping the text.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggp_i.h"

/* ==== Shortest round-trip floats ==== */

/* Lays out the decimal digits and exponent the way Python's repr does
 * (positional for 1e-4 <= |x| < 1e16, else d.ddde±XX), without its ".0". */
static size_t layout_decimal(bool negative, const char *digits, size_t n, int exp, char *buf)
{
    size_t o = 0;
    if (negative)
        buf[o++] = '-';
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            buf[o++] = '0', buf[o++] = '.';
            for (int i = -1; i > exp; i--)
                buf[o++] = '0';
            memcpy(buf + o, digits, n), o += n;
        } else {
            for (int i = 0; i <= exp; i++)
                buf[o++] = (size_t)i < n ? digits[i] : '0';
            if (n > (size_t)exp + 1) {
                buf[o++] = '.';
                memcpy(buf + o, digits + exp + 1, n - (size_t)exp - 1), o += n - (size_t)exp - 1;
            }
        }
    } else {
        buf[o++] = digits[0];
        if (n > 1) {
            buf[o++] = '.';
            memcpy(buf + o, digits + 1, n - 1), o += n - 1;
        }
        o += (size_t)sprintf(buf + o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
    buf[o] = '\0';
    return o;
}

static bool reads_back(const char *text, double x, bool single)
{
    if (single) {
        const float want = (float)x;
        const float got = strtof(text, NULL);
        return memcmp(&want, &got, sizeof want) == 0;
    }
    const double got = strtod(text, NULL);
    return memcmp(&x, &got, sizeof x) == 0;
}

/* Whether x's significand is a power of two (its fraction bits are 0). */
static bool power_of_two(double x, bool single)
{
    if (single) {
        const float f = (float)x;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        return (bits & 0x7fffffu) == 0;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits & UINT64_C(0xfffffffffffff)) == 0;
}

/* Finds the fewest significant digits that read back to x; the C library's
 * correctly rounded printf and strtod do the arithmetic. Reading back is
 * monotone in the digits where x's neighbours are equally far on both
 * sides (p + 1 digits round to a decimal at least as near x as p digits
 * do, and the same distance reads back on either side): there a binary
 * search finds the fewest, in 4 or 5 trials rather than up to 9 or 17.
 * At a power of two the neighbour below is nearer, a nearer decimal on
 * that side may not read back, and every count is tried in turn. */
static size_t format_shortest(double x, bool single, char *buf)
{
    if (isnan(x))
        return (size_t)sprintf(buf, "nan");
    if (isinf(x))
        return (size_t)sprintf(buf, x < 0 ? "-inf" : "inf");
    const int max_digits = single ? 9 : 17;
    char sci[48];
    if (power_of_two(x, single)) {
        for (int p = 1;; p++) {
            snprintf(sci, sizeof sci, "%.*e", p - 1, x);
            if (p == max_digits || reads_back(sci, x, single))
                break;
        }
    } else {
        int lo = 1, hi = max_digits; // max_digits always reads back
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            snprintf(sci, sizeof sci, "%.*e", mid - 1, x);
            if (reads_back(sci, x, single))
                hi = mid;
            else
                lo = mid + 1;
        }
        snprintf(sci, sizeof sci, "%.*e", lo - 1, x);
    }
    // sci is "[-]d[.ddd]e±XX": collect the digits, drop trailing zeros.
    const char *s = sci;
    const bool negative = *s == '-';
    if (negative)
        s++;
    char digits[24];
    size_t n = 0;
    for (; *s != 'e'; s++) {
        if (*s != '.')
            digits[n++] = *s;
    }
    const int exp = atoi(s + 1);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    return layout_decimal(negative, digits, n, exp, buf);
}

size_t ggp_format_f32(float x, char *buf)
{
    return format_shortest(x, true, buf);
}

size_t ggp_format_f64(double x, char *buf)
{
    return format_shortest(x, false, buf);
}

/* ==== Scalars ==== */

static void put(ggp_sink *sink, const char *s, size_t n)
{
    if (n)
        sink->write(sink, s, n);
}

/* Numbers and bools; json switches nan/inf to JSON's NaN/Infinity. */
static void put_number(const ggp_file *f, const ggp_value *v, bool json, ggp_sink *sink)
{
    char buf[48];
    size_t n;
    switch (v->type) {
    case GGP_V_U8: case GGP_V_U16: case GGP_V_U32: case GGP_V_U64:
        n = (size_t)sprintf(buf, "%llu", (unsigned long long)ggp_value_u64(f, v));
        break;
    case GGP_V_I8: case GGP_V_I16: case GGP_V_I32: case GGP_V_I64:
        n = (size_t)sprintf(buf, "%lld", (long long)ggp_value_i64(f, v));
        break;
    case GGP_V_BOOL:
        n = (size_t)sprintf(buf, "%s", v->data[0] ? "true" : "false");
        break;
    default: {
        const double x = ggp_value_f64(f, v);
        if (json && isnan(x))
            n = (size_t)sprintf(buf, "NaN");
        else if (json && isinf(x))
            n = (size_t)sprintf(buf, x < 0 ? "-Infinity" : "Infinity");
        else
            n = v->type == GGP_V_F32 ? ggp_format_f32((float)x, buf) : ggp_format_f64(x, buf);
    }
    }
    put(sink, buf, n);
}

/* ==== Escaped strings ==== */

void ggp_render_line_escaped(ggp_str s, ggp_sink *sink)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)s.ptr;
    uint64_t run = 0; // start of the pending run of bytes kept as they are
    for (uint64_t i = 0; i < s.len;) {
        const uint8_t c = p[i];
        size_t seq = c < 0x80 ? 1 : ggp_utf8_seq_len(p + i, s.len - i < 4 ? (size_t)(s.len - i) : 4);
        const bool keep = seq > 1 || (seq == 1 && c >= 0x20 && c != 0x7f && c != '\\');
        if (keep) {
            i += seq;
            continue;
        }
        put(sink, s.ptr + run, (size_t)(i - run));
        char esc[4] = {'\\', 0, 0, 0};
        size_t n = 2;
        switch (c) {
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default: esc[1] = 'x', esc[2] = hex[c >> 4], esc[3] = hex[c & 15], n = 4;
        }
        put(sink, esc, n);
        i += 1;
        run = i;
    }
    put(sink, s.ptr + run, (size_t)(s.len - run));
}

/* A JSON string; bytes that are not UTF-8 become lone surrogates \udcHH,
 * which Python's json + surrogateescape turns back into the bytes. */
static void put_json_string(ggp_str s, ggp_sink *sink);

void ggp_render_json_string(ggp_str s, ggp_sink *sink)
{
    put_json_string(s, sink);
}

bool ggp_utf8_valid(ggp_str s)
{
    const uint8_t *p = (const uint8_t *)s.ptr;
    for (uint64_t i = 0; i < s.len;) {
        const size_t seq = p[i] < 0x80 ? 1 : ggp_utf8_seq_len(p + i, s.len - i < 4 ? (size_t)(s.len - i) : 4);
        if (seq == 0)
            return false;
        i += seq;
    }
    return true;
}

static void put_json_string(ggp_str s, ggp_sink *sink)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)s.ptr;
    put(sink, "\"", 1);
    uint64_t run = 0;
    for (uint64_t i = 0; i < s.len;) {
        const uint8_t c = p[i];
        size_t seq = c < 0x80 ? 1 : ggp_utf8_seq_len(p + i, s.len - i < 4 ? (size_t)(s.len - i) : 4);
        const bool keep = seq > 1 || (seq == 1 && c >= 0x20 && c != 0x7f && c != '\\' && c != '"');
        if (keep) {
            i += seq;
            continue;
        }
        put(sink, s.ptr + run, (size_t)(i - run));
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        size_t n = 2;
        switch (c) {
        case '\\': esc[1] = '\\'; break;
        case '"': esc[1] = '"'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            esc[1] = 'u', esc[2] = seq ? '0' : 'd', esc[3] = seq ? '0' : 'c';
            esc[4] = hex[c >> 4], esc[5] = hex[c & 15], n = 6;
        }
        put(sink, esc, n);
        i += 1;
        run = i;
    }
    put(sink, s.ptr + run, (size_t)(s.len - run));
    put(sink, "\"", 1);
}

/* ==== Arrays ==== */

/* The elements of an array, separated by sep: inner arrays as JSON, strings
 * and numbers as a JSON value (json) or as one escaped line. Nesting is at
 * most GGP_MAX_ARRAY_DEPTH, checked at open, so the recursion through
 * inner arrays is bounded. */
static void put_elements(const ggp_file *f, const ggp_value *array, bool json, const char *sep,
                         ggp_sink *sink)
{
    ggp_array_iter it;
    ggp_value e;
    ggp_array_iter_init(&it, f, array);
    for (bool first = true; ggp_array_next(&it, &e); first = false) {
        if (!first)
            put(sink, sep, 1);
        if (e.type == GGP_V_ARRAY) {
            put(sink, "[", 1);
            put_elements(f, &e, true, ",", sink);
            put(sink, "]", 1);
        } else if (e.type == GGP_V_STRING) {
            if (json)
                put_json_string(ggp_value_str(f, &e), sink);
            else
                ggp_render_line_escaped(ggp_value_str(f, &e), sink);
        } else {
            put_number(f, &e, json, sink);
        }
    }
}

void ggp_render(const ggp_file *f, const ggp_value *v, ggp_sink *sink)
{
    if (v->type == GGP_V_STRING) {
        ggp_str s = ggp_value_str(f, v);
        put(sink, s.ptr, (size_t)s.len);
    } else if (v->type != GGP_V_ARRAY) {
        put_number(f, v, false, sink);
    } else if (v->count == 0) {
        return; // an empty array is an empty file
    } else {
        put_elements(f, v, false, "\n", sink);
    }
    put(sink, "\n", 1);
}

/* ==== One-line and JSON forms ==== */

void ggp_render_one_line(const ggp_file *f, const ggp_value *v, ggp_sink *sink)
{
    if (v->type == GGP_V_STRING) {
        ggp_render_line_escaped(ggp_value_str(f, v), sink);
    } else if (v->type == GGP_V_ARRAY) {
        put(sink, "[", 1);
        put_elements(f, v, true, ",", sink);
        put(sink, "]", 1);
    } else {
        put_number(f, v, false, sink);
    }
}

void ggp_render_json(const ggp_file *f, const ggp_value *v, ggp_sink *sink)
{
    if (v->type == GGP_V_STRING) {
        put_json_string(ggp_value_str(f, v), sink);
    } else if (v->type == GGP_V_ARRAY) {
        put(sink, "[", 1);
        put_elements(f, v, true, ",", sink);
        put(sink, "]", 1);
    } else {
        put_number(f, v, true, sink);
    }
}

void ggp_render_metadata_json(const ggp_file *f, ggp_sink *sink)
{
    const uint64_t n = ggp_kv_count(f);
    if (n == 0) {
        put(sink, "{}\n", 3);
        return;
    }
    put(sink, "{\n", 2);
    for (uint64_t i = 0; i < n; i++) {
        const ggp_kv *kv = ggp_kv_at(f, i);
        put(sink, "  ", 2);
        put_json_string(kv->key, sink);
        put(sink, ": ", 2);
        ggp_render_json(f, &kv->value, sink);
        put(sink, i + 1 < n ? ",\n" : "\n", i + 1 < n ? 2 : 1);
    }
    put(sink, "}\n", 2);
}

/* ==== Sizes ==== */

static void count_bytes(ggp_sink *sink, const char *bytes, size_t len)
{
    (void)bytes;
    ((ggp_counting_sink *)sink)->total += len;
}

void ggp_counting_sink_init(ggp_counting_sink *counter)
{
    *counter = (ggp_counting_sink){{count_bytes}, 0};
}

void ggp_sink_printf(ggp_sink *sink, const char *fmt, ...)
{
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        sink->write(sink, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

uint64_t ggp_render_size(const ggp_file *f, const ggp_value *v)
{
    // Scalars and strings need no walk.
    if (v->type == GGP_V_STRING)
        return v->size + 1;
    ggp_counting_sink c;
    ggp_counting_sink_init(&c);
    ggp_render(f, v, &c.sink);
    return c.total;
}
