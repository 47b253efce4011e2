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

/* The value of auth-param `key` in a challenge `Bearer k="v",k=v,...`
 * (RFC 7235), unquoted into out: false when it is not there or does not
 * fit in cap. */
bool ggfs_challenge_param(const char *challenge, const char *key, char *out, size_t cap);

#endif
