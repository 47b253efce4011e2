/*
 * The prefetch thread: passes over the model until one succeeds, each pass
 * a run after another handed to the fetcher, a few at a time; with a sink,
 * a thread that hands it the runs as they land.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "source/prefetch.h"
#include "util/clock.h"
#include "util/cond.h"

#define RUN_BYTES (UINT64_C(8) << 20)
#define FIRST_PAUSE_NS INT64_C(1000000000)
#define MAX_PAUSE_NS INT64_C(8000000000)
#define LANDED_MAX 256 // runs out or waiting for the sink at once at most

typedef struct landed_run {
    size_t source; // as given to ggfs_prefetch_start
    uint64_t off, len;
} landed_run;

struct ggfs_prefetch {
    ggfs_remote *remote;
    ggfs_source **sources;
    size_t *given;           // each source's index as given
    size_t n;
    ggfs_prefetch_sink *sink; // or NULL
    void *sink_arg;
    pthread_t thread;
    pthread_t sink_thread;   // with a sink: hands the runs that landed to it
    ggfs_fetch_share share;  // the fetcher's to count
    pthread_mutex_t lock;    // guards what follows
    pthread_cond_t changed;  // a run ended or was stored, held or let go, stopping
    unsigned outstanding;    // runs handed to the fetcher, not ended
    landed_run landed[LANDED_MAX]; // runs fetched, for the sink, oldest first
    unsigned n_landed;
    bool sinking;            // the sink thread has a run in hand
    bool failed;             // a run of this pass failed
    bool held;               // no run is handed out (ggfs_prefetch_hold)
    size_t from;             // where a pass begins: this kept source,
    uint64_t from_off;       // at this run (ggfs_prefetch_begin_at)
    bool stopping;
    bool ended;              // the thread is done: every byte fetched, or stopping
};

typedef struct run {
    ggfs_prefetch *p;
    size_t source;
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
    ggfs_source *src = p->sources[r->source];
    r->failed = cancelled || (!skip && src->ops->prefetch(src, r->off, RUN_BYTES) != 0);
}

/* After the fetcher let go of the prefetch's share: the prefetch may end. */
static void run_done(void *arg)
{
    run *r = arg;
    ggfs_prefetch *p = r->p;
    pthread_mutex_lock(&p->lock);
    p->outstanding--;
    if (r->failed) {
        p->failed = true;
    } else if (p->sink && !p->stopping && p->n_landed < LANDED_MAX) {
        const uint64_t size = p->sources[r->source]->size;
        p->landed[p->n_landed++] = (landed_run){p->given[r->source], r->off,
                                                size - r->off < RUN_BYTES ? size - r->off : RUN_BYTES};
    }
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    free(r);
}

/* The sink's thread: hands the runs that landed to the sink, oldest first,
 * until the prefetch stops. Apart from the thread handing runs out, so
 * that a connection freed while a run is stored goes on at once. */
static void *sink_thread(void *arg)
{
    ggfs_prefetch *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stopping && p->n_landed == 0)
            pthread_cond_wait(&p->changed, &p->lock);
        if (p->stopping)
            break;
        const landed_run l = p->landed[0];
        p->n_landed--;
        memmove(p->landed, p->landed + 1, p->n_landed * sizeof p->landed[0]);
        p->sinking = true;
        pthread_mutex_unlock(&p->lock);
        p->sink(p->sink_arg, l.source, l.off, l.len);
        pthread_mutex_lock(&p->lock);
        p->sinking = false;
        pthread_cond_broadcast(&p->changed);
    }
    // What landed and was not stored yet is read when asked for.
    p->n_landed = 0;
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* How many runs may be out at once (one a connection: readers' own
 * requests still pass before the next), and out or in memory waiting for
 * the sink. */
typedef struct room {
    unsigned out, waiting;
} room;

/* Hands the run at off of the source `source` to the fetcher once there is
 * room for it; false when the pass is to end (stopping, a failure). */
