/*
 * Whether the start of a text can still become a value: a write to
 * metadata/KEY is refused as soon as the text written so far has no
 * ending that ggp_parse_text (parse_text.c) would take, so that a shell's
 * `printf 'abc\n' > KEY` sees its write fail, not only its close.
 *
 * Exact for scalars and arrays of scalars and strings, following
 * parse_text.c's grammar: an integer is [-]digits (leading zeros and -0
 * taken), a float [-]digits[.digits][(e|E)[+|-]digits] with a digit
 * somewhere before any exponent, or [-]nan, inf, NaN, Infinity; a bool
 * true or false; a scalar is one line, with one newline allowed at its
 * end. A number that no longer fits stays too big as digits are added
 * (an integer's magnitude only grows; a float's positive exponent too),
 * while a float's mantissa can still be brought down by an exponent to
 * come. In an array of arrays, each whole line is checked and the line
 * being written is not (any JSON start is let through).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggp_i.h"

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool starts(const char *s, size_t n, const char *word)
{
    return n <= strlen(word) && memcmp(s, word, n) == 0;
}

/* The text up to and with byte `at` of s begins no value of type. */
static bool fail(ggp_error *err, const char *s, size_t at, ggp_vtype type)
{
    char q[GGP_QUOTE_SIZE];
    return ggp_fail(err, GGP_ERR_TEXT, at, "'%s' begins no %s", ggp_quote_name((ggp_str){s, at + 1}, q, sizeof q),
                    ggp_vtype_name(type));
}

/* An integer's start: [-]digits whose magnitude still fits (digits to
 * come only make it larger). */
static bool int_prefix(const char *s, size_t n, ggp_vtype type, ggp_error *err)
{
    static const struct { uint64_t max_pos, max_neg; const char *min, *max; } ranges[GGP_V_COUNT] = {
        [GGP_V_U8] = {UINT8_MAX, 0, "0", "255"},
        [GGP_V_I8] = {INT8_MAX, UINT64_C(1) << 7, "-128", "127"},
        [GGP_V_U16] = {UINT16_MAX, 0, "0", "65535"},
        [GGP_V_I16] = {INT16_MAX, UINT64_C(1) << 15, "-32768", "32767"},
        [GGP_V_U32] = {UINT32_MAX, 0, "0", "4294967295"},
        [GGP_V_I32] = {INT32_MAX, UINT64_C(1) << 31, "-2147483648", "2147483647"},
        [GGP_V_U64] = {UINT64_MAX, 0, "0", "18446744073709551615"},
        [GGP_V_I64] = {INT64_MAX, UINT64_C(1) << 63, "-9223372036854775808", "9223372036854775807"},
    };
    const bool negative = n > 0 && s[0] == '-';
    const uint64_t limit = negative ? ranges[type].max_neg : ranges[type].max_pos;
    uint64_t mag = 0;
    for (size_t i = negative; i < n; i++) {
        if (!is_digit(s[i]))
            return fail(err, s, i, type);
        const uint64_t d = (uint64_t)(s[i] - '0');
        if (d > limit || mag > (limit - d) / 10) {
            char q[GGP_QUOTE_SIZE];
            return ggp_fail(err, GGP_ERR_TEXT, 0, "'%s' does not fit in %s (%s to %s)",
                            ggp_quote_name((ggp_str){s, i + 1}, q, sizeof q), ggp_vtype_name(type),
                            ranges[type].min, ranges[type].max);
        }
        mag = mag * 10 + d;
    }
    return true;
}

#define FLOAT_TEXT_MAX 400 // as parse_text.c: longer is no float

