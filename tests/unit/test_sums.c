/*
 * sha256sum's lines (fs/source/sums.c): the two forms GNU sha256sum
 * writes, escapes, the line's end, what is malformed and skipped, the
 * first line for a name, a last line cut short by the reader's bound, and
 * a FILE.sha256's one line.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "source/sums.h"

#define HEX_A "aaaa000011112222333344445555666677778888999900001111222233334444"
#define HEX_B "bbbb000011112222333344445555666677778888999900001111222233334444"
#define HEX_U "ABCDEF0011112222333344445555666677778888999900001111222233334444"

static bool parse(const char *line, ggfs_sums_line *l)
{
    return ggfs_sums_parse_line(line, strlen(line), l);
}

static bool names(const char *line, const char *name)
{
    ggfs_sums_line l;
    return parse(line, &l) && ggfs_sums_line_names(&l, name, strlen(name));
}

/* ggfs_sums_find over a NUL-terminated text: the digits found, or "". */
static const char *find(const char *text, bool whole, const char *name)
{
    static char got[GGFS_SUMS_HEX + 1];
    if (!ggfs_sums_find(text, strlen(text), whole, name, strlen(name), got))
        return "";
    got[GGFS_SUMS_HEX] = '\0';
    return got;
}

static const char *single(const char *text)
{
    static char got[GGFS_SUMS_HEX + 1];
    if (!ggfs_sums_single(text, strlen(text), got))
        return "";
    got[GGFS_SUMS_HEX] = '\0';
    return got;
}

static int test_text_and_binary_lines(void)
{
    ggfs_sums_line l;
    EXPECT(parse(HEX_A "  model.gguf", &l));
    EXPECT(!l.escaped);
    EXPECT(strncmp(l.hex, HEX_A, GGFS_SUMS_HEX) == 0);
    EXPECT_EQ(l.name_len, strlen("model.gguf"));
    EXPECT(strncmp(l.name, "model.gguf", l.name_len) == 0);
    EXPECT(names(HEX_A " *model.gguf", "model.gguf"));
    EXPECT(names(HEX_U "  model.gguf", "model.gguf")); // either case, as sha256sum -c takes it
    // Blanks before the line, and a tab for the first space, as sha256sum -c takes them.
    EXPECT(names(" \t" HEX_A "  model.gguf", "model.gguf"));
    EXPECT(names("  \\" HEX_A "  a\\\\b", "a\\b"));
    EXPECT(names(HEX_A "\t*model.gguf", "model.gguf"));
    EXPECT(names(HEX_A "\t model.gguf", "model.gguf"));
    // The name is everything after the separator: spaces kept.
    EXPECT(names(HEX_A "   lead space.gguf", " lead space.gguf"));
    EXPECT(names(HEX_A "  trail.gguf ", "trail.gguf "));
    EXPECT(!names(HEX_A "  trail.gguf ", "trail.gguf"));
    return 1;
}

static int test_line_ends(void)
{
    EXPECT(names(HEX_A "  model.gguf\r", "model.gguf"));
    EXPECT(!names(HEX_A "  model.gguf\r\r", "model.gguf"));
    EXPECT_STR(find(HEX_B "  other\r\n" HEX_A "  model.gguf\r\n", true, "model.gguf"), HEX_A);
    return 1;
}

static int test_malformed_lines(void)
{
    ggfs_sums_line l;
    EXPECT(!parse("", &l));
    EXPECT(!parse("# a comment", &l));
    EXPECT(!parse(HEX_A " model.gguf", &l));      // one space: no mode
    EXPECT(!parse(HEX_A "\tmodel.gguf", &l));
    EXPECT(!parse(HEX_A "  ", &l));               // no name
    EXPECT(!parse(HEX_A " *", &l));
    EXPECT(!parse(HEX_A "a  model.gguf", &l));    // 65 digits
    EXPECT(!parse(HEX_A, &l));
    char short_hex[] = HEX_A "  m";
    memmove(short_hex + 63, short_hex + 64, sizeof short_hex - 64); // 63 digits
    EXPECT(!parse(short_hex, &l));
    char bad_digit[] = HEX_A "  m";
    bad_digit[10] = 'g';
    EXPECT(!parse(bad_digit, &l));
    EXPECT(!parse("\n" HEX_A "  m", &l));
    EXPECT(!parse("SHA256 (m) = " HEX_A, &l)); // --tag's form is not sha256sum's default
    return 1;
}

static int test_escaped_names(void)
{
    ggfs_sums_line l;
    EXPECT(parse("\\" HEX_A "  a\\\\b\\nc\\rd", &l));
    EXPECT(l.escaped);
    EXPECT(strncmp(l.hex, HEX_A, GGFS_SUMS_HEX) == 0);
    EXPECT(ggfs_sums_line_names(&l, "a\\b\nc\rd", 7));
    EXPECT(!ggfs_sums_line_names(&l, "a\\\\b\\nc\\rd", 10)); // the escaped text is not the name
    // Unknown escapes and a lone backslash at the end: malformed.
    EXPECT(!parse("\\" HEX_A "  a\\tb", &l));
    EXPECT(!parse("\\" HEX_A "  ab\\", &l));
    EXPECT(!parse("\\" HEX_A "  ab\\\r", &l));
    // A backslash in an unescaped line's name is the byte itself.
    EXPECT(names(HEX_A "  a\\nb", "a\\nb"));
    return 1;
}

