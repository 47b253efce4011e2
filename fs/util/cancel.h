/*
 * cancel: how a long computation (a pass over a tensor for its hashes or
 * its stats) learns that its result is no longer wanted, the mount going
 * away. It asks between chunks of bounded work and, when asked to, stops
 * and fails with ECANCELED; what it made is thrown away, never kept as a
 * result. Whoever owns the computation's context says what "asked" is (the
 * FUSE session having ended, say: fs/tree/session_end.h).
 */
#ifndef GGFS_UTIL_CANCEL_H
#define GGFS_UTIL_CANCEL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ggfs_cancel {
    bool (*asked)(const void *ctx); // NULL: never asked
    const void *ctx;
} ggfs_cancel;

/* Whether the computation is to stop now; false for a NULL cancel. */
static inline bool ggfs_cancel_asked(const ggfs_cancel *c)
{
    return c && c->asked && c->asked(c->ctx);
}

#endif
