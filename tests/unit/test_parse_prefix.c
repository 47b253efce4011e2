/*
 * ggp_parse_prefix: the start of a text is refused exactly when no ending
 * makes it a value. Every start of a valid text of each type is let
 * through; chosen texts are refused at their byte and with their words;
 * and, over a small alphabet, every short text refused has no short ending
 * that ggp_parse_text takes, while every text let through has one.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"

static ggp_value_type type_of(const char *name)
{
    ggp_value_type t = {0, GGP_V_COUNT};
    ggp_value_type_parse(name, strlen(name), &t);
    return t;
}

static bool parses(const char *text, size_t len, ggp_value_type t)
{
    ggp_bytes out = {0};
    const ggp_err r = ggp_parse_text(text, len, t, 3, GGP_LITTLE, 1 << 20, &out, NULL);
    free(out.data);
    return r == GGP_OK;
}

/* Whether the start is let through, fed whole or a byte at a time with
 * one state (as dd bs=1 writes); both must agree. */
static int let_through(const char *text, size_t len, ggp_value_type t, bool *whole)
{
    ggp_prefix_state st = {0, 0};
    *whole = ggp_parse_prefix(text, len, t, &st, NULL) == GGP_OK;
    ggp_prefix_state piece = {0, 0};
    bool ok = true;
    for (size_t n = 0; n <= len && ok; n++)
        ok = ggp_parse_prefix(text, n, t, &piece, NULL) == GGP_OK;
    if (ok != *whole)
        fprintf(stderr, "'%.*s': whole %d, in pieces %d\n", (int)len, text, *whole, ok);
    return ok == *whole;
}

static int test_every_start_of_a_value_is_let_through(void)
{
    static const struct { const char *type, *text; } values[] = {
        {"u8", "255\n"}, {"u8", "0"}, {"u8", "-0\n"}, {"u8", "000255\n"}, {"i8", "-128\n"},
        {"u32", "4294967295\n"}, {"i32", "-2147483648\n"}, {"u64", "18446744073709551615\n"},
        {"i64", "-9223372036854775808\n"}, {"f32", "-inf\n"}, {"f32", "Infinity\n"}, {"f32", "-NaN\n"},
        {"f32", "nan\n"}, {"f32", "1e-05\n"}, {"f32", ".5\n"}, {"f32", "5.\n"}, {"f32", "3.4028235e+38\n"},
        {"f32", "1E-999\n"}, {"f32", "1000000000000000000000000000000000000000000e-10\n"},
        {"f64", "1.7976931348623157e+308\n"}, {"f64", "-0.1\n"}, {"bool", "true\n"}, {"bool", "false"},
        {"str", "anything at all\n\n\x01"}, {"arr[u8]", "1\n2\n255\n"}, {"arr[str]", "a\\x41\\n\\\\\n\nb\n"},
        {"arr[f32]", "nan\n-inf\n1e3\n"}, {"arr[bool]", "true\nfalse\n"}, {"arr[arr[i32]]", "[1, 2]\n[]\n"},
        {"arr[arr[str]]", "[\"a\\u0041\", \"\\udcff\"]\n"},
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        const ggp_value_type t = type_of(values[i].type);
        const size_t len = strlen(values[i].text);
        EXPECT(parses(values[i].text, len, t));
        for (size_t n = 0; n <= len; n++) {
            bool whole;
            EXPECT(let_through(values[i].text, n, t, &whole));
            if (!whole)
                fprintf(stderr, "%s: '%.*s' refused\n", values[i].type, (int)n, values[i].text);
            EXPECT(whole);
        }
    }
    return 1;
}

