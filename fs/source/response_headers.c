/*
 * Response headers from a server's bytes (response_headers.h). Nothing
 * here trusts a length or a number: every scan stops at the value's end,
 * and every number saturates instead of wrapping.
 */
#define _DEFAULT_SOURCE // strncasecmp
#include <string.h>
#include <strings.h>

#include "source/response_headers.h"

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool ggfs_header_match(const char *line, size_t len, const char *name, const char **value, size_t *vlen)
{
    const size_t n = strlen(name);
    if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
        return false;
    const char *v = line + n + 1, *end = line + len;
    while (v < end && blank(*v))
        v++;
    while (end > v && blank(end[-1]))
        end--;
    *value = v;
    *vlen = (size_t)(end - v);
    return true;
}

void ggfs_header_copy(const char *value, size_t vlen, char *out, size_t cap)
{
    if (vlen >= cap)
        vlen = cap - 1;
    memcpy(out, value, vlen);
    out[vlen] = '\0';
}

/* Decimal digits at *p (before end) into *out, saturating at UINT64_MAX:
 * false when there is no digit. *over tells whether it saturated. */
static bool decimal(const char **p, const char *end, uint64_t *out, bool *over)
{
    const char *s = *p;
    uint64_t v = 0;
    *over = false;
    while (s < end && *s >= '0' && *s <= '9') {
        const unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            *over = true;
        else
            v = v * 10 + d;
        s++;
    }
    if (s == *p)
        return false;
    *p = s;
    *out = *over ? UINT64_MAX : v;
    return true;
}

ggfs_content_range_verdict ggfs_content_range_parse(const char *value, size_t vlen, uint64_t *first,
                                                    uint64_t *last, uint64_t *total)
{
    const char *p = value, *end = value + vlen;
    bool over_first, over_last, over_total;
    if (vlen < 6 || strncasecmp(p, "bytes ", 6) != 0)
        return GGFS_CONTENT_RANGE_BAD;
    p += 6;
    if (!decimal(&p, end, first, &over_first) || p == end || *p++ != '-' ||
        !decimal(&p, end, last, &over_last) || p == end || *p++ != '/' ||
        !decimal(&p, end, total, &over_total) || p != end)
        return GGFS_CONTENT_RANGE_BAD;
    if (over_first || over_last || *first > *last)
        return GGFS_CONTENT_RANGE_BAD;
    if (over_total || *total > GGFS_REMOTE_SIZE_MAX)
        return GGFS_CONTENT_RANGE_TOO_BIG;
    return *last < *total ? GGFS_CONTENT_RANGE_OK : GGFS_CONTENT_RANGE_BAD;
}

/* Seconds as a server writes them, at most GGFS_WAIT_MAX_S; false when
 * the value does not start with a digit. */
static bool seconds(const char *p, const char *end, long *out)
{
    uint64_t v;
    bool over;
    if (!decimal(&p, end, &v, &over))
        return false;
    *out = over || v > (uint64_t)GGFS_WAIT_MAX_S ? GGFS_WAIT_MAX_S : (long)v;
    return true;
}

bool ggfs_wait_header_parse(const char *line, size_t len, long *wait_s)
{
    const char *v;
    size_t n;
    if (ggfs_header_match(line, len, "ratelimit", &v, &n)) {
        for (size_t i = 0; i + 1 < n; i++)
            if ((i == 0 || v[i - 1] == ';' || v[i - 1] == ' ' || v[i - 1] == ',') && v[i] == 't' &&
                v[i + 1] == '=') {
                long s;
                if (seconds(v + i + 2, v + n, &s))
                    *wait_s = s;
                break;
            }
        return true;
    }
    if (ggfs_header_match(line, len, "retry-after", &v, &n)) {
        long s;
        const char *p = v;
        uint64_t ignored;
        bool over;
        // Seconds alone: an HTTP date is not read (and never a wait).
        if (*wait_s < 0 && seconds(v, v + n, &s) && decimal(&p, v + n, &ignored, &over) && p == v + n)
            *wait_s = s;
        return true;
    }
    return false;
}

bool ggfs_link_next(const char *v, size_t len, char *next, size_t cap)
{
    const char *end = v + len;
    while (v < end) {
        const char *lt = memchr(v, '<', (size_t)(end - v));
        if (!lt)
            return false;
        const char *gt = memchr(lt, '>', (size_t)(end - lt));
        if (!gt)
            return false;
        const char *comma = memchr(gt, ',', (size_t)(end - gt));
        const char *stop = comma ? comma : end;
        bool is_next = false;
        for (const char *p = gt; p < stop && !is_next; p++)
            is_next = ((size_t)(stop - p) >= 10 && strncmp(p, "rel=\"next\"", 10) == 0) ||
                      ((size_t)(stop - p) >= 8 && strncmp(p, "rel=next", 8) == 0);
        if (is_next) {
            const size_t ulen = (size_t)(gt - lt - 1);
            if (ulen >= cap)
                return false;
            memcpy(next, lt + 1, ulen);
            next[ulen] = '\0';
            return true;
        }
        v = stop + 1;
    }
    return false;
}

bool ggfs_size_header_parse(const char *value, size_t vlen, uint64_t *out)
{
    const char *p = value;
    uint64_t v;
    bool over;
    if (!decimal(&p, value + vlen, &v, &over) || p != value + vlen || over || v > GGFS_REMOTE_SIZE_MAX)
        return false;
    *out = v;
    return true;
}

/* value without one pair of surrounding double quotes, and a weak
 * validator's W/ before them. */
