/*
 * The one symbol gguf-fs-remote.so exports (remote_module.h).
 */
#include <string.h>

#include "source/api_get.h"
#include "source/http.h"
#include "source/prefetch.h"
#include "source/registry.h"
#include "source/remote_module.h"
#include "source/s3_list.h"
#include "source/s3_target.h"
#include "source/source_http.h"

static void totals(ggfs_remote *remote, uint64_t *received, unsigned *in_flight)
{
    ggfs_http_totals(remote->http, received, in_flight);
}

/* Lists what is right under an s3:// name with the mount's options and
 * credentials, found again at each listing (a session's may be renewed). */
static bool s3_list(ggfs_remote *remote, const char *name, size_t cap, ggfs_s3_listing *out, char *why,
                    size_t why_size)
{
    ggfs_s3_target t;
    if (!ggfs_s3_target_open(name, &remote->opts, &t, why, why_size)) {
        memset(out, 0, sizeof *out);
        return false;
    }
    const bool ok = ggfs_s3_list(remote, &t, cap, 0, out, why, why_size);
    ggfs_s3_target_close(&t);
    return ok;
}

const ggfs_remote_module ggfs_remote_module_entry = {
    .set_log_sink = ggfs_log_set_sink,
    .remote_new = ggfs_remote_new,
    .remote_free = ggfs_remote_free,
    .remote_abort = ggfs_remote_abort,
    .source_open = ggfs_source_http_open,
    .registry_get = ggfs_registry_get,
    .prefetch_start = ggfs_prefetch_start,
    .prefetch_hold = ggfs_prefetch_hold,
    .prefetch_begin_at = ggfs_prefetch_begin_at,
    .prefetch_stop = ggfs_prefetch_stop,
    .api_get = ggfs_api_get,
    .totals = totals,
    .s3_list = s3_list,
    .s3_listing_free = ggfs_s3_listing_free,
};
