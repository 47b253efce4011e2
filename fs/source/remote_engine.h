/*
 * The remote sources of a mount (http://, https://, hf://) as the program
 * holds them: the module that has their engine (source/remote_module.h),
 * loaded when the mount is set up, and what the engine shares between
 * them (source/remote.h). Made by main when the source is a URL; the
 * source table opens URLs through it.
 */
#ifndef GGFS_SOURCE_REMOTE_ENGINE_H
#define GGFS_SOURCE_REMOTE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggp.h"
#include "source/api_get.h"
#include "source/prefetch.h"
#include "source/remote.h"
#include "source/s3_list.h"
#include "source/source.h"

/* Loads the module and sets up the engine. Call before starting threads
 * (libcurl's global set-up). NULL, with why filled in one line, when the
 * module cannot be loaded (its path and the loader's reason) or the
 * engine cannot be set up. */
ggfs_remote_engine *ggfs_remote_engine_start(const ggfs_remote_options *opts, char *why, size_t why_size);

/* Opens an http://, https:// or hf:// name (source/source_http.h). */
ggfs_source *ggfs_remote_engine_open(const char *name, ggfs_remote_engine *engine, ggp_error *err);

/* GETs a registry's small document whole (source/registry.h): 0, or an
 * errno with why filled. The token a registry gives goes with later requests to
 * its origin, the sources' included. */
int ggfs_remote_engine_registry_get(ggfs_remote_engine *engine, const char *url, const char *accept, size_t cap,
                                    char **body, size_t *len, char *why, size_t why_size);

/* A small API answer (source/api_get.h), over the mount's options. */
bool ggfs_remote_engine_api_get(ggfs_remote_engine *engine, const char *url, const char *bearer, size_t max,
                                ggfs_api_reply *out);

/* Lists what is right under the s3:// name of a bucket or a prefix
 * (source/s3_list.h), at most cap entries, signed with the credentials
 * found for it now. False with why (one line, in S3's words when S3
 * refused) when it cannot. Release with ggfs_remote_engine_s3_listing_free. */
bool ggfs_remote_engine_s3_list(ggfs_remote_engine *engine, const char *name, size_t cap, ggfs_s3_listing *out,
                                char *why, size_t why_size);
void ggfs_remote_engine_s3_listing_free(ggfs_remote_engine *engine, ggfs_s3_listing *l);

/* The body bytes the mount's range requests received so far, and the
 * requests under way now. */
void ggfs_remote_engine_totals(ggfs_remote_engine *engine, uint64_t *received, unsigned *in_flight);

/* The mount's cache_dir (absolute), or NULL; and whether it is offline
 * (-o offline: no request is to be made, cache_dir's records are read). */
const char *ggfs_remote_engine_cache_dir(const ggfs_remote_engine *engine);
bool ggfs_remote_engine_offline(const ggfs_remote_engine *engine);

/* The memory cache's bound, MiB (-o cache_mb). */
unsigned ggfs_remote_engine_cache_mb(const ggfs_remote_engine *engine);

/* Whether the mount asked for -o prefetch. */
bool ggfs_remote_engine_prefetches(const ggfs_remote_engine *engine);

/* The bytes of model.gguf read after which its readers' load starts a
 * held prefetch (-o prefetch_after_mb); 0 when none is to be started:
 * asked for none, or the prefetch would keep only the first cache_mb of
 * the model (no disk cache, and no sink when has_sink is false). */
uint64_t ggfs_remote_engine_prefetch_after(const ggfs_remote_engine *engine, bool has_sink);

/* Starts the prefetch of the model's sources (n, in file order), with an
 * optional sink, held when held (source/prefetch.h); NULL when it cannot. */
struct ggfs_prefetch *ggfs_remote_engine_prefetch_start(ggfs_remote_engine *engine,
                                                        ggfs_source *const *sources, size_t n,
                                                        ggfs_prefetch_sink *sink, void *sink_arg, bool held);

/* Holds it, or lets it go (ggfs_prefetch_hold), its first pass beginning
 * at off of source `source` when it begins then (ggfs_prefetch_begin_at). */
void ggfs_remote_engine_prefetch_hold(ggfs_remote_engine *engine, struct ggfs_prefetch *p, bool held);
void ggfs_remote_engine_prefetch_begin_at(ggfs_remote_engine *engine, struct ggfs_prefetch *p, size_t source,
                                          uint64_t off);

/* Stops it (NULL: nothing). */
void ggfs_remote_engine_prefetch_stop(ggfs_remote_engine *engine, struct ggfs_prefetch *p);

/* The mount is stopping: the requests in flight give up within about a
 * second and none is made again, so that a stop never waits out a server
 * (a stalled prefetch, reads within their timeout_s). */
void ggfs_remote_engine_abort(ggfs_remote_engine *engine);

/* After every source it opened is closed. The module stays loaded. */
void ggfs_remote_engine_stop(ggfs_remote_engine *engine);

#endif
