/*
 * Attributes and identities of local files and directories.
 */
#include <string.h>

#include "catalog/attrs.h"

void ggfs_cat_attrs_of(const struct stat *st, ggfs_cat_attrs *a)
{
    *a = (ggfs_cat_attrs){
        .atime = st->st_atim.tv_sec,
        .mtime = st->st_mtim.tv_sec,
        .ctime = st->st_ctim.tv_sec,
        .atime_ns = (uint32_t)st->st_atim.tv_nsec,
        .mtime_ns = (uint32_t)st->st_mtim.tv_nsec,
        .ctime_ns = (uint32_t)st->st_ctim.tv_nsec,
        .mode = st->st_mode,
        .uid = st->st_uid,
        .gid = st->st_gid,
        .size = st->st_size,
    };
    ggfs_cat_ident_of_stat(st, &a->ident);
}

void ggfs_cat_attrs_stat(const ggfs_cat_attrs *a, struct stat *st)
{
    st->st_atim.tv_sec = a->atime;
    st->st_atim.tv_nsec = a->atime_ns;
    st->st_mtim.tv_sec = a->mtime;
    st->st_mtim.tv_nsec = a->mtime_ns;
    st->st_ctim.tv_sec = a->ctime;
    st->st_ctim.tv_nsec = a->ctime_ns;
    st->st_mode = a->mode;
    st->st_uid = a->uid;
    st->st_gid = a->gid;
    st->st_size = a->size;
}

/* splitmix64's finalizer: every bit of x moves about half of the result's. */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* A directory stays the same directory as entries come and go in it (its
 * mtime changes); a file is another once its size or mtime changed. */
void ggfs_cat_ident_of_stat(const struct stat *st, ggfs_cat_ident *id)
{
    uint64_t h = mix((uint64_t)st->st_dev);
    if (!S_ISDIR(st->st_mode)) {
        h = mix(h ^ (uint64_t)st->st_size);
        h = mix(h ^ (uint64_t)st->st_mtim.tv_sec);
        h = mix(h ^ (uint64_t)st->st_mtim.tv_nsec);
    }
    *id = (ggfs_cat_ident){{(uint64_t)st->st_ino, h}};
}

bool ggfs_cat_ident_equal(const ggfs_cat_ident *a, const ggfs_cat_ident *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

bool ggfs_cat_attrs_same_file(const ggfs_cat_attrs *a, const struct stat *st)
{
    ggfs_cat_ident id;
    ggfs_cat_ident_of_stat(st, &id);
    return ggfs_cat_ident_equal(&a->ident, &id);
}

