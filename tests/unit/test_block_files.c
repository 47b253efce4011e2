/*
 * The memory cache's files by URL (source/block_files.h): two opens of
 * one URL at the same validator and size share one key, and so the
 * blocks the first brought; a changed ETag, Last-Modified or size gives a
 * new key and drops the old blocks; past its bound the least recently
 * opened URL is forgotten. What any open of the same bytes was told was
 * published of them stays, whichever open was told most.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "source/block_cache.h"
#include "source/block_files.h"
#include "util/clock.h"

#define BLOCK 4096

static ggfs_url_record record(const char *url, const char *etag, const char *last_modified, uint64_t size)
{
    return (ggfs_url_record){
        .url = (char *)url, .etag = (char *)etag, .last_modified = (char *)last_modified, .size = size, .mtime = 7,
    };
}

/* Block 0 of key, filled with byte. */
static int put_block(ggfs_block_cache *c, uint64_t key, uint8_t byte)
{
    ggfs_block *b = ggfs_block_claim(c, key, 0);
    EXPECT(b != NULL);
    memset(b->data, byte, BLOCK);
    ggfs_block_publish(c, b, BLOCK);
    ggfs_block_release(c, b);
    return 1;
}

/* Whether block 0 of key is in memory with that byte. */
static bool has_block(ggfs_block_cache *c, uint64_t key, uint8_t byte)
{
    ggfs_block *b = ggfs_block_find(c, key, 0);
    const bool ok = b && b->len == BLOCK && b->data[0] == byte && b->data[BLOCK - 1] == byte;
    if (b)
        ggfs_block_release(c, b);
    return ok;
}

static int test_same_etag_shares_blocks(ggfs_block_cache *c, ggfs_block_files *t)
{
    const ggfs_url_record a = record("http://h/m.gguf", "\"a\"", NULL, 100);
    const uint64_t k1 = ggfs_block_files_key(t, &a);
    EXPECT(k1 != 0);
    EXPECT(put_block(c, k1, 0x5a));
    // The first source closed; the second finds the first one's block.
    const uint64_t k2 = ggfs_block_files_key(t, &a);
    EXPECT_EQ(k2, k1);
    EXPECT(has_block(c, k2, 0x5a));
    // What the open learnt is there for a later open to take.
    ggfs_url_record got;
    uint64_t key = 0;
    int64_t checked = 0;
    const int64_t before = ggfs_now_ns();
    EXPECT_EQ(ggfs_block_files_key(t, &a), k1);
    EXPECT(ggfs_block_files_find(t, "http://h/m.gguf", &got, &key, &checked));
    // when the server last named them: the key just asked
    EXPECT(checked >= before && checked <= ggfs_now_ns());
    EXPECT_EQ(key, k1);
    EXPECT_STR(got.etag, "\"a\"");
    EXPECT(got.last_modified == NULL);
    EXPECT_EQ(got.size, 100);
    EXPECT_EQ(got.mtime, 7);
    ggfs_url_record_destroy(&got);
    // Another URL is another file.
    const ggfs_url_record other = record("http://h/n.gguf", "\"a\"", NULL, 100);
    const uint64_t k3 = ggfs_block_files_key(t, &other);
    EXPECT(k3 != k1);
    EXPECT(!has_block(c, k3, 0x5a));
    return 1;
}

static int test_changed_file_gets_new_key(ggfs_block_cache *c, ggfs_block_files *t)
{
    const ggfs_url_record a = record("http://h/m.gguf", "\"a\"", NULL, 100);
    const uint64_t k1 = ggfs_block_files_key(t, &a);
    EXPECT(put_block(c, k1, 0x11));
    // A new ETag: a new key, and the old bytes dropped.
    const ggfs_url_record b = record("http://h/m.gguf", "\"b\"", NULL, 100);
    const uint64_t k2 = ggfs_block_files_key(t, &b);
    EXPECT(k2 != k1);
    EXPECT(!has_block(c, k2, 0x11));
    EXPECT(!has_block(c, k1, 0x11));
    ggfs_url_record got;
    uint64_t key = 0;
    int64_t checked = 0;
    EXPECT(ggfs_block_files_find(t, "http://h/m.gguf", &got, &key, &checked));
    EXPECT_EQ(key, k2);
    EXPECT_STR(got.etag, "\"b\"");
    ggfs_url_record_destroy(&got);
    // The same ETag at another size is another file too.
    const ggfs_url_record bigger = record("http://h/m.gguf", "\"b\"", NULL, 200);
    EXPECT(ggfs_block_files_key(t, &bigger) != k2);
    // Without an ETag, Last-Modified decides.
    const ggfs_url_record l1 = record("http://h/l.gguf", NULL, "Mon, 01 Jan 2024 00:00:00 GMT", 100);
    const ggfs_url_record l2 = record("http://h/l.gguf", NULL, "Tue, 02 Jan 2024 00:00:00 GMT", 100);
    const uint64_t kl = ggfs_block_files_key(t, &l1);
    EXPECT_EQ(ggfs_block_files_key(t, &l1), kl);
    EXPECT(ggfs_block_files_key(t, &l2) != kl);
    // An ETag appearing where there was none is a change.
    const ggfs_url_record l3 = record("http://h/l.gguf", "\"c\"", "Tue, 02 Jan 2024 00:00:00 GMT", 100);
    const uint64_t k3 = ggfs_block_files_key(t, &l3);
    EXPECT(ggfs_block_files_key(t, &l2) != k3);
    return 1;
}

