/*
 * Loading the remote engine's module and calling through its table.
 */
#include <stdio.h>
#include <stdlib.h>

#include "source/remote_engine.h"
#include "source/remote_module.h"
#include "util/log.h"
#include "util/module.h"

struct ggfs_remote_engine {
    const ggfs_remote_module *module;
    ggfs_remote *remote;
};

ggfs_remote_engine *ggfs_remote_engine_start(const ggfs_remote_options *opts, char *why, size_t why_size)
{
    const ggfs_remote_module *module =
        ggfs_module_load(GGFS_REMOTE_MODULE_FILE, GGFS_REMOTE_MODULE_ENTRY, why, why_size);
    if (!module)
        return NULL;
    module->set_log_sink(ggfs_vlog);
    ggfs_remote_engine *e = malloc(sizeof *e);
    if (!e) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    e->module = module;
    e->remote = module->remote_new(opts, why, why_size);
    if (!e->remote) {
        free(e);
        return NULL;
    }
    return e;
}

ggfs_source *ggfs_remote_engine_open(const char *name, ggfs_remote_engine *e, ggp_error *err)
{
    return e->module->source_open(name, e->remote, err);
}

int ggfs_remote_engine_registry_get(ggfs_remote_engine *e, const char *url, const char *accept, size_t cap,
                                    char **body, size_t *len, char *why, size_t why_size)
{
    return e->module->registry_get(e->remote, url, accept, cap, body, len, why, why_size);
}

bool ggfs_remote_engine_api_get(ggfs_remote_engine *e, const char *url, const char *bearer, size_t max,
                                ggfs_api_reply *out)
{
    return e->module->api_get(e->remote, url, bearer, max, out);
}

bool ggfs_remote_engine_s3_list(ggfs_remote_engine *e, const char *name, size_t cap, ggfs_s3_listing *out,
                                char *why, size_t why_size)
{
    return e->module->s3_list(e->remote, name, cap, out, why, why_size);
}

void ggfs_remote_engine_s3_listing_free(ggfs_remote_engine *e, ggfs_s3_listing *l)
{
    e->module->s3_listing_free(l);
}

void ggfs_remote_engine_totals(ggfs_remote_engine *e, uint64_t *received, unsigned *in_flight)
{
    e->module->totals(e->remote, received, in_flight);
}

const char *ggfs_remote_engine_cache_dir(const ggfs_remote_engine *e)
{
    return e->remote->opts.cache_dir;
}

bool ggfs_remote_engine_offline(const ggfs_remote_engine *e)
{
    return e->remote->opts.offline;
}

unsigned ggfs_remote_engine_cache_mb(const ggfs_remote_engine *e)
{
    return e->remote->opts.cache_mb;
}

bool ggfs_remote_engine_prefetches(const ggfs_remote_engine *e)
{
    return e->remote->opts.prefetch;
}

uint64_t ggfs_remote_engine_prefetch_after(const ggfs_remote_engine *e, bool has_sink)
{
    const ggfs_remote_options *opts = &e->remote->opts;
    return ggfs_prefetch_keeps_all(opts, has_sink) ? (uint64_t)opts->prefetch_after_mb << 20 : 0;
}

struct ggfs_prefetch *ggfs_remote_engine_prefetch_start(ggfs_remote_engine *e, ggfs_source *const *sources, size_t n,
                                                        ggfs_prefetch_sink *sink, void *sink_arg, bool held)
{
    return e->module->prefetch_start(e->remote, sources, n, sink, sink_arg, held);
}

void ggfs_remote_engine_prefetch_hold(ggfs_remote_engine *e, struct ggfs_prefetch *p, bool held)
{
    e->module->prefetch_hold(p, held);
}

void ggfs_remote_engine_prefetch_begin_at(ggfs_remote_engine *e, struct ggfs_prefetch *p, size_t source,
                                          uint64_t off)
{
    e->module->prefetch_begin_at(p, source, off);
}

void ggfs_remote_engine_prefetch_stop(ggfs_remote_engine *e, struct ggfs_prefetch *p)
{
    if (p)
        e->module->prefetch_stop(p);
}

void ggfs_remote_engine_abort(ggfs_remote_engine *e)
{
    if (e)
        e->module->remote_abort(e->remote);
}

void ggfs_remote_engine_stop(ggfs_remote_engine *e)
{
    if (!e)
        return;
    e->module->remote_free(e->remote);
    free(e);
}
