/*
 * The monotonic clock (clock.h).
 */
#include "util/clock.h"

int64_t ggfs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timespec ggfs_timespec_at(int64_t at_ns)
{
    return (struct timespec){(time_t)(at_ns / 1000000000), (long)(at_ns % 1000000000)};
}

struct timespec ggfs_timespec_after(int64_t ns)
{
    return ggfs_timespec_at(ggfs_now_ns() + ns);
}
