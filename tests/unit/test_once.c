/*
 * util/once.c: a cell's value is computed by its first caller while the
 * others wait for it and share it; a failed computation keeps nothing and
 * the next caller, a waiter included, computes again; cells of one group
 * never wait on each other. Run under ThreadSanitizer too.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "util/once.h"

#define N_CALLERS 8

/* A computation that counts its calls, may fail its first ones, and may
 * hold until every caller has arrived (so that the others come while it
 * runs) or until it is let go. */
typedef struct job {
    atomic_int calls;
    int failures;           // the first this many calls fail with EIO
    atomic_int arrived;     // callers that are about to call ggfs_once_get
    int hold_for;           // the first call waits for this many arrivals
    atomic_bool held;       // the first call is running and holding
    atomic_bool let_go;     // the first call may return
    int value;              // what a value points at
} job;

static int compute(void *ctx, void **value)
{
    job *j = ctx;
    const int call = atomic_fetch_add(&j->calls, 1);
    if (call == 0) {
        atomic_store(&j->held, true);
        while (atomic_load(&j->arrived) < j->hold_for || !atomic_load(&j->let_go))
            sched_yield();
    }
    if (call < j->failures)
        return EIO;
    *value = &j->value;
    return 0;
}

static job job_new(int failures, int hold_for)
{
    job j = {.failures = failures, .hold_for = hold_for, .value = 42};
    atomic_init(&j.calls, 0);
    atomic_init(&j.arrived, 0);
    atomic_init(&j.held, false);
    atomic_init(&j.let_go, true);
    return j;
}

static int test_the_value_is_kept(void)
{
    ggfs_once_group g;
    ggfs_once_group_init(&g);
    ggfs_once cell = {0};
    job j = job_new(0, 0);
    void *v = NULL;
    EXPECT_EQ(ggfs_once_get(&g, &cell, compute, &j, &v), 0);
    EXPECT(v == &j.value);
    EXPECT_EQ(ggfs_once_get(&g, &cell, compute, &j, &v), 0);
    EXPECT(v == &j.value);
    EXPECT_EQ(atomic_load(&j.calls), 1);
    EXPECT(ggfs_once_value(&cell) == &j.value);
    ggfs_once_group_destroy(&g);
    return 1;
}

static int test_a_failure_keeps_nothing(void)
{
    ggfs_once_group g;
    ggfs_once_group_init(&g);
    ggfs_once cell = {0};
    job j = job_new(1, 0);
    void *v = NULL;
    EXPECT_EQ(ggfs_once_get(&g, &cell, compute, &j, &v), EIO);
    EXPECT(ggfs_once_value(&cell) == NULL);
    EXPECT_EQ(ggfs_once_get(&g, &cell, compute, &j, &v), 0);
    EXPECT(v == &j.value);
    EXPECT_EQ(atomic_load(&j.calls), 2);
    ggfs_once_group_destroy(&g);
    return 1;
}

typedef struct caller {
    pthread_t thread;
    ggfs_once_group *g;
    ggfs_once *cell;
    job *j;
    void *value;
    int err;
} caller;

static void *call(void *arg)
{
    caller *c = arg;
    atomic_fetch_add(&c->j->arrived, 1);
    c->err = ggfs_once_get(c->g, c->cell, compute, c->j, &c->value);
    return NULL;
}

/* N_CALLERS threads ask at once, the first computation holding until all
 * have arrived; returns how many got an error, -1 if one got a wrong value. */
static int call_at_once(job *j, int *errors)
{
    ggfs_once_group g;
    ggfs_once_group_init(&g);
    ggfs_once cell = {0};
    caller callers[N_CALLERS];
    for (int i = 0; i < N_CALLERS; i++) {
        callers[i] = (caller){.g = &g, .cell = &cell, .j = j};
        EXPECT(pthread_create(&callers[i].thread, NULL, call, &callers[i]) == 0);
    }
    *errors = 0;
    for (int i = 0; i < N_CALLERS; i++) {
        pthread_join(callers[i].thread, NULL);
        if (callers[i].err == EIO)
            ++*errors;
        else
            EXPECT(callers[i].err == 0 && callers[i].value == &j->value);
    }
    EXPECT(ggfs_once_value(&cell) == &j->value);
    ggfs_once_group_destroy(&g);
    return 1;
}

static int test_callers_at_once_share_one_computation(void)
{
    job j = job_new(0, N_CALLERS);
    int errors;
    EXPECT(call_at_once(&j, &errors));
    EXPECT_EQ(errors, 0);
    EXPECT_EQ(atomic_load(&j.calls), 1);
    return 1;
}

static int test_waiters_compute_again_after_a_failure(void)
{
    job j = job_new(1, N_CALLERS);
    int errors;
    EXPECT(call_at_once(&j, &errors));
    // The computing caller gets its error; one waiter computes again and
    // the others share that value.
    EXPECT_EQ(errors, 1);
    EXPECT_EQ(atomic_load(&j.calls), 2);
    return 1;
}

static int test_cells_do_not_wait_on_each_other(void)
{
    ggfs_once_group g;
    ggfs_once_group_init(&g);
    ggfs_once slow = {0}, fast = {0};
    job held = job_new(0, 0);
    atomic_store(&held.let_go, false);
    caller c = {.g = &g, .cell = &slow, .j = &held};
    EXPECT(pthread_create(&c.thread, NULL, call, &c) == 0);
    while (!atomic_load(&held.held))
        sched_yield();
    // The slow cell computes until let go: the fast one must not wait for it.
    job quick = job_new(0, 0);
    void *v = NULL;
    const int err = ggfs_once_get(&g, &fast, compute, &quick, &v);
    atomic_store(&held.let_go, true);
    pthread_join(c.thread, NULL);
    EXPECT_EQ(err, 0);
    EXPECT(v == &quick.value);
    EXPECT_EQ(c.err, 0);
    EXPECT(c.value == &held.value);
    ggfs_once_group_destroy(&g);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_the_value_is_kept();
    ok &= test_a_failure_keeps_nothing();
    for (int round = 0; round < 20; round++) {
        ok &= test_callers_at_once_share_one_computation();
        ok &= test_waiters_compute_again_after_a_failure();
    }
    ok &= test_cells_do_not_wait_on_each_other();
    return ok ? 0 : 1;
}
