/*
 * The one check of the names a store hands us (SPEC "What a server cannot
 * do": "No name escapes or breaks a listing"), asked by every store: the
 * Hub's tree and author listings, S3's keys and prefixes, a registry's
 * manifest names, a folder's entries. A store decodes its names first (S3:
 * encoding-type=url), then asks here:
 *
 *   - a path is components joined by '/', none empty, "." or "..", no NUL
 *     (a '/' is only ever a separator, so no component holds one);
 *   - a component over GGFS_STORE_NAME_MAX bytes is cut as "The tree" cuts
 *     file names: its first bytes (never half a UTF-8 sequence), then '~'
 *     and 8 hex digits of a hash of it whole (tree/names.c cuts with the
 *     same two helpers).
 */
#ifndef GGFS_UTIL_STORE_NAME_H
#define GGFS_UTIL_STORE_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGFS_STORE_NAME_MAX 255 // bytes of a component as shown
#define GGFS_NAME_CUT_SUFFIX 9  // "~" and 8 hex digits

/* Why the path p (n bytes, which may hold NUL) cannot be shown, or NULL
 * when it can: "it holds NUL", "it has an empty, '.' or '..' component". */
const char *ggfs_store_path_unfit(const char *p, size_t n);

/* The path as the mount shows it, each component cut to
 * GGFS_STORE_NAME_MAX bytes. Malloc'ed; NULL when the path is unfit or out
 * of memory. */
char *ggfs_store_path_shown(const char *p, size_t n);

/* The hash a cut name ends with (FNV-1a, 32 bits, of the name whole). */
uint32_t ggfs_name_cut_hash(const char *name, uint64_t len);
/* Where a name cut after its first o bytes (of out) ends so that no UTF-8
 * sequence is split. */
size_t ggfs_name_cut_end(const char *out, size_t o);

#endif
