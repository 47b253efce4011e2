/*
 * stderr after a thread ended holding its lock, as a libfuse thread
 * cancelled inside perror() does: renewed, it takes writes again; with its
 * lock free, or held a moment by a thread writing, it is left alone.
 */
#define _POSIX_C_SOURCE 200809L // flockfile, alarm, nanosleep
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "daemon/stderr_renew.h"

static void *lock_and_leave(void *arg)
{
    (void)arg;
    flockfile(stderr);
    return NULL;
}

static void *lock_a_moment(void *arg)
{
    flockfile(stderr);
    sem_post(arg);
    const struct timespec moment = {.tv_nsec = 10 * 1000 * 1000};
    nanosleep(&moment, NULL);
    funlockfile(stderr);
    return NULL;
}

static int test_free_lock_left_alone(void)
{
    FILE *before = stderr;
    EXPECT(!ggfs_stderr_renew_if_held());
    EXPECT(stderr == before);
    return 1;
}

static int test_lock_held_a_moment_left_alone(void)
{
    FILE *before = stderr;
    sem_t locked;
    EXPECT(sem_init(&locked, 0, 0) == 0);
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, lock_a_moment, &locked) == 0);
    while (sem_wait(&locked) != 0) {
    }
    const bool renewed = ggfs_stderr_renew_if_held();
    EXPECT(pthread_join(t, NULL) == 0);
    sem_destroy(&locked);
    EXPECT(!renewed);
    EXPECT(stderr == before);
    return 1;
}

static int test_lock_kept_by_gone_thread(void)
{
    FILE *before = stderr;
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, lock_and_leave, NULL) == 0);
    EXPECT(pthread_join(t, NULL) == 0);
    EXPECT(ftrylockfile(stderr) != 0);
    EXPECT(ggfs_stderr_renew_if_held());
    EXPECT(stderr != before);
    // Without the renewal this write would wait for ever: the alarm ends
    // the test instead.
    alarm(10);
    EXPECT(fprintf(stderr, "stderr takes writes again\n") > 0);
    EXPECT(fflush(stderr) == 0);
    alarm(0);
    EXPECT(!ggfs_stderr_renew_if_held());
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_free_lock_left_alone();
    ok &= test_lock_held_a_moment_left_alone();
    ok &= test_lock_kept_by_gone_thread();
    return ok ? 0 : 1;
}
