/*
 * Parsing `ollama://` names into the registry's URLs (ollama_name.h).
 */
#include <stdio.h>
#include <string.h>

#include "source/ollama_name.h"

#define SCHEME_HTTPS "ollama://"
#define SCHEME_HTTP "ollama+http://"

bool ggfs_ollama_is_name(const char *s)
{
    return strncmp(s, SCHEME_HTTPS, strlen(SCHEME_HTTPS)) == 0 || strncmp(s, SCHEME_HTTP, strlen(SCHEME_HTTP)) == 0;
}

/* Copies part [p, p+len) into out after checking it: false, with why,
 * when it is empty, too long, `.` or `..`, or has another character than
 * letters, digits, `.`, `_`, `-` (and `:` in a host). */
static bool take_part(const char *what, const char *p, size_t len, bool host, char *out, char *why,
                      size_t why_size)
{
    if (len == 0 || len > GGFS_OLLAMA_PART_MAX) {
        snprintf(why, why_size, "the %s is %s", what, len ? "longer than 128 bytes" : "empty");
        return false;
    }
    if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
        snprintf(why, why_size, "the %s is \"%.*s\"", what, (int)len, p);
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        const char c = p[i];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '_' || c == '-' || (host && c == ':');
        if (!ok) {
            snprintf(why, why_size, "the %s has the byte 0x%02x at %zu: only letters, digits, '.', '_' and '-'", what,
                     (unsigned char)c, i);
            return false;
        }
    }
    memcpy(out, p, len);
    out[len] = '\0';
    return true;
}

bool ggfs_ollama_name_parse(const char *s, ggfs_ollama_name *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    const char *rest;
    if (strncmp(s, SCHEME_HTTP, strlen(SCHEME_HTTP)) == 0) {
        out->plain_http = true;
        rest = s + strlen(SCHEME_HTTP);
    } else if (strncmp(s, SCHEME_HTTPS, strlen(SCHEME_HTTPS)) == 0) {
        rest = s + strlen(SCHEME_HTTPS);
    } else {
        snprintf(why, why_size, "not an ollama:// name");
        return false;
    }
    // Up to three parts; the tag is after the last part's colon.
    const char *parts[3];
    size_t lens[3], n = 0;
    for (const char *p = rest;; p++) {
        const char *slash = strchr(p, '/');
        if (n == 3) {
            snprintf(why, why_size, "more than HOST/NAMESPACE/NAME");
            return false;
        }
        parts[n] = p;
        lens[n++] = slash ? (size_t)(slash - p) : strlen(p);
        if (!slash)
            break;
        p = slash;
    }
    const char *last = parts[n - 1], *colon = memchr(last, ':', lens[n - 1]);
    const size_t name_len = colon ? (size_t)(colon - last) : lens[n - 1];
    if (colon ? !take_part("tag", colon + 1, lens[n - 1] - name_len - 1, false, out->tag, why, why_size)
              : !take_part("tag", GGFS_OLLAMA_DEFAULT_TAG, strlen(GGFS_OLLAMA_DEFAULT_TAG), false, out->tag, why,
                           why_size))
        return false;
    if (!take_part("name", last, name_len, false, out->name, why, why_size))
        return false;
    // Two parts: HOST/NAME when the first looks like a host, else NAMESPACE/NAME.
    const bool first_is_host = n == 3 || (n == 2 && (memchr(parts[0], '.', lens[0]) || memchr(parts[0], ':', lens[0]) ||
                                                     (lens[0] == 9 && memcmp(parts[0], "localhost", 9) == 0)));
    const char *host = first_is_host ? parts[0] : GGFS_OLLAMA_DEFAULT_HOST;
    const size_t host_len = first_is_host ? lens[0] : strlen(GGFS_OLLAMA_DEFAULT_HOST);
    const char *space = n == 3 ? parts[1] : n == 2 && !first_is_host ? parts[0] : GGFS_OLLAMA_DEFAULT_NAMESPACE;
    const size_t space_len = n == 3 ? lens[1] : n == 2 && !first_is_host ? lens[0] : strlen(GGFS_OLLAMA_DEFAULT_NAMESPACE);
    if (out->plain_http && !first_is_host) {
        snprintf(why, why_size, "ollama+http:// names a HOST first");
        return false;
    }
    return take_part("host", host, host_len, true, out->host, why, why_size) &&
           take_part("namespace", space, space_len, false, out->space, why, why_size);
}

static bool fits(int n, size_t cap)
{
    return n > 0 && (size_t)n < cap;
}

bool ggfs_ollama_manifest_url(const ggfs_ollama_name *n, char *url, size_t cap)
{
    return fits(snprintf(url, cap, "%s://%s/v2/%s/%s/manifests/%s", n->plain_http ? "http" : "https", n->host,
                         n->space, n->name, n->tag),
                cap);
}

bool ggfs_ollama_blob_url(const ggfs_ollama_name *n, const char *hex, char *url, size_t cap)
{
    return fits(snprintf(url, cap, "%s://%s/v2/%s/%s/blobs/sha256:%s", n->plain_http ? "http" : "https", n->host,
                         n->space, n->name, hex),
                cap);
}

bool ggfs_ollama_full_name(const ggfs_ollama_name *n, char *out, size_t cap)
{
    return fits(snprintf(out, cap, "%s/%s/%s:%s", n->host, n->space, n->name, n->tag), cap);
}
