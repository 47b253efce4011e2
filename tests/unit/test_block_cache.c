/*
 * The block cache under its bound: each new block makes the oldest unused
 * one go, also when that one ends the chain the new key hashes to (the new
 * block must then not be linked through the one gone); every block keeps
 * its key and bytes, and the cache holds no more than its bound.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "source/block_cache.h"

#define BLOCK 4096
#define KEYS 4096 // many times the table's 64 buckets: chains share them

/* Claims, fills, publishes and releases blocks 0..KEYS-1 of one file in a
 * cache of `kept` blocks; each must be found afterwards only while kept. */
static int fill_in_turn(uint64_t kept)
{
    ggfs_block_cache *c = ggfs_block_cache_new(BLOCK, kept * BLOCK);
    EXPECT(c != NULL);
    const uint64_t source = ggfs_block_cache_source_id(c);
    for (uint64_t i = 0; i < KEYS; i++) {
        ggfs_block *b = ggfs_block_claim(c, source, i);
        EXPECT(b != NULL);
        EXPECT(b->index == i);
        memset(b->data, (int)(i & 0xff), BLOCK);
        ggfs_block_publish(c, b, BLOCK);
        ggfs_block_release(c, b);
        EXPECT(ggfs_block_cache_source_bytes(c, source) <= (kept ? kept : 1) * BLOCK);
    }
    // The newest `kept` are there, whole; the others went.
    for (uint64_t i = 0; i < KEYS; i++) {
        ggfs_block *b = ggfs_block_find(c, source, i);
        if (i + kept < KEYS) {
            EXPECT(b == NULL);
            continue;
        }
        EXPECT(b != NULL);
        EXPECT(b->len == BLOCK);
        EXPECT(b->data[0] == (uint8_t)(i & 0xff) && b->data[BLOCK - 1] == (uint8_t)(i & 0xff));
        ggfs_block_release(c, b);
    }
    ggfs_block_cache_free(c);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= fill_in_turn(1);
    ok &= fill_in_turn(3);
    ok &= fill_in_turn(64);
    return ok ? 0 : 1;
}
