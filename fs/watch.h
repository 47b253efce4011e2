/*
 * Noticing that the model file changed under the mount. The identity and
 * size recorded at mount are compared with the open file on every data
 * read, and with whatever the model's path names at most once a second. A
 * change is final: from then on data reads fail with EIO, and the log gets
 * one line saying why.
 */
#ifndef GGFS_WATCH_H
#define GGFS_WATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

typedef struct ggfs_watch {
    const char *path;
    int fd;
    struct stat at_mount;
    atomic_bool changed;
    atomic_int_least64_t next_path_check; // CLOCK_MONOTONIC ns
} ggfs_watch;

void ggfs_watch_init(ggfs_watch *w, const char *path, int fd, const struct stat *at_mount);

/* Whether the model is still the file that was mounted. */
bool ggfs_watch_unchanged(ggfs_watch *w);

/* Marks the model changed (a read found fewer bytes than the index says),
 * logging why the first time. */
void ggfs_watch_mark_changed(ggfs_watch *w, const char *why);

#endif
