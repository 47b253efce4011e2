/*
 * The prefetch thread: passes over the model until one succeeds, each pass
 * a run after another handed to the fetcher, a few at a time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "source/prefetch.h"
#include "util/clock.h"
#include "util/cond.h"

#define RUN_BYTES (UINT64_C(8) << 20)
#define FIRST_PAUSE_NS INT64_C(1000000000)
#define MAX_PAUSE_NS INT64_C(8000000000)

struct ggfs_prefetch {
    ggfs_remote *remote;
    ggfs_source **sources;
    size_t n;
    pthread_t thread;
    ggfs_fetch_share share;  // the fetcher's to count
    pthread_mutex_t lock;    // guards what follows
    pthread_cond_t changed;  // a run ended, or stopping
    unsigned outstanding;    // runs handed to the fetcher, not ended
    bool failed;             // a run of this pass failed
    bool stopping;
};

typedef struct run {
    ggfs_prefetch *p;
    ggfs_source *src;
    uint64_t off;
    bool failed;
} run;

static void run_one(void *arg, bool cancelled)
{
    run *r = arg;
    ggfs_prefetch *p = r->p;
    pthread_mutex_lock(&p->lock);
    const bool skip = cancelled || p->stopping || p->failed;
    pthread_mutex_unlock(&p->lock);
    r->failed = cancelled || (!skip && r->src->ops->prefetch(r->src, r->off, RUN_BYTES) != 0);
}

/* After the fetcher let go of the prefetch's share: the prefetch may end. */
static void run_done(void *arg)
{
    run *r = arg;
    ggfs_prefetch *p = r->p;
    pthread_mutex_lock(&p->lock);
    p->outstanding--;
    if (r->failed)
        p->failed = true;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    free(r);
}

/* Hands the run at off of src to the fetcher once fewer than `room` are
 * out; false when the pass is to end (stopping, a failure). */
static bool hand_out(ggfs_prefetch *p, ggfs_source *src, uint64_t off, unsigned room)
{
    pthread_mutex_lock(&p->lock);
    while (!p->stopping && !p->failed && p->outstanding >= room)
        pthread_cond_wait(&p->changed, &p->lock);
    const bool go = !p->stopping && !p->failed;
    if (go)
        p->outstanding++;
    pthread_mutex_unlock(&p->lock);
    if (!go)
        return false;
    run *r = malloc(sizeof *r);
    if (r)
        *r = (run){p, src, off, false};
    if (!r || !ggfs_fetcher_submit(p->remote->fetcher, GGFS_FETCH_PREFETCH, &p->share, run_one, run_done, r)) {
        free(r);
        pthread_mutex_lock(&p->lock);
        p->outstanding--;
        p->failed = true;
        pthread_mutex_unlock(&p->lock);
        return false;
    }
    return true;
}

/* One pass; true when every run of it succeeded. */
static bool pass(ggfs_prefetch *p)
{
    const unsigned connections = ggfs_fetcher_connections(p->remote->fetcher);
    const unsigned room = connections > 1 ? connections - (connections + 7) / 8 : 1;
    // Without a disk cache, what passes the memory cache would push out
    // what came first.
    const uint64_t budget = p->remote->opts.cache_dir ? UINT64_MAX : (uint64_t)p->remote->opts.cache_mb << 20;
    uint64_t covered = 0;
    for (size_t i = 0; i < p->n && covered < budget; i++) {
        ggfs_source *src = p->sources[i];
        if (!ggfs_source_unchanged(src))
            continue; // its reads fail for good: nothing to keep
        for (uint64_t off = 0; off < src->size && covered < budget; off += RUN_BYTES) {
            const uint64_t left = budget - covered;
            if (!hand_out(p, src, off, room))
                goto wait;
            covered += left < RUN_BYTES ? left : RUN_BYTES;
        }
    }
wait:
    pthread_mutex_lock(&p->lock);
    while (p->outstanding > 0)
        pthread_cond_wait(&p->changed, &p->lock);
    const bool ok = !p->failed && !p->stopping;
    p->failed = false;
    pthread_mutex_unlock(&p->lock);
    return ok;
}

static void *prefetch_thread(void *arg)
{
    ggfs_prefetch *p = arg;
    int64_t pause = FIRST_PAUSE_NS;
    while (!pass(p)) {
        pthread_mutex_lock(&p->lock);
        const struct timespec until = ggfs_timespec_after(pause);
        while (!p->stopping && pthread_cond_timedwait(&p->changed, &p->lock, &until) != ETIMEDOUT)
            ;
        const bool stopping = p->stopping;
        pthread_mutex_unlock(&p->lock);
        if (stopping)
            break;
        pause = pause * 2 < MAX_PAUSE_NS ? pause * 2 : MAX_PAUSE_NS;
    }
    return NULL;
}

ggfs_prefetch *ggfs_prefetch_start(ggfs_remote *remote, ggfs_source *const *sources, size_t n)
{
    ggfs_prefetch *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->remote = remote;
    p->n = n;
    p->sources = malloc(n * sizeof *p->sources);
    if (!p->sources) {
        free(p);
        return NULL;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (sources[i]->ops->prefetch)
            p->sources[kept++] = sources[i];
    p->n = kept;
    pthread_mutex_init(&p->lock, NULL);
    ggfs_cond_init_monotonic(&p->changed);
    if (pthread_create(&p->thread, NULL, prefetch_thread, p) != 0) {
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->changed);
        free(p->sources);
        free(p);
        return NULL;
    }
    return p;
}

void ggfs_prefetch_stop(ggfs_prefetch *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p->sources);
    free(p);
}
