/*
 * Condition variables whose timed waits run on the monotonic clock, so
 * that a change of the wall clock neither cuts a wait short nor stretches
 * it: deadlines come from util/clock.h.
 */
#ifndef GGFS_UTIL_COND_H
#define GGFS_UTIL_COND_H

#include <pthread.h>

/* pthread_cond_init with CLOCK_MONOTONIC; 0 or an errno. */
int ggfs_cond_init_monotonic(pthread_cond_t *cond);

#endif
