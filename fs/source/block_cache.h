/*
 * The memory cache of remote files: fixed-size blocks, shared by every
 * remote source of a mount, bounded in bytes (-o cache_mb=N), least
 * recently used blocks dropped first.
 *
 * Each block has one loader. The first reader of a missing block claims
 * it and fetches it with no lock held; readers of the same block wait for
 * it, readers of other blocks never do. Blocks in use are never dropped, so
 * the cache may pass its bound by the blocks in flight.
 */
#ifndef GGFS_SOURCE_BLOCK_CACHE_H
#define GGFS_SOURCE_BLOCK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/dlist.h"

typedef struct ggfs_block_cache ggfs_block_cache;

typedef struct ggfs_block {
    uint64_t source;          // which file (ggfs_block_cache_source_id)
    uint64_t index;           // which block of it
    uint8_t *data;            // block_size bytes; len of them valid when ready
    size_t len;
    bool ready;
    int64_t progress_ns;      // CLOCK_MONOTONIC when its load started or
                              // last made progress
    unsigned refs;            // holders: readers, and the loader while loading
    struct ggfs_block *hash_next;
    ggfs_dlink lru;         // on the cache's list: unused ready blocks only
} ggfs_block;

/* NULL when out of memory. capacity_bytes may be 0 (blocks live only
 * while in use). */
ggfs_block_cache *ggfs_block_cache_new(size_t block_size, uint64_t capacity_bytes);
void ggfs_block_cache_free(ggfs_block_cache *cache);

size_t ggfs_block_cache_block_size(const ggfs_block_cache *cache);

/* A fresh key for one file's blocks. */
uint64_t ggfs_block_cache_source_id(ggfs_block_cache *cache);

/* The block, held for the caller (release it). When it is ready, returns
 * it with *claimed false. When another thread is loading it, waits until
 * it is ready (or, should that load fail, claims it), but not past
 * deadline_ns nor past patience_ns after that load last made progress
 * (then NULL).
 * When it is missing, returns it claimed: the caller fills data and
 * publishes it, or abandons it. NULL also when out of memory. */
ggfs_block *ggfs_block_get(ggfs_block_cache *cache, uint64_t source, uint64_t index,
                           int64_t deadline_ns, int64_t patience_ns, bool *claimed);

/* The block held for the caller when it is ready; NULL when it is missing
 * or still loading. Never waits, never claims. */
ggfs_block *ggfs_block_find(ggfs_block_cache *cache, uint64_t source, uint64_t index);

/* Claims the block when it is neither present nor being loaded (read-ahead,
 * or extending a fetch to the following blocks); NULL otherwise. */
ggfs_block *ggfs_block_claim(ggfs_block_cache *cache, uint64_t source, uint64_t index);

/* Whether the block is present or being loaded. */
bool ggfs_block_known(ggfs_block_cache *cache, uint64_t source, uint64_t index);

/* The loader's block now holds len valid bytes: waiters wake, and the
 * loader's hold becomes an ordinary one (release it). */
void ggfs_block_publish(ggfs_block_cache *cache, ggfs_block *block, size_t len);

/* The load of these claimed blocks is making progress (a request bringing
 * them in turn has just brought the one before): their waiters' patience
 * starts again. */
void ggfs_block_progress(ggfs_block_cache *cache, ggfs_block *const *blocks, unsigned n);

/* The load failed: the block goes, and a waiter claims it in turn. Ends
 * the loader's hold. */
void ggfs_block_abandon(ggfs_block_cache *cache, ggfs_block *block);

void ggfs_block_release(ggfs_block_cache *cache, ggfs_block *block);

/* The same, for a block nobody asked for yet that is kept elsewhere too (a
 * prefetched block, on disk): first to go when room is needed. */
void ggfs_block_release_cold(ggfs_block_cache *cache, ggfs_block *block);

/* Bytes of a file's blocks in memory now. */
uint64_t ggfs_block_cache_source_bytes(ggfs_block_cache *cache, uint64_t source);

/* Drops the unused blocks of a file (it is being closed). */
void ggfs_block_cache_drop_source(ggfs_block_cache *cache, uint64_t source);

#endif
