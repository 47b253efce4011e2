/*
 * Small registry documents, with the OCI distribution token flow
 * (registry.h), over the engine's bounded whole-document GET (http.h).
 */
#include <ctype.h>
#include <errno.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/cache_records.h"
#include "source/registry.h"
#include "source/response_headers.h"
#include "util/clock.h"
#include "util/log.h"

#define CHALLENGE_MAX 2048 // a WWW-Authenticate header's value kept, at most
#define PARAM_MAX 1024     // one of its parameters' values

typedef struct response {
    char *body;
    size_t len, cap;      // cap: the most the caller takes
    bool over;            // the body was longer than cap
    char challenge[CHALLENGE_MAX]; // the last response's Bearer challenge, or ""
} response;

/* Keeps the Bearer challenge of the last response (each redirect's
 * response starts again with its status line). */
static void on_header(void *arg, const char *url, const char *data, size_t len)
{
    (void)url;
    response *r = arg;
    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0)
        r->challenge[0] = '\0';
    else
        ggfs_bearer_challenge(data, len, r->challenge, sizeof r->challenge);
}

/* GETs url whole (the engine's bounded GET, http.h: what may pass if asked
 * again, no answer, 408, 429 or 5xx, is asked again with backoff until
 * deadline), with the token when there is one. Returns the last status,
 * 0 when none came or the body was over cap (why filled). */
static long get_retrying(ggfs_remote *remote, int64_t deadline, const char *url, const char *accept,
                         const ggfs_secret *token, response *r, char *why, size_t why_size)
{
    ggfs_http_range q = {
        .url = url, .secret = token, .accept = accept, .whole = true, .body_max = r->cap,
        .header_seen = on_header, .header_ctx = r, .deadline_ns = deadline,
    };
    const ggfs_http_outcome o = ggfs_http_fetch(remote->http, &q);
    r->body = q.body;
    r->len = q.body_len;
    r->over = q.body_cut;
    if (r->over) {
        snprintf(why, why_size, "%s: the response is larger than %zu bytes", url, r->cap);
        return 0;
    }
    if (o != GGFS_HTTP_OK && (q.status == 0 || q.status / 100 == 2)) {
        // No answer, or a 2xx whose body never arrived whole: nothing of
        // it is read as the document.
        snprintf(why, why_size, "%s: %s", url, q.why);
        free(r->body);
        r->body = NULL;
        r->len = 0;
        return 0;
    }
    return q.status;
}

/* ==== The token flow ==== */

/* A bearer token's characters (RFC 6750 b64token): true when all of the
 * n bytes are, '=' only at the end. */
static bool b64token(const char *t, size_t n)
{
    size_t i = 0;
    while (i < n && (isalnum((unsigned char)t[i]) || strchr("-._~+/", t[i])) && t[i])
        i++;
    while (i < n && i > 0 && t[i] == '=')
        i++;
    return i == n && n > 0;
}

char *ggfs_registry_token_parse(const char *body, size_t len)
{
    json_tokener *tok = json_tokener_new();
    if (!tok || len > INT32_MAX) {
        json_tokener_free(tok);
        return NULL;
    }
    json_object *root = json_tokener_parse_ex(tok, body, (int)len), *field;
    char *token = NULL;
    if (root && json_tokener_get_error(tok) == json_tokener_success &&
        ((json_object_object_get_ex(root, "token", &field) && json_object_is_type(field, json_type_string)) ||
         (json_object_object_get_ex(root, "access_token", &field) &&
          json_object_is_type(field, json_type_string)))) {
        const size_t n = (size_t)json_object_get_string_len(field);
        if (n <= 8192 && b64token(json_object_get_string(field), n))
            token = strndup(json_object_get_string(field), n);
    }
    json_object_put(root);
    json_tokener_free(tok);
    return token;
}

/* Appends "&key=escaped value" (the first one with ?) to url. */
static bool add_query(CURL *c, char *url, size_t cap, const char *key, const char *value)
{
    char *esc = curl_easy_escape(c, value, 0);
    if (!esc)
        return false;
    const size_t used = strlen(url);
    const int n = snprintf(url + used, cap - used, "%c%s=%s", strchr(url, '?') ? '&' : '?', key, esc);
    curl_free(esc);
    return n > 0 && (size_t)n < cap - used;
}

/* An anonymous token for the challenge, from its realm: malloc'd, or NULL
 * with why filled. */
