/*
 * The forgetting thread: bursts of notifications in the order the catalog
 * gives them, then the entries still held looked up again.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog/forget_thread.h"

#define BURST 64                   // entries taken at once
#define SETTLE_NS (10 * 1000000L)  // for the kernel's forget messages of a burst to arrive

struct ggfs_forgetter {
    ggfs_catalog *cat;
    struct fuse_session *se;
    char *mountpoint;
    pthread_t thread;
    atomic_bool stopping;  // finish the notification at hand, send no more
};

/* Entries the kernel kept (in use) are looked up again, so that the
 * dentry it unhashed is its again: a stat through the mount. */
static void put_back(ggfs_forgetter *f, const ggfs_cat_forget *items, size_t n)
{
    const struct timespec settle = {0, SETTLE_NS};
    nanosleep(&settle, NULL);
    char rel[PATH_MAX], path[PATH_MAX];
    for (size_t i = 0; i < n && !atomic_load(&f->stopping); i++) {
        if (!ggfs_catalog_still_held(f->cat, &items[i], rel, sizeof rel))
            continue;
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", f->mountpoint, rel) < sizeof path)
            (void)lstat(path, &st);
    }
}

static void *run(void *arg)
{
    ggfs_forgetter *f = arg;
    ggfs_cat_forget items[BURST];
    size_t n;
    while ((n = ggfs_catalog_next_forgets(f->cat, items, BURST)) > 0) {
        for (size_t i = 0; i < n && !atomic_load(&f->stopping); i++) {
            // ENOENT (the kernel has no such entry cached) and the errors of
            // an unmounted session change nothing: the entry is forgotten or
            // never was, or the mount is going.
            const fuse_ino_t dir = (fuse_ino_t)(items[i].dir << GGFS_SLOT_SHIFT | 1);
            (void)fuse_lowlevel_notify_inval_entry(f->se, dir, items[i].name, strlen(items[i].name));
        }
        put_back(f, items, n);
    }
    return NULL;
}

ggfs_forgetter *ggfs_forgetter_start(ggfs_catalog *cat, struct fuse_session *se, const char *mountpoint)
{
    ggfs_forgetter *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->cat = cat;
    f->se = se;
    atomic_init(&f->stopping, false);
    f->mountpoint = strdup(mountpoint);
    if (!f->mountpoint || pthread_create(&f->thread, NULL, run, f) != 0) {
        free(f->mountpoint);
        free(f);
        return NULL;
    }
    return f;
}

void ggfs_forgetter_stop(ggfs_forgetter *f)
{
    if (!f)
        return;
    atomic_store(&f->stopping, true);
    ggfs_catalog_stop_forgetting(f->cat);
    pthread_join(f->thread, NULL);
    free(f->mountpoint);
    free(f);
}
