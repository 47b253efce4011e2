/*
 * The block cache: a hash table of blocks under one mutex that is held
 * only for table and list updates, never while bytes move over the
 * network. Unused ready blocks sit on an LRU list; the oldest go when the
 * cache is over its bound, and their memory goes to new blocks
 * (block_memory.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "source/block_cache.h"
#include "source/block_memory.h"
#include "util/clock.h"
#include "util/cond.h"
#include "util/dlist.h"

#define MAX_SPARES 8

struct ggfs_block_cache {
    pthread_mutex_t lock;
    pthread_cond_t settled;     // a block became ready or was abandoned
    size_t block_size;
    uint64_t capacity;          // blocks kept
    uint64_t count;             // blocks in the table
    ggfs_block **buckets;
    uint64_t mask;
    ggfs_dlink lru;             // unused ready blocks, the oldest at the front
    ggfs_block_memory *memory;
    uint64_t next_source;
};

ggfs_block_cache *ggfs_block_cache_new(size_t block_size, uint64_t capacity_bytes)
{
    ggfs_block_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->block_size = block_size;
    c->capacity = capacity_bytes / block_size;
    uint64_t buckets = 64;
    while (buckets < 2 * c->capacity && buckets < (UINT64_C(1) << 24))
        buckets *= 2;
    c->buckets = calloc(buckets, sizeof *c->buckets);
    c->memory = ggfs_block_memory_new(block_size, MAX_SPARES);
    if (!c->buckets || !c->memory) {
        free(c->buckets);
        ggfs_block_memory_free(c->memory);
        free(c);
        return NULL;
    }
    c->mask = buckets - 1;
    ggfs_dlist_init(&c->lru);
    pthread_mutex_init(&c->lock, NULL);
    ggfs_cond_init_monotonic(&c->settled);
    c->next_source = 1;
    return c;
}

static void free_block(ggfs_block_cache *c, ggfs_block *b)
{
    ggfs_block_memory_give(c->memory, b->data);
    free(b);
}

void ggfs_block_cache_free(ggfs_block_cache *c)
{
    if (!c)
        return;
    for (uint64_t i = 0; i <= c->mask; i++) {
        for (ggfs_block *b = c->buckets[i], *next; b; b = next) {
            next = b->hash_next;
            free(b);
        }
    }
    ggfs_block_memory_free(c->memory);
    free(c->buckets);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->settled);
    free(c);
}

size_t ggfs_block_cache_block_size(const ggfs_block_cache *c)
{
    return c->block_size;
}

uint64_t ggfs_block_cache_source_id(ggfs_block_cache *c)
{
    pthread_mutex_lock(&c->lock);
    const uint64_t id = c->next_source++;
    pthread_mutex_unlock(&c->lock);
    return id;
}

/* ==== Under the lock ==== */

static ggfs_block **slot_of(ggfs_block_cache *c, uint64_t source, uint64_t index)
{
    uint64_t h = (source * UINT64_C(0x9e3779b97f4a7c15)) ^ (index * UINT64_C(0xc2b2ae3d27d4eb4f));
    h ^= h >> 29;
    ggfs_block **p = &c->buckets[h & c->mask];
    while (*p && ((*p)->source != source || (*p)->index != index))
        p = &(*p)->hash_next;
    return p;
}

static ggfs_block *block_of(ggfs_dlink *link)
{
    return GGFS_CONTAINER_OF(link, ggfs_block, lru);
}

static void unhash(ggfs_block_cache *c, ggfs_block *b)
{
    ggfs_block **p = slot_of(c, b->source, b->index);
    if (*p == b) {
        *p = b->hash_next;
        c->count--;
    }
}

/* Drops the oldest unused blocks until at most `keep` blocks remain. */
static void shrink_to(ggfs_block_cache *c, uint64_t keep)
{
    ggfs_dlink *oldest;
    while (c->count > keep && (oldest = ggfs_dlist_front(&c->lru)) != NULL) {
        ggfs_block *old = block_of(oldest);
        ggfs_dlist_remove(&old->lru);
        unhash(c, old);
        free_block(c, old);
    }
}

/* A new block for a key that is not in the table, claimed by the caller. */
static ggfs_block *insert_claimed(ggfs_block_cache *c, uint64_t source, uint64_t index)
{
    shrink_to(c, c->capacity > 0 ? c->capacity - 1 : 0);
    // Looked up only now: the block the key's chain ended in may just have
    // gone, and with it a slot found before.
    ggfs_block **slot = slot_of(c, source, index);
    ggfs_block *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->data = ggfs_block_memory_take(c->memory);
    if (!b->data) {
        free(b);
        return NULL;
    }
    b->source = source;
    b->index = index;
    b->refs = 1;
    b->progress_ns = ggfs_now_ns();
    b->hash_next = NULL;
    *slot = b;
    c->count++;
    return b;
}

