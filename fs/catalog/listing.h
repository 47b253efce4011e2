/*
 * A directory of a catalog as read at one time (scan.h), kept in
 * one block: what lookups and readdir need of each entry, and what a slot
 * is made from when the kernel is handed one. A folder of 10,000 models
 * is a listing of 10,000 of these, so each is small: its attributes, the
 * offset of its name, and its path and real path only when they are not
 * the directory's path joined with the name (a symlink, a split set, the
 * Ollama view).
 */
#ifndef GGFS_CATALOG_LISTING_H
#define GGFS_CATALOG_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/attrs.h"
#include "catalog/scan.h"

enum {
    GGFS_LISTED_PATH = 1,  // the path follows the name in the strings
    GGFS_LISTED_REAL = 2,  // the real path follows (else it is the path)
    GGFS_LISTED_ERROR = 4, // the error follows
};

typedef struct ggfs_listed {
    ggfs_cat_attrs a;
    uint32_t name;   // offset in the listing's strings: name, then what flags say
    uint32_t shards; // split sets: the N of -of-N
    uint8_t kind;    // ggfs_scan_kind
    uint8_t flags;
} ggfs_listed;

struct ggfs_cat_listing {
    unsigned refs;       // kept by its owner (dirs.c, under the catalog's lock)
    size_t count;
    bool sorted;         // by name, names unique (a scan short of memory is not)
    const char *strings;
    ggfs_listed entries[]; // in the scan's order
};

typedef struct ggfs_cat_listing ggfs_cat_listing;

/* The listing of scan, read from the directory whose real path (relative
 * to the folder) is dir_real, in one allocation, with refs 1; NULL when
 * out of memory. */
ggfs_cat_listing *ggfs_listing_build(const ggfs_scan *scan, const char *dir_real);
void ggfs_listing_free(ggfs_cat_listing *l);

/* The entry called name, or NULL. */
const ggfs_listed *ggfs_listing_find(const ggfs_cat_listing *l, const char *name);

const char *ggfs_listed_name(const ggfs_cat_listing *l, const ggfs_listed *e);
/* The entry's path and real path, into buf (cap bytes) when they are made
 * from dir_real; NULL when that does not fit. */
const char *ggfs_listed_path(const ggfs_cat_listing *l, const ggfs_listed *e, const char *dir_real,
                             char *buf, size_t cap);
const char *ggfs_listed_real(const ggfs_cat_listing *l, const ggfs_listed *e, const char *path);
/* NULL when the entry has none. */
const char *ggfs_listed_error(const ggfs_cat_listing *l, const ggfs_listed *e);

#endif
