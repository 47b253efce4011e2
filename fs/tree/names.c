/*
 * The reversible mapping between GGUF names (any bytes) and file names
 * (no '/', no NUL, not "." or "..", at most 255 bytes).
 */
#include <stdio.h>
#include <string.h>

#include "tree/names.h"
#include "util/store_name.h" // the cut, shared with the names stores hand us

#define HASH_SUFFIX_LEN 9 // "~" and 8 hex digits


static const char *escape_of(char c)
{
    switch (c) {
    case '/': return "%2F";
    case '%': return "%25";
    case '\0': return "%00";
    default: return NULL;
    }
}

/* Bytes of the encoded name, without the cut. */
static uint64_t encoded_len(const char *name, uint64_t len)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < len; i++)
        n += escape_of(name[i]) ? 3 : 1;
    return n;
}

size_t ggfs_name_encode(const char *name, uint64_t len, char *out)
{
    if ((len == 1 || len == 2) && memcmp(name, "..", len) == 0) {
        memcpy(out, "%2E%2E", 3 * len);
        out[3 * len] = '\0';
        return 3 * len;
    }
    const bool cut = encoded_len(name, len) > GGFS_NAME_MAX;
    const size_t limit = cut ? GGFS_NAME_MAX - HASH_SUFFIX_LEN : GGFS_NAME_MAX;
    size_t o = 0;
    for (uint64_t i = 0; i < len; i++) {
        const char *esc = escape_of(name[i]);
        const size_t need = esc ? 3 : 1;
        // Never split an escape, nor a UTF-8 sequence (its continuation bytes).
        if (o + need > limit)
            break;
        if (esc) {
            memcpy(out + o, esc, 3);
        } else {
            out[o] = name[i];
        }
        o += need;
    }
    if (cut) {
        o = ggfs_name_cut_end(out, o);
        o += (size_t)sprintf(out + o, "~%08x", ggfs_name_cut_hash(name, len));
    }
    out[o] = '\0';
    return o;
}

bool ggfs_name_is_cut(const char *fname, size_t flen)
{
    if (flen < HASH_SUFFIX_LEN || fname[flen - HASH_SUFFIX_LEN] != '~')
        return false;
    for (size_t i = flen - 8; i < flen; i++) {
        const char c = fname[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return flen > GGFS_NAME_MAX - HASH_SUFFIX_LEN - 3;
}

bool ggfs_name_decode(const char *fname, size_t flen, char *out, size_t *outlen)
{
    if ((flen == 3 && memcmp(fname, "%2E", 3) == 0) || (flen == 6 && memcmp(fname, "%2E%2E", 6) == 0)) {
        memset(out, '.', flen / 3);
        *outlen = flen / 3;
        return true;
    }
    size_t o = 0;
    for (size_t i = 0; i < flen; i++) {
        if (fname[i] != '%') {
            out[o++] = fname[i];
            continue;
        }
        if (i + 2 >= flen)
            return false;
        if (fname[i + 1] == '2' && fname[i + 2] == 'F')
            out[o++] = '/';
        else if (fname[i + 1] == '2' && fname[i + 2] == '5')
            out[o++] = '%';
        else if (fname[i + 1] == '0' && fname[i + 2] == '0')
            out[o++] = '\0';
        else
            return false;
        i += 2;
    }
    *outlen = o;
    return true;
}
