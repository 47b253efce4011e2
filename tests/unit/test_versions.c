/*
 * The versions the kernel holds (tree/versions.h): a view is kept from the
 * first hold of an inode to the forget that brings its count to 0, once
 * per inode whatever the count; the table grows past its first buckets;
 * unknown inodes are ignored; and all of it from several threads at once.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bare_view.h"
#include "check.h"
#include "tree/versions.h"

static int test_one_reference_per_inode_until_forgotten(void)
{
    ggfs_versions *vs = ggfs_versions_new(false);
    ggfs_view *v = bare_view(3);
    EXPECT(ggfs_versions_hold(vs, 100, v, 1));
    EXPECT(ggfs_versions_hold(vs, 100, v, 2));
    EXPECT_EQ(refs(v), 2);
    EXPECT_EQ(ggfs_versions_count(vs), 1);
    ggfs_view *got = ggfs_versions_view(vs, 100);
    EXPECT(got == v);
    EXPECT_EQ(refs(v), 3);
    ggfs_view_put(got);
    ggfs_versions_forget(vs, 100, 2);
    EXPECT(ggfs_versions_view(vs, 100) == v);
    ggfs_view_put(v);
    ggfs_versions_forget(vs, 100, 1);
    EXPECT(ggfs_versions_view(vs, 100) == NULL);
    EXPECT_EQ(ggfs_versions_count(vs), 0);
    EXPECT_EQ(refs(v), 1);
    // A second inode of the same view holds it once more.
    EXPECT(ggfs_versions_hold(vs, 7, v, 1));
    EXPECT(ggfs_versions_hold(vs, 8, v, 1));
    EXPECT_EQ(refs(v), 3);
    ggfs_versions_free(vs); // lets both go
    EXPECT_EQ(refs(v), 1);
    ggfs_view_put(v);
    return 1;
}

static int test_unknown_and_excess_forgets(void)
{
    ggfs_versions *vs = ggfs_versions_new(false);
    ggfs_view *v = bare_view(1);
    ggfs_versions_forget(vs, 5, 1);
    EXPECT(ggfs_versions_hold(vs, 5, v, 1));
    ggfs_versions_forget(vs, 6, 3);
    EXPECT(ggfs_versions_view(vs, 5) == v);
    ggfs_view_put(v);
    ggfs_versions_forget(vs, 5, 10);
    EXPECT_EQ(ggfs_versions_count(vs), 0);
    EXPECT_EQ(refs(v), 1);
    ggfs_versions_free(vs);
    ggfs_view_put(v);
    return 1;
}

#define MANY 5000

static int test_many_inodes(void)
{
    ggfs_versions *vs = ggfs_versions_new(false);
    static ggfs_view *views[MANY];
    for (uint64_t i = 0; i < MANY; i++) {
        views[i] = bare_view(i);
        EXPECT(ggfs_versions_hold(vs, (UINT64_C(1) << 52) | i << 32 | 16, views[i], 1 + i % 3));
    }
    EXPECT_EQ(ggfs_versions_count(vs), MANY);
    for (uint64_t i = 0; i < MANY; i++) {
        ggfs_view *got = ggfs_versions_view(vs, (UINT64_C(1) << 52) | i << 32 | 16);
        EXPECT(got == views[i]);
        ggfs_view_put(got);
        EXPECT_EQ(refs(views[i]), 2);
    }
    for (uint64_t i = 0; i < MANY; i++)
        ggfs_versions_forget(vs, (UINT64_C(1) << 52) | i << 32 | 16, 1 + i % 3);
    EXPECT_EQ(ggfs_versions_count(vs), 0);
    for (uint64_t i = 0; i < MANY; i++) {
        EXPECT_EQ(refs(views[i]), 1);
        ggfs_view_put(views[i]);
    }
    ggfs_versions_free(vs);
    return 1;
}

#define THREADS 4
#define ROUNDS 20000

typedef struct worker {
    ggfs_versions *vs;
    ggfs_view *shared;
    ggfs_view *own;
    uint64_t base;
    int ok;
} worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    w->ok = 1;
    for (uint64_t r = 0; r < ROUNDS; r++) {
        const uint64_t ino = w->base + r % 64;
        if (!ggfs_versions_hold(w->vs, ino, w->own, 1) || !ggfs_versions_hold(w->vs, 1, w->shared, 1)) {
            w->ok = 0;
            break;
        }
        ggfs_view *got = ggfs_versions_view(w->vs, ino);
        if (got != w->own)
            w->ok = 0;
        ggfs_view_put(got);
        ggfs_versions_forget(w->vs, ino, 1);
        ggfs_versions_forget(w->vs, 1, 1);
    }
    return NULL;
}

static int test_threads(void)
{
    ggfs_versions *vs = ggfs_versions_new(false);
    ggfs_view *shared = bare_view(1);
    EXPECT(ggfs_versions_hold(vs, 1, shared, 1)); // kept throughout
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){vs, shared, bare_view(10 + (uint64_t)i), 1000 * (uint64_t)(i + 1), 0};
        pthread_create(&t[i], NULL, run_worker, &w[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        EXPECT(w[i].ok);
        EXPECT_EQ(refs(w[i].own), 1);
        ggfs_view_put(w[i].own);
    }
    EXPECT_EQ(ggfs_versions_count(vs), 1);
    EXPECT_EQ(refs(shared), 2);
    ggfs_versions_free(vs);
    EXPECT_EQ(refs(shared), 1);
    ggfs_view_put(shared);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_one_reference_per_inode_until_forgotten();
    ok &= test_unknown_and_excess_forgets();
    ok &= test_many_inodes();
    ok &= test_threads();
    return ok ? 0 : 1;
}
