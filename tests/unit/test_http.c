/*
 * The HTTP engine (fs/source/http.c) against a server of the test's own:
 * a thread answering on a loopback socket, one request per connection,
 * each answer taken from a script (a good 206, a status, another ETag, a
 * body cut short, a 200, a wrong range). Checks the bytes, the parts
 * handed over, the outcome of each kind of answer and its words, the
 * retries of a fetch with the range shrunk to the parts still missing,
 * and the deadline.
 */
#define _GNU_SOURCE // strcasestr, MSG_NOSIGNAL
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "source/http.h"
#include "source/registry.h"
#include "util/clock.h"

#define SIZE 20000
#define PART 1024
#define PATIENT_MS 30000 // a deadline no request on loopback comes near

static uint8_t g_file[SIZE];

/* ==== The server ==== */

typedef enum reply_kind {
    R_GOOD, R_STATUS, R_OTHER_ETAG, R_CUT, R_WHOLE_200, R_WRONG_RANGE,
    R_NO_ETAG,     // a good 206 with no validator at all
    R_HUGE_TOTAL,  // a 206 of a file of 2^64 - 1 bytes
    R_REDIRECT,    // a 302 to g_srv.location
    R_WAIT,        // a 429 whose Retry-After is `cut` seconds
} reply_kind;

typedef struct reply {
    reply_kind kind;
    int status;            // R_STATUS
    uint64_t cut;          // R_CUT: body bytes sent before the connection closes; R_WAIT: seconds
} reply;

#define MAX_REQUESTS 64

static struct server {
    int fd, port;
    pthread_t thread;
    atomic_bool stop;
    pthread_mutex_t lock;  // guards what follows
    reply script[16];
    int n_script, next;    // answers past the script are R_GOOD
    uint64_t first[MAX_REQUESTS], last[MAX_REQUESTS];
    bool bearer[MAX_REQUESTS]; // the request had "Authorization: Bearer tok"
    int64_t at_ns[MAX_REQUESTS]; // when it came
    int n_requests;
    char location[128];    // where R_REDIRECT points
} g_srv;

static void send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        const ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        c += k;
        n -= (size_t)k;
    }
}

static void serve(int fd)
{
    char req[8192];
    size_t n = 0;
    while (n < sizeof req - 1) {
        const ssize_t k = recv(fd, req + n, sizeof req - 1 - n, 0);
        if (k <= 0)
            return;
        n += (size_t)k;
        req[n] = '\0';
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    uint64_t first = 0, last = SIZE - 1;
    const char *range = strcasestr(req, "\r\nRange: bytes=");
    if (range)
        sscanf(range + 15, "%" SCNu64 "-%" SCNu64, &first, &last);
    pthread_mutex_lock(&g_srv.lock);
    const reply r = g_srv.next < g_srv.n_script ? g_srv.script[g_srv.next++] : (reply){R_GOOD, 0, 0};
    if (g_srv.n_requests < MAX_REQUESTS) {
        g_srv.first[g_srv.n_requests] = first;
        g_srv.last[g_srv.n_requests] = last;
        g_srv.bearer[g_srv.n_requests] = strcasestr(req, "\r\nAuthorization: Bearer tok\r\n") != NULL;
        g_srv.at_ns[g_srv.n_requests] = ggfs_now_ns();
        g_srv.n_requests++;
    }
    char location[sizeof g_srv.location];
    memcpy(location, g_srv.location, sizeof location);
    pthread_mutex_unlock(&g_srv.lock);

    char head[512];
    if (r.kind == R_REDIRECT || r.kind == R_WAIT) {
        if (r.kind == R_REDIRECT)
            snprintf(head, sizeof head, "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n", location);
        else
            snprintf(head, sizeof head,
                     "HTTP/1.1 429 Too Many Requests\r\nRetry-After: %" PRIu64 "\r\nContent-Length: 0\r\n\r\n",
                     r.cut);
        send_all(fd, head, strlen(head));
        return;
    }
    if (r.kind == R_STATUS) {
        snprintf(head, sizeof head, "HTTP/1.1 %d Nope\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", r.status);
        send_all(fd, head, strlen(head));
        return;
    }
    if (r.kind == R_WHOLE_200) {
        snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", SIZE);
        send_all(fd, head, strlen(head));
        send_all(fd, g_file, SIZE);
        return;
    }
    if (last >= SIZE)
        last = SIZE - 1;
    const uint64_t said_first = r.kind == R_WRONG_RANGE ? first + 1 : first;
    const uint64_t len = last - said_first + 1;
    snprintf(head, sizeof head,
             "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes %" PRIu64 "-%" PRIu64
             "/%s\r\nContent-Length: %" PRIu64 "\r\n%s%s%s\r\nConnection: close\r\n\r\n",
             said_first, last, r.kind == R_HUGE_TOTAL ? "18446744073709551615" : "20000", len,
             r.kind == R_NO_ETAG ? "X-No" : "ETag", ": ", r.kind == R_OTHER_ETAG ? "\"e2\"" : "\"e1\"");
    send_all(fd, head, strlen(head));
    send_all(fd, g_file + said_first, r.kind == R_CUT ? r.cut : len);
}

static void *accept_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_srv.stop)) {
        const int c = accept(g_srv.fd, NULL, NULL);
        if (c < 0)
            continue;
        if (!atomic_load(&g_srv.stop))
            serve(c);
        shutdown(c, SHUT_WR);
        close(c);
    }
    return NULL;
}

