/*
 * A byte source for the caches' unit tests (stats, hashes): it serves no
 * bytes (the tests map their model themselves), counts the checks that
 * the source is unchanged, makes the first one linger so that every
 * reader arrives during the first computation, and can be marked changed.
 */
#ifndef GGFS_TEST_COUNTING_SOURCE_H
#define GGFS_TEST_COUNTING_SOURCE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "source/source.h"

typedef struct counting_source {
    ggfs_source base;
    atomic_int unchanged_calls;
    atomic_bool changed;
} counting_source;

static int no_read(ggfs_source *src, void *buf, size_t len, uint64_t off, uint64_t end)
{
    (void)src, (void)buf, (void)len, (void)off, (void)end;
    return EIO;
}

static bool count_unchanged(ggfs_source *src)
{
    counting_source *c = (counting_source *)src;
    // The first computation lingers, so that every reader arrives during it.
    if (atomic_fetch_add(&c->unchanged_calls, 1) == 0)
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    return !atomic_load(&c->changed);
}

static void mark(ggfs_source *src, const char *why)
{
    (void)why;
    atomic_store(&((counting_source *)src)->changed, true);
}

static void no_close(ggfs_source *src)
{
    (void)src;
}

static const ggfs_source_ops counting_ops = {
    .read = no_read,
    .unchanged = count_unchanged,
    .mark_changed = mark,
    .close = no_close,
};

#endif
