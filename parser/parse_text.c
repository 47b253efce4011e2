/*
 * Reading text back into values: the inverse of render.c. What a user
 * writes into metadata/KEY is parsed as a value of the key's type and
 * encoded as the GGUF bytes of that value, in a file's version and byte
 * order:
 *
 *   scalar          its bytes                        u8 ... f64, bool
 *   string          length (u64; u32 in v1), bytes
 *   array           element type (u32), count (u64; u32 in v1), elements,
 *                   an inner array's elements being type, count, elements
 *
 * The text is hostile: it is read through lengths, never past them, nested
 * JSON at most GGP_MAX_ARRAY_DEPTH deep, and every failure names the byte
 * offset in the text, the line and what is wrong.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggp_i.h"

/* ==== Type names ==== */

static const char *const leaf_names[GGP_V_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", NULL, "u64", "i64", "f64",
};

ggp_value_type ggp_value_type_of(const ggp_file *file, const ggp_value *v)
{
    ggp_value_type t = {0, v->type};
    ggp_value cur = *v;
    while (cur.type == GGP_V_ARRAY) {
        t.depth++;
        if (cur.elem_type != GGP_V_ARRAY) {
            t.leaf = cur.elem_type;
            return t;
        }
        ggp_array_iter it;
        ggp_array_iter_init(&it, file, &cur);
        if (!ggp_array_next(&it, &cur)) {
            t.depth++; // an array of arrays, none to look into
            t.leaf = GGP_V_COUNT;
            return t;
        }
    }
    return t;
}

static bool name_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

bool ggp_value_type_parse(const char *name, size_t len, ggp_value_type *out)
{
    uint32_t depth = 0;
    // Peel "arr[" / "array[" and the matching "]" from both ends.
    while (len > 0 && name[len - 1] == ']') {
        size_t open = len >= 5 && memcmp(name, "arr[", 4) == 0 ? 4 : 0;
        if (!open && len >= 7 && memcmp(name, "array[", 6) == 0)
            open = 6;
        if (!open || depth == GGP_MAX_ARRAY_DEPTH)
            return false;
        depth++;
        name += open;
        len -= open + 1;
    }
    if (depth >= 1 && (name_is(name, len, "arr") || name_is(name, len, "array"))) {
        // "arr[arr]": arrays of arrays whose leaf nobody said.
        if (depth == GGP_MAX_ARRAY_DEPTH)
            return false;
        *out = (ggp_value_type){depth + 1, GGP_V_COUNT};
        return true;
    }
    for (int t = 0; t < GGP_V_COUNT; t++) {
        if (leaf_names[t] && name_is(name, len, leaf_names[t])) {
            *out = (ggp_value_type){depth, (ggp_vtype)t};
            return true;
        }
    }
    if (name_is(name, len, "string")) {
        *out = (ggp_value_type){depth, GGP_V_STRING};
        return true;
    }
    return false;
}

size_t ggp_value_type_format(ggp_value_type type, char *buf)
{
    size_t o = 0;
    const bool known = type.leaf < GGP_V_COUNT && leaf_names[type.leaf];
    const uint32_t depth = known ? type.depth : type.depth - 1;
    for (uint32_t i = 0; i < depth; i++)
        o += (size_t)sprintf(buf + o, "arr[");
    o += (size_t)sprintf(buf + o, "%s", known ? leaf_names[type.leaf] : "arr");
    for (uint32_t i = 0; i < depth; i++)
        buf[o++] = ']';
    buf[o] = '\0';
    return o;
}

/* ==== The encoding ==== */

typedef struct parser {
    const char *text;     // the whole text, for offsets
    ggp_bytes *out;
    size_t max_len;
    bool big_endian;
    uint32_t width;       // bytes of a length or count: 4 in version 1, else 8
    ggp_error *err;
    size_t line;          // 1-based, for messages
} parser;

