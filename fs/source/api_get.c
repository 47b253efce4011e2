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
#include "source/http.h"
#include "util/clock.h"

/* The value of header `name` in the line, or NULL. */
static const char *header_value(const char *line, size_t len, const char *name, size_t *vlen)
{
    const size_t n = strlen(name);
    if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
        return NULL;
    const char *v = line + n + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    *vlen = (size_t)(end - v);
    return v;
}

/* `Link: <a>; rel="x", <b>; rel="next"`: the URL of rel="next". */
static void take_next(const char *v, size_t len, char *next, size_t cap)
{
    const char *end = v + len;
    while (v < end) {
        const char *lt = memchr(v, '<', (size_t)(end - v));
        if (!lt)
            return;
        const char *gt = memchr(lt, '>', (size_t)(end - lt));
        if (!gt)
            return;
        const char *comma = memchr(gt, ',', (size_t)(end - gt));
        const char *stop = comma ? comma : end;
        const size_t plen = (size_t)(stop - gt);
        bool is_next = false;
        for (const char *p = gt; p + 10 <= stop && !is_next; p++)
            is_next = strncmp(p, "rel=\"next\"", 10) == 0 || strncmp(p, "rel=next", 8) == 0;
        (void)plen;
        if (is_next) {
            const size_t ulen = (size_t)(gt - lt - 1);
            if (ulen < cap) {
                memcpy(next, lt + 1, ulen);
                next[ulen] = '\0';
            }
            return;
        }
        v = stop + 1;
    }
}

static void on_header(void *ctx, const char *line, size_t len)
{
    ggfs_api_reply *out = ctx;
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0)
        out->next[0] = '\0'; // a redirect's headers are not the answer's
    size_t vlen;
    const char *v = header_value(line, len, "Link", &vlen);
    if (v)
        take_next(v, vlen, out->next, sizeof out->next);
}

bool ggfs_api_get(ggfs_remote *remote, const char *url, const char *bearer, size_t max, ggfs_api_reply *out)
{
    memset(out, 0, sizeof *out);
    const unsigned timeout_s = remote && remote->opts.timeout_s ? remote->opts.timeout_s : 30;
    _Atomic uint64_t bytes = 0;
    ggfs_http_range r = {
        .url = url, .bearer = bearer, .whole = true, .body_max = max, .compressed = true,
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
    return out->status != 0;
}
