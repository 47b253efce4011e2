/*
 * What the catalog keeps of an entry's stat, and its identity: what tells
 * one version of the entry from another, which the store that lists the
 * entry fills and the catalog only compares.
 */
#ifndef GGFS_CATALOG_ATTRS_H
#define GGFS_CATALOG_ATTRS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* What tells one version of an entry from another, opaque to the
 * catalog, which only compares it: the store that lists the entry fills
 * it (a local file: its inode, and its device, size and mtime mixed in
 * the other half; a local directory: device and inode; a remote file: its
 * oid or a hash of its ETag). It costs a listing 16 bytes an entry. */
typedef struct ggfs_cat_ident {
    uint64_t w[2]; // 128 bits: a remote store keeps an oid's first 16 bytes
} ggfs_cat_ident;

/* What the mount shows of a file or directory (its stat, less the rest),
 * and its identity. */
typedef struct ggfs_cat_attrs {
    int64_t atime, mtime, ctime; // seconds
    uint32_t atime_ns, mtime_ns, ctime_ns;
    uint32_t mode, uid, gid;
    int64_t size;
    ggfs_cat_ident ident;
} ggfs_cat_attrs;

/* The attributes of a local file or directory, with its identity. */
void ggfs_cat_attrs_of(const struct stat *st, ggfs_cat_attrs *a);
/* Fills the fields attrs keep; the rest of st is left as it is. */
void ggfs_cat_attrs_stat(const ggfs_cat_attrs *a, struct stat *st);
/* The identity of the local file or directory of stat st. */
void ggfs_cat_ident_of_stat(const struct stat *st, ggfs_cat_ident *id);
bool ggfs_cat_ident_equal(const ggfs_cat_ident *a, const ggfs_cat_ident *b);
/* Whether st is the file a was taken from (it may have changed since). */
bool ggfs_cat_attrs_same_file(const ggfs_cat_attrs *a, const struct stat *st);

#endif