static bool grow(parser *p, size_t n)
{
    ggp_bytes *b = p->out;
    if (n > p->max_len || b->len > p->max_len - n)
        return ggp_fail(p->err, GGP_ERR_TOO_BIG, 0, "the value takes more than %zu bytes", p->max_len);
    if (b->len + n <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n)
        cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
    uint8_t *grown = realloc(b->data, cap);
    if (!grown)
        return ggp_fail(p->err, GGP_ERR_NOMEM, 0, "no memory for a value of %zu bytes", b->len + n);
    b->data = grown;
    b->cap = cap;
    return true;
}

static bool put_bytes(parser *p, const void *bytes, size_t n)
{
    if (!grow(p, n))
        return false;
    if (n)
        memcpy(p->out->data + p->out->len, bytes, n);
    p->out->len += n;
    return true;
}

/* Writes v in `width` bytes of the file's byte order at out->data + at. */
static void store_uint(parser *p, size_t at, uint64_t v, uint32_t width)
{
    for (uint32_t i = 0; i < width; i++) {
        const uint32_t shift = 8 * (p->big_endian ? width - 1 - i : i);
        p->out->data[at + i] = (uint8_t)(v >> shift);
    }
}

static bool put_uint(parser *p, uint64_t v, uint32_t width)
{
    if (!grow(p, width))
        return false;
    store_uint(p, p->out->len, v, width);
    p->out->len += width;
    return true;
}

/* ==== Messages ==== */

static uint64_t offset_of(const parser *p, const char *at)
{
    return (uint64_t)(at - p->text);
}

/* A token for a message: escaped, cut short. */
static const char *quoted(const char *s, size_t n, char buf[GGP_QUOTE_SIZE])
{
    return ggp_quote_name((ggp_str){s, n}, buf, GGP_QUOTE_SIZE);
}

static bool fail_at(parser *p, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool fail_at(parser *p, const char *at, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ggp_fail(p->err, GGP_ERR_TEXT, offset_of(p, at), "line %zu: %s", p->line, what);
}

/* ==== Scalars ==== */

/* Digits of an optionally negative decimal integer; false when s is not
 * one. *overflow when it has more than 64 bits of magnitude. */
static bool read_integer(const char *s, size_t n, bool *negative, uint64_t *magnitude, bool *overflow)
{
    size_t i = 0;
    *negative = n > 0 && s[0] == '-';
    i += *negative;
    if (i == n)
        return false;
    *magnitude = 0;
    *overflow = false;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        const uint64_t d = (uint64_t)(s[i] - '0');
        if (*magnitude > (UINT64_MAX - d) / 10)
            *overflow = true;
        else
            *magnitude = *magnitude * 10 + d;
    }
    return true;
}

static bool parse_int(parser *p, ggp_vtype type, const char *s, size_t n)
{
    static const struct { uint32_t bytes; bool is_signed; const char *min, *max; } ranges[GGP_V_COUNT] = {
        [GGP_V_U8] = {1, false, "0", "255"},
        [GGP_V_I8] = {1, true, "-128", "127"},
        [GGP_V_U16] = {2, false, "0", "65535"},
        [GGP_V_I16] = {2, true, "-32768", "32767"},
        [GGP_V_U32] = {4, false, "0", "4294967295"},
        [GGP_V_I32] = {4, true, "-2147483648", "2147483647"},
        [GGP_V_U64] = {8, false, "0", "18446744073709551615"},
        [GGP_V_I64] = {8, true, "-9223372036854775808", "9223372036854775807"},
    };
    char q[GGP_QUOTE_SIZE];
    bool negative, overflow;
    uint64_t mag;
    if (!read_integer(s, n, &negative, &mag, &overflow))
        return fail_at(p, s, "'%s' is not a %s (a decimal integer)", quoted(s, n, q), ggp_vtype_name(type));
    const uint32_t bits = 8 * ranges[type].bytes;
    const uint64_t max_pos = ranges[type].is_signed ? (UINT64_C(1) << (bits - 1)) - 1
                             : bits == 64          ? UINT64_MAX
                                                   : (UINT64_C(1) << bits) - 1;
    const uint64_t max_neg = ranges[type].is_signed ? UINT64_C(1) << (bits - 1) : 0;
    if (overflow || (!negative && mag > max_pos) || (negative && mag > max_neg))
        return fail_at(p, s, "'%s' does not fit in %s (%s to %s)", quoted(s, n, q), ggp_vtype_name(type),
                       ranges[type].min, ranges[type].max);
    const uint64_t bits_value = negative ? (uint64_t)0 - mag : mag;
    return put_uint(p, bits_value, ranges[type].bytes);
}

