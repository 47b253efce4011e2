/*
 * ListObjectsV2 (s3_list.h).
 */
#include <errno.h>
#include <expat.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/s3_error.h"
#include "source/response_headers.h"
#include "source/s3_list.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/page_guard.h"
#include "util/store_name.h"
#include "util/text.h"

#define TEXT_MAX 4096      // a key is at most 1,024 bytes, 3,072 encoded
#define TOKEN_MAX 2048
#define URL_MAX 4096

/* ==== One page ==== */

typedef enum field { F_NONE, F_KEY, F_SIZE, F_ETAG, F_PREFIX, F_TRUNCATED, F_TOKEN, F_ENCODING } field;

typedef struct page {
    const ggfs_s3_target *t;
    const char *prefix;
    size_t cap;
    ggfs_s3_listing *out;
    int depth;
    bool in_contents, in_common;
    field f;
    char text[TEXT_MAX];
    size_t text_len;
    bool text_cut;
    char key[TEXT_MAX];    // of the <Contents> being read
    uint64_t size;
    char etag[GGFS_HTTP_VALIDATOR_MAX];
    bool truncated, url_encoded;
    char token[TOKEN_MAX];
    const char *failed;    // why the page cannot be read, or NULL
    ggfs_page_guard guard; // the listing's pages and names (util/page_guard.h)
} page;

/* Decodes a value S3 sent with encoding-type=url in place, as S3 encodes
 * it (and botocore decodes it, with unquote_plus): %XX is the byte XX, '+'
 * a space (a plus is %2B). A NUL it makes is kept. Returns the length, or
 * SIZE_MAX for a bad escape. */
static size_t url_decode(char *s)
{
    size_t w = 0;
    for (size_t r = 0; s[r]; r++) {
        if (s[r] == '+') {
            s[w++] = ' ';
            continue;
        }
        if (s[r] != '%') {
            s[w++] = s[r];
            continue;
        }
        const int hi = ggfs_hex_value(s[r + 1]), lo = hi < 0 ? -1 : ggfs_hex_value(s[r + 2]);
        if (hi < 0 || lo < 0)
            return SIZE_MAX;
        s[w++] = (char)(hi << 4 | lo);
        r += 2;
    }
    s[w] = '\0';
    return w;
}

/* The name for a log line: bytes that are not printable ASCII as '?'. */
static void printable(const char *s, size_t n, char *out, size_t cap)
{
    size_t i = 0;
    for (; i < n && i + 1 < cap; i++)
        out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    out[i] = '\0';
}

static void leave_out(page *p, const char *key, size_t n, const char *why)
{
    char shown[256];
    printable(key, n, shown, sizeof shown);
    ggfs_log(GGFS_LOG_WARNING, "gguf-fs: s3://%s: key '%s' left out of the listing: %s\n", p->t->bucket, shown,
             why);
    p->out->left_out++;
}

/* Why a name (a key after the prefix, or a prefix's) cannot be one in the
 * tree, or NULL when it can: the stores' one check (util/store_name.h). */
static const char *unfit(const char *name, size_t n, bool is_prefix)
{
    if (!is_prefix && n > 0 && name[n - 1] == '/' && !memchr(name, '\0', n))
        return "it ends in '/'";
    if (n == 0)
        return "its name is empty";
    return ggfs_store_path_unfit(name, n);
}

static bool room(page *p)
{
    if (p->out->n_objects + p->out->n_prefixes < p->cap)
        return true;
    if (!p->out->capped)
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: s3://%s/%s: more than %zu entries: listing the first %zu only\n",
                 p->t->bucket, p->prefix, p->cap, p->cap);
    p->out->capped = true;
    return false;
}

