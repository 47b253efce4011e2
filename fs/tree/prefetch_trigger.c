/*
 * Counting what is read of model.gguf, to let its prefetch go.
 */
#include <pthread.h>
#include <stdlib.h>

#include "tree/prefetch_trigger.h"

// A read further than this from where the last one ended is a jump: the
// kernel's read-ahead keeps a reader in order within about 1 MiB.
#define IN_ORDER_BYTES (UINT64_C(2) << 20)
// Jumps after which the reader is no reader in order.
#define JUMPS_MIN 8

struct ggfs_prefetch_trigger {
    uint64_t after;
    void (*hold)(void *arg, bool held, uint64_t at);
    void *arg;
    pthread_mutex_t lock; // guards what follows, and the calls of hold
    unsigned openers;
    uint64_t read;        // since the last opener came after none
    uint64_t next;        // where the last read ended
    unsigned jumps;       // reads that started far from the last one's end
    bool going;           // the prefetch was let go
    bool off;
};

ggfs_prefetch_trigger *ggfs_prefetch_trigger_new(uint64_t after, void (*hold)(void *arg, bool held, uint64_t at),
                                                 void *arg)
{
    ggfs_prefetch_trigger *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->after = after;
    t->hold = hold;
    t->arg = arg;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void ggfs_prefetch_trigger_opened(ggfs_prefetch_trigger *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->openers++;
    pthread_mutex_unlock(&t->lock);
}

void ggfs_prefetch_trigger_read(ggfs_prefetch_trigger *t, uint64_t off, uint64_t len)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->read += len;
    if (off + IN_ORDER_BYTES < t->next || off > t->next + IN_ORDER_BYTES)
        t->jumps++;
    t->next = off + len;
    // A read comes through an open file; the count checks nonetheless,
    // so that a stray one never lets go a prefetch no release would hold.
    if (!t->going && !t->off && t->openers > 0 && t->read >= t->after && t->jumps >= JUMPS_MIN) {
        t->going = true;
        t->hold(t->arg, false, off);
    }
    pthread_mutex_unlock(&t->lock);
}

void ggfs_prefetch_trigger_released(ggfs_prefetch_trigger *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    if (t->openers > 0 && --t->openers == 0) {
        t->read = 0;
        t->jumps = 0;
        if (t->going && !t->off)
            t->hold(t->arg, true, 0);
        t->going = false;
    }
    pthread_mutex_unlock(&t->lock);
}

void ggfs_prefetch_trigger_off(ggfs_prefetch_trigger *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->off = true;
    pthread_mutex_unlock(&t->lock);
}

void ggfs_prefetch_trigger_free(ggfs_prefetch_trigger *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->lock);
    free(t);
}