static int test_dot_slash_names_the_same_file(void)
{
    EXPECT(names(HEX_A "  ./model.gguf", "model.gguf"));
    EXPECT(names("\\" HEX_A "  ./a\\\\b", "a\\b"));
    EXPECT(!names(HEX_A "  sub/model.gguf", "model.gguf"));
    EXPECT(!names(HEX_A "  ../model.gguf", "model.gguf"));
    EXPECT(!names(HEX_A "  /abs/model.gguf", "model.gguf"));
    EXPECT(!names(HEX_A "  ././model.gguf", "model.gguf"));
    return 1;
}

static int test_names_must_match_whole(void)
{
    EXPECT(!names(HEX_A "  model.gguf.bak", "model.gguf"));
    EXPECT(!names(HEX_A "  model.ggu", "model.gguf"));
    EXPECT(!names(HEX_A "  xmodel.gguf", "model.gguf"));
    ggfs_sums_line l;
    static const char nul_line[] = HEX_A "  model.gguf\0x";
    EXPECT(ggfs_sums_parse_line(nul_line, sizeof nul_line - 1, &l));
    EXPECT(!ggfs_sums_line_names(&l, "model.gguf", 10));
    return 1;
}

static int test_first_line_for_the_name(void)
{
    const char *text = HEX_B "  a.gguf\n"
                       "garbage\n"
                       "\n" HEX_A "  b.gguf\n" HEX_B "  b.gguf\n";
    EXPECT_STR(find(text, true, "b.gguf"), HEX_A);
    EXPECT_STR(find(text, true, "a.gguf"), HEX_B);
    EXPECT_STR(find(text, true, "c.gguf"), "");
    // A malformed line for the name does not hide a later good one.
    EXPECT_STR(find(HEX_B " b.gguf\n" HEX_A "  b.gguf\n", true, "b.gguf"), HEX_A);
    return 1;
}

static int test_a_last_line_cut_short_is_not_read(void)
{
    const char *text = HEX_B "  a.gguf\n" HEX_A "  b.gguf";
    EXPECT_STR(find(text, true, "b.gguf"), HEX_A);
    // The reader stopped at its bound: "b.gguf" may be the start of "b.gguf.bak".
    EXPECT_STR(find(text, false, "b.gguf"), "");
    EXPECT_STR(find(text, false, "a.gguf"), HEX_B);
    EXPECT_STR(find("", true, "a.gguf"), "");
    return 1;
}

static int test_long_lines_are_skipped(void)
{
    // A line of exactly GGFS_SUMS_LINE_MAX bytes is read; one byte more is not.
    const size_t fixed = GGFS_SUMS_HEX + 2;
    char *text = malloc(2 * GGFS_SUMS_LINE_MAX + 200);
    EXPECT(text);
    for (size_t extra = 0; extra <= 1; extra++) {
        const size_t name_len = GGFS_SUMS_LINE_MAX - fixed + extra;
        char *name = malloc(name_len + 1);
        EXPECT(name);
        memset(name, 'n', name_len);
        name[name_len] = '\0';
        snprintf(text, 2 * GGFS_SUMS_LINE_MAX + 200, "%s  %s\n", HEX_A, name);
        EXPECT_EQ(strlen(text), GGFS_SUMS_LINE_MAX + extra + 1);
        EXPECT_STR(find(text, true, name), extra ? "" : HEX_A);
        free(name);
    }
    // With its CR, the line is one byte longer and still read.
    memset(text, 0, 2 * GGFS_SUMS_LINE_MAX + 200);
    memcpy(text, HEX_A "  ", fixed);
    memset(text + fixed, 'n', GGFS_SUMS_LINE_MAX - fixed);
    memcpy(text + GGFS_SUMS_LINE_MAX, "\r\n", 3);
    text[GGFS_SUMS_LINE_MAX] = '\0';
    char *name = strdup(text + fixed);
    text[GGFS_SUMS_LINE_MAX] = '\r';
    EXPECT(name);
    EXPECT_STR(find(text, true, name), HEX_A);
    free(name);
    free(text);
    return 1;
}

static int test_single_file_line(void)
{
    EXPECT_STR(single(HEX_A), HEX_A);
    EXPECT_STR(single(HEX_A "\n"), HEX_A);
    EXPECT_STR(single(HEX_A "\r\n"), HEX_A);
    EXPECT_STR(single(HEX_A "  model.gguf\n"), HEX_A);
    EXPECT_STR(single(HEX_A " *model.gguf\n"), HEX_A);
    EXPECT_STR(single(HEX_A "\tmodel.gguf"), HEX_A);
    EXPECT_STR(single("\\" HEX_A "  a\\nb\n"), HEX_A);
    EXPECT_STR(single(HEX_U "\n"), HEX_U);
    EXPECT_STR(single(HEX_A "a\n"), ""); // 65 digits
    EXPECT_STR(single(HEX_A "*model.gguf"), "");
    EXPECT_STR(single("SHA256 (m) = " HEX_A), "");
    EXPECT_STR(single(" " HEX_A), "");
    EXPECT_STR(single(""), "");
    EXPECT_STR(single("\\"), "");
    char short_hex[] = HEX_A;
    short_hex[63] = '\0';
    EXPECT_STR(single(short_hex), "");
    static const char nul_after[] = HEX_A "\0";
    char got[GGFS_SUMS_HEX];
    EXPECT(!ggfs_sums_single(nul_after, sizeof nul_after - 1, got));
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_text_and_binary_lines();
    ok &= test_line_ends();
    ok &= test_malformed_lines();
    ok &= test_escaped_names();
    ok &= test_dot_slash_names_the_same_file();
    ok &= test_names_must_match_whole();
    ok &= test_first_line_for_the_name();
    ok &= test_a_last_line_cut_short_is_not_read();
    ok &= test_long_lines_are_skipped();
    ok &= test_single_file_line();
    return ok ? 0 : 1;
}
