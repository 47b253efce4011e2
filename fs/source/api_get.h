/*
 * A server's API answers, whole and small (a listing page, a revision's
 * commit): one GET through libcurl, with the body bounded, the `Link:
 * <URL>; rel="next"` of a paged answer, and the waits a busy server asks
 * for. Part of the remote engine's module (remote_module.h).
 *
 * 429 is waited out for the seconds its `RateLimit` header's `t=` or its
 * `Retry-After` gives (at least one), 5xx and failed connections are
 * tried again after 100 ms doubling to 2 s, all within the deadline.
 */
#ifndef GGFS_SOURCE_API_GET_H
#define GGFS_SOURCE_API_GET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source/remote.h"

#define GGFS_API_URL_MAX 4096

typedef struct ggfs_api_reply {
    long status;                 // the last HTTP status; 0 when none came
    char *body;                  // malloc'ed, NUL-terminated (free with free()); NULL when none
    size_t len;                  // bytes of body (it may hold NUL bytes)
    bool cut;                    // the body was longer than asked: cut there
    char next[GGFS_API_URL_MAX]; // the rel="next" link, "" when none (or too long)
    unsigned retries;            // attempts made again (5xx, resets)
    unsigned rate_limit_waits;   // 429s waited out
    uint64_t bytes;              // body bytes received, over every attempt
    char why[256];               // when no status came, or it was not 200: what happened
} ggfs_api_reply;

/* GETs url, sending bearer (when not NULL) as `Authorization: Bearer` to
 * url's own host only, never across a redirect; a body of at most max
 * bytes is kept. Gives up at the mount's timeout (remote's timeout_s) or
 * when the mount stops. Returns true when a final status came (200 or
 * not: see out->status), false when none did (out->why). */
bool ggfs_api_get(ggfs_remote *remote, const char *url, const char *bearer, size_t max, ggfs_api_reply *out);

#endif