/* A float's start (see the top of the file). */
static bool float_prefix(const char *s, size_t n, ggp_vtype type, ggp_error *err)
{
    if (n > FLOAT_TEXT_MAX)
        return ggp_fail(err, GGP_ERR_TEXT, FLOAT_TEXT_MAX, "more than %d bytes can be no %s", FLOAT_TEXT_MAX,
                        ggp_vtype_name(type));
    size_t i = n > 0 && s[0] == '-';
    static const char *const words[] = {"nan", "inf", "NaN", "Infinity"};
    if (i < n && !is_digit(s[i]) && s[i] != '.') {
        // A word: refused at its first byte no word has there.
        size_t k = 0;
        for (size_t w = 0; w < 4; w++) {
            size_t m = 0;
            while (i + m < n && words[w][m] && s[i + m] == words[w][m])
                m++;
            if (i + m == n)
                return true;
            k = m > k ? m : k;
        }
        return fail(err, s, i + k, type);
    }
    size_t digits = 0;
    while (i < n && is_digit(s[i]))
        i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i]))
            i++, digits++;
    }
    if (i == n)
        return true;
    if ((s[i] != 'e' && s[i] != 'E') || digits == 0)
        return fail(err, s, i, type);
    i++;
    const bool down = i < n && s[i] == '-';
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    const size_t exp_start = i;
    while (i < n && is_digit(s[i]))
        i++;
    if (i < n)
        return fail(err, s, i, type);
    if (down || exp_start == n)
        return true;
    char copy[FLOAT_TEXT_MAX + 1];
    memcpy(copy, s, n);
    copy[n] = '\0';
    const bool too_big = type == GGP_V_F32 ? isinf(strtof(copy, NULL)) : isinf(strtod(copy, NULL));
    if (too_big) { // and a larger exponent to come keeps it so
        char q[GGP_QUOTE_SIZE];
        return ggp_fail(err, GGP_ERR_TEXT, 0, "'%s' does not fit in %s (its largest is %s)",
                        ggp_quote_name((ggp_str){s, n}, q, sizeof q), ggp_vtype_name(type),
                        type == GGP_V_F32 ? "3.4028235e+38" : "1.7976931348623157e+308");
    }
    return true;
}

static bool scalar_prefix(const char *s, size_t n, ggp_vtype type, ggp_error *err)
{
    if (type == GGP_V_BOOL) {
        if (starts(s, n, "true") || starts(s, n, "false"))
            return true;
        size_t i = 0;
        while (i < n && (starts(s, i + 1, "true") || starts(s, i + 1, "false")))
            i++;
        return fail(err, s, i, type);
    }
    if (type == GGP_V_F32 || type == GGP_V_F64)
        return float_prefix(s, n, type, err);
    return int_prefix(s, n, type, err);
}

/* The start of one line of an array of strings: escapes \\, \n, \r, \t,
 * \xHH (the last may be cut short at the end). */
static bool escaped_prefix(const char *s, size_t n, ggp_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\')
            continue;
        if (i + 1 == n)
            return true;
        const char c = s[i + 1];
        if (c == '\\' || c == 'n' || c == 'r' || c == 't') {
            i++;
            continue;
        }
        if (c != 'x')
            return ggp_fail(err, GGP_ERR_TEXT, i, "'\\%c' is no escape (\\\\, \\n, \\r, \\t or \\xHH)", c);
        for (size_t k = i + 2; k < i + 4 && k < n; k++) {
            if (!isxdigit((unsigned char)s[k]))
                return ggp_fail(err, GGP_ERR_TEXT, i, "\\x needs two hex digits");
        }
        i += 3;
    }
    return true;
}

/* Puts "line N: " before err's message, as parse_text.c's messages start. */
static void name_line(ggp_error *err, uint64_t line, const char *rest)
{
    char msg[sizeof err->msg + 32];
    snprintf(msg, sizeof msg, "line %llu: %s", (unsigned long long)line, rest);
    memcpy(err->msg, msg, sizeof err->msg - 1);
    err->msg[sizeof err->msg - 1] = '\0';
}

/* Whole lines [from, to) of an array's text (to just past a newline):
 * parsed as the array they are on their own. */