static bool server_start(void)
{
    pthread_mutex_init(&g_srv.lock, NULL);
    atomic_init(&g_srv.stop, false);
    g_srv.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (g_srv.fd < 0 || bind(g_srv.fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(g_srv.fd, 16) != 0 ||
        getsockname(g_srv.fd, (struct sockaddr *)&a, &len) != 0)
        return false;
    g_srv.port = ntohs(a.sin_port);
    return pthread_create(&g_srv.thread, NULL, accept_loop, NULL) == 0;
}

static void server_stop(void)
{
    atomic_store(&g_srv.stop, true);
    // Wake the accept with a connection of our own.
    const int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g_srv.port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (c >= 0) {
        connect(c, (struct sockaddr *)&a, sizeof a);
        close(c);
    }
    pthread_join(g_srv.thread, NULL);
    close(g_srv.fd);
    pthread_mutex_destroy(&g_srv.lock);
}

/* Sets the next answers (the rest are good ones) and forgets the requests. */
static void script(int n, const reply *replies)
{
    pthread_mutex_lock(&g_srv.lock);
    if (n)
        memcpy(g_srv.script, replies, (size_t)n * sizeof *replies);
    g_srv.n_script = n;
    g_srv.next = 0;
    g_srv.n_requests = 0;
    pthread_mutex_unlock(&g_srv.lock);
}

static int requests(void)
{
    pthread_mutex_lock(&g_srv.lock);
    const int n = g_srv.n_requests;
    pthread_mutex_unlock(&g_srv.lock);
    return n;
}

/* ==== A range and where it lands ==== */

typedef struct landing {
    uint8_t bytes[SIZE];
    uint8_t *parts[SIZE / PART + 1];
    size_t done[SIZE / PART + 1]; // the parts handed over, in order
    size_t n_done;
} landing;

static landing g_land;
static char g_url[64];
static ggfs_http *g_http;

static void part_done(void *ctx, size_t i)
{
    landing *l = ctx;
    if (l->n_done < sizeof l->done / sizeof *l->done)
        l->done[l->n_done] = i;
    l->n_done++;
}

static ggfs_http_range range_of(uint64_t off, uint64_t len, int64_t within_ms)
{
    memset(g_land.bytes, 0, sizeof g_land.bytes);
    g_land.n_done = 0;
    for (size_t i = 0; i < sizeof g_land.parts / sizeof *g_land.parts; i++)
        g_land.parts[i] = g_land.bytes + i * PART;
    return (ggfs_http_range){.url = g_url, .off = off, .len = len, .parts = g_land.parts, .part_size = PART,
                             .part_done = part_done, .part_ctx = &g_land, .etag = "\"e1\"", .size = SIZE,
                             .deadline_ns = ggfs_now_ns() + within_ms * 1000000};
}

/* ==== Tests ==== */

static int test_good_range_lands_part_by_part(void)
{
    script(0, NULL);
    ggfs_http_range r = range_of(100, 5000, PATIENT_MS);
    ggfs_secret tok;
    EXPECT(ggfs_secret_bind(&tok, GGFS_SECRET_HUB_TOKEN, g_url, "tok", NULL));
    r.secret = &tok;
    _Atomic uint64_t received = 0;
    r.received = &received;
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_OK);
    EXPECT_EQ(r.status, 206);
    EXPECT_EQ(r.got, 5000);
    EXPECT_EQ(r.total, SIZE);
    EXPECT_EQ(r.failures, 0);
    EXPECT_STR(r.etag_got, "\"e1\"");
    EXPECT_STR(r.effective_url, g_url);
    EXPECT(memcmp(g_land.bytes, g_file + 100, 5000) == 0);
    EXPECT_EQ(atomic_load(&received), 5000);
    EXPECT_EQ(g_land.n_done, 5); // four whole parts and the short last one
    for (size_t i = 0; i < 5; i++)
        EXPECT_EQ(g_land.done[i], i);
    EXPECT_EQ(requests(), 1);
    EXPECT_EQ(g_srv.first[0], 100);
    EXPECT_EQ(g_srv.last[0], 5099);
    EXPECT(g_srv.bearer[0]);
    return 1;
}

