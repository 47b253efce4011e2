/*
 * Where a secret may go: the one rule every request of the remote engine
 * asks, hop by hop, before it carries a credential (SEMANTICS, "What a
 * server cannot do"). Each credential belongs to one origin (scheme, host,
 * port): the endpoint it was given for, or the registry that issued it.
 * A request to any other origin carries none of it, whatever led there: a
 * redirect, a `Link: rel="next"` page, a continuation, a retry, a
 * remembered redirect target. Same scheme means a secret never goes from
 * https to http.
 *
 * The engine (http.c) is the only caller of ggfs_secret_may_go: it follows
 * redirects itself, one hop at a time, so that no path of libcurl's own
 * (custom headers kept across a redirect) carries a secret past it.
 */
#ifndef GGFS_SOURCE_SECRET_ORIGIN_H
#define GGFS_SOURCE_SECRET_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>

struct ggfs_http_auth;

typedef enum ggfs_secret_kind {
    GGFS_SECRET_HUB_TOKEN,      // HF_TOKEN or the token file: HF_ENDPOINT's origin
    GGFS_SECRET_REGISTRY_TOKEN, // a registry's bearer token: the registry that asked for it
    GGFS_SECRET_AWS_SIGNATURE,  // AWS keys, their signature, the session token: the bucket's endpoint
    GGFS_SECRET_KIND_COUNT
} ggfs_secret_kind;

/* The table: what each kind is, how a request carries it, and whose it is. */
typedef struct ggfs_secret_rule {
    const char *name;       // for log lines and tests
    const char *carried_in; // the headers a request carries it in
    const char *belongs_to; // the origin it is bound to
} ggfs_secret_rule;

extern const ggfs_secret_rule ggfs_secret_rules[GGFS_SECRET_KIND_COUNT];

// "scheme://host:port", the longest origin a secret is bound to.
#define GGFS_ORIGIN_MAX 320

/* A credential bound to its origin. */
typedef struct ggfs_secret {
    ggfs_secret_kind kind;
    char origin[GGFS_ORIGIN_MAX];      // "scheme://host:port", lower-case
    const char *bearer;                // the token kinds' token
    const struct ggfs_http_auth *auth; // the signature kind's signer
} ggfs_secret;

/* The origin of an http(s) URL, as "scheme://host:port" (scheme and host
 * lower-case, the port always written) into out: false when url is not
 * an http or https URL with a host, or the origin does not fit. */
bool ggfs_origin_of(const char *url, char *out, size_t cap);

/* Binds s (kind, and bearer or auth as the kind carries it) to the origin
 * of url: false, with s carrying nothing, when url has no origin. */
bool ggfs_secret_bind(ggfs_secret *s, ggfs_secret_kind kind, const char *url, const char *bearer,
                      const struct ggfs_http_auth *auth);

/* Whether a request to url may carry s: its origin is s's own. */
bool ggfs_secret_may_go(const ggfs_secret *s, const char *url);

#endif
