/*
 * Published digests (published.h): parsed from what a store writes, every
 * character checked, nothing read past the length given.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "source/published.h"
#include "util/text.h"

size_t ggfs_published_digest_size(ggfs_published_kind kind)
{
    return kind == GGFS_PUBLISHED_SHA256 ? 32 : kind == GGFS_PUBLISHED_MD5 ? 16 : 0;
}

const char *ggfs_published_kind_name(ggfs_published_kind kind)
{
    return kind == GGFS_PUBLISHED_SHA256 ? "sha256" : kind == GGFS_PUBLISHED_MD5 ? "md5" : "-";
}

static void set(ggfs_published *p, ggfs_published_kind kind, const uint8_t *digest, const char *where)
{
    p->kind = kind;
    memset(p->digest, 0, sizeof p->digest);
    memcpy(p->digest, digest, ggfs_published_digest_size(kind));
    const size_t n = strnlen(where, sizeof p->where - 1);
    memcpy(p->where, where, n);
    p->where[n] = '\0';
}

bool ggfs_published_set_hex(ggfs_published *p, ggfs_published_kind kind, const char *hex, size_t len,
                            const char *where)
{
    const size_t size = ggfs_published_digest_size(kind);
    if (!size || len != 2 * size)
        return false;
    uint8_t digest[32];
    for (size_t i = 0; i < size; i++) {
        const int hi = ggfs_hex_value(hex[2 * i]), lo = ggfs_hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        digest[i] = (uint8_t)(hi << 4 | lo);
    }
    set(p, kind, digest, where);
    return true;
}

static int base64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

bool ggfs_published_set_base64(ggfs_published *p, ggfs_published_kind kind, const char *b64, size_t len,
                               const char *where)
{
    const size_t size = ggfs_published_digest_size(kind);
    // 32 bytes: 43 characters and one '='; 16 bytes: 22 and two.
    const size_t chars = (size * 4 + 2) / 3, padded = (size + 2) / 3 * 4;
    if (!size || len != padded)
        return false;
    for (size_t i = chars; i < padded; i++) {
        if (b64[i] != '=')
            return false;
    }
    uint8_t digest[33];
    uint32_t bits = 0;
    int n_bits = 0;
    size_t out = 0;
    for (size_t i = 0; i < chars; i++) {
        const int v = base64_value(b64[i]);
        if (v < 0)
            return false;
        bits = bits << 6 | (uint32_t)v;
        n_bits += 6;
        if (n_bits >= 8) {
            n_bits -= 8;
            digest[out++] = (uint8_t)(bits >> n_bits);
        }
    }
    // The last character's unused bits are zero in a canonical encoding.
    if (out != size || (bits & ((1u << n_bits) - 1)) != 0)
        return false;
    set(p, kind, digest, where);
    return true;
}

/* How much a kind says: more for a stronger digest. */
static int strength(ggfs_published_kind kind)
{
    return kind == GGFS_PUBLISHED_SHA256 ? 2 : kind == GGFS_PUBLISHED_MD5 ? 1 : 0;
}

const ggfs_published *ggfs_published_most(const ggfs_published *a, const ggfs_published *b)
{
    return strength(b->kind) > strength(a->kind) ? b : a;
}

bool ggfs_published_size_fits(const ggfs_published *p, uint64_t size, const char *said_by, char *why, size_t cap)
{
    if (p->size == 0 || p->size == size)
        return true;
    snprintf(why, cap, "offset 0x0: the file has %" PRIu64 " bytes, %s says %" PRIu64, size, said_by, p->size);
    return false;
}

bool ggfs_published_take(ggfs_published *to, uint64_t size, const ggfs_published *listed, const char *said_by,
                         char *why, size_t cap)
{
    if (!ggfs_published_size_fits(listed, size, said_by, why, cap))
        return false;
    if (listed->kind != GGFS_PUBLISHED_NONE) {
        const uint64_t said = to->size;
        *to = *listed;
        if (!listed->size)
            to->size = said;
    } else if (listed->size) {
        to->size = listed->size;
    }
    return true;
}
