/*
 * Range GETs over libcurl. Each request takes an easy handle from a pool
 * (one per request in flight; an idle handle keeps its connections open for
 * the next request), sets every option afresh, and checks the response
 * before taking a byte of its body: a 206 for exactly the range asked, from
 * a file of the size and ETag pinned at open. Anything else aborts the
 * transfer, so a server that answers 200 to a range does not send the
 * whole file; only an error's body may be kept, for the caller to read the
 * server's reason in (S3's XML). A request may also ask for a whole small
 * document (an S3 listing), and be signed by its caller (ggfs_http_auth).
 */
#define _DEFAULT_SOURCE // strncasecmp, nanosleep
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "source/http.h"
#include "source/response_headers.h"
#include "util/clock.h"

#define POOL_MAX 32
// Under the daemon's malloc mmap threshold (128 KiB, see daemon/main.c): a larger
// buffer would be fresh pages, faulted in again for every transfer.
#define RECEIVE_BUFFER (120 * 1024)
#define CONNECT_TIMEOUT_MS 10000
// A redirect's body is read (and dropped) up to this, so that its
// connection stays open for the next hop; past it the hop ends there.
#define REDIRECT_BODY_MAX (64 * 1024)
// Hosts whose 429 or 503 named a wait, remembered at once.
#define HOLDS_MAX 64
#define FIRST_BACKOFF_NS INT64_C(100000000)
#define MAX_BACKOFF_NS INT64_C(2000000000)

struct ggfs_http {
    CURLSH *share;                  // DNS answers and TLS sessions
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    pthread_mutex_t pool_lock;
    CURL *idle[POOL_MAX];
    int n_idle;
    atomic_bool aborting;           // the mount is stopping (ggfs_http_abort)
    _Atomic uint64_t received;      // body bytes of every request, since the start
    atomic_uint in_flight;          // requests under way
    pthread_mutex_t holds_lock;     // guards holds
    struct {
        char origin[GGFS_ORIGIN_MAX]; // "" when unused
        int64_t until_ns;           // CLOCK_MONOTONIC: no request before
    } holds[HOLDS_MAX];             // hosts that asked to be left alone
};

