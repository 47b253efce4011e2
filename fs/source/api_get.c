/*
 * Small API answers over libcurl (api_get.h): one easy handle per call,
 * the body kept up to a bound, the headers that page and pace.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "source/api_get.h"
#include "source/http.h"
#include "util/clock.h"

#define FIRST_BACKOFF_NS INT64_C(100000000)
#define MAX_BACKOFF_NS INT64_C(2000000000)

typedef struct answer {
    ggfs_api_reply *out;
    size_t max, cap;
    long wait_s; // what the 429 asked for; -1 when it said nothing
} answer;

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    answer *a = ctx;
    ggfs_api_reply *out = a->out;
    const size_t len = size * n;
    out->bytes += len;
    size_t take = len;
    if (out->len + take > a->max) {
        take = a->max - out->len;
        out->cut = true;
    }
    if (out->len + take + 1 > a->cap) {
        size_t cap = a->cap ? a->cap : 64 * 1024;
        while (cap < out->len + take + 1)
            cap *= 2;
        char *grown = realloc(out->body, cap);
        if (!grown)
            return 0; // libcurl fails the transfer: no status, tried again
        out->body = grown;
        a->cap = cap;
    }
    memcpy(out->body + out->len, data, take);
    out->len += take;
    out->body[out->len] = '\0';
    return out->cut ? 0 : len;
}

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

/* The seconds a 429 asks to wait: RateLimit's `t=` (IETF draft, the Hub's
 * `"api";r=0;t=55`), else Retry-After in seconds. */
static void take_wait(answer *a, const char *line, size_t len)
{
    size_t vlen;
    const char *v = header_value(line, len, "RateLimit", &vlen);
    if (v) {
        for (size_t i = 0; i + 2 < vlen; i++) {
            if ((i == 0 || v[i - 1] == ';' || v[i - 1] == ' ' || v[i - 1] == ',') && v[i] == 't' && v[i + 1] == '=') {
                a->wait_s = strtol(v + i + 2, NULL, 10);
                return;
            }
        }
    }
    v = header_value(line, len, "Retry-After", &vlen);
    if (v && a->wait_s < 0 && vlen > 0 && vlen < 12 && v[0] >= '0' && v[0] <= '9')
        a->wait_s = strtol(v, NULL, 10);
}

static size_t on_header(char *line, size_t size, size_t n, void *ctx)
{
    answer *a = ctx;
    const size_t len = size * n;
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0)
        a->out->next[0] = '\0'; // a redirect's headers are not the answer's
    size_t vlen;
    const char *v = header_value(line, len, "Link", &vlen);
    if (v)
        take_next(v, vlen, a->out->next, sizeof a->out->next);
    take_wait(a, line, len);
    return len;
}

/* One attempt; false when no status came. */
static bool attempt(const char *url, const char *bearer, int64_t deadline, answer *a)
{
    ggfs_api_reply *out = a->out;
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(out->why, sizeof out->why, "cannot start a transfer (out of memory)");
        return false;
    }
    free(out->body);
    out->body = NULL;
    out->len = 0;
    out->cut = false;
    out->next[0] = '\0';
    out->status = 0;
    a->cap = 0;
    a->wait_s = -1;
    char errbuf[CURL_ERROR_SIZE] = "";
    int64_t left_ms = (deadline - ggfs_now_ns()) / 1000000;
    // The bearer goes to this host only: a redirect elsewhere goes
    // without (CURLOPT_UNRESTRICTED_AUTH off).
    ggfs_http_common_options(c, url, bearer, errbuf);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(left_ms > 1 ? left_ms : 1));
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
    const CURLcode code = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    curl_easy_cleanup(c);
    if (code == CURLE_WRITE_ERROR && out->cut)
        return true; // the bound, not the network
    if (code != CURLE_OK) {
        snprintf(out->why, sizeof out->why, "%s", errbuf[0] ? errbuf : curl_easy_strerror(code));
        out->status = 0;
        return false;
    }
    return true;
}

static void sleep_ns(int64_t ns)
{
    if (ns <= 0)
        return;
    const struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    nanosleep(&ts, NULL);
}

bool ggfs_api_get(ggfs_remote *remote, const char *url, const char *bearer, size_t max, ggfs_api_reply *out)
{
    memset(out, 0, sizeof *out);
    const unsigned timeout_s = remote && remote->opts.timeout_s ? remote->opts.timeout_s : 30;
    const int64_t deadline = ggfs_now_ns() + (int64_t)timeout_s * 1000000000;
    answer a = {.out = out, .max = max};
    int64_t backoff = FIRST_BACKOFF_NS;
    for (;;) {
        const bool answered = attempt(url, bearer, deadline, &a);
        int64_t wait;
        if (answered && out->status == 429) {
            wait = (int64_t)(a.wait_s > 0 ? a.wait_s : 1) * 1000000000;
            if (ggfs_now_ns() + wait >= deadline) {
                snprintf(out->why, sizeof out->why, "429 Too Many Requests: asked to wait %lds, past the %us timeout",
                         a.wait_s > 0 ? a.wait_s : 1L, timeout_s);
                return true;
            }
            out->rate_limit_waits++;
        } else if (!answered || out->status >= 500) {
            wait = backoff;
            backoff = backoff * 2 < MAX_BACKOFF_NS ? backoff * 2 : MAX_BACKOFF_NS;
            if (ggfs_now_ns() + wait >= deadline) {
                if (answered)
                    snprintf(out->why, sizeof out->why, "HTTP %ld after %u attempts", out->status,
                             out->retries + 1);
                return answered;
            }
            out->retries++;
        } else {
            if (out->status != 200)
                snprintf(out->why, sizeof out->why, "HTTP %ld", out->status);
            return true;
        }
        sleep_ns(wait);
    }
}
