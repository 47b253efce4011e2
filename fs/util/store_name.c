/*
 * The names stores hand us (store_name.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/store_name.h"

uint32_t ggfs_name_cut_hash(const char *name, uint64_t len)
{
    uint32_t h = UINT32_C(0x811c9dc5);
    for (uint64_t i = 0; i < len; i++) {
        h ^= (uint8_t)name[i];
        h *= UINT32_C(0x01000193);
    }
    return h;
}

size_t ggfs_name_cut_end(const char *out, size_t o)
{
    while (o > 0 && ((uint8_t)out[o - 1] & 0xc0) == 0x80)
        o--;
    if (o > 0 && (uint8_t)out[o - 1] >= 0xc0)
        o--;
    return o;
}

const char *ggfs_store_path_unfit(const char *p, size_t n)
{
    if (memchr(p, '\0', n))
        return "it holds NUL";
    for (size_t at = 0; at <= n;) {
        const char *slash = memchr(p + at, '/', n - at);
        const size_t len = slash ? (size_t)(slash - (p + at)) : n - at;
        if (len == 0 || (len == 1 && p[at] == '.') || (len == 2 && p[at] == '.' && p[at + 1] == '.'))
            return "it has an empty, '.' or '..' component";
        at += len + 1;
    }
    return NULL;
}

char *ggfs_store_path_shown(const char *p, size_t n)
{
    if (ggfs_store_path_unfit(p, n))
        return NULL;
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i <= n;) {
        const char *slash = memchr(p + i, '/', n - i);
        const size_t end = slash ? (size_t)(slash - p) : n, len = end - i;
        if (o)
            out[o++] = '/';
        if (len <= GGFS_STORE_NAME_MAX) {
            memcpy(out + o, p + i, len);
            o += len;
        } else {
            const size_t start = o;
            memcpy(out + o, p + i, GGFS_STORE_NAME_MAX - GGFS_NAME_CUT_SUFFIX);
            o = start + ggfs_name_cut_end(out + start, GGFS_STORE_NAME_MAX - GGFS_NAME_CUT_SUFFIX);
            o += (size_t)snprintf(out + o, GGFS_NAME_CUT_SUFFIX + 1, "~%08x", ggfs_name_cut_hash(p + i, len));
        }
        i = end + 1;
    }
    out[o] = '\0';
    return out;
}
