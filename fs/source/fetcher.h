/*
 * The connections of a mount's remote sources: at most N range requests in
 * flight (-o connections=N), whoever makes them.
 *
 * A reader that needs bytes now makes its own request on its own thread
 * (ggfs_fetcher_enter / leave around it) and goes before anything queued.
 * Read-ahead and prefetch are jobs run on the fetcher's threads: read-ahead
 * before prefetch, and among read-ahead jobs the share (one sequential
 * reader's) with the fewest running goes first, so that readers going
 * through files at once get the connections in equal parts, whatever
 * order they queued in. A job holds its connection for its one request,
 * so a stalled one holds up nothing but itself, unless stalled ones hold
 * them all: a reader then waits for one until its deadline.
 */
#ifndef GGFS_SOURCE_FETCHER_H
#define GGFS_SOURCE_FETCHER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/dlist.h"
#include "util/workers.h"

#define GGFS_DEFAULT_CONNECTIONS 16
#define GGFS_MAX_CONNECTIONS 256

typedef struct ggfs_fetcher ggfs_fetcher;

typedef enum ggfs_fetch_class {
    GGFS_FETCH_AHEAD,    // a sequential reader's next blocks
    GGFS_FETCH_PREFETCH, // the whole model, in the background
    GGFS_FETCH_CLASSES,
} ggfs_fetch_class;

/* Whose a job is: one reader's stream of read-ahead, or the prefetch.
 * Owned by the submitter, and must outlive its jobs; the fetcher keeps
 * the counts (under its lock). */
typedef struct ggfs_fetch_share {
    unsigned queued, running;
} ggfs_fetch_share;

/* NULL when out of memory. Threads start with the first jobs (after the
 * daemon forked). */
ggfs_fetcher *ggfs_fetcher_new(unsigned connections);

/* Waits for running jobs, cancels queued ones (fn(arg, true), then
 * done(arg)), joins the threads. */
void ggfs_fetcher_free(ggfs_fetcher *f);

unsigned ggfs_fetcher_connections(const ggfs_fetcher *f);

/* What follows a job once the fetcher is done with it and its share: the
 * place to free the job and what holds the share. */
typedef void ggfs_fetch_done_fn(void *arg);

/* Queues fn(arg), which makes one request, then done(arg); false when the
 * queue is full or no thread can start (the caller then drops the job
 * itself). */
bool ggfs_fetcher_submit(ggfs_fetcher *f, ggfs_fetch_class c, ggfs_fetch_share *share, ggfs_job_fn *fn,
                         ggfs_fetch_done_fn *done, void *arg);

/* A reader's own request: waits for a connection, ahead of every queued
 * job, until deadline_ns (ggfs_now_ns's clock); false when none came by
 * then (jobs of a stalled server holding them all). Pair a true one with
 * ggfs_fetcher_leave. */
bool ggfs_fetcher_enter(ggfs_fetcher *f, int64_t deadline_ns);
void ggfs_fetcher_leave(ggfs_fetcher *f);

/* Shares with jobs queued or running now: the readers being read ahead
 * for, and the prefetch. */
unsigned ggfs_fetcher_active_shares(ggfs_fetcher *f);

#endif