static int test_changed_file_is_told(void)
{
    script(1, (reply[]){{R_OTHER_ETAG, 0, 0}});
    ggfs_http_range r = range_of(0, 100, PATIENT_MS);
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_CHANGED);
    EXPECT_STR(r.why, "ETag changed from \"e1\" to \"e2\"");
    EXPECT_EQ(r.got, 0); // no byte taken from it
    EXPECT_EQ(g_land.n_done, 0);
    script(0, NULL);
    r = range_of(0, 100, PATIENT_MS);
    r.size = SIZE + 1;
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_CHANGED);
    EXPECT(strstr(r.why, "size changed from 20001 to 20000 bytes"));
    // A validator once seen is required: an answer without the one the
    // open had is of another file, or of none known.
    r = range_of(0, 100, PATIENT_MS);
    r.etag = NULL;
    r.last_modified = "yesterday";
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_CHANGED);
    EXPECT_STR(r.why, "the answer has no Last-Modified, the file's was yesterday");
    script(1, (reply[]){{R_NO_ETAG, 0, 0}});
    r = range_of(0, 100, PATIENT_MS);
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_CHANGED);
    EXPECT_STR(r.why, "the answer has no ETag, the file's was \"e1\"");
    EXPECT_EQ(r.got, 0);
    return 1;
}

static int test_refusals_and_retries_by_status(void)
{
    static const struct {
        reply reply;
        ggfs_http_outcome outcome;
        const char *why;
    } cases[] = {
        {{R_STATUS, 404, 0}, GGFS_HTTP_REFUSED, "HTTP 404: not found"},
        {{R_STATUS, 403, 0}, GGFS_HTTP_REFUSED, "HTTP 403: access denied"},
        {{R_STATUS, 416, 0}, GGFS_HTTP_REFUSED, "HTTP 416"},
        {{R_STATUS, 503, 0}, GGFS_HTTP_RETRY, "HTTP 503"},
        {{R_STATUS, 429, 0}, GGFS_HTTP_RETRY, "HTTP 429"},
        {{R_WHOLE_200, 0, 0}, GGFS_HTTP_REFUSED, "does not serve byte ranges"},
        {{R_WRONG_RANGE, 0, 0}, GGFS_HTTP_RETRY, "asked for bytes 0-99, got 1-99"},
        {{R_CUT, 0, 50}, GGFS_HTTP_RETRY, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        script(1, &cases[i].reply);
        ggfs_http_range r = range_of(0, 100, PATIENT_MS);
        const ggfs_http_outcome o = ggfs_http_get(g_http, &r);
        if (o != cases[i].outcome || !strstr(r.why, cases[i].why) || r.failures != 1) {
            fprintf(stderr, "case %zu: outcome %d (why \"%s\", %u failures), expected %d (%s)\n", i, (int)o,
                    r.why, r.failures, (int)cases[i].outcome, cases[i].why);
            return 0;
        }
    }
    ggfs_http_range r = range_of(0, 0, PATIENT_MS);
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_REFUSED);
    EXPECT_STR(r.why, "empty range");
    return 1;
}

