/*
 * A cancel (util/cancel.h) asked once a FUSE session has ended: a signal
 * (libfuse's handler, or the daemon's own stopper) or an unmount (a loop
 * thread's read failing) ends it before the loop waits for its threads, so
 * a thread computing a tree's hashes or stats stops within a chunk, and
 * the daemon with it, instead of after the whole pass.
 */
#ifndef GGFS_TREE_SESSION_END_H
#define GGFS_TREE_SESSION_END_H

#include <fuse_lowlevel.h>

#include "util/cancel.h"

/* Asked when *se, a session set before any request is served (and not
 * freed while the cancel may be asked), has ended (fuse_session_exited);
 * never while *se is NULL. */
ggfs_cancel ggfs_session_end(struct fuse_session *const *se);

#endif
