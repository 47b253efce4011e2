/*
 * A remote file as a source: http://, https:// and hf:// names, read
 * through the mount's shared remote state (remote.h): its HTTP engine,
 * memory cache of blocks, read-ahead and disk cache.
 */
#ifndef GGFS_SOURCE_SOURCE_HTTP_H
#define GGFS_SOURCE_SOURCE_HTTP_H

#include "source/source.h"

/* Opens an http://, https:// or hf:// name: one range request learns the
 * size and the ETag or Last-Modified, which are pinned from then on.
 * Refuses, with the status in err->msg, a 401/403/404, a server that
 * answers 200 to a range, a redirect loop, or a server that kept failing
 * for timeout_s. */
ggfs_source *ggfs_source_http_open(const char *name, ggfs_remote *remote, ggp_error *err);

#endif
