/*
 * What the answers to a remote source's open publish of its bytes
 * (fs/source/response_headers.c): the Hub's X-Linked-Etag (a SHA-256,
 * never a git SHA-1) and X-Linked-Size, S3's x-amz-checksum-sha256 (never
 * a multipart's) and single-part ETag (never an SSE-KMS or SSE-C
 * object's), each value checked whole, and only the name's own origin
 * believed: a CDN a redirect leads to publishes nothing.
 */
#include <string.h>

#include "check.h"
#include "source/response_headers.h"

#define SHA_HEX "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" // sha256("test")
#define SHA_B64 "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="
#define MD5_HEX "098f6bcd4621d373cade4e832627b4f6" // md5("test")

static const char hub[] = "https://hub.test/org/repo/resolve/main/m.gguf";
static const char bucket[] = "http://127.0.0.1:9000/bucket/m.gguf";

static int parses(bool (*parse)(const char *, size_t, ggfs_published *), const char *value)
{
    ggfs_published p = {0};
    return parse(value, strlen(value), &p);
}

static int test_size_header(void)
{
    uint64_t n = 7;
    EXPECT(ggfs_size_header_parse("4096", 4, &n));
    EXPECT_EQ(n, 4096);
    EXPECT(ggfs_size_header_parse("4611686018427387904", 19, &n)); // 2^62
    EXPECT_EQ(n, UINT64_C(1) << 62);
    n = 7;
    EXPECT(!ggfs_size_header_parse("4611686018427387905", 19, &n));
    EXPECT(!ggfs_size_header_parse("99999999999999999999999", 23, &n));
    EXPECT(!ggfs_size_header_parse("", 0, &n));
    EXPECT(!ggfs_size_header_parse("12a", 3, &n));
    EXPECT(!ggfs_size_header_parse("-1", 2, &n));
    EXPECT(!ggfs_size_header_parse("1 2", 3, &n));
    EXPECT(ggfs_size_header_parse("123", 2, &n)); // only the length given is read
    EXPECT_EQ(n, 12);
    return 1;
}

static int test_linked_etag(void)
{
    ggfs_published p = {0};
    EXPECT(ggfs_linked_etag_parse("\"" SHA_HEX "\"", 66, &p));
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_EQ(p.digest[0], 0x9f);
    EXPECT_STR(p.where, "X-Linked-Etag");
    EXPECT(parses(ggfs_linked_etag_parse, SHA_HEX));
    EXPECT(parses(ggfs_linked_etag_parse, "W/\"" SHA_HEX "\""));
    // A file kept in git: its blob's SHA-1, no digest of the bytes alone.
    EXPECT(!parses(ggfs_linked_etag_parse, "\"a94a8fe5ccb19ba61c4c0873d391e987982fbbd3\""));
    EXPECT(!parses(ggfs_linked_etag_parse, "\"" SHA_HEX "0\""));
    EXPECT(!parses(ggfs_linked_etag_parse, "\"" SHA_HEX));
    EXPECT(!parses(ggfs_linked_etag_parse, "\"\""));
    EXPECT(!parses(ggfs_linked_etag_parse, ""));
    EXPECT(!parses(ggfs_linked_etag_parse, "\""));
    return 1;
}

static int test_s3_values(void)
{
    ggfs_published p = {0};
    EXPECT(ggfs_s3_checksum_parse(SHA_B64, strlen(SHA_B64), &p));
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_EQ(p.digest[31], 0x08);
    EXPECT_STR(p.where, "x-amz-checksum-sha256");
    // A multipart upload's checksum of its parts' checksums.
    EXPECT(!parses(ggfs_s3_checksum_parse, SHA_B64 "-3"));
    EXPECT(!parses(ggfs_s3_checksum_parse, SHA_HEX));
    EXPECT(ggfs_s3_etag_md5("\"" MD5_HEX "\"", 34, &p));
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_MD5);
    EXPECT_EQ(p.digest[15], 0xf6);
    EXPECT_STR(p.where, "ETag");
    EXPECT(!parses(ggfs_s3_etag_md5, "\"" MD5_HEX "-2\""));
    EXPECT(!parses(ggfs_s3_etag_md5, "\"d41d8cd98f00b204e9800998ecf8427e-12\""));
    EXPECT(!parses(ggfs_s3_etag_md5, MD5_HEX));
    EXPECT(!parses(ggfs_s3_etag_md5, "W/\"" MD5_HEX "\""));
    EXPECT(!parses(ggfs_s3_etag_md5, "\"" MD5_HEX "x"));
    return 1;
}

/* Feeds lines[] (each a header line with its CRLF, a URL before each
 * answer's status line: "@URL") to a collector for the name's url. */
static ggfs_published collect(const char *url, bool is_hub, bool is_s3, const char *const *lines)
{
    ggfs_published_headers h;
    ggfs_published_headers_init(&h, url, is_hub, is_s3);
    const char *at = url;
    for (size_t i = 0; lines[i]; i++) {
        if (lines[i][0] == '@')
            at = lines[i] + 1;
        else
            ggfs_published_headers_line(&h, at, lines[i], strlen(lines[i]));
    }
    ggfs_published p;
    ggfs_published_headers_result(&h, &p);
    return p;
}