static void hold(ggfs_block *b)
{
    if (b->refs++ == 0 && ggfs_dlist_linked(&b->lru))
        ggfs_dlist_remove(&b->lru);
}

/* ==== Interface ==== */

ggfs_block *ggfs_block_get(ggfs_block_cache *c, uint64_t source, uint64_t index,
                           int64_t deadline_ns, int64_t patience_ns, bool *claimed)
{
    *claimed = false;
    pthread_mutex_lock(&c->lock);
    ggfs_block *b;
    for (;;) {
        b = *slot_of(c, source, index);
        if (!b) {
            b = insert_claimed(c, source, index);
            *claimed = b != NULL;
            break;
        }
        if (b->ready) {
            hold(b);
            break;
        }
        // Looked at again on every wake-up: the load may have made
        // progress, or failed, meanwhile.
        int64_t until = b->progress_ns + patience_ns;
        if (until > deadline_ns)
            until = deadline_ns;
        if (ggfs_now_ns() >= until) {
            b = NULL;
            break;
        }
        const struct timespec ts = ggfs_timespec_at(until);
        pthread_cond_timedwait(&c->settled, &c->lock, &ts);
    }
    pthread_mutex_unlock(&c->lock);
    return b;
}

ggfs_block *ggfs_block_find(ggfs_block_cache *c, uint64_t source, uint64_t index)
{
    pthread_mutex_lock(&c->lock);
    ggfs_block *b = *slot_of(c, source, index);
    if (b && b->ready)
        hold(b);
    else
        b = NULL;
    pthread_mutex_unlock(&c->lock);
    return b;
}

ggfs_block *ggfs_block_claim(ggfs_block_cache *c, uint64_t source, uint64_t index)
{
    pthread_mutex_lock(&c->lock);
    ggfs_block *b = *slot_of(c, source, index) ? NULL : insert_claimed(c, source, index);
    pthread_mutex_unlock(&c->lock);
    return b;
}

bool ggfs_block_known(ggfs_block_cache *c, uint64_t source, uint64_t index)
{
    pthread_mutex_lock(&c->lock);
    const bool known = *slot_of(c, source, index) != NULL;
    pthread_mutex_unlock(&c->lock);
    return known;
}

static void release_locked(ggfs_block_cache *c, ggfs_block *b, bool cold)
{
    if (--b->refs > 0)
        return;
    if (cold)
        ggfs_dlist_push_front(&c->lru, &b->lru);
    else
        ggfs_dlist_push_back(&c->lru, &b->lru);
    shrink_to(c, c->capacity);
}

void ggfs_block_publish(ggfs_block_cache *c, ggfs_block *b, size_t len)
{
    pthread_mutex_lock(&c->lock);
    b->len = len;
    b->ready = true;
    pthread_cond_broadcast(&c->settled);
    pthread_mutex_unlock(&c->lock);
}

void ggfs_block_progress(ggfs_block_cache *c, ggfs_block *const *blocks, unsigned n)
{
    if (n == 0)
        return;
    const int64_t now = ggfs_now_ns();
    pthread_mutex_lock(&c->lock);
    for (unsigned i = 0; i < n; i++)
        blocks[i]->progress_ns = now;
    pthread_mutex_unlock(&c->lock);
}

void ggfs_block_abandon(ggfs_block_cache *c, ggfs_block *b)
{
    pthread_mutex_lock(&c->lock);
    unhash(c, b);
    free_block(c, b);
    pthread_cond_broadcast(&c->settled);
    pthread_mutex_unlock(&c->lock);
}

void ggfs_block_release(ggfs_block_cache *c, ggfs_block *b)
{
    pthread_mutex_lock(&c->lock);
    release_locked(c, b, false);
    pthread_mutex_unlock(&c->lock);
}

void ggfs_block_release_cold(ggfs_block_cache *c, ggfs_block *b)
{
    pthread_mutex_lock(&c->lock);
    release_locked(c, b, true);
    pthread_mutex_unlock(&c->lock);
}

uint64_t ggfs_block_cache_source_bytes(ggfs_block_cache *c, uint64_t source)
{
    uint64_t bytes = 0;
    pthread_mutex_lock(&c->lock);
    for (uint64_t i = 0; i <= c->mask; i++)
        for (const ggfs_block *b = c->buckets[i]; b; b = b->hash_next)
            if (b->source == source && b->ready)
                bytes += b->len;
    pthread_mutex_unlock(&c->lock);
    return bytes;
}

void ggfs_block_cache_drop_source(ggfs_block_cache *c, uint64_t source)
{
    pthread_mutex_lock(&c->lock);
    for (ggfs_dlink *l = c->lru.next, *next; l != &c->lru; l = next) {
        next = l->next;
        ggfs_block *b = block_of(l);
        if (b->source == source) {
            ggfs_dlist_remove(&b->lru);
            unhash(c, b);
            free_block(c, b);
        }
    }
    pthread_mutex_unlock(&c->lock);
}
