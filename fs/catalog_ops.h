/*
 * The FUSE low-level operations of a catalog mount (a folder of models).
 */
#ifndef GGFS_CATALOG_OPS_H
#define GGFS_CATALOG_OPS_H

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>

#include "catalog.h"

struct ggfs_forgetter;
struct ggfs_open_dir;

/* The session's userdata. */
typedef struct ggfs_catalog_mount {
    ggfs_catalog *catalog;
    unsigned readahead_kb;     // asked of the kernel at init; 0 keeps its own
    struct fuse_session *session; // for notifications to the kernel
    const char *mountpoint;    // absolute
    pthread_mutex_t lock;      // guards the three below
    struct ggfs_forgetter *forgetter; // started at init, until stopped
    bool stopped;              // ggfs_catalog_mount_stop was called
    struct ggfs_open_dir *open_dirs; // opened and not yet released
} ggfs_catalog_mount;

extern const struct fuse_lowlevel_ops ggfs_catalog_ops;

/* Stops the catalog's own thread (catalog_forget.h), for good: while the
 * session's loop still answers requests, or once the connection is gone.
 * Safe to call twice and from any thread. */
void ggfs_catalog_mount_stop(ggfs_catalog_mount *m);

#endif