static void unquote(const char **value, size_t *vlen)
{
    if (*vlen >= 2 && strncmp(*value, "W/", 2) == 0) {
        *value += 2;
        *vlen -= 2;
    }
    if (*vlen >= 2 && (*value)[0] == '"' && (*value)[*vlen - 1] == '"') {
        *value += 1;
        *vlen -= 2;
    }
}

bool ggfs_linked_etag_parse(const char *value, size_t vlen, ggfs_published *p)
{
    unquote(&value, &vlen);
    return ggfs_published_set_hex(p, GGFS_PUBLISHED_SHA256, value, vlen, "X-Linked-Etag");
}

bool ggfs_s3_checksum_parse(const char *value, size_t vlen, ggfs_published *p)
{
    return ggfs_published_set_base64(p, GGFS_PUBLISHED_SHA256, value, vlen, "x-amz-checksum-sha256");
}

bool ggfs_s3_etag_md5(const char *etag, size_t len, ggfs_published *p)
{
    // Quoted, as S3 always sends it: a weak or bare one is some other
    // server's.
    if (len != 34 || etag[0] != '"' || etag[33] != '"')
        return false;
    return ggfs_published_set_hex(p, GGFS_PUBLISHED_MD5, etag + 1, 32, "ETag");
}

void ggfs_published_headers_init(ggfs_published_headers *h, const char *url, bool hub, bool s3)
{
    memset(h, 0, sizeof *h);
    h->hub = hub;
    h->s3 = s3;
    if ((hub || s3) && !ggfs_origin_of(url, h->origin, sizeof h->origin))
        h->origin[0] = '\0';
}

/* Whether v (n bytes) is text, ignoring case. */
static bool value_is(const char *v, size_t n, const char *text)
{
    return n == strlen(text) && strncasecmp(v, text, n) == 0;
}

void ggfs_published_headers_line(ggfs_published_headers *h, const char *url, const char *line, size_t len)
{
    char origin[GGFS_ORIGIN_MAX];
    if (!h->origin[0] || !url || !ggfs_origin_of(url, origin, sizeof origin) || strcmp(origin, h->origin) != 0)
        return;
    const char *v;
    size_t n;
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        // A new answer (after a redirect, a retry, a 100): an object's
        // headers are its last answer's.
        memset(&h->checksum, 0, sizeof h->checksum);
        memset(&h->md5, 0, sizeof h->md5);
        h->composite = h->etag_not_md5 = false;
        return;
    }
    if (h->hub) {
        uint64_t size;
        if (ggfs_header_match(line, len, "x-linked-etag", &v, &n))
            ggfs_linked_etag_parse(v, n, &h->linked);
        else if (ggfs_header_match(line, len, "x-linked-size", &v, &n) && ggfs_size_header_parse(v, n, &size))
            h->linked.size = size;
    }
    if (!h->s3)
        return;
    if (ggfs_header_match(line, len, "x-amz-checksum-sha256", &v, &n))
        ggfs_s3_checksum_parse(v, n, &h->checksum);
    else if (ggfs_header_match(line, len, "x-amz-checksum-type", &v, &n))
        h->composite = value_is(v, n, "COMPOSITE");
    else if (ggfs_header_match(line, len, "etag", &v, &n))
        ggfs_s3_etag_md5(v, n, &h->md5);
    else if (ggfs_header_match(line, len, "x-amz-server-side-encryption", &v, &n))
        h->etag_not_md5 |= n >= 7 && strncasecmp(v, "aws:kms", 7) == 0;
    else if (ggfs_header_match(line, len, "x-amz-server-side-encryption-customer-algorithm", &v, &n))
        h->etag_not_md5 = true;
}

void ggfs_published_headers_result(const ggfs_published_headers *h, ggfs_published *out)
{
    memset(out, 0, sizeof *out);
    if (h->hub)
        *out = h->linked;
    else if (h->s3 && h->checksum.kind != GGFS_PUBLISHED_NONE && !h->composite)
        *out = h->checksum;
    else if (h->s3 && h->md5.kind != GGFS_PUBLISHED_NONE && !h->etag_not_md5)
        *out = h->md5;
}

bool ggfs_bearer_challenge(const char *line, size_t len, char *out, size_t cap)
{
    const char *v;
    size_t n;
    if (!ggfs_header_match(line, len, "www-authenticate", &v, &n))
        return false;
    if (n <= 7 || strncasecmp(v, "Bearer ", 7) != 0 || n >= cap || memchr(v, '\0', n))
        return false;
    memcpy(out, v, n);
    out[n] = '\0';
    return true;
}

bool ggfs_challenge_param(const char *challenge, const char *key, char *out, size_t cap)
{
    const char *p = challenge;
    if (strncasecmp(p, "Bearer ", 7) == 0)
        p += 7;
    const size_t klen = strlen(key);
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *k = p;
        while (*p && *p != '=' && *p != ',')
            p++;
        if (*p != '=')
            continue;
        const bool match = (size_t)(p - k) == klen && strncasecmp(k, key, klen) == 0;
        p++;
        size_t o = 0;
        const bool quoted = *p == '"';
        p += quoted;
        while (*p && (quoted ? *p != '"' : *p != ',')) {
            if (quoted && *p == '\\' && p[1])
                p++;
            if (match && o + 1 < cap)
                out[o++] = *p;
            else if (match)
                return false;
            p++;
        }
        p += quoted && *p == '"';
        if (match) {
            out[o] = '\0';
            return true;
        }
    }
    return false;
}
