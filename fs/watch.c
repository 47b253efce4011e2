/*
 * Change detection for the mounted model file.
 */
#include <fuse_log.h>
#include <stdio.h>
#include <time.h>

#include "watch.h"

#define PATH_CHECK_NS INT64_C(1000000000)

void ggfs_watch_init(ggfs_watch *w, const char *path, int fd, const struct stat *at_mount)
{
    w->path = path;
    w->fd = fd;
    w->at_mount = *at_mount;
    atomic_init(&w->changed, false);
    atomic_init(&w->next_path_check, 0);
}

void ggfs_watch_mark_changed(ggfs_watch *w, const char *why)
{
    if (!atomic_exchange(&w->changed, true))
        fuse_log(FUSE_LOG_ERR, "gguf-fs: %s: %s since it was mounted; reads of tensor data now fail with EIO\n",
                 w->path, why);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool ggfs_watch_unchanged(ggfs_watch *w)
{
    if (atomic_load(&w->changed))
        return false;
    struct stat st;
    if (fstat(w->fd, &st) != 0 || !same_file(&st, &w->at_mount)) {
        char why[96];
        snprintf(why, sizeof why, "changed (size %lld, now %lld)", (long long)w->at_mount.st_size,
                 (long long)st.st_size);
        ggfs_watch_mark_changed(w, why);
        return false;
    }
    // A file renamed over the model leaves the open one intact, so the path
    // is looked at only now and then.
    const int64_t now = now_ns();
    int64_t due = atomic_load(&w->next_path_check);
    if (now >= due && atomic_compare_exchange_strong(&w->next_path_check, &due, now + PATH_CHECK_NS)) {
        if (stat(w->path, &st) != 0 || !same_file(&st, &w->at_mount)) {
            ggfs_watch_mark_changed(w, "was replaced or removed");
            return false;
        }
    }
    return true;
}