/* A float as render.c writes it, or as JSON's NaN/Infinity: checked here,
 * since strtod also takes hex, "infinity", "nan(...)" and blanks. */
static bool float_syntax(const char *s, size_t n)
{
    size_t i = s[0] == '-';
    static const char *const words[] = {"nan", "inf", "NaN", "Infinity"};
    for (size_t w = 0; w < 4; w++) {
        if (n - i == strlen(words[w]) && memcmp(s + i, words[w], n - i) == 0)
            return true;
    }
    size_t digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (digits == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t exp_digits = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, exp_digits++;
        if (exp_digits == 0)
            return false;
    }
    return i == n;
}

#define FLOAT_TEXT_MAX 400 // digits enough for any double's exact decimal

static bool parse_float(parser *p, ggp_vtype type, const char *s, size_t n)
{
    char q[GGP_QUOTE_SIZE];
    if (n == 0 || n > FLOAT_TEXT_MAX || !float_syntax(s, n))
        return fail_at(p, s, "'%s' is not a %s (a decimal number, nan, inf or -inf)", quoted(s, n, q),
                       ggp_vtype_name(type));
    char copy[FLOAT_TEXT_MAX + 1];
    memcpy(copy, s, n);
    copy[n] = '\0';
    // After the syntax check a word starts with its first letter.
    const char first = copy[copy[0] == '-'];
    const bool named_inf = first == 'i' || first == 'I';
    const bool named_nan = first == 'n' || first == 'N';
    if (type == GGP_V_F32) {
        float x = named_nan ? NAN : strtof(copy, NULL);
        if (isinf(x) && !named_inf)
            return fail_at(p, s, "'%s' does not fit in f32 (its largest is 3.4028235e+38)", quoted(s, n, q));
        uint32_t bits;
        memcpy(&bits, &x, sizeof bits);
        return put_uint(p, bits, 4);
    }
    double x = named_nan ? (double)NAN : strtod(copy, NULL);
    if (isinf(x) && !named_inf)
        return fail_at(p, s, "'%s' does not fit in f64 (its largest is 1.7976931348623157e+308)",
                       quoted(s, n, q));
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return put_uint(p, bits, 8);
}

static bool parse_bool(parser *p, const char *s, size_t n)
{
    char q[GGP_QUOTE_SIZE];
    if (name_is(s, n, "true"))
        return put_uint(p, 1, 1);
    if (name_is(s, n, "false"))
        return put_uint(p, 0, 1);
    return fail_at(p, s, "'%s' is not a bool (true or false)", quoted(s, n, q));
}

/* A number or bool of the given type. */
static bool parse_scalar(parser *p, ggp_vtype type, const char *s, size_t n)
{
    if (type == GGP_V_BOOL)
        return parse_bool(p, s, n);
    if (type == GGP_V_F32 || type == GGP_V_F64)
        return parse_float(p, type, s, n);
    return parse_int(p, type, s, n);
}

