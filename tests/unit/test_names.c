/*
 * File names for keys and tensor names: escapes, the "." and ".." names,
 * cuts of long names with a hash suffix, and exact reversal of the rest.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "tree/names.h"

static int encodes_as(const char *name, size_t len, const char *want)
{
    char out[GGFS_NAME_MAX + 1];
    const size_t n = ggfs_name_encode(name, len, out);
    EXPECT_EQ(n, strlen(want));
    EXPECT_STR(out, want);
    char back[GGFS_NAME_MAX + 1];
    size_t blen;
    EXPECT(ggfs_name_decode(out, n, back, &blen));
    EXPECT_EQ(blen, len);
    EXPECT(memcmp(back, name, len) == 0);
    return 1;
}

static int test_escapes_reverse(void)
{
    return encodes_as("blk.0.attn_q.weight", 19, "blk.0.attn_q.weight") &&
           encodes_as("a/b", 3, "a%2Fb") && encodes_as("100%", 4, "100%25") &&
           encodes_as("%2F", 3, "%252F") && encodes_as(".", 1, "%2E") &&
           encodes_as("..", 2, "%2E%2E") && encodes_as("...", 3, "...") &&
           encodes_as("a\0b", 3, "a%00b") && encodes_as("\x01\xff", 2, "\x01\xff");
}

static int test_malformed_escapes_decode_to_nothing(void)
{
    char out[16];
    size_t n;
    EXPECT(!ggfs_name_decode("a%2", 3, out, &n));
    EXPECT(!ggfs_name_decode("%41", 3, out, &n));
    return 1;
}

static int test_long_names_cut_and_stay_distinct(void)
{
    char a[600], b[600];
    memset(a, 'x', sizeof a);
    memcpy(b, a, sizeof b);
    b[599] = 'y'; // equal in their first 599 bytes
    char fa[GGFS_NAME_MAX + 1], fb[GGFS_NAME_MAX + 1];
    const size_t na = ggfs_name_encode(a, sizeof a, fa);
    const size_t nb = ggfs_name_encode(b, sizeof b, fb);
    EXPECT(na <= GGFS_NAME_MAX && nb <= GGFS_NAME_MAX);
    EXPECT(strcmp(fa, fb) != 0);
    EXPECT(ggfs_name_is_cut(fa, na));
    EXPECT_EQ(fa[na - 9], '~');
    EXPECT(strchr(fa, '/') == NULL);
    return 1;
}

static int test_cut_never_splits_an_escape_or_utf8(void)
{
    char name[400];
    for (size_t i = 0; i < sizeof name; i += 2)
        memcpy(name + i, "\xc3\xa9", 2); // é repeated
    char f[GGFS_NAME_MAX + 1];
    size_t n = ggfs_name_encode(name, sizeof name, f);
    EXPECT_EQ((n - 9) % 2, 0);
    memset(name, '/', sizeof name);
    n = ggfs_name_encode(name, sizeof name, f);
    EXPECT_EQ((n - 9) % 3, 0);
    return 1;
}

static int test_exactly_255_bytes_is_not_cut(void)
{
    char name[255];
    memset(name, 'n', sizeof name);
    char f[GGFS_NAME_MAX + 1];
    EXPECT_EQ(ggfs_name_encode(name, sizeof name, f), 255);
    EXPECT(memcmp(f, name, 255) == 0);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_escapes_reverse();
    ok &= test_malformed_escapes_decode_to_nothing();
    ok &= test_long_names_cut_and_stay_distinct();
    ok &= test_cut_never_splits_an_escape_or_utf8();
    ok &= test_exactly_255_bytes_is_not_cut();
    return ok ? 0 : 1;
}
