/*
 * A small hash table of compute figures behind one lock (compute_memo.h).
 */
#include "model/compute_memo.h"

#include <pthread.h>
#include <stdlib.h>

#define SLOTS_FIRST 64  // a power of two: a small model's lines fit
#define SLOTS_MAX 4096  // twice as many, as often as needed; when half full, emptied

typedef struct entry {
    uint64_t key; // 0: empty
    uint64_t gpu, host;
} entry;

struct ggfs_compute_memo {
    pthread_mutex_t lock;
    entry *slots; // allocated on the first put
    uint32_t n_slots, used;
};

/* ctx (25 bits), cache (2), i_gpu_start (32), and a bit so that no key is 0. */
static uint64_t key_of(uint32_t ctx, int cache, uint32_t i_gpu_start)
{
    return UINT64_C(1) << 63 | (uint64_t)(ctx & 0x3ffffff) << 34 | (uint64_t)(cache & 3) << 32 | i_gpu_start;
}

static uint32_t slot_of(uint64_t key, uint32_t n_slots)
{
    key ^= key >> 31;
    key *= UINT64_C(0x9e3779b97f4a7c15);
    return (uint32_t)(key >> 40) & (n_slots - 1);
}

/* The slot of key in m's table: its own, or the empty one it would take. */
static uint32_t find(const ggfs_compute_memo *m, uint64_t key)
{
    uint32_t i = slot_of(key, m->n_slots);
    while (m->slots[i].key && m->slots[i].key != key)
        i = (i + 1) & (m->n_slots - 1);
    return i;
}

/* A table of n_slots with m's entries (or none); false when out of memory. */
static bool rehash(ggfs_compute_memo *m, uint32_t n_slots, bool keep)
{
    entry *old = m->slots;
    const uint32_t n_old = m->n_slots;
    entry *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return false;
    m->slots = slots;
    m->n_slots = n_slots;
    m->used = 0;
    for (uint32_t i = 0; keep && i < n_old; i++) {
        if (old[i].key) {
            m->slots[find(m, old[i].key)] = old[i];
            m->used++;
        }
    }
    free(old);
    return true;
}

ggfs_compute_memo *ggfs_compute_memo_new(void)
{
    ggfs_compute_memo *m = calloc(1, sizeof *m);
    if (m && pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void ggfs_compute_memo_free(ggfs_compute_memo *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m->slots);
    free(m);
}

bool ggfs_compute_memo_get(ggfs_compute_memo *m, uint32_t ctx, int cache, uint32_t i_gpu_start, uint64_t *gpu,
                           uint64_t *host)
{
    if (!m)
        return false;
    const uint64_t key = key_of(ctx, cache, i_gpu_start);
    bool found = false;
    pthread_mutex_lock(&m->lock);
    if (m->slots) {
        const uint32_t i = find(m, key);
        if (m->slots[i].key == key) {
            *gpu = m->slots[i].gpu;
            *host = m->slots[i].host;
            found = true;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return found;
}

void ggfs_compute_memo_put(ggfs_compute_memo *m, uint32_t ctx, int cache, uint32_t i_gpu_start, uint64_t gpu,
                           uint64_t host)
{
    if (!m)
        return;
    const uint64_t key = key_of(ctx, cache, i_gpu_start);
    pthread_mutex_lock(&m->lock);
    bool ok = m->slots || rehash(m, SLOTS_FIRST, false);
    if (ok && m->used >= m->n_slots / 2)
        ok = m->n_slots < SLOTS_MAX ? rehash(m, 2 * m->n_slots, true) : rehash(m, m->n_slots, false);
    if (ok) {
        const uint32_t i = find(m, key);
        m->used += m->slots[i].key == 0;
        m->slots[i] = (entry){key, gpu, host};
    }
    pthread_mutex_unlock(&m->lock);
}