/* ==== Strings in arrays ==== */

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* One line of an array of strings, unescaped: \\, \n, \r, \t, \xHH. */
static bool parse_line_string(parser *p, const char *s, size_t n)
{
    const size_t len_at = p->out->len;
    if (!put_uint(p, 0, p->width))
        return false;
    size_t run = 0; // start of the bytes kept as they are
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\')
            continue;
        if (!put_bytes(p, s + run, i - run))
            return false;
        char c;
        if (i + 1 == n)
            return fail_at(p, s + i, "a backslash ends the line (write \\\\ for one)");
        switch (s[i + 1]) {
        case '\\': c = '\\'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'x': {
            const int hi = i + 2 < n ? hex_digit(s[i + 2]) : -1;
            const int lo = i + 3 < n ? hex_digit(s[i + 3]) : -1;
            if (hi < 0 || lo < 0)
                return fail_at(p, s + i, "\\x needs two hex digits");
            c = (char)(hi * 16 + lo);
            i += 2;
            break;
        }
        default: {
            char q[GGP_QUOTE_SIZE];
            return fail_at(p, s + i, "'%s' is no escape (\\\\, \\n, \\r, \\t or \\xHH)", quoted(s + i, 2, q));
        }
        }
        if (!put_bytes(p, &c, 1))
            return false;
        i++;
        run = i + 1;
    }
    if (!put_bytes(p, s + run, n - run))
        return false;
    store_uint(p, len_at, p->out->len - len_at - p->width, p->width);
    return true;
}

/* ==== Inner arrays: one line of JSON ==== */

typedef struct cursor {
    const char *s;
    size_t n;
    size_t i;
} cursor;

static void skip_blanks(cursor *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\r'))
        c->i++;
}

static const char *here(const cursor *c)
{
    return c->s + c->i;
}

static bool put_utf8(parser *p, uint32_t cp)
{
    uint8_t b[4];
    size_t n;
    if (cp < 0x80)
        b[0] = (uint8_t)cp, n = 1;
    else if (cp < 0x800)
        b[0] = (uint8_t)(0xc0 | cp >> 6), b[1] = (uint8_t)(0x80 | (cp & 0x3f)), n = 2;
    else if (cp < 0x10000)
        b[0] = (uint8_t)(0xe0 | cp >> 12), b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)),
        b[2] = (uint8_t)(0x80 | (cp & 0x3f)), n = 3;
    else
        b[0] = (uint8_t)(0xf0 | cp >> 18), b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f)),
        b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)), b[3] = (uint8_t)(0x80 | (cp & 0x3f)), n = 4;
    return put_bytes(p, b, n);
}

static bool read_u16_escape(cursor *c, uint32_t *out)
{
    // c->i is at the 'u' of \uXXXX.
    if (c->n - c->i < 5)
        return false;
    uint32_t v = 0;
    for (size_t k = 1; k <= 4; k++) {
        const int d = hex_digit(c->s[c->i + k]);
        if (d < 0)
            return false;
        v = v * 16 + (uint32_t)d;
    }
    c->i += 5;
    *out = v;
    return true;
}

/* A JSON string as ggp_render_json writes it, \udcHH being the byte HH. */
static bool json_string(parser *p, cursor *c)
{
    if (c->i == c->n || c->s[c->i] != '"')
        return fail_at(p, here(c), "a string (in double quotes) was expected");
    const char *start = here(c);
    c->i++;
    const size_t len_at = p->out->len;
    if (!put_uint(p, 0, p->width))
        return false;
    for (;;) {
        if (c->i == c->n)
            return fail_at(p, start, "the string has no closing quote");
        const char ch = c->s[c->i];
        if (ch == '"') {
            c->i++;
            break;
        }
        if (ch != '\\') {
            size_t run = c->i;
            while (c->i < c->n && c->s[c->i] != '"' && c->s[c->i] != '\\')
                c->i++;
            if (!put_bytes(p, c->s + run, c->i - run))
                return false;
            continue;
        }
        const char *esc = here(c);
        if (c->i + 1 == c->n)
            return fail_at(p, esc, "the string has no closing quote");
        c->i++;
        char one = 0;
        switch (c->s[c->i]) {
        case '"': one = '"'; break;
        case '\\': one = '\\'; break;
        case '/': one = '/'; break;
        case 'b': one = '\b'; break;
        case 'f': one = '\f'; break;
        case 'n': one = '\n'; break;
        case 'r': one = '\r'; break;
        case 't': one = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!read_u16_escape(c, &cp))
                return fail_at(p, esc, "\\u needs four hex digits");
            if (cp >= 0xdc80 && cp <= 0xdcff) {
                const uint8_t byte = (uint8_t)(cp & 0xff); // a byte that is not UTF-8
                if (!put_bytes(p, &byte, 1))
                    return false;
                continue;
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                uint32_t low;
                if (c->n - c->i < 6 || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u')
                    return fail_at(p, esc, "a high surrogate without its low one");
                c->i++;
                if (!read_u16_escape(c, &low) || low < 0xdc00 || low > 0xdfff)
                    return fail_at(p, esc, "a high surrogate without its low one");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                return fail_at(p, esc, "a low surrogate alone (only \\udc80 to \\udcff stand for bytes)");
            }
            if (!put_utf8(p, cp))
                return false;
            continue;
        }
        default:
            return fail_at(p, esc, "'\\%c' is no JSON escape", c->s[c->i]);
        }
        if (!put_bytes(p, &one, 1))
            return false;
        c->i++;
    }
    store_uint(p, len_at, p->out->len - len_at - p->width, p->width);
    return true;
}

