/*
 * The bounds every paged listing from the network keeps (SPEC "What a
 * server cannot do"): a Hub tree or author listing paged by Link, an S3
 * level paged by continuation token. A server decides how many pages
 * there are and what is on them, so the listing counts for itself:
 *
 *   - a cursor (a next page's URL, a continuation token) seen before is a
 *     loop, and the listing stops with an error;
 *   - GGFS_PAGE_STALL_MAX pages in a row that add no new entry (empty, or
 *     repeating what came before) are a loop too, whatever their cursors;
 *   - at most GGFS_PAGE_MAX pages are asked for;
 *   - an entry whose key (a path, an id, a key) was seen before is
 *     dropped, never kept twice;
 *   - at most GGFS_PAGE_ENTRIES_MAX entries are kept; the listing is cut
 *     there, with a log line by the caller.
 *
 * Keys and cursors are remembered by a 64-bit hash of their bytes (FNV-1a:
 * a server picking keys to collide costs it entries, not memory).
 */
#ifndef GGFS_UTIL_PAGE_GUARD_H
#define GGFS_UTIL_PAGE_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Entries of one listing kept, at most (SPEC: at least 100,000).
#define GGFS_PAGE_ENTRIES_MAX 100000u
// Pages of one listing asked for, at most: 100,000 entries at 10 a page.
#define GGFS_PAGE_MAX 10000u
// Pages in a row adding no new entry before the listing is a loop: a real
// server's pages each add entries (the Hub's and S3's up to 1,000); a few
// empty ones in a row are allowed for a store that skips what it hides.
#define GGFS_PAGE_STALL_MAX 8u

typedef struct ggfs_page_guard {
    uint64_t *keys;    // open addressing, 0 marks a free slot
    size_t n_keys, cap_keys;
    uint64_t *cursors; // the cursors of the pages read, in order
    size_t n_pages;
    size_t added;      // new entries of the page being read
    unsigned stalled;  // pages in a row that added none
    const char *cursor_noun; // what leads to a next page, for messages
} ggfs_page_guard;

/* cursor_noun names what leads to the next page ("Link", "continuation
 * token"): a repeated one is "(a Link loop)". */
void ggfs_page_guard_init(ggfs_page_guard *g, const char *cursor_noun);
void ggfs_page_guard_destroy(ggfs_page_guard *g);

/* Before asking for a page by its cursor (len bytes; the first page's own
 * URL or "" counts too): false with why (cap bytes, after what) when the
 * cursor was seen before, the page cap is reached, or memory runs out. */
bool ggfs_page_guard_page(ggfs_page_guard *g, const char *cursor, size_t len, const char *what, char *why,
                          size_t cap);

typedef enum ggfs_page_entry {
    GGFS_PAGE_NEW,  // keep it
    GGFS_PAGE_SEEN, // its key was listed before: drop it
    GGFS_PAGE_FULL, // GGFS_PAGE_ENTRIES_MAX kept already: the listing is cut
    GGFS_PAGE_NOMEM,
} ggfs_page_entry;

/* Whether the entry of this key (len bytes) is new to the listing. */
ggfs_page_entry ggfs_page_guard_entry(ggfs_page_guard *g, const char *key, size_t len);

/* After a page was read: false with why when it was the
 * GGFS_PAGE_STALL_MAX-th in a row to add no entry. */
bool ggfs_page_guard_page_done(ggfs_page_guard *g, const char *what, char *why, size_t cap);

/* Entries kept so far. */
size_t ggfs_page_guard_count(const ggfs_page_guard *g);

#endif