static int test_fetch_retries_after_a_pause(void)
{
    script(2, (reply[]){{R_STATUS, 503, 0}, {R_STATUS, 500, 0}});
    ggfs_http_range r = range_of(0, 3000, PATIENT_MS);
    const int64_t start = ggfs_now_ns();
    EXPECT_EQ(ggfs_http_fetch(g_http, &r), GGFS_HTTP_OK);
    EXPECT(ggfs_now_ns() - start >= 300 * 1000000); // 100 ms, then 200 ms
    EXPECT_EQ(r.failures, 2);
    EXPECT_EQ(requests(), 3);
    EXPECT(memcmp(g_land.bytes, g_file, 3000) == 0);
    // A final answer is not tried again.
    script(1, (reply[]){{R_STATUS, 404, 0}});
    r = range_of(0, 3000, PATIENT_MS);
    EXPECT_EQ(ggfs_http_fetch(g_http, &r), GGFS_HTTP_REFUSED);
    EXPECT_EQ(requests(), 1);
    return 1;
}

static int test_fetch_asks_again_for_the_missing_parts_only(void)
{
    // 2.5 parts arrive, then the connection closes.
    script(1, (reply[]){{R_CUT, 0, 2 * PART + PART / 2}});
    ggfs_http_range r = range_of(1000, 5 * PART, PATIENT_MS);
    uint8_t *const *parts = r.parts;
    EXPECT_EQ(ggfs_http_fetch(g_http, &r), GGFS_HTTP_OK);
    EXPECT_EQ(r.failures, 1);
    EXPECT_EQ(requests(), 2);
    EXPECT_EQ(g_srv.first[1], 1000 + 2 * PART);
    EXPECT_EQ(g_srv.last[1], 1000 + 5 * PART - 1);
    EXPECT(memcmp(g_land.bytes, g_file + 1000, 5 * PART) == 0);
    EXPECT_EQ(g_land.n_done, 5); // each part handed over once, in order
    for (size_t i = 0; i < 5; i++)
        EXPECT_EQ(g_land.done[i], i);
    // The caller's range is given back.
    EXPECT_EQ(r.off, 1000);
    EXPECT_EQ(r.len, 5 * PART);
    EXPECT(r.parts == parts);
    EXPECT_EQ(r.parts_before, 0);
    return 1;
}

static int test_fetch_gives_up_at_the_deadline(void)
{
    reply fail[16];
    for (int i = 0; i < 16; i++)
        fail[i] = (reply){R_STATUS, 503, 0};
    script(16, fail);
    // Past the deadline the fetch ends, failing: a fetch that went on
    // would pass once the script is spent.
    ggfs_http_range r = range_of(0, 100, 400);
    EXPECT_EQ(ggfs_http_fetch(g_http, &r), GGFS_HTTP_RETRY);
    EXPECT(strstr(r.why, " attempt") && strstr(r.why, " over "));
    EXPECT(r.failures >= 1 && r.failures <= 4); // at 0, 100, 300 ms; 700 is past
    EXPECT(requests() <= (int)r.failures);
    return 1;
}

static int test_open_takes_a_range_past_the_end(void)
{
    script(0, NULL);
    ggfs_http_range r = range_of(SIZE - 300, 2 * PART, PATIENT_MS);
    r.open = true;
    r.etag = NULL;
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_OK);
    EXPECT_EQ(r.got, 300);
    EXPECT_EQ(r.total, SIZE);
    EXPECT(memcmp(g_land.bytes, g_file + SIZE - 300, 300) == 0);
    EXPECT_EQ(g_land.n_done, 1);
    // Not at open, the same answer is the wrong range.
    r = range_of(SIZE - 300, 2 * PART, PATIENT_MS);
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_RETRY);
    EXPECT(strstr(r.why, "asked for bytes 19700-21747, got 19700-19999"));
    return 1;
}

