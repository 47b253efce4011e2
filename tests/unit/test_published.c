/*
 * Published digests (fs/source/published.c): hex of exactly the digest's
 * length in either case, base64 of exactly its padded length with zero
 * trailing bits; anything else leaves the record as it was.
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

int main(void)
{
    int ok = 1;
    ok &= test_hex();
    ok &= test_base64();
    return ok ? 0 : 1;
}
