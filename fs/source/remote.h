/*
 * What the remote sources of one mount share: the options, the HTTP
 * engine, the memory cache of blocks (kept across a file's opens: the
 * files it holds, by URL, are in block_files.h) and the connections
 * (fetcher.h). Made by
 * main from the -o options and handed to every remote source it opens.
 */
#ifndef GGFS_SOURCE_REMOTE_H
#define GGFS_SOURCE_REMOTE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "source/block_cache.h"
#include "source/block_files.h"
#include "source/fetcher.h"
#include "source/http.h"

#define GGFS_REMOTE_BLOCK_SIZE (1u << 20)
#define GGFS_REMOTE_DEFAULT_CACHE_MB 256
#define GGFS_REMOTE_DEFAULT_TIMEOUT_S 30
#define GGFS_REMOTE_DEFAULT_PREFETCH_AFTER_MB 64
// URLs whose validators and block key the mount remembers (block_files.h):
// a few hundred bytes each.
#define GGFS_REMOTE_FILES_KEPT 4096

typedef struct ggfs_remote_options {
    unsigned cache_mb;      // the memory cache's bound, MiB
    const char *cache_dir;  // the disk cache's directory, or NULL
    unsigned timeout_s;     // how long a read may take, retries included
    unsigned connections;   // requests in flight at most (0: the default)
    bool prefetch;          // fetch every shard whole in the background
    unsigned prefetch_after_mb; // or once this much of model.gguf was read (0: never)
    bool offline;           // send no request: open from cache_dir's
                            // records, read its blocks only
    const char *s3_endpoint; // s3:// names: -o endpoint=URL, or NULL (s3_url.h)
    bool s3_path_style;     // s3:// names: -o path_style
    bool s3_no_sign;        // s3:// names: -o no_sign_request (public buckets)
    unsigned reopen_trust_s; // a collection's listing_ttl_s: a file the server named
                            // this recently reopens as it was, with no request
} ggfs_remote_options;

typedef struct ggfs_remote {
    ggfs_remote_options opts;
    char *cache_dir;        // absolute (the daemon leaves its directory), or NULL
    ggfs_http *http;
    ggfs_block_cache *cache;
    ggfs_block_files *files; // the cache's files by URL: a reopen finds its blocks
    ggfs_fetcher *fetcher;  // the connections: read-ahead, prefetch, readers
    atomic_bool prefetch_going; // a prefetch that keeps every byte is under way
    pthread_mutex_t registry_lock; // guards the two below, set once (text
                            // layers are read on several threads)
    char *registry_token;   // a token a registry gave at mount (registry.h), or NULL;
    char *registry_origin;  // a URL of the origin it is for: sent there alone
} ggfs_remote;

/* NULL, with why filled, when it cannot be set up. */
ggfs_remote *ggfs_remote_new(const ggfs_remote_options *opts, char *why, size_t why_size);

/* Keeps token (malloc'ed: taken) as the registry's of url's origin,
 * unless the mount has one already (a mount has one registry): then it is
 * freed. */
void ggfs_remote_keep_registry_token(ggfs_remote *remote, const char *url, char *token);

/* The registry's token bound to its origin (secret_origin.h), when the
 * mount was given one: the token stays valid until ggfs_remote_free. */
bool ggfs_remote_registry_secret(ggfs_remote *remote, ggfs_secret *out);

/* After every source using it is closed. */
void ggfs_remote_free(ggfs_remote *remote);

/* The mount is stopping: requests give up within a second (ggfs_http_abort). */
void ggfs_remote_abort(ggfs_remote *remote);

#endif
