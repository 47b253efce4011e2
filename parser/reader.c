/*
 * The bounded cursor: the only way the parser reads the header. Every read
 * compares its size with the bytes left in the file, then with the bytes
 * in memory, before touching them, and values are assembled from bytes in
 * the file's byte order.
 */
#include "ggp_i.h"

bool ggp_in_memory(ggp_reader *r, uint64_t n)
{
    if (n <= r->avail - r->pos)
        return true;
    return ggp_fail(r->err, GGP_ERR_NEED_MORE, r->pos + n,
                    "the header goes on past the first %llu bytes",
                    (unsigned long long)r->avail);
}

static bool need(ggp_reader *r, uint64_t n, const char *what)
{
    if (n > ggp_remaining(r))
        return ggp_fail(r->err, GGP_ERR_TRUNCATED, r->pos,
                        "%s needs %llu bytes, only %llu remain", what,
                        (unsigned long long)n, (unsigned long long)ggp_remaining(r));
    return ggp_in_memory(r, n);
}

bool ggp_read_u8(ggp_reader *r, uint8_t *out, const char *what)
{
    if (!need(r, 1, what))
        return false;
    *out = r->base[r->pos++];
    return true;
}

bool ggp_read_u32(ggp_reader *r, uint32_t *out, const char *what)
{
    if (!need(r, 4, what))
        return false;
    *out = ggp_load32(r->base + r->pos, r->big_endian);
    r->pos += 4;
    return true;
}

bool ggp_read_u64(ggp_reader *r, uint64_t *out, const char *what)
{
    if (!need(r, 8, what))
        return false;
    *out = ggp_load64(r->base + r->pos, r->big_endian);
    r->pos += 8;
    return true;
}

bool ggp_read_count(ggp_reader *r, uint64_t *out, const char *what)
{
    if (r->version != 1)
        return ggp_read_u64(r, out, what);
    uint32_t v;
    if (!ggp_read_u32(r, &v, what))
        return false;
    *out = v;
    return true;
}

bool ggp_skip(ggp_reader *r, uint64_t n, const char *what)
{
    if (!need(r, n, what))
        return false;
    r->pos += n;
    return true;
}

bool ggp_read_str(ggp_reader *r, ggp_str *out, const char *what)
{
    const uint64_t start = r->pos;
    uint64_t len;
    if (!ggp_read_count(r, &len, what))
        return false;
    if (len > ggp_remaining(r)) {
        ggp_fail(r->err, GGP_ERR_TRUNCATED, start,
                 "%s has length %llu, only %llu bytes remain", what,
                 (unsigned long long)len, (unsigned long long)ggp_remaining(r));
        r->pos = start;
        return false;
    }
    if (!ggp_in_memory(r, len)) {
        r->pos = start;
        return false;
    }
    out->ptr = (const char *)r->base + r->pos;
    out->len = len;
    r->pos += len;
    return true;
}
