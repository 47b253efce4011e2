/*
 * once: values computed on first demand and kept. The first caller of a
 * cell computes its value while callers that come meanwhile wait for that
 * computation; a computation that fails (or is cancelled) keeps nothing,
 * and the next caller, a waiter included, computes again. Once a value is
 * kept, a caller takes it with one atomic load.
 *
 * Cells share the lock and condition of a group, for caches that hold a
 * cell per tensor: computations are long (a pass over a tensor) and rare,
 * so waiting is the exception and one lock serves them all. The owner may
 * take the group's lock for state of its own, and broadcast its condition
 * when that state changes.
 */
#ifndef GGFS_UTIL_ONCE_H
#define GGFS_UTIL_ONCE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct ggfs_once_group {
    pthread_mutex_t lock;
    pthread_cond_t finished; // broadcast when any computation ends
} ggfs_once_group;

/* A cell: all zero (calloc, `= {0}`) is a cell with no value. */
typedef struct ggfs_once {
    _Atomic(void *) value; // NULL until computed
    bool computing;        // under the group's lock: a caller computes it
} ggfs_once;

void ggfs_once_group_init(ggfs_once_group *g);
void ggfs_once_group_destroy(ggfs_once_group *g);

/* Computes a value: returns 0 with *value set (not NULL), or an errno. */
typedef int (*ggfs_once_fn)(void *ctx, void **value);

/* The cell's value in *value: the one kept, or the one a computation
 * under way makes (after waiting for it), or else compute(ctx, value)'s,
 * called outside the lock and kept when it returns 0. Returns 0, or the
 * errno of this caller's own failed computation (*value is then
 * unspecified and nothing is kept). */
int ggfs_once_get(ggfs_once_group *g, ggfs_once *cell, ggfs_once_fn compute, void *ctx, void **value);

/* The value kept, or NULL: for the owner to free at the end. */
static inline void *ggfs_once_value(ggfs_once *cell)
{
    return atomic_load(&cell->value);
}

#endif
