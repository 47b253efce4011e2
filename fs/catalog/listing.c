/*
 * Listings in one block: the header, the entries, then their strings.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/listing.h"

/* ==== Building ==== */

/* What entry e stores beyond its name, as flags. */
static uint8_t flags_of(const ggfs_scan_entry *e, const char *dir_real)
{
    char joined[PATH_MAX];
    uint8_t flags = 0;
    if (!ggfs_path_join(joined, sizeof joined, dir_real, e->name) || strcmp(joined, e->path) != 0)
        flags |= GGFS_LISTED_PATH;
    if (strcmp(e->real, e->path) != 0)
        flags |= GGFS_LISTED_REAL;
    if (e->error)
        flags |= GGFS_LISTED_ERROR;
    return flags;
}

static char *put_string(char *p, const char *s)
{
    const size_t n = strlen(s) + 1;
    memcpy(p, s, n);
    return p + n;
}

ggfs_cat_listing *ggfs_listing_build(const ggfs_scan *scan, const char *dir_real)
{
    uint8_t *flags = malloc(scan->count ? scan->count : 1);
    if (!flags)
        return NULL;
    size_t bytes = 0;
    for (size_t i = 0; i < scan->count; i++) {
        const ggfs_scan_entry *e = &scan->entries[i];
        flags[i] = flags_of(e, dir_real);
        bytes += strlen(e->name) + 1;
        if (flags[i] & GGFS_LISTED_PATH)
            bytes += strlen(e->path) + 1;
        if (flags[i] & GGFS_LISTED_REAL)
            bytes += strlen(e->real) + 1;
        if (flags[i] & GGFS_LISTED_ERROR)
            bytes += strlen(e->error) + 1;
    }
    const size_t head = sizeof(ggfs_cat_listing) + scan->count * sizeof(ggfs_listed);
    // Offsets are 32 bits: a directory of more than 4 GB of names is not
    // listed (PATH_MAX-long names would need 1 million entries of them).
    if (bytes > UINT32_MAX || scan->count > (SIZE_MAX - sizeof(ggfs_cat_listing) - bytes) / sizeof(ggfs_listed)) {
        free(flags);
        return NULL;
    }
    ggfs_cat_listing *l = malloc(head + bytes);
    if (!l) {
        free(flags);
        return NULL;
    }
    char *strings = (char *)l + head, *p = strings;
    l->refs = 1;
    l->count = scan->count;
    l->strings = strings;
    l->sorted = true;
    for (size_t i = 0; i < scan->count; i++) {
        const ggfs_scan_entry *e = &scan->entries[i];
        ggfs_listed *out = &l->entries[i];
        out->a = e->a;
        out->name = (uint32_t)(p - strings);
        out->shards = e->shards;
        out->kind = (uint8_t)e->kind;
        out->flags = flags[i];
        if (i > 0 && strcmp(scan->entries[i - 1].name, e->name) >= 0)
            l->sorted = false;
        p = put_string(p, e->name);
        if (flags[i] & GGFS_LISTED_PATH)
            p = put_string(p, e->path);
        if (flags[i] & GGFS_LISTED_REAL)
            p = put_string(p, e->real);
        if (flags[i] & GGFS_LISTED_ERROR)
            p = put_string(p, e->error);
    }
    free(flags);
    return l;
}

void ggfs_listing_free(ggfs_cat_listing *l)
{
    free(l);
}

/* ==== Reading ==== */

const char *ggfs_listed_name(const ggfs_cat_listing *l, const ggfs_listed *e)
{
    return l->strings + e->name;
}

/* The string after s in the block. */
static const char *next_string(const char *s)
{
    return s + strlen(s) + 1;
}

const char *ggfs_listed_path(const ggfs_cat_listing *l, const ggfs_listed *e, const char *dir_real,
                             char *buf, size_t cap)
{
    const char *name = ggfs_listed_name(l, e);
    if (e->flags & GGFS_LISTED_PATH)
        return next_string(name);
    return ggfs_path_join(buf, cap, dir_real, name) ? buf : NULL;
}

const char *ggfs_listed_real(const ggfs_cat_listing *l, const ggfs_listed *e, const char *path)
{
    if (!(e->flags & GGFS_LISTED_REAL))
        return path;
    const char *s = next_string(ggfs_listed_name(l, e));
    return e->flags & GGFS_LISTED_PATH ? next_string(s) : s;
}

const char *ggfs_listed_error(const ggfs_cat_listing *l, const ggfs_listed *e)
{
    if (!(e->flags & GGFS_LISTED_ERROR))
        return NULL;
    const char *s = ggfs_listed_name(l, e);
    if (e->flags & GGFS_LISTED_PATH)
        s = next_string(s);
    if (e->flags & GGFS_LISTED_REAL)
        s = next_string(s);
    return next_string(s);
}

const ggfs_listed *ggfs_listing_find(const ggfs_cat_listing *l, const char *name)
{
    size_t lo = 0, hi = l->count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(name, ggfs_listed_name(l, &l->entries[mid]));
        if (c == 0)
            return &l->entries[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    // A scan that had too little memory to sort (ggfs_scan_finish) is
    // searched in full.
    for (size_t i = 0; !l->sorted && i < l->count; i++)
        if (strcmp(name, ggfs_listed_name(l, &l->entries[i])) == 0)
            return &l->entries[i];
    return NULL;
}
