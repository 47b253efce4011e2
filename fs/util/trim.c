/*
 * The trimming thread (trim.h). It waits for a request, then for the delay
 * (requests meanwhile join the same trim), then trims.
 */
#define _GNU_SOURCE // malloc_trim
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "util/clock.h"
#include "util/cond.h"
#include "util/trim.h"

struct ggfs_trim {
    pthread_mutex_t lock;
    pthread_cond_t wake;    // CLOCK_MONOTONIC
    int64_t delay_ns;
    bool pending, stop, started;
    pthread_t thread;
};

static void *run(void *arg)
{
    ggfs_trim *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        if (!t->pending) {
            pthread_cond_wait(&t->wake, &t->lock);
            continue;
        }
        const struct timespec deadline = ggfs_timespec_after(t->delay_ns);
        while (!t->stop && pthread_cond_timedwait(&t->wake, &t->lock, &deadline) != ETIMEDOUT) {
        }
        if (t->stop)
            break;
        t->pending = false;
        pthread_mutex_unlock(&t->lock);
        malloc_trim(0);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

ggfs_trim *ggfs_trim_new(int64_t delay_ns)
{
    ggfs_trim *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->delay_ns = delay_ns;
    const bool ok = ggfs_cond_init_monotonic(&t->wake) == 0;
    if (!ok || pthread_mutex_init(&t->lock, NULL) != 0) {
        if (ok)
            pthread_cond_destroy(&t->wake);
        free(t);
        return NULL;
    }
    return t;
}

void ggfs_trim_soon(ggfs_trim *t)
{
    pthread_mutex_lock(&t->lock);
    // Only an idle thread is woken: one counting down its delay already
    // has this request in hand.
    const bool idle = !t->pending;
    t->pending = true;
    if (!t->started)
        t->started = pthread_create(&t->thread, NULL, run, t) == 0;
    const bool started = t->started;
    if (idle)
        pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    if (!started)
        malloc_trim(0); // no thread to do it later: now, then
}

void ggfs_trim_free(ggfs_trim *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->stop = true;
    pthread_cond_signal(&t->wake);
    const bool started = t->started;
    pthread_mutex_unlock(&t->lock);
    if (started)
        pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    free(t);
}
