/*
 * Requests run on the remote-read threads (deferred.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree/deferred.h"
#include "util/workers.h"

typedef struct deferred {
    fuse_req_t req;
    ggfs_deferred_fn *serve;
    max_align_t args[]; // the caller's, copied
} deferred;

static void run_deferred(void *arg, bool cancelled)
{
    deferred *d = arg;
    if (cancelled)
        fuse_reply_err(d->req, EIO); // the mount is going away
    else
        d->serve(d->req, d->args);
    free(d);
}

bool ggfs_tree_defer(ggfs_tree *tree, fuse_req_t req, ggfs_deferred_fn *serve, const void *args, size_t args_len)
{
    if (!tree->remote_reads)
        return false;
    deferred *d = malloc(sizeof *d + args_len);
    if (!d)
        return false;
    d->req = req;
    d->serve = serve;
    memcpy(d->args, args, args_len);
    if (ggfs_workers_submit(tree->remote_reads, run_deferred, d))
        return true;
    free(d);
    return false;
}
