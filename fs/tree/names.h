/*
 * File names for keys and tensor names. A name is used as it is, except:
 * '/' -> %2F, '%' -> %25, NUL -> %00, the names "." and ".." -> %2E and
 * %2E%2E, and a result longer than 255 bytes is cut and ends in "~" plus 8
 * hex digits of a hash of the full name. Short names reverse exactly; long
 * ones are found by comparing against each long name's file name.
 */
#ifndef GGFS_TREE_NAMES_H
#define GGFS_TREE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGFS_NAME_MAX 255

/* Writes the file name for name[0..len) into out (GGFS_NAME_MAX + 1 bytes)
 * and returns its length. */
size_t ggfs_name_encode(const char *name, uint64_t len, char *out);

/* Whether a file name was cut (so cannot be decoded). */
bool ggfs_name_is_cut(const char *fname, size_t flen);

/* Decodes a file name that was not cut into out (at least flen bytes).
 * Returns false when fname is not the encoding of any name. */
bool ggfs_name_decode(const char *fname, size_t flen, char *out, size_t *outlen);

#endif
