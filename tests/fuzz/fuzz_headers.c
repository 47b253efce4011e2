/*
 * The response headers a server writes (fs/source/response_headers.h):
 * the input is a header block, one header a line; each line, copied to a
 * buffer of its exact size (so that a read past it is caught), goes
 * through every parser, and what they return is checked against their
 * contracts: a Content-Range in order and under the size limit, a wait
 * within its bounds, a Link's next URL and a Bearer challenge and its
 * params NUL-terminated inside their buffers, a published digest of its
 * kind's length and a size under the limit. The whole block also goes
 * through the collectors of what a Hub's and an S3 object's answers
 * publish, as answers of the name's origin and of another.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/response_headers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_string(const char *s, size_t cap)
{
    if (memchr(s, '\0', cap) == NULL)
        abort();
}

/* A published record as its contract has it: a known kind, a where
 * NUL-terminated in its buffer, a size under the limit. */
static void check_published(const ggfs_published *p)
{
    if (p->kind != GGFS_PUBLISHED_NONE && p->kind != GGFS_PUBLISHED_SHA256 && p->kind != GGFS_PUBLISHED_MD5)
        abort();
    check_string(p->where, sizeof p->where);
    if (p->size > GGFS_REMOTE_SIZE_MAX)
        abort();
}

/* Each parser of a published value, on the line's value whatever the
 * header's name. */
static void published_values(const char *line, size_t len)
{
    const char *colon = memchr(line, ':', len);
    if (!colon)
        return;
    const char *value;
    size_t vlen;
    char name[64];
    const size_t nlen = (size_t)(colon - line);
    if (nlen >= sizeof name)
        return;
    memcpy(name, line, nlen);
    name[nlen] = '\0';
    if (!ggfs_header_match(line, len, name, &value, &vlen))
        return;
    uint64_t size = 0;
    if (ggfs_size_header_parse(value, vlen, &size) && size > GGFS_REMOTE_SIZE_MAX)
        abort();
    bool (*const parsers[])(const char *, size_t, ggfs_published *) = {
        ggfs_linked_etag_parse, ggfs_s3_checksum_parse, ggfs_s3_etag_md5};
    for (size_t i = 0; i < sizeof parsers / sizeof parsers[0]; i++) {
        ggfs_published p;
        memset(&p, 0, sizeof p);
        if (parsers[i](value, vlen, &p) && p.kind == GGFS_PUBLISHED_NONE)
            abort();
        check_published(&p);
    }
}

static void one_line(const char *line, size_t len)
{
    const char *value;
    size_t vlen;
    published_values(line, len);
    if (ggfs_header_match(line, len, "content-range", &value, &vlen)) {
        if (value < line || value + vlen > line + len)
            abort();
        uint64_t first, last, total;
        if (ggfs_content_range_parse(value, vlen, &first, &last, &total) == GGFS_CONTENT_RANGE_OK &&
            (first > last || last >= total || total > GGFS_REMOTE_SIZE_MAX))
            abort();
        char copy[32];
        ggfs_header_copy(value, vlen, copy, sizeof copy);
        check_string(copy, sizeof copy);
    }
    long wait_s = -7;
    if (ggfs_wait_header_parse(line, len, &wait_s) && wait_s != -7 && (wait_s < 0 || wait_s > GGFS_WAIT_MAX_S))
        abort();
    if (ggfs_header_match(line, len, "link", &value, &vlen)) {
        char next[64], big[4096];
        if (ggfs_link_next(value, vlen, next, sizeof next))
            check_string(next, sizeof next);
        if (ggfs_link_next(value, vlen, big, sizeof big))
            check_string(big, sizeof big);
    }
    char challenge[1024];
    if (ggfs_bearer_challenge(line, len, challenge, sizeof challenge)) {
        check_string(challenge, sizeof challenge);
        static const char *const keys[] = {"realm", "service", "scope", "error", ""};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char out[256], tiny[4];
            if (ggfs_challenge_param(challenge, keys[i], out, sizeof out))
                check_string(out, sizeof out);
            if (ggfs_challenge_param(challenge, keys[i], tiny, sizeof tiny))
                check_string(tiny, sizeof tiny);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *end = text + size;
    static const char name_url[] = "https://hub.test/org/repo/resolve/main/m.gguf", cdn_url[] = "https://cdn.test/x";
    ggfs_published_headers hub, s3;
    ggfs_published_headers_init(&hub, name_url, true, false);
    ggfs_published_headers_init(&s3, name_url, false, true);
    bool redirected = false;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const size_t len = (size_t)((nl ? nl + 1 : end) - text);
        char *line = malloc(len ? len : 1);
        if (!line)
            return 0;
        memcpy(line, text, len);
        one_line(line, len);
        // Every other answer comes from another origin, as where a
        // redirect led.
        const char *url = redirected ? cdn_url : name_url;
        if (len >= 5 && memcmp(line, "HTTP/", 5) == 0 && text != (const char *)data)
            redirected = !redirected;
        ggfs_published_headers_line(&hub, url, line, len);
        ggfs_published_headers_line(&s3, url, line, len);
        free(line);
        text += len;
    }
    ggfs_published p;
    ggfs_published_headers_result(&hub, &p);
    check_published(&p);
    ggfs_published_headers_result(&s3, &p);
    check_published(&p);
    if (p.size != 0) // S3's answers say no size
        abort();
    return 0;
}
