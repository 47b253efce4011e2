/*
 * The names of a catalog scan's entries, for the catalog's unit tests to
 * compare a listing with one string.
 */
#ifndef GGFS_TEST_SCAN_NAMES_H
#define GGFS_TEST_SCAN_NAMES_H

#include <string.h>

#include "catalog/scan.h"

/* The entries' names, separated by single spaces, in a static buffer. */
static const char *names_of(const ggfs_scan *s)
{
    static char all[8192];
    all[0] = '\0';
    for (size_t i = 0; i < s->count; i++) {
        strcat(all, s->entries[i].name);
        if (i + 1 < s->count)
            strcat(all, " ");
    }
    return all;
}

#endif
