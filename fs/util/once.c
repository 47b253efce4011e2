/*
 * Values computed once, with waiters (once.h).
 */
#include "util/once.h"

void ggfs_once_group_init(ggfs_once_group *g)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->finished, NULL);
}

void ggfs_once_group_destroy(ggfs_once_group *g)
{
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->finished);
}

int ggfs_once_get(ggfs_once_group *g, ggfs_once *cell, ggfs_once_fn compute, void *ctx, void **value)
{
    void *kept = atomic_load(&cell->value);
    if (kept) {
        *value = kept;
        return 0;
    }
    pthread_mutex_lock(&g->lock);
    while (cell->computing)
        pthread_cond_wait(&g->finished, &g->lock);
    kept = atomic_load(&cell->value);
    if (kept) {
        pthread_mutex_unlock(&g->lock);
        *value = kept;
        return 0;
    }
    cell->computing = true;
    pthread_mutex_unlock(&g->lock);

    void *computed = NULL;
    const int err = compute(ctx, &computed);

    pthread_mutex_lock(&g->lock);
    if (!err)
        atomic_store(&cell->value, computed);
    cell->computing = false;
    pthread_cond_broadcast(&g->finished);
    pthread_mutex_unlock(&g->lock);
    *value = computed;
    return err;
}
