/*
 * The response headers remote sources read, parsed from a server's bytes:
 * each a pure function of one header line or value, bounded and checked,
 * so that every number a server writes there is believed only as far as
 * the program's limits (SEMANTICS, "What a server cannot do"). The engine
 * (http.c), the Hub's API (api_get.c) and registries (registry.c) call
 * them; tests/fuzz drives them directly.
 */
#ifndef GGFS_SOURCE_RESPONSE_HEADERS_H
#define GGFS_SOURCE_RESPONSE_HEADERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source/published.h"
#include "source/secret_origin.h"

// The largest file a server may announce: larger totals are refused, so
// that every offset, block count and sum below stays far from wrapping.
#define GGFS_REMOTE_SIZE_MAX (UINT64_C(1) << 62)
// The longest wait a server may ask for, in seconds: a larger one reads as
// this (the caller then clamps it to the time left before its deadline).
#define GGFS_WAIT_MAX_S 86400L

/* When line (len bytes, with or without its CRLF) is header `name`
 * (case-insensitive): true, with *value and *vlen its value without
 * surrounding blanks. */
bool ggfs_header_match(const char *line, size_t len, const char *name, const char **value, size_t *vlen);

/* Copies a header value of vlen bytes into out (cap > 0), cut to cap - 1. */
void ggfs_header_copy(const char *value, size_t vlen, char *out, size_t cap);

typedef enum ggfs_content_range_verdict {
    GGFS_CONTENT_RANGE_OK,
    GGFS_CONTENT_RANGE_BAD,     // not `bytes FIRST-LAST/TOTAL`, or FIRST > LAST,
                                // or LAST >= TOTAL, or a number over 2^64
    GGFS_CONTENT_RANGE_TOO_BIG, // well formed, but TOTAL over GGFS_REMOTE_SIZE_MAX
} ggfs_content_range_verdict;

/* Parses a Content-Range value (vlen bytes) `bytes FIRST-LAST/TOTAL`. */
ggfs_content_range_verdict ggfs_content_range_parse(const char *value, size_t vlen, uint64_t *first,
                                                    uint64_t *last, uint64_t *total);

/* When line is a `RateLimit` header with a `t=SECONDS` parameter (the
 * IETF draft's, the Hub's `"api";r=0;t=55`) or a `Retry-After: SECONDS`:
 * true, with *wait_s the seconds, at most GGFS_WAIT_MAX_S. A RateLimit
 * line without `t=`, or a Retry-After that is not a number of seconds (a
 * date), is the header still (true) but leaves *wait_s as it was. A
 * Retry-After never overrides a wait already set (a RateLimit's). */
bool ggfs_wait_header_parse(const char *line, size_t len, long *wait_s);

/* In a `Link` value (vlen bytes) `<a>; rel="x", <b>; rel="next"`: the URL
 * of rel="next" into next (NUL-terminated): true when there is one that
 * fits in cap. */
bool ggfs_link_next(const char *value, size_t vlen, char *next, size_t cap);

/* In a `WWW-Authenticate` line: true when it is a Bearer challenge that
 * fits in cap, copied to out (`Bearer realm="...",service="..."`). */
bool ggfs_bearer_challenge(const char *line, size_t len, char *out, size_t cap);

/* A byte count a header gives (the Hub's `X-Linked-Size`): decimal digits
 * and nothing else, at most GGFS_REMOTE_SIZE_MAX; false otherwise, *out
 * untouched. */
bool ggfs_size_header_parse(const char *value, size_t vlen, uint64_t *out);

/* An `X-Linked-Etag` value (the Hub's resolve answer), quoted or not: the
 * SHA-256 of an LFS file when it is 64 hex digits; true with *p set (where
 * "X-Linked-Etag"). A 40-hex git SHA-1 (a file kept in git, not LFS) is
 * no SHA-256: false, as for anything else, p untouched. */
bool ggfs_linked_etag_parse(const char *value, size_t vlen, ggfs_published *p);

/* An S3 `x-amz-checksum-sha256` value: the object's SHA-256 in base64
 * (44 characters); true with *p set (where "x-amz-checksum-sha256"). A
 * multipart upload's checksum of its parts' checksums (`...-N`) is not
 * the object's: false, as for anything else. */
bool ggfs_s3_checksum_parse(const char *value, size_t vlen, ggfs_published *p);

/* An S3 ETag as S3 sends it: a single-part upload's is the MD5 of the
 * object, 32 hex digits in quotes; true with *p set (MD5, where "ETag").
 * A multipart upload's (`"...-N"`) or any other: false. */
bool ggfs_s3_etag_md5(const char *etag, size_t len, ggfs_published *p);

/* What the answers to a remote source's open publish of its bytes,
 * gathered from their header lines and decided once they are all in:
 * an hf:// name's X-Linked-Etag and X-Linked-Size (on the Hub's resolve
 * answer, the redirect), an s3:// object's x-amz-checksum-sha256, else
 * its ETag when that is a single-part MD5 and nothing says it is not
 * (SSE-KMS and SSE-C objects' ETags are no MD5; a checksum of type
 * COMPOSITE is a multipart's). Only the answers of the name's own origin
 * count: a CDN or blob store a redirect leads to serves the bytes, it
 * does not publish them. */
typedef struct ggfs_published_headers {
    bool hub, s3;             // which headers count
    char origin[GGFS_ORIGIN_MAX]; // of the name's URL; "": none counts
    ggfs_published linked;    // X-Linked-Etag and X-Linked-Size, the last seen
    // The last answer's (an answer starts afresh at its status line):
    ggfs_published checksum;  // x-amz-checksum-sha256
    ggfs_published md5;       // ETag
    bool composite;           // x-amz-checksum-type: COMPOSITE
    bool etag_not_md5;        // x-amz-server-side-encryption: aws:kms...,
                              // or a customer key's (SSE-C)
} ggfs_published_headers;

/* Starts h for the answers to url (hub: an hf:// name's; s3: an s3://
 * object's; neither: nothing is published). */
void ggfs_published_headers_init(ggfs_published_headers *h, const char *url, bool hub, bool s3);

/* One header line (len bytes, with or without its CRLF, status lines
 * included) of an answer to a request to url. */
void ggfs_published_headers_line(ggfs_published_headers *h, const char *url, const char *line, size_t len);

/* What the answers published (kind NONE and size 0: nothing). */
void ggfs_published_headers_result(const ggfs_published_headers *h, ggfs_published *out);

/* The value of auth-param `key` in a challenge `Bearer k="v",k=v,...`
 * (RFC 7235), unquoted into out: false when it is not there or does not
 * fit in cap. */
bool ggfs_challenge_param(const char *challenge, const char *key, char *out, size_t cap);

#endif
