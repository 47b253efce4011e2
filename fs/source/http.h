/*
 * The HTTP engine of remote sources, over libcurl: one range GET, checked
 * against what the caller expects of the file, and the retrying of failed
 * ones with backoff until a deadline.
 *
 * The same request may ask for a whole small document instead (an API's
 * answer, a registry's manifest, an S3 listing), bounded, with the same
 * retries, deadline, signing and abort: the one bounded GET of the engine.
 *
 * Redirects are followed by the engine itself, one hop at a time, each
 * hop asking secret_origin.h whether the request's credential may go
 * there; a 429 or 503 that names a wait holds every request to its host
 * until then.
 *
 * Connections are reused through a pool of curl easy handles (one per
 * request in flight, each keeping its own connections alive); DNS answers
 * and TLS sessions are shared between them. libcurl brings TLS, redirects,
 * proxies (http_proxy, https_proxy, no_proxy) and timeouts.
 */
#ifndef GGFS_SOURCE_HTTP_H
#define GGFS_SOURCE_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source/secret_origin.h"

#define GGFS_HTTP_MAX_REDIRECTS 10
// A response that brings no byte for this long is given up and made again:
// one stalled connection costs its own retry, not the read's whole timeout.
#define GGFS_HTTP_STALL_S 5
#define GGFS_HTTP_VALIDATOR_MAX 256

typedef struct ggfs_http ggfs_http;

struct curl_slist;

/* What a kind of server wants added to each request, for instance S3's
 * signature (source/s3_sign.h). Called on the requesting thread for every
 * attempt, with the libcurl easy handle (`CURL *`) of the attempt: sets the
 * handle's signing options and appends the request's own headers to
 * *headers (which the engine frees after the attempt). Returns false, with
 * why filled, when it cannot (out of memory). */
typedef struct ggfs_http_auth {
    bool (*apply)(const struct ggfs_http_auth *auth, void *curl, struct curl_slist **headers, char *why,
                  size_t why_size);
} ggfs_http_auth;

/* Sets up libcurl; NULL when it cannot. Call before starting threads. */
ggfs_http *ggfs_http_new(void);
void ggfs_http_free(ggfs_http *http);

/* The mount is stopping: from now on a request in flight gives up within
 * about a second (libcurl's progress calls), and none is made again or
 * retried; each fails, refused, "the mount is stopping". */
void ggfs_http_abort(ggfs_http *http);

typedef enum ggfs_http_outcome {
    GGFS_HTTP_OK,
    GGFS_HTTP_RETRY,   // may pass: refused or reset connection, timeout,
                       // 5xx, 408, 429, a body cut short
    GGFS_HTTP_REFUSED, // will not pass: 4xx, no range support, a redirect
                       // loop, an unknown host, a bad certificate
    GGFS_HTTP_CHANGED, // the file is no longer the one opened: its ETag,
                       // Last-Modified or size differ
} ggfs_http_outcome;

/* One range request and what came back. */
typedef struct ggfs_http_range {
    /* The request. */
    const char *url;
    const ggfs_secret *secret; // a credential (a bearer token, or a signer),
                             // or NULL: each hop carries it only where
                             // ggfs_secret_may_go allows (secret_origin.h)
    bool whole;              // no range: the whole document, into body (a
                             // 200 is the answer; off, len and parts unused)
    size_t body_max;         // > 0: the body of an answer that is not the
                             // range (an error's: S3 names its code there),
                             // or the document when whole, is kept in body,
                             // at most body_max bytes
    const char *keep_header; // optional: a header whose value goes to
                             // header_got (S3's x-amz-bucket-region)
    const char *accept;      // optional: the Accept header's value (a
                             // registry's manifest types)
    const char *header;      // optional: one more header, "Name: value"
                             // (S3's x-amz-checksum-mode), sent on every
                             // hop (and signed with the others by a signer)
    bool compressed;         // a whole document may come compressed
                             // (Accept-Encoding: what libcurl decodes)
    bool waits_rate_limit;   // a 429 is waited out for the seconds its
                             // RateLimit `t=` or Retry-After gives (at
                             // least one), not retried with backoff
    // Optional: called, on the requesting thread, with every header line
    // of every response (status lines included: a redirect's headers come
    // before the answer's) and the URL of the request it answers, for
    // what a caller reads beyond the engine's own (an API's Link, a
    // registry's WWW-Authenticate, what a store publishes of a file).
    void (*header_seen)(void *ctx, const char *url, const char *line, size_t len);
    void *header_ctx;
    uint64_t off, len;       // the bytes asked for
    uint8_t *const *parts;   // receive them: byte i of the range goes to
    size_t part_size;        // parts[i / part_size][i % part_size]
    // Optional: called, on the requesting thread, as soon as parts[i] holds
    // all its bytes (the last part may be shorter), i in increasing order;
    // a part once done is never written again. The bytes come from a
    // response checked before its first byte was taken (status, range,
    // size, ETag), so they are right even if the transfer fails later.
    void (*part_done)(void *ctx, size_t i);
    void *part_ctx;
    bool open;               // at open: the size is not known yet, and a
                             // body shorter than len is right when it ends
                             // the file
    const char *etag;        // expected (pinned at open), or NULL
    const char *last_modified; // expected when there is no ETag, or NULL
    uint64_t size;           // expected total size (ignored when open)
    int64_t deadline_ns;     // CLOCK_MONOTONIC: the attempt gives up then
    _Atomic uint64_t *received; // optional: body bytes are added as they
                             // arrive (a rate while the request runs)

    /* The answer. */
    long status;             // last HTTP status, 0 when none came
    uint64_t got;            // body bytes written to parts
    uint64_t total;          // the file's size, from Content-Range
    char etag_got[GGFS_HTTP_VALIDATOR_MAX];          // "" when none
    char last_modified_got[GGFS_HTTP_VALIDATOR_MAX]; // "" when none
    char effective_url[2048]; // where redirects led ("" if too long)
    char why[256];           // what went wrong, for messages
    char *body;              // with body_max: malloc'ed, NUL-terminated,
                             // body_len bytes; the caller frees it (NULL
                             // when no body came)
    size_t body_len;
    bool body_cut;           // the body was longer than body_max
    char header_got[GGFS_HTTP_VALIDATOR_MAX]; // keep_header's value, or ""
    unsigned failures;       // attempts that failed (each made again, or
                             // the last one)
    unsigned rate_limit_waits; // 429s waited out (waits_rate_limit)
    long wait_s;             // what the last 429 asked to wait, -1: nothing

    /* The engine's own. */
    size_t parts_before;     // parts done by earlier attempts (fetch resumes
                             // after them)
} ggfs_http_range;

/* One attempt. Fills the answer part of r. */
ggfs_http_outcome ggfs_http_get(ggfs_http *http, ggfs_http_range *r);

/* Attempts until one passes, a final answer comes, or deadline_ns would be
 * passed: waits 100 ms after the first failure, doubling up to 2 s. An
 * attempt that failed after whole parts arrived is followed by one asking
 * for the rest only. On failure r->why tells the last cause and how many
 * attempts were made. */
ggfs_http_outcome ggfs_http_fetch(ggfs_http *http, ggfs_http_range *r);

/* The body bytes every range request of h received so far, and the
 * requests under way now. */
void ggfs_http_totals(ggfs_http *h, uint64_t *received, unsigned *in_flight);

#endif
