/*
 * Waiting for an event in the unit tests of threaded code: a count kept
 * under a mutex, broadcast on a condition variable (default clock) when
 * it changes, waited for with a bound rather than for a time.
 */
#ifndef GGFS_TEST_WAIT_UNTIL_H
#define GGFS_TEST_WAIT_UNTIL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

/* Waits until *count (read under lock) reaches want; false after seconds. */
static inline bool wait_until(pthread_mutex_t *lock, pthread_cond_t *changed, const unsigned *count, unsigned want,
                              int seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += seconds;
    pthread_mutex_lock(lock);
    int r = 0;
    while (*count < want && r != ETIMEDOUT)
        r = pthread_cond_timedwait(changed, lock, &until);
    const bool reached = *count >= want;
    pthread_mutex_unlock(lock);
    return reached;
}

#endif
