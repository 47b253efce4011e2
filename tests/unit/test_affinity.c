/*
 * The version each loading process keeps (tree/affinity.h): the first
 * version a process opened comes back to it, and to no other process,
 * until its time is up or it edits; its view is held meanwhile and let go
 * after.
 */
#define _GNU_SOURCE // gettid
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "bare_view.h"
#include "check.h"
#include "tree/affinity.h"

static int test_a_process_keeps_its_first_version(void)
{
    ggfs_affinity *a = ggfs_affinity_new(INT64_C(60) * 1000000000);
    ggfs_view *v1 = bare_view(1), *v2 = bare_view(2);
    EXPECT(ggfs_affinity_view(a, 10) == NULL);
    ggfs_affinity_opened(a, 10, v1);
    ggfs_affinity_opened(a, 10, v2); // a later open: the first version stays
    EXPECT_EQ(refs(v1), 2);
    EXPECT_EQ(refs(v2), 1);
    ggfs_view *got = ggfs_affinity_view(a, 10);
    EXPECT(got == v1);
    ggfs_view_put(got);
    EXPECT(ggfs_affinity_view(a, 11) == NULL);
    ggfs_affinity_opened(a, 11, v2);
    got = ggfs_affinity_view(a, 11);
    EXPECT(got == v2);
    ggfs_view_put(got);
    // An edit of its own: the process sees the newest again.
    ggfs_affinity_forget(a, 10);
    EXPECT(ggfs_affinity_view(a, 10) == NULL);
    EXPECT_EQ(refs(v1), 1);
    ggfs_affinity_free(a);
    EXPECT_EQ(refs(v2), 1);
    ggfs_view_put(v1);
    ggfs_view_put(v2);
    return 1;
}

static int test_time_runs_out(void)
{
    ggfs_affinity *a = ggfs_affinity_new(INT64_C(50) * 1000000);
    ggfs_view *v = bare_view(3);
    ggfs_affinity_opened(a, 20, v);
    ggfs_affinity_opened(a, 21, v);
    EXPECT_EQ(refs(v), 3);
    const struct timespec wait = {0, 120 * 1000000};
    nanosleep(&wait, NULL);
    EXPECT(ggfs_affinity_view(a, 20) == NULL);
    EXPECT_EQ(refs(v), 1); // both entries let go at the call
    ggfs_affinity_free(a);
    ggfs_view_put(v);
    return 1;
}

typedef struct thread_seen {
    _Atomic pid_t tid;
    atomic_bool done;  // the test has read the thread's /proc entry
} thread_seen;

static void *thread_id(void *arg)
{
    thread_seen *t = arg;
    atomic_store(&t->tid, gettid());
    while (!atomic_load(&t->done))
        sched_yield();
    return NULL;
}

static int test_process_of_thread(void)
{
    EXPECT_EQ(ggfs_affinity_process(getpid()), getpid());
    thread_seen seen = {0, false};
    pthread_t t;
    pthread_create(&t, NULL, thread_id, &seen);
    while (atomic_load(&seen.tid) == 0)
        sched_yield();
    const pid_t tid = atomic_load(&seen.tid), process = ggfs_affinity_process(tid);
    atomic_store(&seen.done, true);
    pthread_join(t, NULL);
    EXPECT(tid != getpid());
    EXPECT_EQ(process, getpid());
    EXPECT_EQ(ggfs_affinity_process(-5), -5); // no such thread: itself
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_a_process_keeps_its_first_version();
    ok &= test_time_runs_out();
    ok &= test_process_of_thread();
    return ok ? 0 : 1;
}