static int test_hub_answers(void)
{
    // The resolve answer, then the CDN's, which may say what it likes.
    const char *const redirect[] = {
        "HTTP/1.1 302 Found\r\n", "Location: https://cdn.test/xet/abc\r\n",
        "x-linked-etag: \"" SHA_HEX "\"\r\n", "X-Linked-Size: 4096\r\n", "\r\n",
        "@https://cdn.test/xet/abc", "HTTP/1.1 206 Partial Content\r\n",
        "X-Linked-Etag: \"00000000000000000000000000000000000000000000000000000000000000ff\"\r\n",
        "X-Linked-Size: 1\r\n", "ETag: \"" MD5_HEX "\"\r\n", NULL};
    ggfs_published p = collect(hub, true, false, redirect);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_EQ(p.digest[0], 0x9f);
    EXPECT_EQ(p.size, 4096);
    EXPECT_STR(p.where, "X-Linked-Etag");
    // A file kept in git: its size, and no digest.
    const char *const git[] = {"HTTP/1.1 206 Partial Content\r\n",
                               "X-Linked-Etag: \"a94a8fe5ccb19ba61c4c0873d391e987982fbbd3\"\r\n",
                               "X-Linked-Size: 77\r\n", NULL};
    p = collect(hub, true, false, git);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    EXPECT_EQ(p.size, 77);
    // Only the CDN says anything: nothing is published.
    const char *const cdn_only[] = {"HTTP/1.1 302 Found\r\n", "@https://cdn.test/xet/abc",
                                    "HTTP/1.1 206 Partial Content\r\n", "X-Linked-Etag: " SHA_HEX "\r\n",
                                    "X-Linked-Size: 4096\r\n", NULL};
    p = collect(hub, true, false, cdn_only);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    EXPECT_EQ(p.size, 0);
    // Another port of the same host is another origin.
    const char *const other_port[] = {"@https://hub.test:8443/x", "X-Linked-Etag: " SHA_HEX "\r\n", NULL};
    p = collect(hub, true, false, other_port);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    // A size over 2^62, or not a number, is not believed.
    const char *const huge[] = {"X-Linked-Size: 9223372036854775808\r\n", "X-Linked-Size: 12 bytes\r\n", NULL};
    p = collect(hub, true, false, huge);
    EXPECT_EQ(p.size, 0);
    // Nor is anything of the Hub's taken for an S3 object, or the other way.
    p = collect(bucket, false, true, redirect);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    return 1;
}

static int test_s3_answers(void)
{
    const char *const checksum[] = {"HTTP/1.1 206 Partial Content\r\n", "ETag: \"" MD5_HEX "\"\r\n",
                                    "X-Amz-Checksum-Sha256: " SHA_B64 "\r\n", "x-amz-checksum-type: FULL_OBJECT\r\n",
                                    NULL};
    ggfs_published p = collect(bucket, false, true, checksum);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_SHA256);
    EXPECT_STR(p.where, "x-amz-checksum-sha256");
    // No checksum: a single-part ETag is the MD5.
    const char *const etag[] = {"HTTP/1.1 206 Partial Content\r\n", "ETag: \"" MD5_HEX "\"\r\n",
                                "x-amz-server-side-encryption: AES256\r\n", NULL};
    p = collect(bucket, false, true, etag);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_MD5);
    EXPECT_STR(p.where, "ETag");
    // A composite checksum is a multipart's: the ETag then (here none).
    const char *const composite[] = {"HTTP/1.1 206 Partial Content\r\n", "x-amz-checksum-sha256: " SHA_B64 "\r\n",
                                     "x-amz-checksum-type: COMPOSITE\r\n", "ETag: \"" MD5_HEX "-4\"\r\n", NULL};
    p = collect(bucket, false, true, composite);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    // SSE-KMS and SSE-C objects' ETags are no MD5 of their bytes.
    const char *const kms[] = {"HTTP/1.1 206 Partial Content\r\n", "ETag: \"" MD5_HEX "\"\r\n",
                               "x-amz-server-side-encryption: aws:kms\r\n", NULL};
    p = collect(bucket, false, true, kms);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    const char *const dsse[] = {"x-amz-server-side-encryption: aws:kms:dsse\r\n", "ETag: \"" MD5_HEX "\"\r\n", NULL};
    p = collect(bucket, false, true, dsse);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    const char *const sse_c[] = {"ETag: \"" MD5_HEX "\"\r\n",
                                 "x-amz-server-side-encryption-customer-algorithm: AES256\r\n", NULL};
    p = collect(bucket, false, true, sse_c);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    // An answer tried again: the last answer's headers are the object's.
    const char *const retried[] = {"HTTP/1.1 206 Partial Content\r\n", "x-amz-checksum-sha256: " SHA_B64 "\r\n",
                                   "HTTP/1.1 206 Partial Content\r\n", "ETag: \"" MD5_HEX "\"\r\n", NULL};
    p = collect(bucket, false, true, retried);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_MD5);
    // A plain URL's ETag means nothing.
    p = collect("http://127.0.0.1/files/m.gguf", false, false, etag);
    EXPECT_EQ(p.kind, GGFS_PUBLISHED_NONE);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_size_header();
    ok &= test_linked_etag();
    ok &= test_s3_values();
    ok &= test_hub_answers();
    ok &= test_s3_answers();
    return ok ? 0 : 1;
}
