/*
 * Building URLs in fixed buffers: RFC 3986's percent-encoding, as the
 * Hub's paths and SigV4's canonical paths and queries both want it.
 */
#ifndef GGFS_UTIL_URL_TEXT_H
#define GGFS_UTIL_URL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Appends s[0, n) to the string out (cap bytes, NUL-terminated), every
 * byte but the unreserved ones (A-Z a-z 0-9 - _ . ~, and '/' when
 * keep_slash) as %XX with upper-case hex. False when it does not fit. */
bool ggfs_url_append_escaped(char *out, size_t cap, const char *s, size_t n, bool keep_slash);

/* Appends the string s to the string out (cap bytes); false when it does
 * not fit. */
bool ggfs_url_append(char *out, size_t cap, const char *s);

#endif
