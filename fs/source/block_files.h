/*
 * The files whose blocks the mount's memory cache holds, by URL: what the
 * last open of each URL learnt (size, ETag or Last-Modified, the tree's
 * time) and the key its blocks have in the block cache. A file closed and
 * opened again (a catalog model closed to make room for another, then
 * looked into again) finds its blocks under the same key when the server
 * still names the same validator and size, as the disk cache keys them
 * (disk_cache.h); a changed file gets a new key, its old blocks dropped.
 *
 * Bounded: past `max` URLs the least recently opened one is forgotten
 * (its blocks stay until the cache's own bound drops them). Safe to use
 * from many threads.
 */
#ifndef GGFS_SOURCE_BLOCK_FILES_H
#define GGFS_SOURCE_BLOCK_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source/block_cache.h"
#include "source/url_record.h"

typedef struct ggfs_block_files ggfs_block_files;

/* NULL when out of memory. max is at least 1. */
ggfs_block_files *ggfs_block_files_new(ggfs_block_cache *cache, size_t max);
void ggfs_block_files_free(ggfs_block_files *files);

/* The key of r->url's blocks at r's validators and size, which the server
 * has just named (the time is kept for ggfs_block_files_find): the key an earlier
 * open of the URL at the same ones got, else a fresh key, which becomes
 * the URL's (the blocks of the key it had are dropped). 0 when out of
 * memory (a fresh key then, remembered nowhere: the caller gets one from
 * ggfs_block_cache_source_id). */
uint64_t ggfs_block_files_key(ggfs_block_files *files, const ggfs_url_record *r);

/* What the last open of url learnt, copied into *out (its strings
 * malloc'ed: free with ggfs_url_record_destroy), its key, and when the
 * server last named them (ggfs_now_ns: the last ggfs_block_files_key of
 * the URL). False when the URL is not known (or out of memory). */
bool ggfs_block_files_find(ggfs_block_files *files, const char *url, ggfs_url_record *out, uint64_t *key,
                           int64_t *checked_ns);

#endif
