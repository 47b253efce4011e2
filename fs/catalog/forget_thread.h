/*
 * Asking the kernel to forget what a catalog no longer wants it to hold
 * (catalog.h, "What the catalog keeps"): a thread takes the entries
 * ggfs_catalog_next_forgets gives and sends FUSE's inval_entry
 * notification for each, so that the kernel drops the entry and all it
 * cached below it; its forget messages then let the catalog free their
 * slots.
 *
 * The notification takes the directory's lock in the kernel, which a
 * lookup in that directory holds while it waits for the daemon's reply:
 * sent from a loop thread, or by a thread holding a lock that a request
 * needs, it could wait for ever (libfuse's fuse_lowlevel.h says so). This
 * thread serves no request and holds no lock while it sends, so it waits
 * at most for the requests in flight in that directory, which the loop
 * answers: it must be stopped before the loop is (daemon/main.c sees to it).
 *
 * An entry in use (someone's working directory, a directory above an open
 * file) is not dropped, but the kernel unhashes it all the same, and
 * getcwd(2) in it then fails with ENOENT until its path is looked up
 * again. So after each burst the thread looks up, through the mount, the
 * path of every entry the kernel still holds, which puts it back; the
 * catalog then leaves it alone for a while (ggfs_catalog_still_held), so
 * that a shell sitting there sees that moment once, not at every burst.
 */
#ifndef GGFS_CATALOG_FORGET_THREAD_H
#define GGFS_CATALOG_FORGET_THREAD_H

#include <fuse_lowlevel.h>

#include "catalog/catalog.h"

typedef struct ggfs_forgetter ggfs_forgetter;

/* Starts the thread for cat on session se, mounted on mountpoint (an
 * absolute path). NULL when it cannot. */
ggfs_forgetter *ggfs_forgetter_start(ggfs_catalog *cat, struct fuse_session *se, const char *mountpoint);

/* Stops the thread and waits for it (NULL: nothing): while the loop still
 * answers, or once the connection is gone. */
void ggfs_forgetter_stop(ggfs_forgetter *f);

#endif
