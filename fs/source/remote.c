/*
 * Setting up and tearing down what remote sources share.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "source/remote.h"

ggfs_remote *ggfs_remote_new(const ggfs_remote_options *opts, char *why, size_t why_size)
{
    ggfs_remote *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    r->opts = *opts;
    pthread_mutex_init(&r->registry_lock, NULL);
    if (opts->offline) {
        // Every byte there is to read is on disk already: nothing to fetch.
        r->opts.prefetch = false;
        r->opts.prefetch_after_mb = 0;
    }
    if (opts->cache_dir) {
        // realpath needs the directory to exist: make it first.
        if (mkdir(opts->cache_dir, 0777) != 0 && errno != EEXIST) {
            snprintf(why, why_size, "cache_dir %s: %s", opts->cache_dir, strerror(errno));
            pthread_mutex_destroy(&r->registry_lock);
            free(r);
            return NULL;
        }
        r->cache_dir = realpath(opts->cache_dir, NULL);
        if (!r->cache_dir) {
            snprintf(why, why_size, "cache_dir %s: %s", opts->cache_dir, strerror(errno));
            pthread_mutex_destroy(&r->registry_lock);
            free(r);
            return NULL;
        }
        r->opts.cache_dir = r->cache_dir;
    }
    r->http = ggfs_http_new();
    r->cache = ggfs_block_cache_new(GGFS_REMOTE_BLOCK_SIZE, (uint64_t)opts->cache_mb << 20);
    r->files = r->cache ? ggfs_block_files_new(r->cache, GGFS_REMOTE_FILES_KEPT) : NULL;
    r->opts.connections = opts->connections ? opts->connections : GGFS_DEFAULT_CONNECTIONS;
    r->fetcher = ggfs_fetcher_new(r->opts.connections);
    if (!r->http || !r->cache || !r->files || !r->fetcher) {
        snprintf(why, why_size, "cannot set up HTTP (libcurl) or the cache");
        ggfs_remote_free(r);
        return NULL;
    }
    return r;
}

void ggfs_remote_free(ggfs_remote *r)
{
    if (!r)
        return;
    // Read-ahead jobs hold their sources: they finish or are cancelled
    // before the cache and the engine go.
    ggfs_fetcher_free(r->fetcher);
    ggfs_block_files_free(r->files);
    ggfs_block_cache_free(r->cache);
    ggfs_http_free(r->http);
    free(r->cache_dir);
    free(r->registry_token);
    free(r->registry_origin);
    pthread_mutex_destroy(&r->registry_lock);
    free(r);
}

void ggfs_remote_keep_registry_token(ggfs_remote *remote, const char *url, char *token)
{
    char *origin = strdup(url);
    pthread_mutex_lock(&remote->registry_lock);
    if (!remote->registry_token && origin && token) {
        remote->registry_origin = origin;
        remote->registry_token = token;
        origin = token = NULL;
    }
    pthread_mutex_unlock(&remote->registry_lock);
    free(origin);
    free(token);
}

bool ggfs_remote_registry_secret(ggfs_remote *remote, ggfs_secret *out)
{
    pthread_mutex_lock(&remote->registry_lock);
    const bool has = remote->registry_token &&
                     ggfs_secret_bind(out, GGFS_SECRET_REGISTRY_TOKEN, remote->registry_origin,
                                      remote->registry_token, NULL);
    pthread_mutex_unlock(&remote->registry_lock);
    return has;
}

void ggfs_remote_abort(ggfs_remote *remote)
{
    ggfs_http_abort(remote->http);
}
