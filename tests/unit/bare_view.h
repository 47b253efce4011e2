/*
 * Views that hold nothing, for tests of what keeps views (tree/versions.h,
 * tree/affinity.h): edited, so references count, with one reference the
 * test keeps; what a table holds shows in refs.
 */
#ifndef GGFS_TEST_BARE_VIEW_H
#define GGFS_TEST_BARE_VIEW_H

#include <stdatomic.h>
#include <stdlib.h>

#include "model/view.h"

static inline ggfs_view *bare_view(uint64_t version)
{
    ggfs_view *v = calloc(1, sizeof *v);
    atomic_init(&v->refs, 1);
    v->version = version;
    v->edited = true;
    return v;
}

static inline unsigned refs(ggfs_view *v)
{
    return atomic_load(&v->refs);
}

#endif