static int test_bounded(ggfs_block_cache *c, ggfs_block_files *t)
{
    const ggfs_url_record a = record("http://h/a", "\"1\"", NULL, 1);
    const ggfs_url_record b = record("http://h/b", "\"1\"", NULL, 1);
    const ggfs_url_record d = record("http://h/d", "\"1\"", NULL, 1);
    const uint64_t ka = ggfs_block_files_key(t, &a);
    const uint64_t kb = ggfs_block_files_key(t, &b);
    EXPECT(put_block(c, kb, 0x22));
    EXPECT_EQ(ggfs_block_files_key(t, &a), ka); // a opened last now: b is the oldest
    ggfs_block_files_key(t, &d);
    ggfs_url_record got;
    uint64_t key;
    int64_t checked;
    EXPECT(!ggfs_block_files_find(t, "http://h/b", &got, &key, &checked));
    // Forgotten, not changed: its blocks go only as the cache's bound says.
    EXPECT(has_block(c, kb, 0x22));
    EXPECT(ggfs_block_files_find(t, "http://h/a", &got, &key, &checked));
    EXPECT_EQ(key, ka);
    ggfs_url_record_destroy(&got);
    EXPECT(ggfs_block_files_find(t, "http://h/d", &got, &key, &checked));
    ggfs_url_record_destroy(&got);
    // Opened again, b is a file the table does not know: a fresh key.
    EXPECT(ggfs_block_files_key(t, &b) != kb);
    return 1;
}

static int test_most_published_stays(ggfs_block_cache *c, ggfs_block_files *t)
{
    (void)c;
    ggfs_url_record a = record("http://h/m.gguf", "\"a\"", NULL, 100);
    EXPECT(ggfs_published_set_hex(&a.published, GGFS_PUBLISHED_SHA256,
                                  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", 64,
                                  "x-amz-checksum-sha256"));
    const uint64_t k = ggfs_block_files_key(t, &a);
    // A later open asked for one byte, and was told only the ETag's MD5.
    ggfs_url_record b = record("http://h/m.gguf", "\"a\"", NULL, 100);
    EXPECT(ggfs_published_set_hex(&b.published, GGFS_PUBLISHED_MD5, "098f6bcd4621d373cade4e832627b4f6", 32, "ETag"));
    EXPECT_EQ(ggfs_block_files_key(t, &b), k);
    ggfs_url_record got;
    uint64_t key;
    int64_t checked;
    EXPECT(ggfs_block_files_find(t, "http://h/m.gguf", &got, &key, &checked));
    EXPECT_EQ(got.published.kind, GGFS_PUBLISHED_SHA256);
    ggfs_url_record_destroy(&got);
    // An open told only the MD5 first, then one told the checksum.
    ggfs_url_record c1 = record("http://h/n.gguf", "\"a\"", NULL, 100), c2 = c1;
    c1.published = b.published;
    c2.published = a.published;
    ggfs_block_files_key(t, &c1);
    ggfs_block_files_key(t, &c2);
    EXPECT(ggfs_block_files_find(t, "http://h/n.gguf", &got, &key, &checked));
    EXPECT_STR(got.published.where, "x-amz-checksum-sha256");
    ggfs_url_record_destroy(&got);
    return 1;
}

/* Runs test over a fresh cache of 16 blocks and a table of `max` URLs. */
static int with_files(size_t max, int (*test)(ggfs_block_cache *, ggfs_block_files *))
{
    ggfs_block_cache *c = ggfs_block_cache_new(BLOCK, 16 * BLOCK);
    ggfs_block_files *t = c ? ggfs_block_files_new(c, max) : NULL;
    const int ok = t && test(c, t);
    ggfs_block_files_free(t);
    ggfs_block_cache_free(c);
    return ok;
}

int main(void)
{
    int ok = 1;
    ok &= with_files(8, test_same_etag_shares_blocks);
    ok &= with_files(8, test_changed_file_gets_new_key);
    ok &= with_files(2, test_bounded); // a, b, then d: one goes
    ok &= with_files(8, test_most_published_stays);
    return ok ? 0 : 1;
}
