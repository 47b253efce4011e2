/*
 * The worker pool: a ring of jobs under a mutex, threads waiting on a
 * condition variable.
 */
#include <pthread.h>
#include <stdlib.h>

#include "util/workers.h"

typedef struct job {
    ggfs_job_fn *fn;
    void *arg;
} job;

struct ggfs_workers {
    pthread_mutex_t lock;
    pthread_cond_t queued;
    job *ring;
    unsigned cap, head, count;
    pthread_t *threads;
    unsigned n_threads, started;
    unsigned idle;            // threads waiting for a job
    bool stopping;
};

ggfs_workers *ggfs_workers_new(unsigned threads, unsigned max_queued)
{
    ggfs_workers *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->ring = calloc(max_queued, sizeof *w->ring);
    w->threads = calloc(threads, sizeof *w->threads);
    if (!w->ring || !w->threads) {
        free(w->ring);
        free(w->threads);
        free(w);
        return NULL;
    }
    w->cap = max_queued;
    w->n_threads = threads;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->queued, NULL);
    return w;
}

static void *run(void *arg)
{
    ggfs_workers *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->count == 0 && !w->stopping) {
            w->idle++;
            pthread_cond_wait(&w->queued, &w->lock);
            w->idle--;
        }
        if (w->count == 0 || w->stopping)
            break; // what is still queued is cancelled by ggfs_workers_free
        const job j = w->ring[w->head];
        w->head = (w->head + 1) % w->cap;
        w->count--;
        pthread_mutex_unlock(&w->lock);
        j.fn(j.arg, false);
        pthread_mutex_lock(&w->lock);
        if (w->stopping)
            break;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

bool ggfs_workers_submit(ggfs_workers *w, ggfs_job_fn *fn, void *arg)
{
    pthread_mutex_lock(&w->lock);
    bool ok = !w->stopping && w->count < w->cap;
    if (ok) {
        w->ring[(w->head + w->count) % w->cap] = (job){fn, arg};
        w->count++;
        // A thread more when every thread is busy, up to the pool's size:
        // a job never waits behind slow ones while the pool can grow.
        if (w->started < w->n_threads && w->idle < w->count &&
            pthread_create(&w->threads[w->started], NULL, run, w) == 0)
            w->started++;
        ok = w->started > 0;
        if (!ok)
            w->count--;
        pthread_cond_signal(&w->queued);
    }
    pthread_mutex_unlock(&w->lock);
    return ok;
}

void ggfs_workers_free(ggfs_workers *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_broadcast(&w->queued);
    const unsigned started = w->started;
    pthread_mutex_unlock(&w->lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(w->threads[i], NULL);
    // No thread is left: cancel what was still queued.
    while (w->count > 0) {
        const job j = w->ring[w->head];
        w->head = (w->head + 1) % w->cap;
        w->count--;
        j.fn(j.arg, true);
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->queued);
    free(w->ring);
    free(w->threads);
    free(w);
}
