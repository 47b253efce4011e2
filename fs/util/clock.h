/*
 * The monotonic clock, for deadlines and ages that wall-clock changes
 * must not move: nanoseconds since an arbitrary start, and the timespec
 * that pthread_cond_timedwait takes on a condition variable set up with
 * ggfs_cond_init_monotonic (util/cond.h).
 */
#ifndef GGFS_UTIL_CLOCK_H
#define GGFS_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t ggfs_now_ns(void);

/* The CLOCK_MONOTONIC time `at_ns` (a ggfs_now_ns value) as a timespec. */
struct timespec ggfs_timespec_at(int64_t at_ns);

/* The CLOCK_MONOTONIC time ns nanoseconds from now. */
struct timespec ggfs_timespec_after(int64_t ns);

#endif