static int test_secret_goes_to_its_origin_alone(void)
{
    for (int k = 0; k < GGFS_SECRET_KIND_COUNT; k++) {
        EXPECT(ggfs_secret_rules[k].name && ggfs_secret_rules[k].carried_in && ggfs_secret_rules[k].belongs_to);
        ggfs_secret s;
        EXPECT(ggfs_secret_bind(&s, (ggfs_secret_kind)k, "https://hub.example/api/x", "tok", NULL));
        EXPECT_STR(s.origin, "https://hub.example:443");
        EXPECT(ggfs_secret_may_go(&s, "https://hub.example/api/y?z"));
        EXPECT(ggfs_secret_may_go(&s, "https://HUB.example:443/"));
        EXPECT(!ggfs_secret_may_go(&s, "http://hub.example/api/x"));      // never to plain http
        EXPECT(!ggfs_secret_may_go(&s, "https://hub.example:8443/api/x")); // another port
        EXPECT(!ggfs_secret_may_go(&s, "https://cdn.example/api/x"));     // another host
        EXPECT(!ggfs_secret_may_go(&s, "https://hub.example.evil/x"));
        EXPECT(!ggfs_secret_may_go(&s, "https://hub.example@evil.example/x"));
        EXPECT(!ggfs_secret_may_go(&s, "file:///etc/passwd"));
        EXPECT(!ggfs_secret_may_go(&s, "not a url"));
    }
    ggfs_secret none;
    EXPECT(!ggfs_secret_bind(&none, GGFS_SECRET_HUB_TOKEN, "ftp://hub.example/", "tok", NULL));
    EXPECT(!none.bearer && !ggfs_secret_may_go(&none, "ftp://hub.example/"));

    // Through the engine: a redirect to another origin (localhost is not
    // 127.0.0.1) is followed without the token; one to the same origin
    // keeps it.
    ggfs_secret tok;
    EXPECT(ggfs_secret_bind(&tok, GGFS_SECRET_HUB_TOKEN, g_url, "tok", NULL));
    for (int other = 0; other < 2; other++) {
        pthread_mutex_lock(&g_srv.lock);
        snprintf(g_srv.location, sizeof g_srv.location, "http://%s:%d/cdn/m.gguf", other ? "localhost" : "127.0.0.1",
                 g_srv.port);
        pthread_mutex_unlock(&g_srv.lock);
        script(1, (reply[]){{R_REDIRECT, 0, 0}});
        ggfs_http_range r = range_of(0, 100, PATIENT_MS);
        r.secret = &tok;
        EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_OK);
        EXPECT_EQ(requests(), 2);
        EXPECT(g_srv.bearer[0]);
        EXPECT(g_srv.bearer[1] == !other);
        EXPECT_STR(r.effective_url, g_srv.location);
        EXPECT(memcmp(g_land.bytes, g_file, 100) == 0);
    }
    // A redirect to a scheme other than http(s) is refused.
    pthread_mutex_lock(&g_srv.lock);
    snprintf(g_srv.location, sizeof g_srv.location, "file:///etc/passwd");
    pthread_mutex_unlock(&g_srv.lock);
    script(1, (reply[]){{R_REDIRECT, 0, 0}});
    ggfs_http_range r = range_of(0, 100, PATIENT_MS);
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_REFUSED);
    EXPECT(strstr(r.why, "not an http(s) URL"));
    // A redirect loop ends.
    pthread_mutex_lock(&g_srv.lock);
    snprintf(g_srv.location, sizeof g_srv.location, "%s", g_url);
    pthread_mutex_unlock(&g_srv.lock);
    reply loop[16];
    for (int i = 0; i < 16; i++)
        loop[i] = (reply){R_REDIRECT, 0, 0};
    script(16, loop);
    r = range_of(0, 100, PATIENT_MS);
    EXPECT_EQ(ggfs_http_get(g_http, &r), GGFS_HTTP_REFUSED);
    EXPECT(strstr(r.why, "redirect loop"));
    EXPECT_EQ(requests(), GGFS_HTTP_MAX_REDIRECTS + 1);
    return 1;
}

/* A token service's answer gives a token only of a bearer token's
 * characters: one holding CR LF would write headers of its own. */
