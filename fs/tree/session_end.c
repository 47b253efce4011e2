/*
 * A cancel asked when the session has ended (session_end.h).
 */
#include "tree/session_end.h"

static bool session_ended(const void *ctx)
{
    struct fuse_session *const *se = ctx;
    return *se && fuse_session_exited(*se);
}

ggfs_cancel ggfs_session_end(struct fuse_session *const *se)
{
    return (ggfs_cancel){session_ended, se};
}
