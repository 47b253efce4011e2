/*
 * The one symbol gguf-fs-remote.so exports (remote_module.h).
 */
#include "source/api_get.h"
#include "source/http.h"
#include "source/prefetch.h"
#include "source/registry.h"
#include "source/remote_module.h"
#include "source/source_http.h"

static void totals(ggfs_remote *remote, uint64_t *received, unsigned *in_flight)
{
    ggfs_http_totals(remote->http, received, in_flight);
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
};