static char *fetch_token(ggfs_remote *remote, int64_t deadline, const char *url, const char *challenge, char *why,
                         size_t why_size)
{
    char realm[PARAM_MAX], value[PARAM_MAX], token_url[3 * PARAM_MAX + 64];
    if (!ggfs_challenge_param(challenge, "realm", realm, sizeof realm) ||
        (strncmp(realm, "https://", 8) != 0 && strncmp(realm, "http://", 7) != 0)) {
        snprintf(why, why_size, "%s: HTTP 401, and its Bearer challenge names no http(s) realm", url);
        return NULL;
    }
    CURL *c = curl_easy_init();
    bool ok = c != NULL;
    snprintf(token_url, sizeof token_url, "%s", realm);
    if (ok && ggfs_challenge_param(challenge, "service", value, sizeof value))
        ok = add_query(c, token_url, sizeof token_url, "service", value);
    if (ok && ggfs_challenge_param(challenge, "scope", value, sizeof value))
        ok = add_query(c, token_url, sizeof token_url, "scope", value);
    curl_easy_cleanup(c);
    if (!ok) {
        snprintf(why, why_size, "%s: HTTP 401, and its Bearer challenge is too long", url);
        return NULL;
    }
    response r = {.cap = GGFS_REGISTRY_TOKEN_MAX};
    const long status = get_retrying(remote, deadline, token_url, "application/json", NULL, &r, why, why_size);
    char *token = status / 100 == 2 && r.body ? ggfs_registry_token_parse(r.body, r.len) : NULL;
    if (!token && status)
        snprintf(why, why_size, "%s: HTTP 401, and the token service %s %s", url, realm,
                 status / 100 != 2 ? "refused an anonymous token" : "answered no \"token\" of a bearer token's characters in JSON");
    free(r.body);
    return token;
}

/* Offline: the document kept for url, read back without a request. */
static int kept_get(ggfs_remote *remote, const char *url, size_t cap, char **body, size_t *len, char *why,
                    size_t why_size)
{
    void *data;
    char bad[512];
    switch (ggfs_cache_record_get(remote->opts.cache_dir, GGFS_REGISTRY_RECORD_KIND, url, &data, len, bad,
                                  sizeof bad)) {
    case GGFS_CACHE_RECORD_FOUND:
        break;
    case GGFS_CACHE_RECORD_MISSING:
        snprintf(why, why_size, "%s: offline, and not in cache_dir %s", url, remote->opts.cache_dir);
        return EIO;
    case GGFS_CACHE_RECORD_BAD:
    default:
        snprintf(why, why_size, "%s: offline: in cache_dir, %s", url, bad);
        return EIO;
    }
    if (*len > cap) {
        free(data);
        *len = 0;
        snprintf(why, why_size, "%s: offline: the document kept in cache_dir is over %zu bytes", url, cap);
        return EFBIG;
    }
    *body = data;
    return 0;
}

/* Keeps a document fetched for a later offline mount; a failure costs
 * only that (one log line). */
static void keep(ggfs_remote *remote, const char *url, const char *body, size_t len)
{
    char why[512];
    if (!ggfs_cache_record_put(remote->opts.cache_dir, GGFS_REGISTRY_RECORD_KIND, url, body, len, why, sizeof why))
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: an offline mount will not find it: %s\n", url, why);
}

int ggfs_registry_get(ggfs_remote *remote, const char *url, const char *accept, size_t cap, char **body,
                      size_t *len, char *why, size_t why_size)
{
    *body = NULL;
    *len = 0;
    if (remote->opts.offline)
        return kept_get(remote, url, cap, body, len, why, why_size);
    const int64_t deadline = ggfs_now_ns() + (int64_t)(remote->opts.timeout_s ? remote->opts.timeout_s : 1) * 1000000000;
    for (int attempt = 0; attempt < 2; attempt++) {
        // The token goes with requests to the registry that issued it
        // alone: the engine asks secret_origin.h at every hop.
        ggfs_secret secret;
        const bool token = ggfs_remote_registry_secret(remote, &secret);
        response r = {.cap = cap};
        const long status = get_retrying(remote, deadline, url, accept, token ? &secret : NULL, &r, why, why_size);
        if (status / 100 == 2) {
            if (!r.body && !(r.body = calloc(1, 1))) {
                snprintf(why, why_size, "%s: out of memory", url);
                return ENOMEM;
            }
            *body = r.body;
            *len = r.len;
            if (remote->opts.cache_dir)
                keep(remote, url, r.body, r.len);
            return 0;
        }
        free(r.body);
        if (r.over)
            return EFBIG;
        if (status == 401 && !token && r.challenge[0] && attempt == 0) {
            char *fresh = fetch_token(remote, deadline, url, r.challenge, why, why_size);
            if (!fresh)
                return EIO;
            ggfs_remote_keep_registry_token(remote, url, fresh);
            continue;
        }
        if (status)
            snprintf(why, why_size, "%s: HTTP %ld", url, status);
        return EIO;
    }
    return EIO;
}
