/*
 * The trimming thread: requests from many threads at once are safe, and
 * freeing it never waits out its delay, whether it never started, is idle,
 * or is counting down. (What malloc_trim gives back is glibc's business,
 * and the sanitizers' allocators have nothing for it to trim.)
 */
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "check.h"
#include "util/trim.h"

#define LONG_DELAY_NS INT64_C(60000000000) // a minute: no test waits for it

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int test_free_without_use_is_immediate(void)
{
    ggfs_trim *t = ggfs_trim_new(LONG_DELAY_NS);
    EXPECT(t != NULL);
    const double t0 = seconds();
    ggfs_trim_free(t);
    EXPECT(seconds() - t0 < 5.0);
    ggfs_trim_free(NULL);
    return 1;
}

static int test_free_while_counting_down_is_immediate(void)
{
    ggfs_trim *t = ggfs_trim_new(LONG_DELAY_NS);
    EXPECT(t != NULL);
    ggfs_trim_soon(t);
    ggfs_trim_soon(t);
    const double t0 = seconds();
    ggfs_trim_free(t);
    EXPECT(seconds() - t0 < 5.0);
    return 1;
}

static void *poke(void *arg)
{
    for (int i = 0; i < 2000; i++)
        ggfs_trim_soon(arg);
    return NULL;
}

static int test_many_threads_and_short_delays(void)
{
    // A 1 ms delay: the thread trims many times while requests pour in.
    ggfs_trim *t = ggfs_trim_new(1000000);
    EXPECT(t != NULL);
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(pthread_create(&threads[i], NULL, poke, t), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    const struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL); // idle again, waiting for a request
    ggfs_trim_soon(t);
    ggfs_trim_free(t);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_free_without_use_is_immediate();
    ok &= test_free_while_counting_down_is_immediate();
    ok &= test_many_threads_and_short_delays();
    return ok ? 0 : 1;
}