/* Takes a key or a common prefix, decoded, in S3's full form. */
static void take(page *p, char *s, bool is_prefix)
{
    size_t n = strlen(s);
    if (p->url_encoded && (n = url_decode(s)) == SIZE_MAX) {
        leave_out(p, s, strlen(s), "S3 sent a bad %-escape");
        return;
    }
    const size_t plen = strlen(p->prefix);
    if (n < plen || memcmp(s, p->prefix, plen) != 0) {
        leave_out(p, s, n, "it is not under the prefix asked for");
        return;
    }
    char *name = s + plen;
    size_t len = n - plen;
    if (is_prefix && len > 0 && name[len - 1] == '/')
        len--;
    const char *why = unfit(name, len, is_prefix);
    const char *slash = why ? NULL : memchr(name, '/', len);
    if (slash) {
        // Past the prefix, S3 (asked with delimiter '/') lists no '/' but
        // a prefix's last: a server that ignores the delimiter lists
        // a/b.gguf as a key. The part up to the first '/' is the common
        // prefix S3 would have listed, a directory (listed once).
        len = (size_t)(slash - name);
        is_prefix = true;
    }
    if (why) {
        // The prefix's own marker ("dir/" under "dir/") is not news.
        if (!(len == 0 && !is_prefix))
            leave_out(p, s, n, why);
        else
            p->out->left_out++;
        return;
    }
    // Each name once: a page repeated, or a key listed twice, adds nothing.
    char tagged[TEXT_MAX + 1];
    tagged[0] = is_prefix ? 'p' : 'k';
    memcpy(tagged + 1, name, len);
    switch (ggfs_page_guard_entry(&p->guard, tagged, len + 1)) {
    case GGFS_PAGE_SEEN:
        return;
    case GGFS_PAGE_FULL: // the guard's cap, whatever the caller's
        if (!p->out->capped)
            ggfs_log(GGFS_LOG_WARNING, "gguf-fs: s3://%s/%s: more than %u entries: listing the first %u only\n",
                     p->t->bucket, p->prefix, GGFS_PAGE_ENTRIES_MAX, GGFS_PAGE_ENTRIES_MAX);
        p->out->capped = true;
        return;
    case GGFS_PAGE_NOMEM:
        p->failed = "out of memory";
        return;
    case GGFS_PAGE_NEW:
        break;
    }
    if (!room(p))
        return;
    char *copy = malloc(len + 1);
    if (!copy) {
        p->failed = "out of memory";
        return;
    }
    memcpy(copy, name, len);
    copy[len] = '\0';
    ggfs_s3_listing *l = p->out;
    if (is_prefix) {
        char **grown = realloc(l->prefixes, (l->n_prefixes + 1) * sizeof *grown);
        if (!grown) {
            free(copy);
            p->failed = "out of memory";
            return;
        }
        l->prefixes = grown;
        l->prefixes[l->n_prefixes++] = copy;
    } else {
        ggfs_s3_object *grown = realloc(l->objects, (l->n_objects + 1) * sizeof *grown);
        if (!grown) {
            free(copy);
            p->failed = "out of memory";
            return;
        }
        l->objects = grown;
        ggfs_s3_object *o = &l->objects[l->n_objects++];
        o->name = copy;
        o->size = p->size;
        memcpy(o->etag, p->etag, sizeof o->etag);
    }
}

static void on_start(void *user, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    page *p = user;
    p->depth++;
    p->f = F_NONE;
    p->text_len = 0;
    p->text_cut = false;
    if (p->depth == 2) {
        p->in_contents = strcmp(name, "Contents") == 0;
        p->in_common = strcmp(name, "CommonPrefixes") == 0;
        if (p->in_contents) {
            p->key[0] = p->etag[0] = '\0';
            p->size = 0;
        }
        p->f = strcmp(name, "IsTruncated") == 0            ? F_TRUNCATED
               : strcmp(name, "NextContinuationToken") == 0 ? F_TOKEN
               : strcmp(name, "EncodingType") == 0          ? F_ENCODING
                                                            : F_NONE;
    } else if (p->depth == 3 && p->in_contents) {
        p->f = strcmp(name, "Key") == 0 ? F_KEY : strcmp(name, "Size") == 0 ? F_SIZE
             : strcmp(name, "ETag") == 0 ? F_ETAG : F_NONE;
    } else if (p->depth == 3 && p->in_common) {
        p->f = strcmp(name, "Prefix") == 0 ? F_PREFIX : F_NONE;
    }
}

static void copy_text(page *p, char *dst, size_t cap)
{
    if (p->text_cut || p->text_len >= cap) {
        p->failed = "S3 sent a value longer than S3 allows";
        return;
    }
    memcpy(dst, p->text, p->text_len + 1);
}