/* A number, bool or NaN/Infinity token: up to the next ',', ']' or blank. */
static bool json_scalar(parser *p, cursor *c, ggp_vtype type)
{
    const size_t start = c->i;
    while (c->i < c->n && c->s[c->i] != ',' && c->s[c->i] != ']' && c->s[c->i] != ' ' &&
           c->s[c->i] != '\t' && c->s[c->i] != '\r')
        c->i++;
    if (c->i == start)
        return fail_at(p, c->s + start, "a %s was expected", ggp_vtype_name(type));
    return parse_scalar(p, type, c->s + start, c->i - start);
}

static bool json_value(parser *p, cursor *c, ggp_value_type type);

/* An array whose elements are of type `inner`: type, count, elements. */
static bool json_array(parser *p, cursor *c, ggp_value_type inner)
{
    skip_blanks(c);
    if (c->i == c->n || c->s[c->i] != '[')
        return fail_at(p, here(c), "an array ('[') was expected");
    c->i++;
    // An empty array of an unknown leaf is written as an empty array of
    // arrays; a non-empty one fails in json_value.
    const ggp_vtype elem = inner.depth > 0 || inner.leaf == GGP_V_COUNT ? GGP_V_ARRAY : inner.leaf;
    if (!put_uint(p, elem, 4))
        return false;
    const size_t count_at = p->out->len;
    if (!put_uint(p, 0, p->width))
        return false;
    uint64_t count = 0;
    skip_blanks(c);
    if (c->i < c->n && c->s[c->i] == ']') {
        c->i++;
    } else {
        for (;;) {
            if (!json_value(p, c, inner))
                return false;
            count++;
            skip_blanks(c);
            if (c->i < c->n && c->s[c->i] == ',') {
                c->i++;
                continue;
            }
            if (c->i < c->n && c->s[c->i] == ']') {
                c->i++;
                break;
            }
            return fail_at(p, here(c), "',' or ']' was expected");
        }
    }
    if (p->width == 4 && count > UINT32_MAX)
        return fail_at(p, here(c), "more elements than a version 1 file can count");
    store_uint(p, count_at, count, p->width);
    return true;
}

static bool json_value(parser *p, cursor *c, ggp_value_type type)
{
    skip_blanks(c);
    if (type.depth > 0)
        return json_array(p, c, (ggp_value_type){type.depth - 1, type.leaf});
    if (type.leaf == GGP_V_COUNT)
        return fail_at(p, here(c), "the inner arrays' element type is not known: set user.gguf.type "
                                   "first (e.g. arr[arr[i32]])");
    if (type.leaf == GGP_V_STRING)
        return json_string(p, c);
    return json_scalar(p, c, type.leaf);
}

/* One line of an array of arrays: an array of elements of type `inner`. */
static bool parse_json_line(parser *p, const char *s, size_t n, ggp_value_type inner)
{
    cursor c = {s, n, 0};
    if (!json_array(p, &c, inner))
        return false;
    skip_blanks(&c);
    if (c.i != n)
        return fail_at(p, s + c.i, "text after the array's ']'");
    return true;
}

