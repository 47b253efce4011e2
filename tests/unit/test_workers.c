/*
 * The worker pool (fs/util/workers.c): every job submitted is called
 * exactly once, run or (queued when the pool is freed) cancelled; the pool
 * grows to its size when jobs block and no further; a full queue, and a
 * pool that can start no thread, refuse a job. Waits are for events, with
 * a bound, never for time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "util/workers.h"
#include "wait_until.h"

#define WAIT_S 10 // the most any event is waited for

/* ==== Jobs that count and block ==== */

typedef struct board {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    unsigned ran, cancelled, started, running, most_running;
    bool open;             // blocking jobs may return
    unsigned calls[64];    // per job number: how often it was called
    pthread_t threads[8];  // the distinct threads jobs ran on
    unsigned n_threads;
} board;

static board g_board;

static void board_reset(void)
{
    pthread_mutex_lock(&g_board.lock);
    g_board.ran = g_board.cancelled = g_board.started = g_board.running = g_board.most_running = 0;
    g_board.open = false;
    g_board.n_threads = 0;
    memset(g_board.calls, 0, sizeof g_board.calls);
    pthread_mutex_unlock(&g_board.lock);
}

static void note_thread(void)
{
    for (unsigned i = 0; i < g_board.n_threads; i++) {
        if (pthread_equal(g_board.threads[i], pthread_self()))
            return;
    }
    if (g_board.n_threads < 8)
        g_board.threads[g_board.n_threads] = pthread_self();
    g_board.n_threads++;
}

static void counted(void *arg, bool cancelled)
{
    const uintptr_t n = (uintptr_t)arg;
    pthread_mutex_lock(&g_board.lock);
    g_board.calls[n % 64]++;
    if (cancelled) {
        g_board.cancelled++;
    } else {
        g_board.ran++;
        note_thread();
    }
    pthread_cond_broadcast(&g_board.changed);
    pthread_mutex_unlock(&g_board.lock);
}

/* Runs until the board opens. */
static void blocking(void *arg, bool cancelled)
{
    pthread_mutex_lock(&g_board.lock);
    if (!cancelled) {
        g_board.started++;
        g_board.running++;
        if (g_board.running > g_board.most_running)
            g_board.most_running = g_board.running;
        note_thread();
        pthread_cond_broadcast(&g_board.changed);
        while (!g_board.open)
            pthread_cond_wait(&g_board.changed, &g_board.lock);
        g_board.running--;
    }
    pthread_mutex_unlock(&g_board.lock);
    counted(arg, cancelled);
}

static bool wait_for(const unsigned *count, unsigned want)
{
    return wait_until(&g_board.lock, &g_board.changed, count, want, WAIT_S);
}

static void open_board(void)
{
    pthread_mutex_lock(&g_board.lock);
    g_board.open = true;
    pthread_cond_broadcast(&g_board.changed);
    pthread_mutex_unlock(&g_board.lock);
}

/* ==== Tests ==== */

static int test_every_job_runs_once(void)
{
    board_reset();
    ggfs_workers *w = ggfs_workers_new(3, 64);
    EXPECT(w);
    for (uintptr_t i = 0; i < 64; i++)
        EXPECT(ggfs_workers_submit(w, counted, (void *)i));
    EXPECT(wait_for(&g_board.ran, 64));
    ggfs_workers_free(w);
    EXPECT_EQ(g_board.ran, 64);
    EXPECT_EQ(g_board.cancelled, 0);
    for (int i = 0; i < 64; i++)
        EXPECT_EQ(g_board.calls[i], 1);
    EXPECT(g_board.n_threads >= 1 && g_board.n_threads <= 3);
    return 1;
}

static int test_pool_grows_to_its_size_when_jobs_block(void)
{
    board_reset();
    ggfs_workers *w = ggfs_workers_new(4, 16);
    EXPECT(w);
    for (uintptr_t i = 0; i < 6; i++)
        EXPECT(ggfs_workers_submit(w, blocking, (void *)i));
    EXPECT(wait_for(&g_board.started, 4)); // four at once, each on a thread of its own
    pthread_mutex_lock(&g_board.lock);
    const unsigned started = g_board.started, threads = g_board.n_threads;
    pthread_mutex_unlock(&g_board.lock);
    EXPECT_EQ(started, 4); // the other two wait: no fifth thread
    EXPECT_EQ(threads, 4);
    open_board();
    EXPECT(wait_for(&g_board.ran, 6));
    ggfs_workers_free(w);
    EXPECT_EQ(g_board.most_running, 4);
    EXPECT_EQ(g_board.n_threads, 4);
    return 1;
}

