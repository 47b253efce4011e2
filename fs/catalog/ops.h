/*
 * The FUSE low-level operations of a catalog mount (a folder of models).
 */
#ifndef GGFS_CATALOG_OPS_H
#define GGFS_CATALOG_OPS_H

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>

#include "catalog/catalog.h"
#include "util/dlist.h"

struct ggfs_forgetter;

/* The session's userdata. */
typedef struct ggfs_catalog_mount {
    ggfs_catalog *catalog;
    unsigned readahead_kb;     // asked of the kernel at init; 0 keeps its own
    struct fuse_session *session; // for notifications to the kernel
    const char *mountpoint;    // absolute
    pthread_mutex_t lock;      // guards the three below
    struct ggfs_forgetter *forgetter; // started at init, until stopped
    bool stopped;              // ggfs_catalog_mount_stop was called
    ggfs_dlink open_dirs;      // opened and not yet released
} ggfs_catalog_mount;

/* Sets up m's lock and list over catalog; the caller fills the rest. */
void ggfs_catalog_mount_init(ggfs_catalog_mount *m, ggfs_catalog *catalog);
void ggfs_catalog_mount_destroy(ggfs_catalog_mount *m);

extern const struct fuse_lowlevel_ops ggfs_catalog_ops;

/* Stops the catalog's own thread (forget_thread.h), for good: while the
 * session's loop still answers requests, or once the connection is gone.
 * Safe to call twice and from any thread. */
void ggfs_catalog_mount_stop(ggfs_catalog_mount *m);

#endif
