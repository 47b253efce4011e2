/*
 * A small hash table of compute figures behind one lock (compute_memo.h).
 */
#include "model/compute_memo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 4096 // a power of two; at most half used, then emptied

typedef struct entry {
    uint64_t key; // 0: empty
    uint64_t gpu, host;
} entry;

struct ggfs_compute_memo {
    pthread_mutex_t lock;
    entry *slots; // allocated on the first put
    uint32_t used;
};

/* ctx (25 bits), cache (2), i_gpu_start (32), and a bit so that no key is 0. */
static uint64_t key_of(uint32_t ctx, int cache, uint32_t i_gpu_start)
{
    return UINT64_C(1) << 63 | (uint64_t)(ctx & 0x3ffffff) << 34 | (uint64_t)(cache & 3) << 32 | i_gpu_start;
}

static uint32_t slot_of(uint64_t key)
{
    key ^= key >> 31;
    key *= UINT64_C(0x9e3779b97f4a7c15);
    return (uint32_t)(key >> 40) & (SLOTS - 1);
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
    for (uint32_t i = slot_of(key); m->slots && m->slots[i].key; i = (i + 1) & (SLOTS - 1)) {
        if (m->slots[i].key == key) {
            *gpu = m->slots[i].gpu;
            *host = m->slots[i].host;
            found = true;
            break;
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
    if (!m->slots)
        m->slots = calloc(SLOTS, sizeof *m->slots);
    if (m->slots && m->used >= SLOTS / 2) {
        memset(m->slots, 0, SLOTS * sizeof *m->slots);
        m->used = 0;
    }
    uint32_t i = slot_of(key);
    while (m->slots && m->slots[i].key && m->slots[i].key != key)
        i = (i + 1) & (SLOTS - 1);
    if (m->slots) {
        m->used += m->slots[i].key == 0;
        m->slots[i] = (entry){key, gpu, host};
    }
    pthread_mutex_unlock(&m->lock);
}