static void on_end(void *user, const XML_Char *name)
{
    page *p = user;
    p->text[p->text_len] = '\0';
    switch (p->f) {
    case F_KEY:
        copy_text(p, p->key, sizeof p->key);
        break;
    case F_ETAG:
        copy_text(p, p->etag, sizeof p->etag);
        break;
    case F_SIZE: {
        char *end;
        errno = 0;
        p->size = strtoull(p->text, &end, 10);
        if (p->text_len == 0 || *end || p->text[0] < '0' || p->text[0] > '9')
            p->failed = "S3 sent a <Size> that is no number";
        else if (errno == ERANGE || p->size > GGFS_REMOTE_SIZE_MAX)
            p->failed = "S3 sent a <Size> over 2^62 bytes";
        break;
    }
    case F_TRUNCATED:
        p->truncated = strcmp(p->text, "true") == 0;
        break;
    case F_TOKEN:
        copy_text(p, p->token, sizeof p->token);
        break;
    case F_ENCODING:
        p->url_encoded = strcmp(p->text, "url") == 0;
        break;
    case F_PREFIX:
        if (!p->failed)
            take(p, p->text, true);
        break;
    case F_NONE:
        break;
    }
    if (p->depth == 2 && p->in_contents && strcmp(name, "Contents") == 0 && !p->failed)
        take(p, p->key, false);
    if (p->depth == 2)
        p->in_contents = p->in_common = false;
    p->f = F_NONE;
    p->depth--;
}

static void on_text(void *user, const XML_Char *s, int len)
{
    page *p = user;
    if (p->f == F_NONE || len <= 0)
        return;
    if ((size_t)len >= sizeof p->text - p->text_len) {
        p->text_cut = true;
        return;
    }
    memcpy(p->text + p->text_len, s, (size_t)len);
    p->text_len += (size_t)len;
}

/* Reads one page's XML into p (keys and prefixes into p->out). */
static bool read_page(page *p, const char *xml, size_t len, char *why, size_t why_size)
{
    XML_Parser x = XML_ParserCreate("UTF-8");
    if (!x) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    XML_SetUserData(x, p);
    XML_SetElementHandler(x, on_start, on_end);
    XML_SetCharacterDataHandler(x, on_text);
    p->truncated = false;
    p->token[0] = '\0';
    const bool parsed = len <= INT32_MAX && XML_Parse(x, xml, (int)len, 1) == XML_STATUS_OK;
    if (!parsed)
        snprintf(why, why_size, "bucket '%s': the listing is not well-formed XML: byte %ld: %s", p->t->bucket,
                 (long)XML_GetCurrentByteIndex(x), XML_ErrorString(XML_GetErrorCode(x)));
    XML_ParserFree(x);
    if (parsed && p->failed)
        snprintf(why, why_size, "bucket '%s': %s", p->t->bucket, p->failed);
    return parsed && !p->failed;
}

/* ==== The listing ==== */

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A key and a common prefix of the same name: the directory wins (as in
 * mountpoint-s3), and the key is left out with a log line. */
static bool directories_win(page *p)
{
    ggfs_s3_listing *l = p->out;
    if (l->n_prefixes == 0 || l->n_objects == 0)
        return true;
    char **sorted = malloc(l->n_prefixes * sizeof *sorted);
    if (!sorted)
        return false;
    memcpy(sorted, l->prefixes, l->n_prefixes * sizeof *sorted);
    qsort(sorted, l->n_prefixes, sizeof *sorted, by_string);
    size_t kept = 0;
    for (size_t i = 0; i < l->n_objects; i++) {
        ggfs_s3_object *o = &l->objects[i];
        if (bsearch(&o->name, sorted, l->n_prefixes, sizeof *sorted, by_string)) {
            char key[TEXT_MAX];
            snprintf(key, sizeof key, "%s%s", p->prefix, o->name);
            leave_out(p, key, strlen(key), "a prefix of the same name is listed (the directory wins)");
            free(o->name);
        } else {
            l->objects[kept++] = *o;
        }
    }
    l->n_objects = kept;
    free(sorted);
    return true;
}

static char *page_url(const ggfs_s3_target *t, const char *prefix, unsigned page_keys, const char *token)
{
    char keys[16];
    snprintf(keys, sizeof keys, "%u", page_keys);
    const ggfs_s3_param params[] = {
        {"list-type", "2"},
        {"delimiter", "/"},
        {"encoding-type", "url"},
        {"prefix", prefix[0] ? prefix : NULL},
        {"max-keys", page_keys ? keys : NULL},
        {"continuation-token", token[0] ? token : NULL},
    };
    return ggfs_s3_url(&t->endpoint, t->bucket, "", params, sizeof params / sizeof params[0], URL_MAX);
}

