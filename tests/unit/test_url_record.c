/*
 * A URL's record (fs/source/url_record.c) keeps what its open was told was
 * published of the file, so that an offline mount still has it: a digest
 * and size written and read back, a record without one (an older one) read
 * as publishing nothing, a size alone, and a published object that is not
 * whole or names where in more than one line refused as a bad record,
 * naming the record's file.
 */
#include "tmptree.h" // first: it asks for _GNU_SOURCE

#include <stdint.h>
#include <string.h>

#include "check.h"
#include "source/url_record.h"

#define NAME "hf://org/repo/m.gguf"
#define SHA_HEX "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

static int test_published_kept(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    char url[] = "https://hub.test/org/repo/resolve/main/m.gguf", etag[] = "\"e\"";
    ggfs_url_record r = {.url = url, .size = 4096, .etag = etag, .mtime = 1700000000};
    EXPECT(ggfs_published_set_hex(&r.published, GGFS_PUBLISHED_SHA256, SHA_HEX, 64, "X-Linked-Etag"));
    r.published.size = 4096;
    char why[512] = "";
    EXPECT(ggfs_url_record_put(root, NAME, &r, why, sizeof why));
    ggfs_url_record got;
    EXPECT_EQ(ggfs_url_record_get(root, NAME, &got, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    EXPECT(memcmp(&got.published, &r.published, sizeof r.published) == 0);
    ggfs_url_record_destroy(&got);
    // An MD5 (S3's ETag), and nothing at all.
    memset(&r.published, 0, sizeof r.published);
    EXPECT(ggfs_published_set_hex(&r.published, GGFS_PUBLISHED_MD5, "098f6bcd4621d373cade4e832627b4f6", 32, "ETag"));
    EXPECT(ggfs_url_record_put(root, NAME, &r, why, sizeof why));
    EXPECT_EQ(ggfs_url_record_get(root, NAME, &got, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    EXPECT(memcmp(&got.published, &r.published, sizeof r.published) == 0);
    ggfs_url_record_destroy(&got);
    memset(&r.published, 0, sizeof r.published);
    EXPECT(ggfs_url_record_put(root, NAME, &r, why, sizeof why));
    EXPECT_EQ(ggfs_url_record_get(root, NAME, &got, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    EXPECT_EQ(got.published.kind, GGFS_PUBLISHED_NONE);
    EXPECT_EQ(got.published.size, 0);
    ggfs_url_record_destroy(&got);
    tmptree_free(root);
    return 1;
}

/* Puts JSON text as the record of NAME; its status read back, the record
 * (when found) in *out, why filled. */
static ggfs_cache_record_status put_text(const char *root, const char *json, ggfs_url_record *out, char *why,
                                         size_t cap)
{
    if (!ggfs_cache_record_put(root, GGFS_URL_RECORD_KIND, NAME, json, strlen(json), why, cap))
        return GGFS_CACHE_RECORD_BAD;
    return ggfs_url_record_get(root, NAME, out, why, cap);
}

#define HEAD "{\"url\": \"https://h/m.gguf\", \"size\": 10, \"etag\": \"e\", \"last_modified\": null, \"mtime\": 1"

static int test_published_read_strictly(void)
{
    char *root = tmptree_new();
    EXPECT(root);
    char why[512] = "";
    ggfs_url_record got;
    // A record an older version wrote: nothing published.
    EXPECT_EQ(put_text(root, HEAD "}", &got, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    EXPECT_EQ(got.published.kind, GGFS_PUBLISHED_NONE);
    ggfs_url_record_destroy(&got);
    EXPECT_EQ(put_text(root, HEAD ", \"published\": null}", &got, why, sizeof why), GGFS_CACHE_RECORD_FOUND);
    ggfs_url_record_destroy(&got);
    // A size alone.
    EXPECT_EQ(put_text(root, HEAD ", \"published\": {\"kind\": null, \"size\": 10}}", &got, why, sizeof why),
              GGFS_CACHE_RECORD_FOUND);
    EXPECT_EQ(got.published.kind, GGFS_PUBLISHED_NONE);
    EXPECT_EQ(got.published.size, 10);
    ggfs_url_record_destroy(&got);
    static const char *const bad[] = {
        HEAD ", \"published\": 5}",
        HEAD ", \"published\": {\"kind\": \"sha256\", \"digest\": \"" SHA_HEX "\", \"where\": \"w\"}}",
        HEAD ", \"published\": {\"kind\": \"sha1\", \"digest\": \"" SHA_HEX "\", \"where\": \"w\", \"size\": 0}}",
        HEAD ", \"published\": {\"kind\": \"md5\", \"digest\": \"" SHA_HEX "\", \"where\": \"w\", \"size\": 0}}",
        HEAD ", \"published\": {\"kind\": \"sha256\", \"digest\": \"" SHA_HEX "\", \"where\": \"a\\nb\", \"size\": 0}}",
        HEAD ", \"published\": {\"kind\": \"sha256\", \"digest\": \"" SHA_HEX "\", \"where\": 3, \"size\": 0}}",
        HEAD ", \"published\": {\"kind\": \"sha256\", \"digest\": \"" SHA_HEX "\", \"where\": \"w\", \"size\": -1}}",
        HEAD ", \"published\": {\"kind\": \"sha256\", \"digest\": \"" SHA_HEX "\", \"where\": \"w\", "
             "\"size\": 4611686018427387905}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        if (put_text(root, bad[i], &got, why, sizeof why) != GGFS_CACHE_RECORD_BAD) {
            fprintf(stderr, "bad record %zu was read\n", i);
            ggfs_url_record_destroy(&got);
            return 0;
        }
        EXPECT(strstr(why, GGFS_CACHE_RECORD_SUBDIR "/") != NULL);
        EXPECT(strstr(why, "published") != NULL);
    }
    tmptree_free(root);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_published_kept();
    ok &= test_published_read_strictly();
    return ok ? 0 : 1;
}
