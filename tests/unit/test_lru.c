/*
 * The bounded set of open models: least recently used closed first, a
 * thing in use never closed, failures not remembered, dropped things
 * closed once idle, and all of it from many threads at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "util/lru.h"

typedef struct thing {
    uint64_t key;
    atomic_bool closed;
} thing;

typedef struct world {
    atomic_int live;            // things open now
    atomic_int max_live;
    atomic_int opens;
    uint64_t fail_key;          // open fails for this key
    atomic_int last_closed;     // key of the last close, or -1
} world;

static void *open_thing(void *ctx, uint64_t key, int *err)
{
    world *w = ctx;
    if (key == w->fail_key) {
        *err = EIO;
        return NULL;
    }
    thing *t = malloc(sizeof *t);
    if (!t) {
        *err = ENOMEM;
        return NULL;
    }
    t->key = key;
    atomic_init(&t->closed, false);
    const int live = atomic_fetch_add(&w->live, 1) + 1;
    int seen = atomic_load(&w->max_live);
    while (live > seen && !atomic_compare_exchange_weak(&w->max_live, &seen, live))
        ;
    atomic_fetch_add(&w->opens, 1);
    return t;
}

static void close_thing(void *ctx, uint64_t key, void *p)
{
    world *w = ctx;
    thing *t = p;
    atomic_store(&t->closed, true);
    atomic_fetch_sub(&w->live, 1);
    atomic_store(&w->last_closed, (int)key);
    free(t);
}

static const ggfs_lru_ops ops = {open_thing, close_thing};

static void world_init(world *w)
{
    atomic_init(&w->live, 0);
    atomic_init(&w->max_live, 0);
    atomic_init(&w->opens, 0);
    w->fail_key = UINT64_MAX;
    atomic_init(&w->last_closed, -1);
}

/* get then put at once; returns the thing's key (or -1). */
static int touch(ggfs_lru *lru, uint64_t key)
{
    int err = 0;
    thing *t = ggfs_lru_get(lru, key, &err);
    if (!t)
        return -1;
    const int k = (int)t->key;
    ggfs_lru_put(lru, key, t);
    return k;
}

static int test_least_recently_used_is_closed_first(void)
{
    world w;
    world_init(&w);
    ggfs_lru *lru = ggfs_lru_new(2, &ops, &w);
    EXPECT(lru);
    EXPECT_EQ(touch(lru, 1), 1);
    EXPECT_EQ(touch(lru, 2), 2);
    EXPECT_EQ(ggfs_lru_open_count(lru), 2);
    EXPECT_EQ(touch(lru, 1), 1); // 1 is now the most recent
    EXPECT_EQ(atomic_load(&w.opens), 2);
    EXPECT_EQ(touch(lru, 3), 3);
    EXPECT_EQ(w.last_closed, 2);
    EXPECT_EQ(ggfs_lru_open_count(lru), 2);
    EXPECT_EQ(atomic_load(&w.live), 2);
    EXPECT_EQ(touch(lru, 2), 2); // reopened, closing 1
    EXPECT_EQ(w.last_closed, 1);
    EXPECT_EQ(atomic_load(&w.opens), 4);
    ggfs_lru_free(lru);
    EXPECT_EQ(atomic_load(&w.live), 0);
    return 1;
}

static int test_things_in_use_are_never_closed(void)
{
    world w;
    world_init(&w);
    ggfs_lru *lru = ggfs_lru_new(2, &ops, &w);
    int err;
    thing *a = ggfs_lru_get(lru, 1, &err), *b = ggfs_lru_get(lru, 2, &err), *c = ggfs_lru_get(lru, 3, &err);
    EXPECT(a && b && c);
    EXPECT_EQ(ggfs_lru_open_count(lru), 3); // over capacity while all are held
    EXPECT_EQ(w.last_closed, -1);
    thing *a2 = ggfs_lru_get(lru, 1, &err); // a second holder of 1
    EXPECT(a2 == a);
    ggfs_lru_put(lru, 1, a);
    EXPECT_EQ(w.last_closed, -1); // 1 still held
    ggfs_lru_put(lru, 1, a2);
    EXPECT_EQ(w.last_closed, 1); // back to capacity
    EXPECT_EQ(ggfs_lru_open_count(lru), 2);
    EXPECT(!atomic_load(&b->closed) && !atomic_load(&c->closed));
    ggfs_lru_put(lru, 2, b);
    ggfs_lru_put(lru, 3, c);
    EXPECT_EQ(ggfs_lru_open_count(lru), 2);
    ggfs_lru_free(lru);
    EXPECT_EQ(atomic_load(&w.live), 0);
    return 1;
}

