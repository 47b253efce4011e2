/*
 * Checks and repairs of untrusted text: the lower-case hex a ref's commit
 * and a manifest's digest must be, counted without reading past the bytes
 * given; control bytes made '?' wherever they stand in a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/text.h"

/* n bytes of text in a buffer of exactly n bytes, with no NUL after them:
 * a read past the end is an ASan report. */
static char *exact(const char *text, size_t n)
{
    char *p = malloc(n ? n : 1);
    if (p)
        memcpy(p, text, n);
    return p;
}

static int test_hex_span_counts_lower_case_digits(void)
{
    EXPECT_EQ(ggfs_lower_hex_span("0123456789abcdef", 16), 16);
    EXPECT_EQ(ggfs_lower_hex_span("", 0), 0);
    EXPECT_EQ(ggfs_lower_hex_span("xabc", 4), 0);
    EXPECT_EQ(ggfs_lower_hex_span("abc/", 4), 3);
    EXPECT_EQ(ggfs_lower_hex_span("09af", 4), 4);
    // The neighbours of each range: '/' ':' '`' 'g'.
    EXPECT_EQ(ggfs_lower_hex_span("/", 1), 0);
    EXPECT_EQ(ggfs_lower_hex_span(":", 1), 0);
    EXPECT_EQ(ggfs_lower_hex_span("`", 1), 0);
    EXPECT_EQ(ggfs_lower_hex_span("g", 1), 0);
    return 1;
}

static int test_hex_span_stops_at_upper_case(void)
{
    EXPECT_EQ(ggfs_lower_hex_span("0123abcD", 8), 7);
    EXPECT_EQ(ggfs_lower_hex_span("A123", 4), 0);
    EXPECT_EQ(ggfs_lower_hex_span("12F4", 4), 2);
    return 1;
}

static int test_hex_span_stops_at_nul_and_high_bytes(void)
{
    EXPECT_EQ(ggfs_lower_hex_span("ab\0cd", 5), 2);
    EXPECT_EQ(ggfs_lower_hex_span("ab\xe1", 3), 2); // negative as a signed char
    EXPECT_EQ(ggfs_lower_hex_span("\x80", 1), 0);
    EXPECT_EQ(ggfs_lower_hex_span("a b", 3), 1);
    return 1;
}

static int test_hex_span_reads_no_further_than_asked(void)
{
    char *p = exact("abcdef12", 8);
    EXPECT(p != NULL);
    const size_t all = ggfs_lower_hex_span(p, 8), some = ggfs_lower_hex_span(p, 5);
    free(p);
    EXPECT_EQ(all, 8);
    EXPECT_EQ(some, 5);
    return 1;
}

/* Whether ggfs_one_line makes text into want. */
static int scrubs(const char *text, const char *want)
{
    char s[64];
    snprintf(s, sizeof s, "%s", text);
    ggfs_one_line(s);
    EXPECT_STR(s, want);
    return 1;
}

static int test_one_line_scrubs_control_bytes_at_both_ends(void)
{
    EXPECT(scrubs("\nrefs/main\t", "?refs/main?"));
    EXPECT(scrubs("\x1b[31mred\x7f", "?[31mred?"));
    EXPECT(scrubs("\x01\x02\x1f", "???"));
    EXPECT(scrubs("a\r\nb", "a??b"));
    return 1;
}

static int test_one_line_keeps_printable_and_utf8(void)
{
    EXPECT(scrubs("caf\xc3\xa9 / model ~ x.gguf", "caf\xc3\xa9 / model ~ x.gguf"));
    EXPECT(scrubs("", ""));
    EXPECT(scrubs(" \x80\xff", " \x80\xff"));
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_hex_span_counts_lower_case_digits();
    ok &= test_hex_span_stops_at_upper_case();
    ok &= test_hex_span_stops_at_nul_and_high_bytes();
    ok &= test_hex_span_reads_no_further_than_asked();
    ok &= test_one_line_scrubs_control_bytes_at_both_ends();
    ok &= test_one_line_keeps_printable_and_utf8();
    return ok ? 0 : 1;
}