/* ==== The engine ==== */

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *user)
{
    (void)handle, (void)access;
    ggfs_http *h = user;
    pthread_mutex_lock(&h->share_locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *user)
{
    (void)handle;
    ggfs_http *h = user;
    pthread_mutex_unlock(&h->share_locks[data]);
}

ggfs_http *ggfs_http_new(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return NULL;
    ggfs_http *h = calloc(1, sizeof *h);
    if (!h) {
        curl_global_cleanup();
        return NULL;
    }
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&h->share_locks[i], NULL);
    pthread_mutex_init(&h->pool_lock, NULL);
    pthread_mutex_init(&h->holds_lock, NULL);
    // Connections are not shared between handles: libcurl does not support
    // sharing them between concurrent threads. Each pooled handle keeps its
    // own instead.
    h->share = curl_share_init();
    if (h->share) {
        curl_share_setopt(h->share, CURLSHOPT_LOCKFUNC, share_lock);
        curl_share_setopt(h->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
        curl_share_setopt(h->share, CURLSHOPT_USERDATA, h);
        curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
        curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    }
    return h;
}

void ggfs_http_abort(ggfs_http *h)
{
    atomic_store(&h->aborting, true);
}

void ggfs_http_free(ggfs_http *h)
{
    if (!h)
        return;
    for (int i = 0; i < h->n_idle; i++)
        curl_easy_cleanup(h->idle[i]);
    if (h->share)
        curl_share_cleanup(h->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&h->share_locks[i]);
    pthread_mutex_destroy(&h->pool_lock);
    pthread_mutex_destroy(&h->holds_lock);
    free(h);
    curl_global_cleanup();
}

static CURL *take_handle(ggfs_http *h)
{
    pthread_mutex_lock(&h->pool_lock);
    CURL *c = h->n_idle > 0 ? h->idle[--h->n_idle] : NULL;
    pthread_mutex_unlock(&h->pool_lock);
    return c ? c : curl_easy_init();
}

static void give_back(ggfs_http *h, CURL *c)
{
    pthread_mutex_lock(&h->pool_lock);
    if (h->n_idle < POOL_MAX) {
        h->idle[h->n_idle++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&h->pool_lock);
    if (c)
        curl_easy_cleanup(c);
}

/* ==== Hosts that asked for a pause ==== */

/* Until when requests to origin are held: 0 when they are not. */
static int64_t held_until(ggfs_http *h, const char *origin)
{
    int64_t until = 0;
    pthread_mutex_lock(&h->holds_lock);
    for (int i = 0; i < HOLDS_MAX; i++)
        if (strcmp(h->holds[i].origin, origin) == 0) {
            until = h->holds[i].until_ns;
            break;
        }
    pthread_mutex_unlock(&h->holds_lock);
    return until;
}

/* Holds every request to origin until until_ns (a later hold wins). The
 * slot of the hold that ends first is taken when all are in use. */
static void hold(ggfs_http *h, const char *origin, int64_t until_ns)
{
    pthread_mutex_lock(&h->holds_lock);
    int slot = 0;
    for (int i = 0; i < HOLDS_MAX; i++) {
        if (strcmp(h->holds[i].origin, origin) == 0) {
            slot = i;
            break;
        }
        if (h->holds[i].until_ns < h->holds[slot].until_ns)
            slot = i;
    }
    if (strcmp(h->holds[slot].origin, origin) != 0 || h->holds[slot].until_ns < until_ns) {
        snprintf(h->holds[slot].origin, sizeof h->holds[slot].origin, "%s", origin);
        h->holds[slot].until_ns = until_ns;
    }
    pthread_mutex_unlock(&h->holds_lock);
}

/* Sleeps until until_ns, in slices, so that a stopping mount is not kept
 * waiting: false when the mount stopped meanwhile. */
static bool sleep_until(ggfs_http *h, int64_t until_ns)
{
    for (int64_t now = ggfs_now_ns(); now < until_ns; now = ggfs_now_ns()) {
        if (atomic_load(&h->aborting))
            return false;
        int64_t step = until_ns - now;
        if (step > 100000000)
            step = 100000000;
        const struct timespec pause = {0, (long)step};
        nanosleep(&pause, NULL);
    }
    return !atomic_load(&h->aborting);
}

/* ==== One request ==== */

typedef struct transfer {
    ggfs_http_range *r;
    CURL *curl;
    const char *url;       // of this hop
    bool checked;          // the response was found right, body accepted
    bool keeping;          // the body goes to r->body (an error's, or the
                           // whole document)
    size_t body_cap;       // bytes allocated at r->body
    bool has_location;     // the response names a Location
    bool redirecting;      // a redirect's body: dropped
    size_t dropped;        // bytes of it
    uint64_t expect;       // body bytes the response announces
    bool have_range;       // a valid Content-Range came with the response
    ggfs_content_range_verdict range_verdict; // the last Content-Range's
    uint64_t range_first, range_last;
    ggfs_http_outcome verdict; // why the body was refused
} transfer;

static void set_why(ggfs_http_range *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_why(ggfs_http_range *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

static size_t on_header(char *line, size_t size, size_t n, void *user)
{
    transfer *t = user;
    ggfs_http_range *r = t->r;
    const size_t len = size * n;
    const char *v;
    size_t vlen;
    if (r->header_seen)
        r->header_seen(r->header_ctx, t->url, line, len);
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        // A new response (after a redirect, or a 100): forget the last one's.
        r->etag_got[0] = r->last_modified_got[0] = r->header_got[0] = '\0';
        r->wait_s = -1;
        t->have_range = false;
        t->has_location = false;
        t->range_verdict = GGFS_CONTENT_RANGE_BAD;
    } else if (ggfs_header_match(line, len, "location", &v, &vlen)) {
        t->has_location = vlen > 0;
    } else if (ggfs_wait_header_parse(line, len, &r->wait_s)) {
        // RateLimit or Retry-After: kept in wait_s
    } else if (r->keep_header && ggfs_header_match(line, len, r->keep_header, &v, &vlen)) {
        ggfs_header_copy(v, vlen, r->header_got, sizeof r->header_got);
    } else if (ggfs_header_match(line, len, "etag", &v, &vlen)) {
        ggfs_header_copy(v, vlen, r->etag_got, sizeof r->etag_got);
    } else if (ggfs_header_match(line, len, "last-modified", &v, &vlen)) {
        ggfs_header_copy(v, vlen, r->last_modified_got, sizeof r->last_modified_got);
    } else if (ggfs_header_match(line, len, "content-range", &v, &vlen)) {
        uint64_t total = 0;
        t->range_verdict = ggfs_content_range_parse(v, vlen, &t->range_first, &t->range_last, &total);
        t->have_range = t->range_verdict == GGFS_CONTENT_RANGE_OK;
        if (t->have_range)
            r->total = total;
    }
    return len;
}

/* Decides, at the first byte of the body, whether the response is the
 * range asked for of the file opened. */
static bool check_response(transfer *t)
{
    ggfs_http_range *r = t->r;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &r->status);
    if (r->status != 206)
        return false; // judged by the status once the transfer ends
    if (t->range_verdict == GGFS_CONTENT_RANGE_TOO_BIG) {
        set_why(r, "the server announces a file over 2^62 bytes (Content-Range)");
        t->verdict = GGFS_HTTP_REFUSED;
        return false;
    }
    if (!t->have_range) {
        set_why(r, "206 without a valid Content-Range");
        t->verdict = GGFS_HTTP_RETRY;
        return false;
    }
    if (!r->open) {
        if (r->total != r->size) {
            set_why(r, "size changed from %" PRIu64 " to %" PRIu64 " bytes", r->size, r->total);
            t->verdict = GGFS_HTTP_CHANGED;
            return false;
        }
        // A validator, once seen, is required: an answer without it may
        // be of any file.
        if (r->etag && !r->etag_got[0]) {
            set_why(r, "the answer has no ETag, the file's was %s", r->etag);
            t->verdict = GGFS_HTTP_CHANGED;
            return false;
        }
        if (!r->etag && r->last_modified && !r->last_modified_got[0]) {
            set_why(r, "the answer has no Last-Modified, the file's was %s", r->last_modified);
            t->verdict = GGFS_HTTP_CHANGED;
            return false;
        }
        if (r->etag && strcmp(r->etag, r->etag_got) != 0) {
            set_why(r, "ETag changed from %s to %s", r->etag, r->etag_got);
            t->verdict = GGFS_HTTP_CHANGED;
            return false;
        }
        if (!r->etag && r->last_modified && strcmp(r->last_modified, r->last_modified_got) != 0) {
            set_why(r, "Last-Modified changed from %s to %s", r->last_modified,
                    r->last_modified_got);
            t->verdict = GGFS_HTTP_CHANGED;
            return false;
        }
    }
    // The range must be the one asked for; at open, it may stop at the end
    // of a file shorter than the range.
    const uint64_t want_last = r->off + r->len - 1;
    const bool ends_file = r->open && t->range_last + 1 == r->total && t->range_last < want_last;
    if (t->range_first != r->off || (t->range_last != want_last && !ends_file)) {
        set_why(r, "asked for bytes %" PRIu64 "-%" PRIu64 ", got %" PRIu64 "-%" PRIu64, r->off,
                want_last, t->range_first, t->range_last);
        t->verdict = GGFS_HTTP_RETRY;
        return false;
    }
    t->expect = t->range_last - t->range_first + 1;
    return true;
}

/* Whether the body is to be kept whole rather than taken as the range:
 * the document asked for, or an error's body when the caller wants it. */
static bool keeps_body(transfer *t)
{
    ggfs_http_range *r = t->r;
    if (r->body_max == 0)
        return false;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &r->status);
    return r->whole || r->status >= 300;
}

/* Appends to r->body, up to body_max bytes; a document cut there stops the
 * transfer, an error's body is only cut. */
static size_t keep_body(transfer *t, const char *bytes, size_t len)
{
    ggfs_http_range *r = t->r;
    size_t take = len;
    if (take > r->body_max - r->body_len) {
        take = r->body_max - r->body_len;
        r->body_cut = true;
    }
    if (r->body_len + take + 1 > t->body_cap) {
        // Doubling: a document of many small pieces is copied a few times,
        // not once per piece.
        size_t cap = t->body_cap ? t->body_cap : 16 * 1024;
        while (cap < r->body_len + take + 1)
            cap *= 2;
        char *grown = realloc(r->body, cap);
        if (!grown)
            return 0;
        r->body = grown;
        t->body_cap = cap;
    }
    memcpy(r->body + r->body_len, bytes, take);
    r->body_len += take;
    r->body[r->body_len] = '\0';
    if (r->received)
        atomic_fetch_add_explicit(r->received, take, memory_order_relaxed);
    return r->body_cut && r->whole ? 0 : len;
}

static size_t on_body(char *bytes, size_t size, size_t n, void *user)
{
    transfer *t = user;
    ggfs_http_range *r = t->r;
    const size_t len = size * n;
    if (!t->checked && !t->keeping && !t->redirecting) {
        curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &r->status);
        // A 3xx without a Location is an answer (S3's 301 names the
        // bucket's region in its body), not a hop.
        t->redirecting = r->status >= 300 && r->status < 400 && t->has_location;
    }
    if (t->redirecting) {
        t->dropped += len;
        return t->dropped <= REDIRECT_BODY_MAX ? len : 0;
    }
    if (!t->checked && !t->keeping) {
        if (keeps_body(t))
            t->keeping = true;
        else if (!check_response(t))
            return 0; // CURLE_WRITE_ERROR: the transfer stops here
        else
            t->checked = true;
    }
    if (t->keeping)
        return keep_body(t, bytes, len);
    if (len > t->expect - r->got) {
        set_why(r, "more body than the %" PRIu64 " bytes announced", t->expect);
        t->verdict = GGFS_HTTP_RETRY;
        return 0;
    }
    for (size_t done = 0; done < len;) {
        const uint64_t part = r->got / r->part_size, at = r->got % r->part_size;
        const size_t n = len - done < r->part_size - at ? len - done : (size_t)(r->part_size - at);
        memcpy(r->parts[part] + at, bytes + done, n);
        done += n;
        r->got += n;
        if (r->received)
            atomic_fetch_add_explicit(r->received, n, memory_order_relaxed);
        if (r->part_done && (at + n == r->part_size || r->got == t->expect))
            r->part_done(r->part_ctx, r->parts_before + (size_t)part);
    }
    return len;
}

