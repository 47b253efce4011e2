/*
 * What a URL mount learns from the server at mount (the size, the ETag or
 * Last-Modified that pin the file, the time the tree shows) kept as a
 * record (cache_records.h, kind "url") under the mount's cache_dir, keyed
 * by the source as the user named it (an http(s):// URL, an hf:// name
 * with its @REVISION; a split set's shards each under its own name), so
 * that an offline mount of the same name opens the file as it was then
 * and finds its blocks in the disk cache.
 *
 * The record is a JSON object:
 *
 *   {"url": "https://HOST/ORG/REPO/resolve/main/x.gguf", "size": 4817300000,
 *    "etag": "\"5f1c-...\"", "last_modified": null, "mtime": 1732611234,
 *    "published": {"kind": "sha256", "digest": "9465e63a...", "where": "X-Linked-Etag",
 *                  "size": 4817300000}}
 *
 * published is what the open's answers published of the file (published.h:
 * the Hub's X-Linked-Etag, S3's checksum or ETag), absent when nothing;
 * kind "sha256" or "md5", digest its hex, size 0 when none was said.
 * url is where requests start (an hf:// name resolved; the disk cache's
 * key), never a token nor where a redirect led (a CDN's signed URL, which
 * an offline mount has no use for).
 */
#ifndef GGFS_SOURCE_URL_RECORD_H
#define GGFS_SOURCE_URL_RECORD_H

#include <stdint.h>

#include "source/cache_records.h"
#include "source/published.h"

#define GGFS_URL_RECORD_KIND "url"

typedef struct ggfs_url_record {
    char *url;            // where requests start
    uint64_t size;        // the file's bytes
    char *etag;           // or NULL
    char *last_modified;  // or NULL (at least one of the two is set)
    int64_t mtime;        // the tree's times, in seconds since the epoch
    ggfs_published published; // what the open's answers published of it
} ggfs_url_record;

/* Keeps r as the record of name under cache_dir. False, with why filled,
 * when it cannot. */
bool ggfs_url_record_put(const char *cache_dir, const char *name, const ggfs_url_record *r, char *why,
                         size_t why_size);

/* Reads the record of name under cache_dir into *out (its strings
 * malloc'ed: free with ggfs_url_record_destroy). BAD, with why filled
 * (the record's file and the offset in it), when the record is not whole
 * or not a URL record's JSON. */
ggfs_cache_record_status ggfs_url_record_get(const char *cache_dir, const char *name, ggfs_url_record *out,
                                             char *why, size_t why_size);

void ggfs_url_record_destroy(ggfs_url_record *r);

#endif