static int test_full_queue_refuses_a_job(void)
{
    board_reset();
    ggfs_workers *w = ggfs_workers_new(1, 2);
    EXPECT(w);
    EXPECT(ggfs_workers_submit(w, blocking, (void *)0));
    EXPECT(wait_for(&g_board.started, 1)); // off the queue, running
    EXPECT(ggfs_workers_submit(w, counted, (void *)1));
    EXPECT(ggfs_workers_submit(w, counted, (void *)2));
    EXPECT(!ggfs_workers_submit(w, counted, (void *)3));
    open_board();
    EXPECT(wait_for(&g_board.ran, 3));
    ggfs_workers_free(w);
    EXPECT_EQ(g_board.calls[3], 0);
    EXPECT_EQ(g_board.ran, 3);
    return 1;
}

static int test_pool_without_threads_refuses_jobs(void)
{
    board_reset();
    ggfs_workers *w = ggfs_workers_new(0, 4);
    EXPECT(w);
    EXPECT(!ggfs_workers_submit(w, counted, (void *)0));
    ggfs_workers_free(w);
    EXPECT_EQ(g_board.calls[0], 0); // dropped by the caller, never called
    ggfs_workers_free(NULL);
    return 1;
}

/* ==== Cancelling at free ==== */

typedef struct prober {
    ggfs_workers *w;
    unsigned probes;   // jobs it queued before the pool refused one
    bool refused;
} prober;

static prober g_prober;

/* The one thread's job: once the board opens (the pool is being freed by
 * then, or soon), queues probes until the pool refuses one, which it does
 * once it is stopping; then returns, leaving them all queued. */
static void probing(void *arg, bool cancelled)
{
    (void)arg;
    if (cancelled)
        return;
    pthread_mutex_lock(&g_board.lock);
    g_board.started++;
    pthread_cond_broadcast(&g_board.changed);
    while (!g_board.open)
        pthread_cond_wait(&g_board.changed, &g_board.lock);
    pthread_mutex_unlock(&g_board.lock);
    for (int tries = 0; tries < WAIT_S * 1000; tries++) {
        if (!ggfs_workers_submit(g_prober.w, counted, (void *)(uintptr_t)(10 + g_prober.probes % 50))) {
            g_prober.refused = true;
            break;
        }
        g_prober.probes++;
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL); // a bounded poll for the stop
    }
    pthread_mutex_lock(&g_board.lock);
    g_board.ran++;
    pthread_cond_broadcast(&g_board.changed);
    pthread_mutex_unlock(&g_board.lock);
}

static void *free_pool(void *arg)
{
    ggfs_workers_free(arg);
    return NULL;
}

static int test_free_waits_for_running_jobs_and_cancels_queued_ones(void)
{
    board_reset();
    // A queue larger than the probes a slow stop can take.
    ggfs_workers *w = ggfs_workers_new(1, WAIT_S * 1000 + 8);
    EXPECT(w);
    g_prober = (prober){w, 0, false};
    EXPECT(ggfs_workers_submit(w, probing, NULL));
    EXPECT(wait_for(&g_board.started, 1));
    for (uintptr_t i = 1; i <= 3; i++)
        EXPECT(ggfs_workers_submit(w, counted, (void *)i));
    pthread_t freer;
    EXPECT_EQ(pthread_create(&freer, NULL, free_pool, w), 0);
    open_board();
    pthread_join(freer, NULL); // returns only once the running job has
    EXPECT(g_prober.refused);
    EXPECT_EQ(g_board.ran, 1); // the probing job alone
    EXPECT_EQ(g_board.cancelled, 3 + g_prober.probes);
    for (uintptr_t i = 1; i <= 3; i++)
        EXPECT_EQ(g_board.calls[i], 1);
    return 1;
}

int main(void)
{
    pthread_mutex_init(&g_board.lock, NULL);
    pthread_cond_init(&g_board.changed, NULL);
    int ok = test_every_job_runs_once();
    ok &= test_pool_grows_to_its_size_when_jobs_block();
    ok &= test_full_queue_refuses_a_job();
    ok &= test_pool_without_threads_refuses_jobs();
    ok &= test_free_waits_for_running_jobs_and_cancels_queued_ones();
    printf("workers: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
