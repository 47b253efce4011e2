/*
 * The fetcher's gate for readers: a reader waiting while jobs hold every
 * connection gives up at its deadline instead of waiting on them, and
 * gets a connection once they end.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "source/fetcher.h"
#include "util/clock.h"
#include "check.h"

#define MS INT64_C(1000000)

/* A job that holds its connection until let go. */
typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool open;
    unsigned running, ran;
} gate;

static void held_job(void *arg, bool cancelled)
{
    gate *g = arg;
    pthread_mutex_lock(&g->lock);
    if (!cancelled) {
        g->running++;
        pthread_cond_broadcast(&g->changed);
        while (!g->open)
            pthread_cond_wait(&g->changed, &g->lock);
        g->running--;
        g->ran++;
    }
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

static void wait_running(gate *g, unsigned n)
{
    pthread_mutex_lock(&g->lock);
    while (g->running < n)
        pthread_cond_wait(&g->changed, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

static void let_go(gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

static int test_a_reader_gives_up_at_its_deadline_while_jobs_hold_every_connection(void)
{
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0, 0};
    ggfs_fetch_share share = {0};
    ggfs_fetcher *f = ggfs_fetcher_new(2);
    EXPECT(f != NULL);
    EXPECT(ggfs_fetcher_submit(f, GGFS_FETCH_PREFETCH, &share, held_job, NULL, &g));
    EXPECT(ggfs_fetcher_submit(f, GGFS_FETCH_PREFETCH, &share, held_job, NULL, &g));
    wait_running(&g, 2);

    const int64_t start = ggfs_now_ns();
    EXPECT(!ggfs_fetcher_enter(f, start + 100 * MS));
    EXPECT(ggfs_now_ns() >= start + 100 * MS);
    // A deadline already past does not wait at all.
    EXPECT(!ggfs_fetcher_enter(f, start));

    // Once the jobs end, a reader gets a connection at once.
    let_go(&g);
    EXPECT(ggfs_fetcher_enter(f, ggfs_now_ns() + 10000 * MS));
    ggfs_fetcher_leave(f);
    ggfs_fetcher_free(f);
    EXPECT_EQ(g.ran, 2);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_a_reader_gives_up_at_its_deadline_while_jobs_hold_every_connection();
    return ok ? 0 : 1;
}