static int test_failures_are_not_remembered(void)
{
    world w;
    world_init(&w);
    w.fail_key = 7;
    ggfs_lru *lru = ggfs_lru_new(4, &ops, &w);
    int err = 0;
    EXPECT(ggfs_lru_get(lru, 7, &err) == NULL);
    EXPECT_EQ(err, EIO);
    EXPECT_EQ(ggfs_lru_open_count(lru), 0);
    w.fail_key = UINT64_MAX; // the file was fixed
    EXPECT_EQ(touch(lru, 7), 7);
    EXPECT_EQ(ggfs_lru_open_count(lru), 1);
    ggfs_lru_free(lru);
    return 1;
}

static int test_dropped_things_close_once_idle_and_reopen(void)
{
    world w;
    world_init(&w);
    ggfs_lru *lru = ggfs_lru_new(4, &ops, &w);
    int err;
    EXPECT_EQ(touch(lru, 5), 5);
    ggfs_lru_drop(lru, 5); // idle: closed now
    EXPECT_EQ(w.last_closed, 5);
    EXPECT_EQ(ggfs_lru_open_count(lru), 0);
    thing *old = ggfs_lru_get(lru, 5, &err);
    EXPECT(old);
    ggfs_lru_drop(lru, 5); // in use: closed at its last put
    EXPECT(!atomic_load(&old->closed));
    EXPECT_EQ(ggfs_lru_open_count(lru), 0);
    thing *fresh = ggfs_lru_get(lru, 5, &err); // a new one, while the old is held
    EXPECT(fresh && fresh != old);
    EXPECT_EQ(atomic_load(&w.live), 2);
    w.last_closed = -1;
    ggfs_lru_put(lru, 5, old);
    EXPECT_EQ(w.last_closed, 5);
    EXPECT_EQ(atomic_load(&w.live), 1);
    ggfs_lru_put(lru, 5, fresh);
    EXPECT_EQ(ggfs_lru_open_count(lru), 1);
    ggfs_lru_drop(lru, 99); // nothing to drop
    ggfs_lru_free(lru);
    EXPECT_EQ(atomic_load(&w.live), 0);
    return 1;
}

/* ==== Many threads ==== */

#define THREADS 8
#define ROUNDS 20000
#define CAPACITY 4

typedef struct worker {
    ggfs_lru *lru;
    world *w;
    unsigned seed;
    int failures;
} worker;

static void *work(void *p)
{
    worker *k = p;
    for (int i = 0; i < ROUNDS; i++) {
        const uint64_t key = (uint64_t)(rand_r(&k->seed) % 16);
        int err;
        thing *t = ggfs_lru_get(k->lru, key, &err);
        if (!t || t->key != key || atomic_load(&t->closed)) {
            k->failures++;
            continue;
        }
        if (i % 97 == 0)
            nanosleep(&(struct timespec){0, 50000}, NULL); // held a while: nobody may close it
        if (atomic_load(&t->closed))
            k->failures++;
        ggfs_lru_put(k->lru, key, t);
    }
    return NULL;
}

static int test_many_threads_stay_bounded_and_safe(void)
{
    world w;
    world_init(&w);
    ggfs_lru *lru = ggfs_lru_new(CAPACITY, &ops, &w);
    pthread_t tid[THREADS];
    worker k[THREADS];
    for (int i = 0; i < THREADS; i++) {
        k[i] = (worker){lru, &w, (unsigned)i * 7919u + 1, 0};
        EXPECT(pthread_create(&tid[i], NULL, work, &k[i]) == 0);
    }
    int failures = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        failures += k[i].failures;
    }
    EXPECT_EQ(failures, 0);
    // Each thread holds at most one thing and closes at most one it
    // evicted after letting go of the lock (a key evicted may be opened
    // again by another thread while that close runs).
    EXPECT(atomic_load(&w.max_live) <= CAPACITY + 2 * THREADS);
    EXPECT(ggfs_lru_open_count(lru) <= CAPACITY);
    ggfs_lru_free(lru);
    EXPECT_EQ(atomic_load(&w.live), 0);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_least_recently_used_is_closed_first();
    ok &= test_things_in_use_are_never_closed();
    ok &= test_failures_are_not_remembered();
    ok &= test_dropped_things_close_once_idle_and_reopen();
    ok &= test_many_threads_stay_bounded_and_safe();
    return ok ? 0 : 1;
}