/* ==== Values ==== */

static bool parse_array(parser *p, const char *text, size_t len, ggp_value_type type)
{
    const ggp_value_type inner = {type.depth - 1, type.leaf};
    const ggp_vtype elem = inner.depth > 0 ? GGP_V_ARRAY : inner.leaf;
    if (elem == GGP_V_COUNT && len > 0)
        return fail_at(p, text, "the element type is not known: set user.gguf.type first");
    if (!put_uint(p, elem == GGP_V_COUNT ? GGP_V_ARRAY : elem, 4))
        return false;
    const size_t count_at = p->out->len;
    if (!put_uint(p, 0, p->width))
        return false;
    uint64_t count = 0;
    if (len > 0) {
        // An empty array is an empty text; any other ends in one newline.
        const size_t n = text[len - 1] == '\n' ? len - 1 : len;
        for (size_t at = 0;;) {
            const char *nl = memchr(text + at, '\n', n - at);
            const size_t end = nl ? (size_t)(nl - text) : n;
            const char *line = text + at;
            const size_t line_len = end - at;
            p->line = (size_t)count + 1;
            bool ok;
            if (inner.depth > 0)
                ok = parse_json_line(p, line, line_len, (ggp_value_type){inner.depth - 1, inner.leaf});
            else if (elem == GGP_V_STRING)
                ok = parse_line_string(p, line, line_len);
            else
                ok = parse_scalar(p, elem, line, line_len);
            if (!ok)
                return false;
            count++;
            if (!nl)
                break;
            at = end + 1;
        }
    }
    if (p->width == 4 && count > UINT32_MAX)
        return fail_at(p, text, "more elements than a version 1 file can count");
    store_uint(p, count_at, count, p->width);
    return true;
}

ggp_err ggp_parse_line_escaped(const char *line, size_t len, size_t max_len, ggp_bytes *out, ggp_error *err)
{
    ggp_error local;
    if (!err)
        err = &local;
    *err = (ggp_error){GGP_OK, 0, ""};
    parser p = {line, out, max_len, false, 8, err, 1};
    const size_t before = out->len;
    if (parse_line_string(&p, line, len)) {
        // Only the bytes: drop the length parse_line_string put first.
        memmove(out->data + before, out->data + before + 8, out->len - before - 8);
        out->len -= 8;
        return GGP_OK;
    }
    out->len = before;
    return err->code;
}

ggp_err ggp_parse_text(const char *text, size_t len, ggp_value_type type, uint32_t version,
                       ggp_byte_order order, size_t max_len, ggp_bytes *out, ggp_error *err)
{
    ggp_error local;
    if (!err)
        err = &local;
    *err = (ggp_error){GGP_OK, 0, ""};
    parser p = {text, out, max_len, order == GGP_BIG, version == 1 ? 4 : 8, err, 1};
    const size_t before = out->len;
    bool ok;
    if (type.depth > GGP_MAX_ARRAY_DEPTH || (type.depth == 0 && (type.leaf >= GGP_V_COUNT || type.leaf == GGP_V_ARRAY))) {
        ok = ggp_fail(err, GGP_ERR_TEXT, 0, "no value has this type");
    } else if (type.depth > 0) {
        ok = parse_array(&p, text, len, type);
    } else {
        const size_t n = len > 0 && text[len - 1] == '\n' ? len - 1 : len;
        if (type.leaf == GGP_V_STRING) {
            if (p.width == 4 && n > UINT32_MAX)
                ok = ggp_fail(err, GGP_ERR_TOO_BIG, 0, "a version 1 string holds at most 4 GiB");
            else
                ok = put_uint(&p, n, p.width) && put_bytes(&p, text, n);
        } else {
            const char *nl = memchr(text, '\n', n);
            ok = nl ? fail_at(&p, nl, "a %s is one line", ggp_vtype_name(type.leaf))
                    : parse_scalar(&p, type.leaf, text, n);
        }
    }
    if (ok)
        return GGP_OK;
    out->len = before;
    return err->code;
}