bool ggfs_s3_list_from(ggfs_s3_page_get *get, void *get_ctx, const ggfs_s3_target *t, size_t cap,
                       unsigned page_keys, ggfs_s3_listing *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    char prefix[TEXT_MAX];
    const size_t n = strlen(t->key);
    if (n + 2 > sizeof prefix) {
        snprintf(why, why_size, "the prefix is longer than %zu bytes", sizeof prefix - 2);
        return false;
    }
    snprintf(prefix, sizeof prefix, "%s%s", t->key, n && t->key[n - 1] != '/' ? "/" : "");
    page *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    *p = (page){.t = t, .prefix = prefix, .cap = cap, .out = out};
    ggfs_page_guard_init(&p->guard, "continuation token");
    char what[GGFS_S3_BUCKET_MAX + 16];
    snprintf(what, sizeof what, "bucket '%s'", t->bucket);
    bool ok = true;
    do {
        // The first page's cursor is "", each next one its token: a token
        // seen again, or pages adding nothing, are a loop.
        if (!ggfs_page_guard_page(&p->guard, p->token, strlen(p->token), what, why, why_size)) {
            ok = false;
            break;
        }
        char *url = page_url(t, prefix, page_keys, p->token);
        if (!url) {
            snprintf(why, why_size, "bucket '%s': the listing's URL is longer than %d bytes", t->bucket, URL_MAX);
            ok = false;
            break;
        }
        char *body = NULL;
        size_t len = 0;
        ok = get(get_ctx, url, &body, &len, why, why_size);
        free(url);
        if (ok) {
            out->pages++;
            ok = read_page(p, body, len, why, why_size);
        }
        free(body);
        if (ok && p->truncated && !p->token[0]) {
            snprintf(why, why_size, "bucket '%s': a truncated page without a continuation token", t->bucket);
            ok = false;
        }
        if (ok && p->truncated && !out->capped && !ggfs_page_guard_page_done(&p->guard, what, why, why_size))
            ok = false;
    } while (ok && p->truncated && !out->capped);
    if (ok && !directories_win(p)) {
        snprintf(why, why_size, "out of memory");
        ok = false;
    }
    ggfs_page_guard_destroy(&p->guard);
    free(p);
    if (!ok)
        ggfs_s3_listing_free(out);
    return ok;
}

typedef struct http_get {
    ggfs_remote *remote;
    const ggfs_s3_target *t;
} http_get;

/* A page through the mount's HTTP engine, signed, retried until timeout_s. */
static bool get_page(void *ctx, const char *url, char **body, size_t *len, char *why, size_t why_size)
{
    const http_get *g = ctx;
    ggfs_http_range r = {
        .url = url, .secret = &g->t->secret, .whole = true,
        .body_max = GGFS_S3_LIST_BODY_MAX, .keep_header = "x-amz-bucket-region",
        .deadline_ns = ggfs_now_ns() + (int64_t)g->remote->opts.timeout_s * 1000000000,
    };
    const ggfs_http_outcome o = ggfs_http_fetch(g->remote->http, &r);
    if (o != GGFS_HTTP_OK) {
        if (r.status >= 300)
            ggfs_s3_error_explain(g->t->bucket, r.status, r.body, r.body_len, r.header_got, why, why_size);
        else
            snprintf(why, why_size, "bucket '%s': %s", g->t->bucket, r.why);
        free(r.body);
        return false;
    }
    *body = r.body;
    *len = r.body_len;
    return true;
}

bool ggfs_s3_list(ggfs_remote *remote, const ggfs_s3_target *t, size_t cap, unsigned page_keys,
                  ggfs_s3_listing *out, char *why, size_t why_size)
{
    http_get g = {remote, t};
    return ggfs_s3_list_from(get_page, &g, t, cap, page_keys, out, why, why_size);
}

void ggfs_s3_listing_free(ggfs_s3_listing *l)
{
    for (size_t i = 0; i < l->n_objects; i++)
        free(l->objects[i].name);
    for (size_t i = 0; i < l->n_prefixes; i++)
        free(l->prefixes[i]);
    free(l->objects);
    free(l->prefixes);
    memset(l, 0, sizeof *l);
}