static ggfs_http_outcome by_status(ggfs_http_range *r)
{
    const long s = r->status;
    if (s == 200 && !r->whole) {
        set_why(r, "the server answered 200 to a range request: it does not serve byte ranges");
        return GGFS_HTTP_REFUSED;
    }
    if (s == 408 || s == 429 || (s >= 500 && s <= 599)) {
        set_why(r, "HTTP %ld", s);
        return GGFS_HTTP_RETRY;
    }
    if (s == 401 || s == 403)
        set_why(r, "HTTP %ld: access denied (for hf:// names, set HF_TOKEN)", s);
    else if (s == 404)
        set_why(r, "HTTP 404: not found");
    else
        set_why(r, "HTTP %ld", s);
    return GGFS_HTTP_REFUSED;
}

static ggfs_http_outcome by_curl_code(ggfs_http_range *r, CURLcode code, const char *detail)
{
    const char *what = detail[0] ? detail : curl_easy_strerror(code);
    switch (code) {
    case CURLE_ABORTED_BY_CALLBACK:
        set_why(r, "the mount is stopping");
        return GGFS_HTTP_REFUSED;
    case CURLE_TOO_MANY_REDIRECTS:
        set_why(r, "redirect loop (more than %d redirects)", GGFS_HTTP_MAX_REDIRECTS);
        return GGFS_HTTP_REFUSED;
    case CURLE_PEER_FAILED_VERIFICATION: {
        // Say whom the certificate was checked against, and how to change it.
        const char *ca = getenv("CURL_CA_BUNDLE");
        if (ca && *ca)
            set_why(r, "%.120s (checked against CURL_CA_BUNDLE=%.60s)", what, ca);
        else
            set_why(r, "%.120s (checked against the system's authorities; CURL_CA_BUNDLE names others)",
                    what);
        return GGFS_HTTP_REFUSED;
    }
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_LOGIN_DENIED:
        set_why(r, "%s", what);
        return GGFS_HTTP_REFUSED;
    default:
        set_why(r, "%s", what);
        return GGFS_HTTP_RETRY;
    }
}

