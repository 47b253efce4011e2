/*
 * The remote engine as a module (util/module.h): gguf-fs-remote.so holds
 * remote.c, source_http.c, http.c, the block and disk caches, the fetcher,
 * the prefetch and libcurl,
 * and exports this table alone. The program loads it when it mounts a URL
 * (source/remote_engine.h); a mount of local files never does.
 */
#ifndef GGFS_SOURCE_REMOTE_MODULE_H
#define GGFS_SOURCE_REMOTE_MODULE_H

#include <stddef.h>

#include "ggp.h"
#include "source/api_get.h"
#include "source/prefetch.h"
#include "source/remote.h"
#include "source/s3_list.h"
#include "source/source.h"
#include "util/log.h"

#define GGFS_REMOTE_MODULE_FILE "gguf-fs-remote.so"
#define GGFS_REMOTE_MODULE_ENTRY "ggfs_remote_module_entry"

typedef struct ggfs_remote_module {
    /* The module's own log sink (util/log.h), which the program sets to
     * its ggfs_vlog before calling anything else. */
    void (*set_log_sink)(ggfs_log_sink *sink);
    /* remote.h */
    ggfs_remote *(*remote_new)(const ggfs_remote_options *opts, char *why, size_t why_size);
    void (*remote_free)(ggfs_remote *remote);
    void (*remote_abort)(ggfs_remote *remote);
    /* source_http.h */
    ggfs_source *(*source_open)(const char *name, ggfs_remote *remote, ggp_error *err);
    /* registry.h */
    int (*registry_get)(ggfs_remote *remote, const char *url, const char *accept, size_t cap, char **body,
                        size_t *len, char *why, size_t why_size);
    /* prefetch.h */
    ggfs_prefetch *(*prefetch_start)(ggfs_remote *remote, ggfs_source *const *sources, size_t n,
                                     ggfs_prefetch_sink *sink, void *sink_arg, bool held);
    void (*prefetch_hold)(ggfs_prefetch *p, bool held);
    void (*prefetch_begin_at)(ggfs_prefetch *p, size_t source, uint64_t off);
    void (*prefetch_stop)(ggfs_prefetch *p);
    /* http.h, over the remote's engine */
    void (*totals)(ggfs_remote *remote, uint64_t *received, unsigned *in_flight);
    /* api_get.h */
    bool (*api_get)(ggfs_remote *remote, const char *url, const char *bearer, size_t max, ggfs_api_reply *out);
    /* s3_list.h, for the s3:// name of a bucket or a prefix */
    bool (*s3_list)(ggfs_remote *remote, const char *name, size_t cap, ggfs_s3_listing *out, char *why,
                    size_t why_size);
    void (*s3_listing_free)(ggfs_s3_listing *l);
} ggfs_remote_module;

#endif
