/*
 * Published digests (fs/source/published.c): hex of exactly the digest's
 * length in either case, base64 of exactly its padded length with zero
 * trailing bits; anything else leaves the record as it was. What a store's
 * listing says is taken over what a source's open recorded, its size
 * checked against the file's; of two opens of the same bytes, the one told
 * more stands.
 */
#include <string.h>

#include "check.h"
#include "source/published.h"

static const char sha_hex[] = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"; // sha256("test")
static const char sha_b64[] = "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=";
static const char md5_b64[] = "CY9rzUYh03PK3k6DJie09g=="; // md5("test")
static const char md5_hex[] = "098f6bcd4621d373cade4e832627b4f6";

static int test_hex(void)
{
    ggfs_published p = {0};
    EXPECT(ggfs_published_set_hex(&p, GGFS_PUBLISHED_SHA256, sha_hex, 64, "lfs.oid"));
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_EQ(p.digest[0], 0x9f);
    EXPECT_EQ(p.digest[31], 0x08);
    EXPECT_STR(p.where, "lfs.oid");
    const ggfs_published before = p;
    EXPECT(!ggfs_published_set_hex(&p, GGFS_PUBLISHED_SHA256, sha_hex, 63, "x"));
    EXPECT(!ggfs_published_set_hex(&p, GGFS_PUBLISHED_SHA256, sha_hex, 40, "x")); // a git SHA-1's length
    EXPECT(!ggfs_published_set_hex(&p, GGFS_PUBLISHED_SHA256, "g" "F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08", 64, "x"));
    EXPECT(!ggfs_published_set_hex(&p, GGFS_PUBLISHED_NONE, "", 0, "x"));
    EXPECT(memcmp(&p, &before, sizeof p) == 0);
    EXPECT(ggfs_published_set_hex(&p, GGFS_PUBLISHED_MD5, md5_hex, 32, "ETag"));
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_MD5);
    EXPECT_EQ(p.digest[15], 0xf6);
    EXPECT_EQ(p.digest[16], 0); // the rest cleared
    // where is cut to fit.
    char long_where[100];
    memset(long_where, 'w', sizeof long_where - 1);
    long_where[sizeof long_where - 1] = '\0';
    EXPECT(ggfs_published_set_hex(&p, GGFS_PUBLISHED_MD5, md5_hex, 32, long_where));
    EXPECT_EQ(strlen(p.where), GGFS_PUBLISHED_WHERE_MAX - 1);
    return 1;
}

static int test_base64(void)
{
    ggfs_published p = {0}, q = {0};
    EXPECT(ggfs_published_set_base64(&p, GGFS_PUBLISHED_SHA256, sha_b64, strlen(sha_b64), "x-amz-checksum-sha256"));
    EXPECT(ggfs_published_set_hex(&q, GGFS_PUBLISHED_SHA256, sha_hex, 64, "x-amz-checksum-sha256"));
    EXPECT(memcmp(&p, &q, sizeof p) == 0);
    EXPECT(ggfs_published_set_base64(&p, GGFS_PUBLISHED_MD5, md5_b64, strlen(md5_b64), "m"));
    EXPECT(ggfs_published_set_hex(&q, GGFS_PUBLISHED_MD5, md5_hex, 32, "m"));
    EXPECT(memcmp(&p, &q, sizeof p) == 0);
    const ggfs_published before = p;
    EXPECT(!ggfs_published_set_base64(&p, GGFS_PUBLISHED_SHA256, sha_b64, strlen(sha_b64) - 1, "x"));
    EXPECT(!ggfs_published_set_base64(&p, GGFS_PUBLISHED_SHA256, "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgh=", 44, "x")); // bits left over
    EXPECT(!ggfs_published_set_base64(&p, GGFS_PUBLISHED_SHA256, "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCg==", 44, "x"));
    EXPECT(!ggfs_published_set_base64(&p, GGFS_PUBLISHED_SHA256, "n4bQgYhMfWWaL-qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=", 44, "x"));
    EXPECT(!ggfs_published_set_base64(&p, GGFS_PUBLISHED_MD5, "CY9rzUYh03PK3k6DJie09g=", 23, "x"));
    EXPECT(memcmp(&p, &before, sizeof p) == 0);
    return 1;
}