static bool hand_out(ggfs_prefetch *p, size_t source, uint64_t off, room room)
{
    pthread_mutex_lock(&p->lock);
    while (!p->stopping && !p->failed &&
           (p->held || p->outstanding >= room.out || p->outstanding + p->n_landed + p->sinking >= room.waiting))
        pthread_cond_wait(&p->changed, &p->lock);
    const bool go = !p->stopping && !p->failed;
    if (go)
        p->outstanding++;
    pthread_mutex_unlock(&p->lock);
    if (!go)
        return false;
    run *r = malloc(sizeof *r);
    if (r)
        *r = (run){p, source, off, false};
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

/* Whether every byte fetched is kept: on disk, or handed to the sink
 * (rather than the first cache_mb of the model, in memory). */
static bool keeps_every_byte(const ggfs_prefetch *p)
{
    return p->remote->opts.cache_dir || p->sink;
}

/* One pass; true when every run of it succeeded. */
static bool pass(ggfs_prefetch *p)
{
    // A run's blocks are in memory while it is out, and what the sink is
    // to take must still be there when it comes to it: three quarters of
    // the memory cache at most are out or waiting, the rest is the
    // readers'.
    const uint64_t runs = ((uint64_t)p->remote->opts.cache_mb << 20) / 4 * 3 / RUN_BYTES;
    room room = {ggfs_fetcher_connections(p->remote->fetcher),
                 runs == 0 ? 1 : runs < LANDED_MAX ? (unsigned)runs : LANDED_MAX};
    if (room.out > room.waiting)
        room.out = room.waiting;
    // Without a disk cache or a sink to take the bytes, what passes the
    // memory cache would push out what came first.
    const uint64_t budget = keeps_every_byte(p) ? UINT64_MAX : (uint64_t)p->remote->opts.cache_mb << 20;
    pthread_mutex_lock(&p->lock);
    const size_t from = p->from;
    const uint64_t from_off = p->from_off;
    pthread_mutex_unlock(&p->lock);
    // From where the pass begins to the end, then from the start up to
    // there: step n comes back to the first source, for its runs before
    // from_off.
    uint64_t covered = 0;
    for (size_t step = 0; step <= p->n && covered < budget; step++) {
        const size_t i = (from + step) % p->n;
        ggfs_source *src = p->sources[i];
        const uint64_t first = step == 0 ? from_off : 0;
        const uint64_t end = step == p->n ? from_off : src->size;
        if (!ggfs_source_unchanged(src))
            continue; // its reads fail for good: nothing to keep
        for (uint64_t off = first; off < end && covered < budget; off += RUN_BYTES) {
            const uint64_t left = budget - covered;
            if (!hand_out(p, i, off, room))
                goto wait;
            covered += left < RUN_BYTES ? left : RUN_BYTES;
        }
    }
wait:
    pthread_mutex_lock(&p->lock);
    while (p->outstanding > 0 || (!p->stopping && (p->n_landed > 0 || p->sinking)))
        pthread_cond_wait(&p->changed, &p->lock);
    const bool ok = !p->failed && !p->stopping;
    p->failed = false;
    pthread_mutex_unlock(&p->lock);
    return ok;
}

/* Tells the sources' read-ahead whether a prefetch that keeps every byte
 * goes on: it then fetches their bytes in order, and read-ahead of its
 * own would only compete with it for the connections. With p->lock held,
 * or before the thread starts. */
static void tell_going(ggfs_prefetch *p, bool going)
{
    atomic_store(&p->remote->prefetch_going, going && keeps_every_byte(p));
}

static void *prefetch_thread(void *arg)
{
    ggfs_prefetch *p = arg;
    int64_t pause = FIRST_PAUSE_NS;
    // Where the first pass begins may be set until it is let go.
    pthread_mutex_lock(&p->lock);
    while (p->held && !p->stopping)
        pthread_cond_wait(&p->changed, &p->lock);
    pthread_mutex_unlock(&p->lock);
    while (p->n > 0 && !pass(p)) {
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
    pthread_mutex_lock(&p->lock);
    tell_going(p, false);
    p->ended = true;
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* The sink's thread (with a sink), then the prefetch's; false (and none)
 * when one cannot start. */
static bool start_threads(ggfs_prefetch *p)
{
    if (p->sink && pthread_create(&p->sink_thread, NULL, sink_thread, p) != 0)
        return false;
    if (pthread_create(&p->thread, NULL, prefetch_thread, p) == 0)
        return true;
    if (p->sink) {
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_broadcast(&p->changed);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->sink_thread, NULL);
    }
    return false;
}

ggfs_prefetch *ggfs_prefetch_start(ggfs_remote *remote, ggfs_source *const *sources, size_t n,
                                   ggfs_prefetch_sink *sink, void *sink_arg, bool held)
{
    ggfs_prefetch *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->remote = remote;
    p->held = held;
    // With a disk cache every byte waits there already; with no cache at
    // all, the sink would find nothing to take.
    if (!remote->opts.cache_dir && remote->opts.cache_mb > 0) {
        p->sink = sink;
        p->sink_arg = sink_arg;
    }
    tell_going(p, !held);
    p->sources = malloc(n * sizeof *p->sources);
    p->given = malloc(n * sizeof *p->given);
    if (!p->sources || !p->given) {
        free(p->sources);
        free(p->given);
        free(p);
        return NULL;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (sources[i]->ops->prefetch) {
            p->given[kept] = i;
            p->sources[kept++] = sources[i];
        }
    p->n = kept;
    pthread_mutex_init(&p->lock, NULL);
    ggfs_cond_init_monotonic(&p->changed);
    if (!start_threads(p)) {
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->changed);
        free(p->sources);
        free(p->given);
        free(p);
        return NULL;
    }
    return p;
}

void ggfs_prefetch_hold(ggfs_prefetch *p, bool held)
{
    pthread_mutex_lock(&p->lock);
    p->held = held;
    if (!p->ended)
        tell_going(p, !held);
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

void ggfs_prefetch_begin_at(ggfs_prefetch *p, size_t source, uint64_t off)
{
    pthread_mutex_lock(&p->lock);
    for (size_t k = 0; k < p->n; k++)
        if (p->given[k] == source && off < p->sources[k]->size) {
            p->from = k;
            p->from_off = off / RUN_BYTES * RUN_BYTES;
        }
    pthread_mutex_unlock(&p->lock);
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
    if (p->sink)
        pthread_join(p->sink_thread, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p->sources);
    free(p->given);
    free(p);
}
