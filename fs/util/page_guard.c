/*
 * A paged listing's bounds (page_guard.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fnv.h"
#include "util/page_guard.h"

void ggfs_page_guard_init(ggfs_page_guard *g, const char *cursor_noun)
{
    memset(g, 0, sizeof *g);
    g->cursor_noun = cursor_noun;
}

void ggfs_page_guard_destroy(ggfs_page_guard *g)
{
    free(g->keys);
    free(g->cursors);
    memset(g, 0, sizeof *g);
}

/* A hash never 0 (0 marks a free slot). */
static uint64_t hash_of(const char *s, size_t len)
{
    const uint64_t h = ggfs_fnv64(GGFS_FNV64_OFFSET, s, len);
    return h ? h : 1;
}

bool ggfs_page_guard_page(ggfs_page_guard *g, const char *cursor, size_t len, const char *what, char *why,
                          size_t cap)
{
    const uint64_t h = hash_of(cursor, len);
    for (size_t i = 0; i < g->n_pages; i++)
        if (g->cursors[i] == h) {
            snprintf(why, cap, "%s: page %zu leads back to page %zu (a %s loop)", what, g->n_pages + 1, i + 1,
                     g->cursor_noun);
            return false;
        }
    if (g->n_pages >= GGFS_PAGE_MAX) {
        snprintf(why, cap, "%s: more than %u pages (a loop)", what, GGFS_PAGE_MAX);
        return false;
    }
    uint64_t *grown = realloc(g->cursors, (g->n_pages + 1) * sizeof *grown);
    if (!grown) {
        snprintf(why, cap, "%s: out of memory", what);
        return false;
    }
    g->cursors = grown;
    g->cursors[g->n_pages++] = h;
    g->added = 0;
    return true;
}

/* The slot of h: where it is, or the free one where it goes. */
static size_t slot_of(const ggfs_page_guard *g, uint64_t h)
{
    size_t i = (size_t)(h & (g->cap_keys - 1));
    while (g->keys[i] && g->keys[i] != h)
        i = (i + 1) & (g->cap_keys - 1);
    return i;
}

/* Doubles the table (kept at most half full). */
static bool grow(ggfs_page_guard *g)
{
    const size_t cap = g->cap_keys ? 2 * g->cap_keys : 1024;
    uint64_t *old = g->keys;
    const size_t old_cap = g->cap_keys;
    if (!(g->keys = calloc(cap, sizeof *g->keys))) {
        g->keys = old;
        return false;
    }
    g->cap_keys = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            g->keys[slot_of(g, old[i])] = old[i];
    free(old);
    return true;
}

ggfs_page_entry ggfs_page_guard_entry(ggfs_page_guard *g, const char *key, size_t len)
{
    const uint64_t h = hash_of(key, len);
    if (g->cap_keys && g->keys[slot_of(g, h)] == h)
        return GGFS_PAGE_SEEN;
    if (g->n_keys >= GGFS_PAGE_ENTRIES_MAX)
        return GGFS_PAGE_FULL;
    if (2 * (g->n_keys + 1) > g->cap_keys && !grow(g))
        return GGFS_PAGE_NOMEM;
    g->keys[slot_of(g, h)] = h;
    g->n_keys++;
    g->added++;
    return GGFS_PAGE_NEW;
}

bool ggfs_page_guard_page_done(ggfs_page_guard *g, const char *what, char *why, size_t cap)
{
    g->stalled = g->added ? 0 : g->stalled + 1;
    if (g->stalled < GGFS_PAGE_STALL_MAX)
        return true;
    snprintf(why, cap, "%s: %u pages in a row added no entry (a loop)", what, GGFS_PAGE_STALL_MAX);
    return false;
}

size_t ggfs_page_guard_count(const ggfs_page_guard *g)
{
    return g->n_keys;
}
