/*
 * The fetcher: jobs on one list in the order they came, a count of
 * requests in flight, threads that take the best job whenever a
 * connection is free and no reader waits for one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "source/fetcher.h"
#include "util/clock.h"
#include "util/cond.h"

#define MAX_QUEUED 4096

typedef struct job {
    ggfs_dlink link;
    ggfs_fetch_class cls;
    ggfs_fetch_share *share;
    ggfs_job_fn *fn;
    ggfs_fetch_done_fn *done;
    void *arg;
} job;

struct ggfs_fetcher {
    pthread_mutex_t lock;
    pthread_cond_t changed;   // a job queued, a connection freed, stopping
    ggfs_dlink queue;         // jobs, the oldest at the back
    unsigned n_queued;
    unsigned connections;
    unsigned in_flight;       // readers' requests and running jobs
    unsigned readers_waiting; // in ggfs_fetcher_enter
    unsigned active_shares;   // with jobs queued or running
    pthread_t *threads;
    unsigned started, idle;
    bool stopping;
};

ggfs_fetcher *ggfs_fetcher_new(unsigned connections)
{
    ggfs_fetcher *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->connections = connections ? connections : 1;
    f->threads = calloc(f->connections, sizeof *f->threads);
    if (!f->threads) {
        free(f);
        return NULL;
    }
    ggfs_dlist_init(&f->queue);
    pthread_mutex_init(&f->lock, NULL);
    ggfs_cond_init_monotonic(&f->changed);
    return f;
}

unsigned ggfs_fetcher_connections(const ggfs_fetcher *f)
{
    return f->connections;
}

static void share_add(ggfs_fetcher *f, ggfs_fetch_share *s, int queued, int running)
{
    const bool was = s->queued + s->running > 0;
    s->queued = (unsigned)((int)s->queued + queued);
    s->running = (unsigned)((int)s->running + running);
    const bool is = s->queued + s->running > 0;
    if (is != was)
        f->active_shares += is ? 1u : (unsigned)-1;
}

/* The job to run next: read-ahead before prefetch; within a class, that of
 * the share with the fewest running, the oldest of those. Under the lock. */
static job *pick(ggfs_fetcher *f)
{
    job *best = NULL;
    for (ggfs_dlink *l = f->queue.prev; l != &f->queue; l = l->prev) {
        job *j = GGFS_CONTAINER_OF(l, job, link);
        if (!best || j->cls < best->cls ||
            (j->cls == best->cls && j->share->running < best->share->running))
            best = j;
        if (best->cls == GGFS_FETCH_AHEAD && best->share->running == 0)
            break; // nothing can beat it
    }
    return best;
}

static void *run(void *arg)
{
    ggfs_fetcher *f = arg;
    pthread_mutex_lock(&f->lock);
    while (!f->stopping) {
        job *j = f->readers_waiting == 0 && f->in_flight < f->connections ? pick(f) : NULL;
        if (!j) {
            f->idle++;
            pthread_cond_wait(&f->changed, &f->lock);
            f->idle--;
            continue;
        }
        ggfs_dlist_remove(&j->link);
        f->n_queued--;
        f->in_flight++;
        share_add(f, j->share, -1, 1);
        pthread_mutex_unlock(&f->lock);
        j->fn(j->arg, false);
        pthread_mutex_lock(&f->lock);
        f->in_flight--;
        share_add(f, j->share, 0, -1);
        pthread_cond_broadcast(&f->changed);
        pthread_mutex_unlock(&f->lock);
        if (j->done)
            j->done(j->arg);
        free(j);
        pthread_mutex_lock(&f->lock);
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

bool ggfs_fetcher_submit(ggfs_fetcher *f, ggfs_fetch_class c, ggfs_fetch_share *share, ggfs_job_fn *fn,
                         ggfs_fetch_done_fn *done, void *arg)
{
    job *j = malloc(sizeof *j);
    if (!j)
        return false;
    *j = (job){.cls = c, .share = share, .fn = fn, .done = done, .arg = arg};
    pthread_mutex_lock(&f->lock);
    bool ok = !f->stopping && f->n_queued < MAX_QUEUED;
    if (ok) {
        // A thread more while every one is busy, up to one per connection.
        if (f->idle <= f->n_queued && f->started < f->connections &&
            pthread_create(&f->threads[f->started], NULL, run, f) == 0)
            f->started++;
        ok = f->started > 0;
    }
    if (ok) {
        ggfs_dlist_push_front(&f->queue, &j->link);
        f->n_queued++;
        share_add(f, share, 1, 0);
        pthread_cond_broadcast(&f->changed);
    }
    pthread_mutex_unlock(&f->lock);
    if (!ok)
        free(j);
    return ok;
}

bool ggfs_fetcher_enter(ggfs_fetcher *f, int64_t deadline_ns)
{
    const struct timespec until = ggfs_timespec_at(deadline_ns);
    pthread_mutex_lock(&f->lock);
    f->readers_waiting++;
    while (f->in_flight >= f->connections &&
           pthread_cond_timedwait(&f->changed, &f->lock, &until) != ETIMEDOUT)
        ;
    f->readers_waiting--;
    const bool entered = f->in_flight < f->connections;
    if (entered)
        f->in_flight++;
    else // a job may take the connection this reader no longer waits for
        pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->lock);
    return entered;
}

void ggfs_fetcher_leave(ggfs_fetcher *f)
{
    pthread_mutex_lock(&f->lock);
    f->in_flight--;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->lock);
}

unsigned ggfs_fetcher_active_shares(ggfs_fetcher *f)
{
    pthread_mutex_lock(&f->lock);
    const unsigned n = f->active_shares;
    pthread_mutex_unlock(&f->lock);
    return n;
}

void ggfs_fetcher_free(ggfs_fetcher *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->lock);
    f->stopping = true;
    pthread_cond_broadcast(&f->changed);
    const unsigned started = f->started;
    pthread_mutex_unlock(&f->lock);
    for (unsigned i = 0; i < started; i++)
        pthread_join(f->threads[i], NULL);
    // No thread is left: cancel what was still queued.
    for (ggfs_dlink *l; (l = ggfs_dlist_back(&f->queue)) != NULL;) {
        job *j = GGFS_CONTAINER_OF(l, job, link);
        ggfs_dlist_remove(l);
        j->fn(j->arg, true);
        if (j->done)
            j->done(j->arg);
        free(j);
    }
    pthread_mutex_destroy(&f->lock);
    pthread_cond_destroy(&f->changed);
    free(f->threads);
    free(f);
}
