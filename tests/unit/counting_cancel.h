/*
 * A cancel (util/cancel.h) for the caches' unit tests: it counts how often
 * a computation asks, and says yes from the ask numbered `from` on (0:
 * never), so a test sees a pass stop between chunks, right when asked.
 */
#ifndef GGFS_TEST_COUNTING_CANCEL_H
#define GGFS_TEST_COUNTING_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "util/cancel.h"

typedef struct counting_cancel {
    atomic_int asks;
    atomic_int from;
} counting_cancel;

static bool count_ask(const void *ctx)
{
    counting_cancel *c = (counting_cancel *)ctx;
    const int ask = atomic_fetch_add(&c->asks, 1) + 1;
    const int from = atomic_load(&c->from);
    return from && ask >= from;
}

static inline ggfs_cancel counting_cancel_of(counting_cancel *c)
{
    return (ggfs_cancel){count_ask, c};
}

#endif
