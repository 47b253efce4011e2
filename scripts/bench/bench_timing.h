/*
 * What the benchmark's timers share: a monotonic clock in seconds, and
 * run times sorted so that the best is first and the median in the middle.
 */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts the runs' times, n > 0, in place. */
static inline void bench_sort_times(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
}

#endif
