/*
 * Transfer statistics. The current rate is an exponential average with a
 * time constant of a second, fed at every request's start and end and at
 * every look, so that it falls to 0 when the transfers stop.
 */
#include <stdio.h>
#include <string.h>

#include "source/transfer_stats.h"
#include "util/clock.h"

#define RATE_TAU_NS 1e9
#define MIN_SAMPLE_NS INT64_C(20000000)

void ggfs_transfer_stats_init(ggfs_transfer_stats *st)
{
    memset(st, 0, sizeof *st);
    atomic_init(&st->received, 0);
    pthread_mutex_init(&st->lock, NULL);
    st->rate_at = ggfs_now_ns();
}

void ggfs_transfer_stats_destroy(ggfs_transfer_stats *st)
{
    pthread_mutex_destroy(&st->lock);
}

/* Under the lock. */
static void sample(ggfs_transfer_stats *st, int64_t now)
{
    const int64_t dt = now - st->rate_at;
    if (dt < MIN_SAMPLE_NS)
        return;
    const uint64_t bytes = atomic_load_explicit(&st->received, memory_order_relaxed);
    const double instant = (double)(bytes - st->rate_bytes) * 1e9 / (double)dt;
    const double weight = (double)dt / ((double)dt + RATE_TAU_NS);
    st->rate += weight * (instant - st->rate);
    st->rate_at = now;
    st->rate_bytes = bytes;
}

void ggfs_transfer_begin(ggfs_transfer_stats *st)
{
    const int64_t now = ggfs_now_ns();
    pthread_mutex_lock(&st->lock);
    sample(st, now);
    if (st->in_flight++ == 0)
        st->busy_since = now;
    pthread_mutex_unlock(&st->lock);
}

void ggfs_transfer_end(ggfs_transfer_stats *st, unsigned failures, const char *error)
{
    const int64_t now = ggfs_now_ns();
    pthread_mutex_lock(&st->lock);
    sample(st, now);
    if (--st->in_flight == 0)
        st->busy_ns += now - st->busy_since;
    st->failures += failures;
    if (error && *error)
        snprintf(st->last_error, sizeof st->last_error, "%s", error);
    pthread_mutex_unlock(&st->lock);
}

void ggfs_transfer_snapshot_of(ggfs_transfer_stats *st, ggfs_transfer_snapshot *out)
{
    const int64_t now = ggfs_now_ns();
    pthread_mutex_lock(&st->lock);
    sample(st, now);
    out->received = atomic_load(&st->received);
    out->failures = st->failures;
    out->in_flight = st->in_flight;
    const int64_t busy = st->busy_ns + (st->in_flight ? now - st->busy_since : 0);
    out->mb_per_s_now = st->rate / 1e6;
    out->mb_per_s_average = busy > 0 ? (double)out->received * 1e3 / (double)busy : 0.0;
    memcpy(out->last_error, st->last_error, sizeof out->last_error);
    pthread_mutex_unlock(&st->lock);
}