static int test_a_registry_token_is_a_bearer_token(void)
{
    static const struct {
        const char *answer, *token;
    } cases[] = {
        {"{\"token\":\"abc.DEF-1_~+/==\"}", "abc.DEF-1_~+/=="},
        {"{\"access_token\":\"t0k\"}", "t0k"},
        {"{\"token\":5,\"access_token\":\"t1\"}", "t1"},
        {"{\"token\":\"a\\r\\nX-Evil: 1\"}", NULL},
        {"{\"token\":\"a b\"}", NULL},
        {"{\"token\":\"=abc\"}", NULL},
        {"{\"token\":\"a=b\"}", NULL},
        {"{\"token\":\"\"}", NULL},
        {"{\"token\":null}", NULL},
        {"[\"token\"]", NULL},
        {"{\"token\":\"abc\"", NULL}, // cut short
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = ggfs_registry_token_parse(cases[i].answer, strlen(cases[i].answer));
        if (cases[i].token ? !t || strcmp(t, cases[i].token) != 0 : t != NULL) {
            fprintf(stderr, "token case %zu: got %s\n", i, t ? t : "(none)");
            free(t);
            return 0;
        }
        free(t);
    }
    return 1;
}

static int test_a_total_over_2_62_is_refused(void)
{
    script(1, (reply[]){{R_HUGE_TOTAL, 0, 0}});
    ggfs_http_range r = range_of(0, 100, PATIENT_MS);
    r.open = true;
    r.etag = NULL;
    EXPECT_EQ(ggfs_http_fetch(g_http, &r), GGFS_HTTP_REFUSED);
    EXPECT(strstr(r.why, "over 2^62 bytes"));
    EXPECT_EQ(requests(), 1);
    return 1;
}

/* A 429 holds every request to its host for the wait it names, and a
 * wait past the deadline fails at once: on an engine of its own, so that
 * its day-long hold stays there. */
static int test_a_429_holds_the_host(void)
{
    ggfs_http *http = ggfs_http_new();
    EXPECT(http);
    script(1, (reply[]){{R_WAIT, 0, 1}});
    ggfs_http_range r = range_of(0, 100, PATIENT_MS);
    EXPECT_EQ(ggfs_http_get(http, &r), GGFS_HTTP_RETRY);
    EXPECT_EQ(r.wait_s, 1);
    r = range_of(0, 100, PATIENT_MS);
    EXPECT_EQ(ggfs_http_get(http, &r), GGFS_HTTP_OK);
    EXPECT_EQ(requests(), 2);
    EXPECT(g_srv.at_ns[1] - g_srv.at_ns[0] >= INT64_C(900000000));
    // Retry-After: 9999999999 reads as a day, and fails a fetch at once.
    script(1, (reply[]){{R_WAIT, 0, UINT64_C(9999999999)}});
    r = range_of(0, 100, 3000);
    r.waits_rate_limit = true;
    const int64_t start = ggfs_now_ns();
    EXPECT(ggfs_http_fetch(http, &r) != GGFS_HTTP_OK);
    EXPECT(ggfs_now_ns() - start < INT64_C(2000000000));
    EXPECT_EQ(r.wait_s, 86400);
    EXPECT(strstr(r.why, "past the deadline"));
    // The host stays held: no request goes out.
    r = range_of(0, 100, 3000);
    EXPECT(ggfs_http_fetch(http, &r) != GGFS_HTTP_OK);
    EXPECT(strstr(r.why, "asked for a pause"));
    EXPECT_EQ(requests(), 1);
    ggfs_http_free(http);
    return 1;
}

int main(void)
{
    // The server is on loopback: no proxy of the environment's in between.
    static const char *const proxies[] = {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof proxies / sizeof *proxies; i++)
        unsetenv(proxies[i]);
    for (size_t i = 0; i < SIZE; i++)
        g_file[i] = (uint8_t)(i * 7 + (i >> 9));
    g_http = ggfs_http_new();
    if (!g_http || !server_start())
        return 1;
    snprintf(g_url, sizeof g_url, "http://127.0.0.1:%d/m.gguf", g_srv.port);
    int ok = test_good_range_lands_part_by_part();
    ok &= test_changed_file_is_told();
    ok &= test_refusals_and_retries_by_status();
    ok &= test_fetch_retries_after_a_pause();
    ok &= test_fetch_asks_again_for_the_missing_parts_only();
    ok &= test_fetch_gives_up_at_the_deadline();
    ok &= test_open_takes_a_range_past_the_end();
    ok &= test_secret_goes_to_its_origin_alone();
    ok &= test_a_total_over_2_62_is_refused();
    ok &= test_a_registry_token_is_a_bearer_token();
    ok &= test_a_429_holds_the_host();
    server_stop();
    ggfs_http_free(g_http);
    printf("http: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
