/*
 * Listing a bucket one level at a time: S3's ListObjectsV2 with delimiter
 * '/', page after page by continuation token, its XML read with libexpat.
 * What a folder mount of s3://BUCKET/PREFIX lists.
 *
 * Keys are asked for with encoding-type=url, so that any byte of a key
 * comes through the XML. A key ending in '/', with an empty, '.' or '..'
 * component, or holding NUL is left out with a log line, as is a common
 * prefix whose name would be one of those, and a key named as a common
 * prefix is (the directory wins, as in mountpoint-s3).
 */
#ifndef GGFS_SOURCE_S3_LIST_H
#define GGFS_SOURCE_S3_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source/http.h"
#include "source/remote.h"
#include "source/s3_target.h"

#define GGFS_S3_LIST_BODY_MAX (8u << 20) // one page of 1,000 keys is far less

typedef struct ggfs_s3_object {
    char *name;                           // the key after the prefix
    uint64_t size;
    char etag[GGFS_HTTP_VALIDATOR_MAX];   // as S3 sends it, quotes and all
} ggfs_s3_object;

typedef struct ggfs_s3_listing {
    ggfs_s3_object *objects;
    size_t n_objects;
    char **prefixes;       // common prefixes after the prefix, without '/'
    size_t n_prefixes;
    size_t left_out;       // keys and prefixes left out (each logged)
    size_t pages;          // ListObjectsV2 requests answered
    bool capped;           // the listing stopped at cap entries
} ggfs_s3_listing;

/* Lists what is right under prefix (t's key: "" for the bucket's top; a
 * '/' is added when it lacks one) of t's bucket, at most cap objects and
 * prefixes (a log line when there were more), asking for page_keys keys a
 * page (0: S3's 1,000). Requests go through the mount's engine, signed,
 * retried until timeout_s. False, with why filled (in S3's words when S3
 * refused: s3_error.h), when a page cannot be had or read. Release with
 * ggfs_s3_listing_free. */
bool ggfs_s3_list(ggfs_remote *remote, const ggfs_s3_target *t, size_t cap, unsigned page_keys,
                  ggfs_s3_listing *out, char *why, size_t why_size);

/* One page's XML (any bytes) read as ggfs_s3_list reads each page under
 * prefix ("" or ending in '/'), with no request: what tests/fuzz drives. */
bool ggfs_s3_list_read(const ggfs_s3_target *t, const char *prefix, size_t cap, const char *xml, size_t len,
                       ggfs_s3_listing *out, char *why, size_t why_size);

void ggfs_s3_listing_free(ggfs_s3_listing *l);

#endif
