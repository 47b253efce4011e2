/*
 * Condition variables on the monotonic clock (cond.h).
 */
#include <time.h>

#include "util/cond.h"

int ggfs_cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    int err = pthread_condattr_init(&attr);
    if (err != 0)
        return err;
    err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (err == 0)
        err = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return err;
}