/* libcurl asks about once a second, data or not: a transfer of a mount
 * that is stopping ends there. */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const ggfs_http *h = arg;
    return atomic_load_explicit(&h->aborting, memory_order_relaxed) ? 1 : 0;
}

/* Sets every option of one hop to url on c, afresh. */
static void set_options(CURL *c, ggfs_http *h, ggfs_http_range *r, transfer *t, const char *url, char *range,
                        char *errbuf)
{
    int64_t left_ms = (r->deadline_ns - ggfs_now_ns()) / 1000000;
    if (left_ms < 1)
        left_ms = 1;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    // Redirects are the engine's (attempt below): each hop asks where the
    // request's secret may go.
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(c, CURLOPT_USERAGENT, "gguf-fs/0.1.0");
    // A test's or a user's own certificate authority, as the curl tool reads it.
    const char *ca = getenv("CURL_CA_BUNDLE");
    if (ca && *ca)
        curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    curl_easy_setopt(c, CURLOPT_RANGE, range);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)left_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)(left_ms < CONNECT_TIMEOUT_MS ? left_ms : CONNECT_TIMEOUT_MS));
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, h);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)GGFS_HTTP_STALL_S);
    // Bodies are blocks of a megabyte: receive them in larger pieces than
    // libcurl's default 16 KiB.
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, (long)RECEIVE_BUFFER);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, t);
    if (r->compressed)
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    if (h->share)
        curl_easy_setopt(c, CURLOPT_SHARE, h->share);
}