static int test_size_fits(void)
{
    ggfs_published p = {0};
    char why[200] = "";
    EXPECT(ggfs_published_size_fits(&p, 1234, "X-Linked-Size", why, sizeof why)); // nothing said
    p.size = 1234;
    EXPECT(ggfs_published_size_fits(&p, 1234, "X-Linked-Size", why, sizeof why));
    EXPECT(!ggfs_published_size_fits(&p, 1233, "the hf repo's listing", why, sizeof why));
    EXPECT_STR(why, "offset 0x0: the file has 1233 bytes, the hf repo's listing says 1234");
    return 1;
}

static int test_take(void)
{
    // The source's open saw an X-Linked-Etag and size; the listing names
    // the same file with its oid.
    ggfs_published opened = {0}, listed = {0};
    char why[200] = "";
    EXPECT(ggfs_published_set_hex(&opened, GGFS_PUBLISHED_MD5, md5_hex, 32, "ETag"));
    opened.size = 100;
    EXPECT(ggfs_published_set_hex(&listed, GGFS_PUBLISHED_SHA256, sha_hex, 64, "lfs.oid"));
    listed.size = 100;
    EXPECT(ggfs_published_take(&opened, 100, &listed, "the listing", why, sizeof why));
    EXPECT_EQ(opened.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_STR(opened.where, "lfs.oid");
    EXPECT_EQ(opened.size, 100);
    // A listing of a size alone keeps the digest the open recorded.
    ggfs_published size_only = {.size = 100};
    EXPECT(ggfs_published_take(&opened, 100, &size_only, "the listing", why, sizeof why));
    EXPECT_STR(opened.where, "lfs.oid");
    // A digest without a size keeps the size the open recorded.
    ggfs_published md5 = {0};
    EXPECT(ggfs_published_set_hex(&md5, GGFS_PUBLISHED_MD5, md5_hex, 32, "manifest"));
    EXPECT(ggfs_published_take(&opened, 100, &md5, "the manifest", why, sizeof why));
    EXPECT_EQ(opened.kind, GGFS_PUBLISHED_MD5);
    EXPECT_EQ(opened.size, 100);
    // Another size: refused, naming both, and nothing taken.
    const ggfs_published before = opened;
    EXPECT(!ggfs_published_take(&opened, 99, &listed, "the s3 bucket's listing", why, sizeof why));
    EXPECT_STR(why, "offset 0x0: the file has 99 bytes, the s3 bucket's listing says 100");
    EXPECT(memcmp(&opened, &before, sizeof opened) == 0);
    return 1;
}

static int test_most(void)
{
    ggfs_published none = {0}, md5 = {0}, sha = {0};
    EXPECT(ggfs_published_set_hex(&md5, GGFS_PUBLISHED_MD5, md5_hex, 32, "ETag"));
    EXPECT(ggfs_published_set_hex(&sha, GGFS_PUBLISHED_SHA256, sha_hex, 64, "x-amz-checksum-sha256"));
    EXPECT(ggfs_published_most(&none, &md5) == &md5);
    EXPECT(ggfs_published_most(&md5, &none) == &md5);
    EXPECT(ggfs_published_most(&md5, &sha) == &sha);
    EXPECT(ggfs_published_most(&sha, &md5) == &sha);
    EXPECT(ggfs_published_most(&sha, &sha) == &sha);
    EXPECT(ggfs_published_most(&none, &none) == &none);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_hex();
    ok &= test_base64();
    ok &= test_size_fits();
    ok &= test_take();
    ok &= test_most();
    return ok ? 0 : 1;
}
