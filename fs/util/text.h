/*
 * Small checks and repairs of untrusted text: names read from a folder or
 * from files in it (a ref's commit hash, a manifest's digest) that the
 * daemon checks before use and quotes in one-line messages.
 */
#ifndef GGFS_UTIL_TEXT_H
#define GGFS_UTIL_TEXT_H

#include <stddef.h>

/* How many of the first n bytes of s are lower-case hex digits ([0-9a-f])
 * in a row, as strspn counts: n when all are; the index of the first
 * other byte (an upper-case digit, a NUL, any byte >= 0x80) otherwise.
 * Reads no further than n bytes and stops at the first byte that is not
 * a digit, so s need not be NUL-terminated. */
size_t ggfs_lower_hex_span(const char *s, size_t n);

/* The value of a hex digit of either case, or -1 for any other byte. */
static inline int ggfs_hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Makes the NUL-terminated s one line, in place: every control byte
 * (0x01-0x1f, as newline, tab and escape, and 0x7f) becomes '?', wherever
 * it stands; other bytes, UTF-8 included, are kept. */
void ggfs_one_line(char *s);

#endif