/* Puts the request's credential on the hop to url, when it may go there
 * (secret_origin.h): a bearer token, or a signer's options and headers.
 * False, with why filled, when the signer cannot (out of memory). */
static bool add_secret(const ggfs_http_range *r, CURL *c, const char *url, struct curl_slist **headers, char *why,
                       size_t why_size)
{
    const ggfs_secret *s = r->secret;
    if (!s || !ggfs_secret_may_go(s, url))
        return true;
    if (s->bearer) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
        curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, s->bearer);
    }
    return !s->auth || s->auth->apply(s->auth, c, headers, why, why_size);
}

/* What a whole document's transfer came to. */
static ggfs_http_outcome document_outcome(ggfs_http_range *r, CURLcode code, const char *errbuf)
{
    if (r->status == 200 && r->body_cut) {
        set_why(r, "the answer is larger than %zu bytes", r->body_max);
        return GGFS_HTTP_REFUSED;
    }
    if (code == CURLE_OK && r->status == 200) {
        if (!r->body && !(r->body = calloc(1, 1))) {
            set_why(r, "out of memory");
            return GGFS_HTTP_RETRY;
        }
        return GGFS_HTTP_OK;
    }
    if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && r->status != 0))
        return by_status(r);
    return by_curl_code(r, code, errbuf);
}

/* Forgets the answer of an earlier hop or attempt. */
static void clear_answer(ggfs_http_range *r)
{
    r->status = 0;
    r->got = 0;
    r->total = 0;
    r->etag_got[0] = r->last_modified_got[0] = r->effective_url[0] = r->why[0] = r->header_got[0] = '\0';
    r->wait_s = -1;
    free(r->body);
    r->body = NULL;
    r->body_len = 0;
    r->body_cut = false;
}

/* What one hop's transfer came to. */
static ggfs_http_outcome hop_outcome(ggfs_http_range *r, const transfer *t, CURLcode code, const char *errbuf)
{
    if (r->whole)
        return document_outcome(r, code, errbuf);
    if (code == CURLE_OK && t->checked) {
        if (r->got == t->expect)
            return GGFS_HTTP_OK;
        set_why(r, "body cut short: %" PRIu64 " of %" PRIu64 " bytes", r->got, t->expect);
        return GGFS_HTTP_RETRY;
    }
    if (t->checked || code == CURLE_WRITE_ERROR) {
        // The body was refused by check_response, or cut by on_body.
        if (r->why[0])
            return t->verdict;
        if (r->status != 206 && r->status != 0)
            return by_status(r);
    }
    if (code == CURLE_OK) {
        // A response without a body: the status says what happened.
        if (r->status == 206) {
            set_why(r, "empty 206 response");
            return GGFS_HTTP_RETRY;
        }
        return by_status(r);
    }
    return by_curl_code(r, code, errbuf);
}

