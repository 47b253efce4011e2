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

#include "block_cache.h"
#include "block_memory.h"

#define MAX_SPARES 8

struct ggfs_block_cache {
    pthread_mutex_t lock;
    pthread_cond_t settled;     // a block became ready or was abandoned
    size_t block_size;
    uint64_t capacity;          // blocks kept
    uint64_t count;             // blocks in the table
    ggfs_block **buckets;
    uint64_t mask;
    ggfs_block lru;             // sentinel: lru.lru_next is the oldest
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
    c->lru.lru_next = c->lru.lru_prev = &c->lru;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->settled, &attr);
    pthread_condattr_destroy(&attr);
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

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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

static void lru_unlink(ggfs_block *b)
{
    b->lru_prev->lru_next = b->lru_next;
    b->lru_next->lru_prev = b->lru_prev;
    b->lru_next = b->lru_prev = NULL;
}

static void lru_append(ggfs_block_cache *c, ggfs_block *b)
{
    b->lru_prev = c->lru.lru_prev;
    b->lru_next = &c->lru;
    c->lru.lru_prev->lru_next = b;
    c->lru.lru_prev = b;
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
    while (c->count > keep && c->lru.lru_next != &c->lru) {
        ggfs_block *old = c->lru.lru_next;
        lru_unlink(old);
        unhash(c, old);
        free_block(c, old);
    }
}

static ggfs_block *insert_claimed(ggfs_block_cache *c, ggfs_block **slot, uint64_t source,
                                  uint64_t index)
{
    shrink_to(c, c->capacity > 0 ? c->capacity - 1 : 0);
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
    b->progress_ns = now_ns();
    b->hash_next = NULL;
    *slot = b;
    c->count++;
    return b;
}

static void hold(ggfs_block *b)
{
    if (b->refs++ == 0 && b->lru_next)
        lru_unlink(b);
}

/* ==== Interface ==== */

ggfs_block *ggfs_block_get(ggfs_block_cache *c, uint64_t source, uint64_t index,
                           int64_t deadline_ns, int64_t patience_ns, bool *claimed)
{
    *claimed = false;
    pthread_mutex_lock(&c->lock);
    ggfs_block *b;
    for (;;) {
        ggfs_block **slot = slot_of(c, source, index);
        b = *slot;
        if (!b) {
            b = insert_claimed(c, slot, source, index);
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
        if (now_ns() >= until) {
            b = NULL;
            break;
        }
        const struct timespec ts = {(time_t)(until / 1000000000), (long)(until % 1000000000)};
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
    ggfs_block **slot = slot_of(c, source, index);
    ggfs_block *b = *slot ? NULL : insert_claimed(c, slot, source, index);
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

static void release_locked(ggfs_block_cache *c, ggfs_block *b)
{
    if (--b->refs > 0)
        return;
    lru_append(c, b);
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
    const int64_t now = now_ns();
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
    release_locked(c, b);
    pthread_mutex_unlock(&c->lock);
}

void ggfs_block_cache_drop_source(ggfs_block_cache *c, uint64_t source)
{
    pthread_mutex_lock(&c->lock);
    for (ggfs_block *b = c->lru.lru_next, *next; b != &c->lru; b = next) {
        next = b->lru_next;
        if (b->source == source) {
            lru_unlink(b);
            unhash(c, b);
            free_block(c, b);
        }
    }
    pthread_mutex_unlock(&c->lock);
}
