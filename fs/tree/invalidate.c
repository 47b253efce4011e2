/*
 * Dropping the kernel's caches of files an edit changed (see invalidate.h).
 */
#include <stdlib.h>

#include "tree/invalidate.h"
#include "util/workers.h"

#define MAX_INODES 8

typedef struct drop_pages {
    struct fuse_session *session;
    uint64_t inos[MAX_INODES];
    size_t n;
} drop_pages;

static void run_drop_pages(void *arg, bool cancelled)
{
    drop_pages *d = arg;
    for (size_t i = 0; !cancelled && i < d->n; i++)
        fuse_lowlevel_notify_inval_inode(d->session, d->inos[i], 0, 0);
    free(d);
}

void ggfs_invalidate_edit(ggfs_model_mount *mount, const uint64_t *ids, size_t n_ids, bool keys_changed)
{
    if (!mount->session)
        return;
    const ggfs_tree *tree = mount->tree;
    drop_pages *d = malloc(sizeof *d);
    uint64_t inos[MAX_INODES];
    size_t n = 0;
    for (size_t i = 0; i < n_ids && n < MAX_INODES; i++) {
        if (ids[i] != UINT64_MAX)
            inos[n++] = ggfs_ino_of(tree, (ggfs_node){GGFS_KV, ids[i]});
    }
    if (keys_changed) {
        static const ggfs_kind roots[] = {GGFS_HEADER, GGFS_WARNINGS, GGFS_MODEL_GGUF, GGFS_METADATA_JSON};
        for (size_t i = 0; i < sizeof roots / sizeof roots[0] && n < MAX_INODES; i++)
            inos[n++] = ggfs_ino_of(tree, (ggfs_node){roots[i], 0});
    }
    // Attributes only (offset -1): no page is touched, nothing waits.
    for (size_t i = 0; i < n; i++)
        fuse_lowlevel_notify_inval_inode(mount->session, inos[i], -1, 0);
    if (!d)
        return;
    *d = (drop_pages){mount->session, {0}, n};
    for (size_t i = 0; i < n; i++)
        d->inos[i] = inos[i];
    pthread_mutex_lock(&mount->invalidator_lock);
    const bool queued = mount->invalidator && ggfs_workers_submit(mount->invalidator, run_drop_pages, d);
    pthread_mutex_unlock(&mount->invalidator_lock);
    if (!queued)
        free(d); // pages stay until the next open drops them
}

void ggfs_invalidate_stop(ggfs_model_mount *mount)
{
    pthread_mutex_lock(&mount->invalidator_lock);
    struct ggfs_workers *w = mount->invalidator;
    mount->invalidator = NULL;
    pthread_mutex_unlock(&mount->invalidator_lock);
    ggfs_workers_free(w); // waits for a drop under way: the loop still answers
}
