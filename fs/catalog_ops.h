/*
 * The FUSE low-level operations of a catalog mount (a folder of models).
 */
#ifndef GGFS_CATALOG_OPS_H
#define GGFS_CATALOG_OPS_H

#include <fuse_lowlevel.h>

#include "catalog.h"

/* The session's userdata. */
typedef struct ggfs_catalog_mount {
    ggfs_catalog *catalog;
    unsigned readahead_kb; // asked of the kernel at init; 0 keeps its own
} ggfs_catalog_mount;

extern const struct fuse_lowlevel_ops ggfs_catalog_ops;

#endif