/* One request to url on c. *next is set (malloc'ed) to where a redirect
 * points, or NULL. */
static ggfs_http_outcome hop(ggfs_http *h, CURL *c, ggfs_http_range *r, const char *url, char **next)
{
    *next = NULL;
    char origin[GGFS_ORIGIN_MAX];
    if (!ggfs_origin_of(url, origin, sizeof origin)) {
        set_why(r, "not an http(s) URL with a host: %.120s", url);
        return GGFS_HTTP_REFUSED;
    }
    const int64_t until = held_until(h, origin);
    if (until > ggfs_now_ns()) {
        // The host asked for a pause (a 429 or 503 with a wait): no
        // request of the mount goes there before it ends.
        const int64_t now = ggfs_now_ns();
        if (until >= r->deadline_ns) {
            set_why(r, "%.120s asked for a pause of %.1f s more (HTTP 429/503), past the deadline (%.1f s left)",
                    origin, (double)(until - now) / 1e9, (double)(r->deadline_ns - now) / 1e9);
            return GGFS_HTTP_REFUSED;
        }
        if (!sleep_until(h, until)) {
            set_why(r, "the mount is stopping");
            return GGFS_HTTP_REFUSED;
        }
    }
    transfer t = {.r = r, .curl = c, .url = url, .verdict = GGFS_HTTP_RETRY, .range_verdict = GGFS_CONTENT_RANGE_BAD};
    char range[48];
    snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, r->off, r->off + r->len - 1);
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_reset(c);
    set_options(c, h, r, &t, url, r->whole ? NULL : range, errbuf);
    struct curl_slist *headers = NULL;
    char accept[256];
    if (r->accept && (size_t)snprintf(accept, sizeof accept, "Accept: %s", r->accept) < sizeof accept &&
        !(headers = curl_slist_append(NULL, accept))) {
        set_why(r, "cannot start a transfer (out of memory)");
        curl_easy_reset(c);
        return GGFS_HTTP_RETRY;
    }
    if (r->header) {
        struct curl_slist *more = curl_slist_append(headers, r->header);
        if (!more) {
            set_why(r, "cannot start a transfer (out of memory)");
            curl_slist_free_all(headers);
            curl_easy_reset(c);
            return GGFS_HTTP_RETRY;
        }
        headers = more;
    }
    if (!add_secret(r, c, url, &headers, r->why, sizeof r->why)) {
        curl_slist_free_all(headers);
        curl_easy_reset(c);
        return GGFS_HTTP_RETRY;
    }
    if (headers)
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    atomic_fetch_add(&h->in_flight, 1);
    const CURLcode code = curl_easy_perform(c);
    atomic_fetch_sub(&h->in_flight, 1);
    atomic_fetch_add(&h->received, r->got);
    if (!t.checked)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    if (r->status >= 300 && r->status < 400) {
        char *location = NULL;
        if (curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location && location[0] &&
            !(*next = strdup(location))) {
            set_why(r, "out of memory");
            curl_easy_reset(c);
            curl_slist_free_all(headers);
            return GGFS_HTTP_RETRY;
        }
    }
    // An idle handle keeps no credentials, nor a pointer to freed headers.
    curl_easy_reset(c);
    curl_slist_free_all(headers);
    if (r->status == 429 || (r->status == 503 && r->wait_s >= 0)) {
        // A 429 that names no wait still asks for one: a second.
        const long wait_s = r->wait_s > 0 ? r->wait_s : 1;
        hold(h, origin, ggfs_now_ns() + (int64_t)wait_s * 1000000000);
    }
    return *next ? GGFS_HTTP_OK : hop_outcome(r, &t, code, errbuf);
}

