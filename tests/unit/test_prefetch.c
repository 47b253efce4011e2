/*
 * The background prefetch (fs/source/prefetch.c) over sources of the
 * test's own, whose prefetch op records each run it is asked for (and can
 * fail): every run of every source that can prefetch, once, in order with
 * one connection, beginning where it was told; the first cache_mb only
 * when nothing keeps the rest; the sink handed each run as it landed; a
 * failed pass made again; a stop that ends it at once. Waits are for
 * events, with a bound.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "source/prefetch.h"
#include "source/remote.h"
#include "util/clock.h"
#include "wait_until.h"

#define MIB (UINT64_C(1) << 20)
#define RUN (8 * MIB) // prefetch.c's runs
#define WAIT_S 10

/* ==== Sources that record ==== */

typedef struct call {
    int source;            // the test's number of the source
    uint64_t off, len;
} call;

static struct record {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    call calls[64];
    unsigned n_calls;
    unsigned fail_first;   // calls that fail before the others pass
    call sunk[64];
    unsigned n_sunk;
    uint64_t sunk_bytes;
} g_rec;

typedef struct test_source {
    ggfs_source base;
    int number;
} test_source;

static int no_read(ggfs_source *s, void *buf, size_t len, uint64_t off, uint64_t end)
{
    (void)s, (void)buf, (void)len, (void)off, (void)end;
    return EIO;
}

static bool unchanged(ggfs_source *s)
{
    (void)s;
    return true;
}

static void mark(ggfs_source *s, const char *why)
{
    (void)s, (void)why;
}

static void no_close(ggfs_source *s)
{
    (void)s;
}

static int record_prefetch(ggfs_source *s, uint64_t off, uint64_t len)
{
    pthread_mutex_lock(&g_rec.lock);
    if (g_rec.n_calls < 64)
        g_rec.calls[g_rec.n_calls] = (call){((test_source *)s)->number, off, len};
    g_rec.n_calls++;
    const bool fail = g_rec.fail_first > 0;
    if (fail)
        g_rec.fail_first--;
    pthread_cond_broadcast(&g_rec.changed);
    pthread_mutex_unlock(&g_rec.lock);
    return fail ? EIO : 0;
}

static const ggfs_source_ops prefetching = {
    .read = no_read, .unchanged = unchanged, .mark_changed = mark, .close = no_close, .prefetch = record_prefetch};
static const ggfs_source_ops plain = {.read = no_read, .unchanged = unchanged, .mark_changed = mark, .close = no_close};

static void sink(void *arg, size_t source, uint64_t off, uint64_t len)
{
    (void)arg;
    pthread_mutex_lock(&g_rec.lock);
    if (g_rec.n_sunk < 64)
        g_rec.sunk[g_rec.n_sunk] = (call){(int)source, off, len};
    g_rec.n_sunk++;
    g_rec.sunk_bytes += len;
    pthread_cond_broadcast(&g_rec.changed);
    pthread_mutex_unlock(&g_rec.lock);
}

static void reset(unsigned fail_first)
{
    pthread_mutex_lock(&g_rec.lock);
    g_rec.n_calls = g_rec.n_sunk = 0;
    g_rec.sunk_bytes = 0;
    g_rec.fail_first = fail_first;
    pthread_mutex_unlock(&g_rec.lock);
}

static bool wait_for(const unsigned *count, unsigned want)
{
    return wait_until(&g_rec.lock, &g_rec.changed, count, want, WAIT_S);
}

/* Whether call i was (source, off). */
static bool called(unsigned i, int source, uint64_t off)
{
    pthread_mutex_lock(&g_rec.lock);
    const bool yes = i < g_rec.n_calls && g_rec.calls[i].source == source && g_rec.calls[i].off == off;
    pthread_mutex_unlock(&g_rec.lock);
    if (!yes)
        fprintf(stderr, "call %u was not (%d, %llu MiB)\n", i, source, (unsigned long long)(off / MIB));
    return yes;
}

static ggfs_remote *remote_with(unsigned cache_mb, unsigned connections)
{
    const ggfs_remote_options o = {.cache_mb = cache_mb, .timeout_s = 5, .connections = connections};
    char why[256];
    ggfs_remote *r = ggfs_remote_new(&o, why, sizeof why);
    if (!r)
        fprintf(stderr, "remote: %s\n", why);
    return r;
}

/* Sources 0 (20 MiB: runs at 0, 8 and 16), 1 (no prefetch op), 2 (5 MiB). */
static test_source g_src[3];
static ggfs_source *g_list[3];

/* ==== Tests ==== */

static int test_every_run_in_order_from_where_told(void)
{
    reset(0);
    ggfs_remote *remote = remote_with(256, 1);
    EXPECT(remote);
    ggfs_prefetch *p = ggfs_prefetch_start(remote, g_list, 3, NULL, NULL, true);
    EXPECT(p);
    ggfs_prefetch_begin_at(p, 0, 9 * MIB); // in the run at 8
    ggfs_prefetch_hold(p, false);
    EXPECT(wait_for(&g_rec.n_calls, 4));
    // One connection: one run at a time, in the pass's order, then the
    // runs before where it began.
    EXPECT(called(0, 0, 8 * MIB));
    EXPECT(called(1, 0, 16 * MIB));
    EXPECT(called(2, 2, 0));
    EXPECT(called(3, 0, 0));
    EXPECT_EQ(g_rec.calls[0].len, RUN);
    ggfs_prefetch_stop(p);
    EXPECT_EQ(g_rec.n_calls, 4); // one pass: nothing after it succeeded
    EXPECT_EQ(g_rec.n_sunk, 0);
    EXPECT(!atomic_load(&remote->prefetch_going)); // nothing kept every byte
    ggfs_remote_free(remote);
    return 1;
}

