/*
 * Models read ahead when a remote store's directory is listed (store.h,
 * read_ahead): the first models of the listing, in name order (the order
 * of a shell's glob over them), are opened into the catalog's set of open
 * models on threads of their own, so that a walk such as `grep` over
 * every model's metadata/general.architecture finds them open, or their
 * headers fetched: as many as the memory cache keeps headers of (a model
 * closed again to make room keeps its blocks there, source/block_files.h),
 * and at least max_open. A reader's own open of a model being read ahead waits
 * for that open (util/lru.h) instead of making its own requests; the
 * other connections are the reader's.
 */
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_private.h"
#include "util/workers.h"

#define AHEAD_THREADS 4 // models opened ahead at once
// What a header takes of the memory cache, taken as 2 MiB: its first
// block, and a second for a large vocabulary.
#define HEADER_MB 2

typedef struct ahead_job {
    ggfs_catalog *cat;
    uint64_t dir; // pinned while the job waits or runs
    char name[];
} ahead_job;

static void run(void *arg, bool cancelled)
{
    ahead_job *j = arg;
    ggfs_catalog *cat = j->cat;
    ggfs_cat_entry e;
    // As a lookup would (taking a reference, given back once open).
    if (!cancelled && ggfs_catalog_lookup(cat, j->dir, j->name, &e) == 0) {
        int err;
        ggfs_tree *tree = ggfs_catalog_get(cat, e.slot, &err);
        if (tree)
            ggfs_catalog_put(cat, e.slot, tree);
        ggfs_catalog_forget(cat, e.slot, 1);
    }
    pthread_mutex_lock(&cat->lock);
    ggfs_cat_unpin(cat, cat->slots[j->dir]);
    pthread_mutex_unlock(&cat->lock);
    free(j);
}

void ggfs_cat_read_ahead(ggfs_catalog *cat, slot *d, const ggfs_cat_listing *l)
{
    const size_t kept = cat->env.remote ? ggfs_remote_engine_cache_mb(cat->env.remote) / HEADER_MB : 0;
    const size_t most = kept > cat->max_open ? kept : cat->max_open;
    // Made on first use: the mount's threads start after the daemon forked.
    if (!cat->ahead && !(cat->ahead = ggfs_workers_new(AHEAD_THREADS, (unsigned)most)))
        return;
    size_t queued = 0;
    for (size_t i = 0; i < l->count && queued < most; i++) {
        const ggfs_listed *e = &l->entries[i];
        if (e->kind != GGFS_CAT_MODEL || ggfs_listed_error(l, e))
            continue;
        const char *name = ggfs_listed_name(l, e);
        const size_t len = strlen(name) + 1;
        ahead_job *j = malloc(sizeof *j + len);
        if (!j)
            return;
        *j = (ahead_job){.cat = cat, .dir = d->id};
        memcpy(j->name, name, len);
        d->pins++;
        if (!ggfs_workers_submit(cat->ahead, run, j)) {
            d->pins--;
            free(j);
            return;
        }
        queued++;
    }
}
