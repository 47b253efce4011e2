/*
 * Threads running queued jobs (the read-ahead of remote sources, and the
 * reads of remote models). Threads start when a job finds none idle, up to
 * the pool's size, so a daemon that forks after opening its model
 * (fuse_daemonize) starts them in the right process.
 */
#ifndef GGFS_UTIL_WORKERS_H
#define GGFS_UTIL_WORKERS_H

#include <stdbool.h>

typedef struct ggfs_workers ggfs_workers;

/* Runs the job; cancelled is true when the pool is being freed and the job
 * only has to release what it holds. */
typedef void ggfs_job_fn(void *arg, bool cancelled);

ggfs_workers *ggfs_workers_new(unsigned threads, unsigned max_queued);

/* Queues fn(arg); false when the queue is full or no thread can start (the
 * caller then drops the job itself). */
bool ggfs_workers_submit(ggfs_workers *workers, ggfs_job_fn *fn, void *arg);

/* Waits for running jobs, cancels queued ones, joins the threads. */
void ggfs_workers_free(ggfs_workers *workers);

#endif
