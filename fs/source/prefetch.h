/*
 * -o prefetch: the whole model fetched in the background, shard after
 * shard in file order, into the caches: with a disk cache or a sink every
 * byte (a later mount finds it all on disk; the sink hands it on, to the
 * kernel's page cache, say), with neither the first cache_mb of the model
 * (more would push out what came first).
 *
 * A thread walks the model in runs of a few MiB and hands each to the
 * mount's fetcher as a prefetch job (fetcher.h), one a connection at most:
 * readers' requests and read-ahead go first, each taking the next
 * connection that frees. A failed run (the server gone, say) ends the pass; the next
 * starts after a pause, 1 s doubling to 8 s, until a pass fetches with no
 * failure. Readers meanwhile fail as without prefetch (EIO after
 * timeout_s).
 *
 * A prefetch may also start held, and be held and let go as the tree
 * sees fit: -o prefetch_after_mb starts one held, lets it go once a model
 * is being loaded whole and holds it again when model.gguf is closed
 * (tree/prefetch_trigger.h).
 */
#ifndef GGFS_SOURCE_PREFETCH_H
#define GGFS_SOURCE_PREFETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "source/remote.h"
#include "source/source.h"

typedef struct ggfs_prefetch ggfs_prefetch;

/* Where each run fetched goes besides the caches: called on a thread of
 * the prefetch's own, in the order the runs landed, with [off, off + len)
 * of sources[source] in the memory cache (its lend_held op lends them). It may
 * wait: runs go on being handed out meanwhile while the memory cache has
 * room for them (three quarters of it at most out or waiting). */
typedef void ggfs_prefetch_sink(void *arg, size_t source, uint64_t off, uint64_t len);

/* Starts the prefetch of sources (n, in file order; their prefetch op does
 * the fetching) on a thread of its own, held (handing out no run until
 * ggfs_prefetch_hold lets it go) when held; NULL when it cannot. sink may
 * be NULL; it goes unused with a disk cache, and with no memory cache.
 * The sources must stay open until ggfs_prefetch_stop returns. */
ggfs_prefetch *ggfs_prefetch_start(ggfs_remote *remote, ggfs_source *const *sources, size_t n,
                                   ggfs_prefetch_sink *sink, void *sink_arg, bool held);

/* Holds the prefetch (the runs under way land; no other starts) or lets
 * it go on from where it was. From any thread. */
void ggfs_prefetch_hold(ggfs_prefetch *p, bool held);

/* Where its passes begin (off of sources[source]; by default the start of
 * the first): from there to the end, then from the start up to there, so
 * that a load already under way finds the runs ahead of it first. For a
 * prefetch started held: the first pass begins once it is let go. */
void ggfs_prefetch_begin_at(ggfs_prefetch *p, size_t source, uint64_t off);

/* Whether a prefetch with these options keeps every byte it fetches
 * (with a disk cache, or with a sink and a memory cache to hand it on
 * from), rather than the first cache_mb of the model. */
static inline bool ggfs_prefetch_keeps_all(const ggfs_remote_options *opts, bool has_sink)
{
    return opts->cache_dir || (has_sink && opts->cache_mb > 0);
}

/* Stops it: runs under way finish (or are cancelled), the thread ends.
 * NULL: nothing. */
void ggfs_prefetch_stop(ggfs_prefetch *p);

#endif