static ggfs_http_outcome attempt(ggfs_http *h, ggfs_http_range *r)
{
    clear_answer(r);
    if (r->whole && r->body_max == 0) {
        set_why(r, "a whole document needs body_max");
        return GGFS_HTTP_REFUSED;
    }
    if (r->len == 0 && !r->whole) {
        set_why(r, "empty range");
        return GGFS_HTTP_REFUSED;
    }
    char *url = strdup(r->url);
    CURL *c = url ? take_handle(h) : NULL;
    if (!c) {
        free(url);
        set_why(r, "cannot start a transfer (out of memory)");
        return GGFS_HTTP_RETRY;
    }
    ggfs_http_outcome o;
    for (int hops = 0;; hops++) {
        char *next;
        o = hop(h, c, r, url, &next);
        if (!next)
            break;
        free(url);
        url = next;
        clear_answer(r);
        if (hops == GGFS_HTTP_MAX_REDIRECTS) {
            set_why(r, "redirect loop (more than %d redirects)", GGFS_HTTP_MAX_REDIRECTS);
            o = GGFS_HTTP_REFUSED;
            break;
        }
    }
    if (strlen(url) < sizeof r->effective_url)
        strcpy(r->effective_url, url);
    free(url);
    give_back(h, c);
    return o;
}

void ggfs_http_totals(ggfs_http *h, uint64_t *received, unsigned *in_flight)
{
    *received = atomic_load(&h->received);
    *in_flight = atomic_load(&h->in_flight);
}

ggfs_http_outcome ggfs_http_get(ggfs_http *h, ggfs_http_range *r)
{
    const ggfs_http_outcome o = attempt(h, r);
    r->failures = o != GGFS_HTTP_OK;
    return o;
}

/* After an attempt that failed having filled whole parts: the range
 * shrinks to the parts still missing. At open the size is not known yet,
 * and the range is asked for again whole. */
static void skip_done_parts(ggfs_http_range *r)
{
    if (r->whole)
        return;
    const uint64_t whole = r->open ? 0 : r->got / r->part_size;
    if (whole == 0 || whole * r->part_size >= r->len)
        return;
    r->off += whole * r->part_size;
    r->len -= whole * r->part_size;
    r->parts += whole;
    r->parts_before += (size_t)whole;
}

ggfs_http_outcome ggfs_http_fetch(ggfs_http *h, ggfs_http_range *r)
{
    const uint64_t off = r->off, len = r->len;
    uint8_t *const *parts = r->parts;
    int64_t backoff = FIRST_BACKOFF_NS;
    const int64_t start = ggfs_now_ns();
    ggfs_http_outcome o;
    unsigned failures = 0;
    r->rate_limit_waits = 0;
    for (int attempt = 1;; attempt++) {
        o = ggfs_http_get(h, r);
        failures += r->failures;
        if (o != GGFS_HTTP_RETRY)
            break;
        if (atomic_load(&h->aborting)) {
            set_why(r, "the mount is stopping");
            o = GGFS_HTTP_REFUSED;
            break;
        }
        const int64_t now = ggfs_now_ns();
        if (r->waits_rate_limit && r->status == 429) {
            // The server said how long: the host is held that long (hop),
            // and asking sooner only earns another 429.
            const long wait_s = r->wait_s > 0 ? r->wait_s : 1;
            if (now + (int64_t)wait_s * 1000000000 >= r->deadline_ns) {
                set_why(r, "429 Too Many Requests: asked to wait %lds, past the deadline (%.1f s left)", wait_s,
                        (double)(r->deadline_ns - now) / 1e9);
                break;
            }
            r->rate_limit_waits++;
            continue;
        }
        if (now + backoff >= r->deadline_ns) {
            char last[sizeof r->why];
            memcpy(last, r->why, sizeof last);
            set_why(r, "%.180s (%d attempt%s over %.1f s)", last, attempt, attempt == 1 ? "" : "s",
                    (double)(now - start) / 1e9);
            break;
        }
        skip_done_parts(r);
        const struct timespec pause = {(time_t)(backoff / 1000000000), (long)(backoff % 1000000000)};
        nanosleep(&pause, NULL);
        backoff = backoff * 2 < MAX_BACKOFF_NS ? backoff * 2 : MAX_BACKOFF_NS;
    }
    // The caller's range again; got counts the last attempt's bytes.
    r->failures = failures;
    r->off = off;
    r->len = len;
    r->parts = parts;
    r->parts_before = 0;
    return o;
}
