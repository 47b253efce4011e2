/*
 * Small API answers (api_get.h): the engine's bounded whole-document GET
 * (http.h), which retries, waits out 429s and stops with the mount; here
 * only the answer's `Link: <URL>; rel="next"` is read.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/api_get.h"
#include "source/hf_name.h"
#include "source/http.h"
#include "source/response_headers.h"
#include "util/clock.h"

static void on_header(void *ctx, const char *url, const char *line, size_t len)
{
    (void)url;
    ggfs_api_reply *out = ctx;
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0)
        out->next[0] = '\0'; // a redirect's headers are not the answer's
    const char *v;
    size_t vlen;
    if (ggfs_header_match(line, len, "link", &v, &vlen) && !ggfs_link_next(v, vlen, out->next, sizeof out->next))
        out->next[0] = '\0';
}

bool ggfs_api_get(ggfs_remote *remote, const char *url, const char *bearer, size_t max, ggfs_api_reply *out)
{
    memset(out, 0, sizeof *out);
    const unsigned timeout_s = remote && remote->opts.timeout_s ? remote->opts.timeout_s : 30;
    _Atomic uint64_t bytes = 0;
    // The token is the Hub's: it belongs to HF_ENDPOINT's origin, and a
    // page or redirect elsewhere goes without it.
    ggfs_secret secret;
    bool has_secret = false;
    char *endpoint = bearer ? ggfs_hf_endpoint() : NULL;
    if (endpoint)
        has_secret = ggfs_secret_bind(&secret, GGFS_SECRET_HUB_TOKEN, endpoint, bearer, NULL);
    free(endpoint);
    ggfs_http_range r = {
        .url = url, .secret = has_secret ? &secret : NULL, .whole = true, .body_max = max, .compressed = true,
        .waits_rate_limit = true, .header_seen = on_header, .header_ctx = out,
        .deadline_ns = ggfs_now_ns() + (int64_t)timeout_s * 1000000000, .received = &bytes,
    };
    const ggfs_http_outcome o = ggfs_http_fetch(remote->http, &r);
    const unsigned attempts = r.failures + (o == GGFS_HTTP_OK);
    out->rate_limit_waits = r.rate_limit_waits;
    out->retries = attempts > 1 + r.rate_limit_waits ? attempts - 1 - r.rate_limit_waits : 0;
    out->bytes = atomic_load(&bytes);
    out->status = r.status;
    out->body = r.body;
    out->len = r.body_len;
    out->cut = r.body_cut;
    if (o != GGFS_HTTP_OK)
        snprintf(out->why, sizeof out->why, "%s", r.why);
    if (o == GGFS_HTTP_OK || out->cut)
        out->why[0] = '\0';
    if (o != GGFS_HTTP_OK && out->status == 200 && !out->cut) {
        // A 200 whose body never arrived whole (a timeout, a reset) is no
        // answer: what came of it is not read as the document.
        free(out->body);
        out->body = NULL;
        out->len = 0;
        out->status = 0;
    }
    return out->status != 0;
}