static int test_only_the_first_cache_mb_without_a_place_to_keep_the_rest(void)
{
    reset(0);
    ggfs_remote *remote = remote_with(8, 4);
    EXPECT(remote);
    ggfs_prefetch *p = ggfs_prefetch_start(remote, g_list, 3, NULL, NULL, false);
    EXPECT(p);
    EXPECT(wait_for(&g_rec.n_calls, 1));
    ggfs_prefetch_stop(p); // waits for the pass: every run it handed out has run
    EXPECT_EQ(g_rec.n_calls, 1);
    EXPECT(called(0, 0, 0));
    ggfs_remote_free(remote);
    return 1;
}

static int test_sink_takes_every_run_as_it_lands(void)
{
    reset(0);
    ggfs_remote *remote = remote_with(64, 2);
    EXPECT(remote);
    EXPECT(ggfs_prefetch_keeps_all(&remote->opts, true));
    ggfs_prefetch *p = ggfs_prefetch_start(remote, g_list, 3, sink, NULL, false);
    EXPECT(p);
    EXPECT(wait_for(&g_rec.n_sunk, 4));
    // The sources as given (1 has no prefetch op), each byte once.
    EXPECT_EQ(g_rec.sunk_bytes, g_src[0].base.size + g_src[2].base.size);
    bool seen[3] = {false, false, false};
    for (unsigned i = 0; i < 4; i++) {
        const call c = g_rec.sunk[i];
        EXPECT(c.source == 0 || c.source == 2);
        if (c.source == 2) {
            EXPECT_EQ(c.off, 0);
            EXPECT_EQ(c.len, 5 * MIB);
        } else {
            EXPECT(c.off % RUN == 0 && c.off / RUN < 3);
            EXPECT(!seen[c.off / RUN]);
            seen[c.off / RUN] = true;
            EXPECT_EQ(c.len, c.off == 16 * MIB ? 4 * MIB : RUN);
        }
    }
    ggfs_prefetch_stop(p);
    EXPECT_EQ(g_rec.n_sunk, 4);
    ggfs_remote_free(remote);
    return 1;
}

static int test_failed_pass_is_made_again(void)
{
    reset(1);
    ggfs_remote *remote = remote_with(256, 1);
    EXPECT(remote);
    ggfs_prefetch *p = ggfs_prefetch_start(remote, g_list, 3, NULL, NULL, false);
    EXPECT(p);
    // The first run fails and ends the pass; after a pause, a pass of all four.
    const int64_t start = ggfs_now_ns();
    EXPECT(wait_for(&g_rec.n_calls, 5));
    EXPECT(ggfs_now_ns() - start >= 900 * INT64_C(1000000));
    EXPECT(called(0, 0, 0));
    EXPECT(called(1, 0, 0));
    EXPECT(called(2, 0, 8 * MIB));
    EXPECT(called(3, 0, 16 * MIB));
    EXPECT(called(4, 2, 0));
    ggfs_prefetch_stop(p);
    EXPECT_EQ(g_rec.n_calls, 5);
    ggfs_remote_free(remote);
    return 1;
}

static int test_stop_does_not_wait_out_the_pause(void)
{
    reset(1000);
    ggfs_remote *remote = remote_with(256, 1);
    EXPECT(remote);
    ggfs_prefetch *p = ggfs_prefetch_start(remote, g_list, 3, NULL, NULL, false);
    EXPECT(p);
    // Two passes fail, 1 s apart; the second pause is of 2 s.
    EXPECT(wait_for(&g_rec.n_calls, 2));
    const int64_t start = ggfs_now_ns();
    ggfs_prefetch_stop(p);
    EXPECT(ggfs_now_ns() - start < 1500 * INT64_C(1000000));
    EXPECT_EQ(g_rec.n_calls, 2);
    // Held and never let go: stops all the same.
    p = ggfs_prefetch_start(remote, g_list, 3, NULL, NULL, true);
    EXPECT(p);
    ggfs_prefetch_stop(p);
    EXPECT_EQ(g_rec.n_calls, 2);
    ggfs_prefetch_stop(NULL);
    ggfs_remote_free(remote);
    return 1;
}

int main(void)
{
    pthread_mutex_init(&g_rec.lock, NULL);
    pthread_cond_init(&g_rec.changed, NULL);
    static const uint64_t sizes[3] = {20 * MIB, 3 * MIB, 5 * MIB};
    for (int i = 0; i < 3; i++) {
        g_src[i] = (test_source){{.ops = i == 1 ? &plain : &prefetching, .name = "test", .size = sizes[i]}, i};
        g_list[i] = &g_src[i].base;
    }
    int ok = test_every_run_in_order_from_where_told();
    ok &= test_only_the_first_cache_mb_without_a_place_to_keep_the_rest();
    ok &= test_sink_takes_every_run_as_it_lands();
    ok &= test_failed_pass_is_made_again();
    ok &= test_stop_does_not_wait_out_the_pause();
    printf("prefetch: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
