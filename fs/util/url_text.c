/*
 * Building URLs in fixed buffers (url_text.h).
 */
#include <string.h>

#include "util/url_text.h"

/* RFC 3986's unreserved characters, which stay as they are (as
 * curl_easy_escape and SigV4 leave them). */
static bool unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

bool ggfs_url_append_escaped(char *out, size_t cap, const char *s, size_t n, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t have = strlen(out);
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        const size_t add = unreserved(c) || (keep_slash && c == '/') ? 1 : 3;
        if (have + add >= cap)
            return false;
        if (add == 1) {
            out[have++] = (char)c;
        } else {
            out[have++] = '%';
            out[have++] = hex[c >> 4];
            out[have++] = hex[c & 15];
        }
    }
    out[have] = '\0';
    return true;
}

bool ggfs_url_append(char *out, size_t cap, const char *s)
{
    const size_t have = strlen(out), add = strlen(s);
    if (have + add >= cap)
        return false;
    memcpy(out + have, s, add + 1);
    return true;
}