static ggp_err whole_lines(const char *text, size_t from, size_t to, uint64_t first_line, ggp_value_type type,
                           ggp_error *err)
{
    ggp_bytes scratch = {0};
    const ggp_err r = ggp_parse_text(text + from, to - from, type, 3, GGP_LITTLE, SIZE_MAX, &scratch, err);
    free(scratch.data);
    if (r != GGP_ERR_TEXT)
        return GGP_OK; // too big, no memory: for the close to say
    // Where the lines are in the whole text, and which line.
    err->offset += from;
    unsigned long line;
    int used = 0;
    if (sscanf(err->msg, "line %lu: %n", &line, &used) == 1 && used > 0) {
        char rest[sizeof err->msg];
        memcpy(rest, err->msg + used, sizeof rest - (size_t)used);
        name_line(err, first_line + line - 1, rest);
    }
    return r;
}

ggp_err ggp_parse_prefix(const char *text, size_t len, ggp_value_type type, ggp_prefix_state *state,
                         ggp_error *err)
{
    ggp_error local;
    if (!err)
        err = &local;
    *err = (ggp_error){GGP_OK, 0, ""};
    if (type.depth > GGP_MAX_ARRAY_DEPTH || type.leaf == GGP_V_ARRAY || type.leaf > GGP_V_COUNT)
        return GGP_OK;
    if (type.depth == 0) {
        if (type.leaf == GGP_V_STRING || type.leaf == GGP_V_COUNT)
            return GGP_OK;
        const char *nl = memchr(text, '\n', len);
        if (nl && (size_t)(nl - text) + 1 < len) {
            ggp_fail(err, GGP_ERR_TEXT, (uint64_t)(nl - text), "line 1: a %s is one line",
                     ggp_vtype_name(type.leaf));
            return GGP_ERR_TEXT;
        }
        if (nl)
            return whole_lines(text, 0, len, 1, type, err);
        if (!scalar_prefix(text, len, type.leaf, err)) {
            char rest[sizeof err->msg];
            memcpy(rest, err->msg, sizeof rest);
            name_line(err, 1, rest);
            return GGP_ERR_TEXT;
        }
        return GGP_OK;
    }
    // An array: the whole lines not yet checked, then the line begun.
    if (state->checked > len)
        *state = (ggp_prefix_state){0, 0};
    const char *last_nl = NULL;
    for (const char *p = text + state->checked; p < text + len;) {
        const char *nl = memchr(p, '\n', (size_t)(text + len - p));
        if (!nl)
            break;
        last_nl = nl;
        p = nl + 1;
    }
    if (last_nl) {
        const size_t to = (size_t)(last_nl - text) + 1;
        uint64_t lines = 0;
        for (const char *p = text + state->checked; p < text + to; p++)
            lines += *p == '\n';
        // The whole lines, their last newline dropped as the close drops
        // the text's, are the array they make on their own.
        const ggp_err r = whole_lines(text, state->checked, to, state->lines + 1, type, err);
        if (r != GGP_OK)
            return r;
        state->checked = to;
        state->lines += lines;
    }
    const char *line = text + state->checked;
    const size_t n = len - state->checked;
    const ggp_value_type inner = {type.depth - 1, type.leaf};
    bool ok = true;
    if (inner.depth == 0 && inner.leaf == GGP_V_STRING)
        ok = escaped_prefix(line, n, err);
    else if (inner.depth == 0 && inner.leaf != GGP_V_COUNT)
        ok = scalar_prefix(line, n, inner.leaf, err);
    else if (inner.leaf == GGP_V_COUNT && n > 0 && type.depth == 1)
        ok = ggp_fail(err, GGP_ERR_TEXT, 0, "the element type is not known: set user.gguf.type first");
    if (!ok) {
        char rest[sizeof err->msg];
        memcpy(rest, err->msg, sizeof rest);
        name_line(err, state->lines + 1, rest);
        err->offset += state->checked;
        return GGP_ERR_TEXT;
    }
    return GGP_OK;
}