static int test_refusals_name_the_byte_and_the_problem(void)
{
    static const struct { const char *type, *text; uint64_t offset; const char *msg; } bad[] = {
        {"u32", "abc\n", 0, "line 1: 'abc' is not a u32"},
        {"u32", "abc", 0, "line 1: 'a' begins no u32"},
        {"u32", "5000000000\n", 0, "line 1: '5000000000' does not fit in u32 (0 to 4294967295)"},
        {"u32", "5000000000", 0, "line 1: '5000000000' does not fit in u32 (0 to 4294967295)"},
        {"u8", "-1", 0, "line 1: '-1' does not fit in u8 (0 to 255)"},
        {"i8", "-129", 0, "line 1: '-129' does not fit in i8 (-128 to 127)"},
        {"u16", "1\n2", 1, "line 1: a u16 is one line"},
        {"u16", "12x", 2, "line 1: '12x' begins no u16"},
        {"f32", "0x", 1, "line 1: '0x' begins no f32"},
        {"f32", "1e39", 0, "line 1: '1e39' does not fit in f32 (its largest is 3.4028235e+38)"},
        {"f64", "1e309", 0, "line 1: '1e309' does not fit in f64"},
        {"f32", "e5", 0, "line 1: 'e' begins no f32"},
        {"f32", "infinity", 3, "line 1: 'infi' begins no f32"},
        {"bool", "tru e", 3, "line 1: 'tru ' begins no bool"},
        {"bool", "yes\n", 0, "line 1: 'yes' is not a bool"},
        {"arr[u8]", "1\n2\n256", 4, "line 3: '256' does not fit in u8 (0 to 255)"},
        {"arr[u8]", "1\n\n", 2, "line 2: '' is not a u8"},
        {"arr[i16]", "1\n-x", 3, "line 2: '-x' begins no i16"},
        {"arr[str]", "ok\n\\q", 3, "line 2: '\\q' is no escape"},
        {"arr[str]", "ok\n\\x4g", 3, "line 2: \\x needs two hex digits"},
        {"arr[arr[i32]]", "[1]\n[1,]\n[", 7, "line 2:"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const ggp_value_type t = type_of(bad[i].type);
        ggp_prefix_state st = {0, 0};
        ggp_error err;
        const ggp_err r = ggp_parse_prefix(bad[i].text, strlen(bad[i].text), t, &st, &err);
        if (r != GGP_ERR_TEXT || err.offset != bad[i].offset || strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)))
            fprintf(stderr, "%s '%s': %d at %llu: %s\n", bad[i].type, bad[i].text, r,
                    (unsigned long long)err.offset, err.msg);
        EXPECT_EQ(r, GGP_ERR_TEXT);
        EXPECT_EQ(err.offset, bad[i].offset);
        EXPECT(strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) == 0);
    }
    return 1;
}

/* Whether some ending of at most `more` bytes of the alphabet makes
 * text[0..len) a value. */
static bool completes(char *text, size_t len, size_t more, const char *alphabet, ggp_value_type t)
{
    if (parses(text, len, t))
        return true;
    for (size_t i = 0; more > 0 && alphabet[i]; i++) {
        text[len] = alphabet[i];
        if (completes(text, len + 1, more - 1, alphabet, t))
            return true;
    }
    return false;
}

/* Every text of up to `max` bytes of the alphabet: refused ones have no
 * ending of up to `more` bytes; those let through have one. */
static int exact_over(const char *type, const char *alphabet, size_t max, size_t more)
{
    const ggp_value_type t = type_of(type);
    const size_t a = strlen(alphabet);
    char text[32];
    for (size_t len = 0; len <= max; len++) {
        size_t total = 1;
        for (size_t k = 0; k < len; k++)
            total *= a;
        for (size_t code = 0; code < total; code++) {
            size_t c = code;
            for (size_t k = 0; k < len; k++, c /= a)
                text[k] = alphabet[c % a];
            bool whole;
            EXPECT(let_through(text, len, t, &whole));
            const bool can = completes(text, len, more, alphabet, t);
            if (whole != can)
                fprintf(stderr, "%s: '%.*s' let through %d, completes %d\n", type, (int)len, text, whole, can);
            EXPECT_EQ(whole, can);
        }
    }
    return 1;
}

static int test_exact_over_small_alphabets(void)
{
    EXPECT(exact_over("u8", "-029x\n", 4, 3));
    EXPECT(exact_over("i8", "-0129\n", 4, 3));
    EXPECT(exact_over("u64", "-019\n", 3, 2));
    EXPECT(exact_over("f32", "-1.e+9\n", 4, 4));
    EXPECT(exact_over("f64", "-.e9x\n", 4, 3));
    EXPECT(exact_over("bool", "tuer\n", 4, 4));
    EXPECT(exact_over("arr[u8]", "20-9\n", 5, 3));
    EXPECT(exact_over("arr[str]", "\\xa\n", 5, 3));
    return 1;
}

int main(void)
{
    int ok = test_every_start_of_a_value_is_let_through();
    ok &= test_refusals_name_the_byte_and_the_problem();
    ok &= test_exact_over_small_alphabets();
    return ok ? 0 : 1;
}
