/*
 * The small documents of an OCI distribution registry (an Ollama
 * registry's manifests, the text layers beside a model): one GET each,
 * whole and bounded, with the registry's token flow. A registry that
 * answers 401 with `WWW-Authenticate: Bearer realm=...,service=...,scope=...`
 * is asked again with an anonymous token from the realm, as public
 * registries expect. The token is kept with the mount (ggfs_remote) for
 * the registry's origin alone: the mount's sources of that origin send it,
 * and libcurl never sends it across a redirect to another host.
 */
#ifndef GGFS_SOURCE_REGISTRY_H
#define GGFS_SOURCE_REGISTRY_H

#include <stddef.h>

#include "source/remote.h"

/* The kind of the records (cache_records.h) that keep, under cache_dir,
 * what an online mount got (a manifest, a text layer), keyed by the URL
 * asked for; an offline mount (-o offline) reads them back, and asks the
 * registry nothing. A token is never kept. */
#define GGFS_REGISTRY_RECORD_KIND "registry"

/* A token's response, at most (real ones are about 1 KiB). */
#define GGFS_REGISTRY_TOKEN_MAX (64u << 10)

/* The token of a token service's answer (len bytes, any bytes): its
 * "token", else its "access_token", a string of the characters RFC 6750
 * allows a bearer token (letters, digits, `-._~+/`, then `=`), at most
 * 8 KiB. Malloc'ed, or NULL when the answer holds none such (a token
 * with a CR or LF would write headers of its own). */
char *ggfs_registry_token_parse(const char *body, size_t len);

/* GETs url with `Accept: accept` (NULL: none), following redirects, and
 * returns its body, malloc'd and NUL-terminated after *len bytes, in
 * *body. Fails, with one line in why naming the URL and the status or the
 * problem: EFBIG for a body over cap bytes; EIO for a status other than
 * 2xx or a server that cannot be reached within the mount's timeout_s.
 * What may pass if asked again (no answer, 408, 429, 5xx) is asked again
 * with backoff within timeout_s, as the engine's range requests are.
 * With cache_dir, what came is kept (GGFS_REGISTRY_RECORD_KIND); offline,
 * the body is that record and no request is made (EIO, why saying it is
 * not in cache_dir, when none was kept). Returns 0 or that errno. */
int ggfs_registry_get(ggfs_remote *remote, const char *url, const char *accept, size_t cap, char **body,
                      size_t *len, char *why, size_t why_size);

#endif
