/*
 * FNV-1a, 64-bit: a small, fast, well-spread hash of bytes, for hash
 * tables and cache keys (not for anything an attacker picks to collide
 * against a secret: it has no key).
 */
#ifndef GGFS_UTIL_FNV_H
#define GGFS_UTIL_FNV_H

#include <stddef.h>
#include <stdint.h>

#define GGFS_FNV64_OFFSET UINT64_C(14695981039346656037)
#define GGFS_FNV64_PRIME UINT64_C(1099511628211)

/* Folds len bytes into h (start with GGFS_FNV64_OFFSET). */
static inline uint64_t ggfs_fnv64(uint64_t h, const void *bytes, size_t len)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * GGFS_FNV64_PRIME;
    return h;
}

#endif
