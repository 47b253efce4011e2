/*
 * Paths beneath a folder of models. A catalog follows symlinks only while
 * they stay inside its folder: a Hugging Face cache's snapshot links into
 * ../../blobs are followed, a link to /etc/passwd or out through ".." is
 * not. Every path here is relative to the folder ("" is the folder itself)
 * and resolved component by component, reading each link with readlinkat,
 * so the walk never passes above the folder and a loop ends in ELOOP.
 */
#ifndef GGFS_CATALOG_BENEATH_H
#define GGFS_CATALOG_BENEATH_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define GGFS_MAX_LINKS 40 // links followed in one resolution, as Linux allows

typedef struct ggfs_folder {
    int fd;           // the folder, opened O_PATH | O_DIRECTORY
    const char *abs;  // the folder as the user named it, made absolute
    const char *real; // realpath() of the folder
    const char *skip; // the mount point relative to the folder when it lies
                      // inside (it must not be listed: that would be the
                      // mount listing itself), else NULL
} ggfs_folder;

/* Opens `path` as a folder of models and fills f (the strings are
 * allocated). `mountpoint` may be NULL. Returns 0 or an errno. */
int ggfs_folder_open(ggfs_folder *f, const char *path, const char *mountpoint);
void ggfs_folder_close(ggfs_folder *f);

/* Resolves rel, following symlinks only while they stay in the folder: a
 * relative target is taken from the link's directory; an absolute target
 * must name a path under f->abs or f->real. Writes the symlink-free path
 * (relative, "" for the folder) into out (cap bytes) and the stat of what
 * it names into st. Returns 0 or an errno: EXDEV when the path leaves the
 * folder, ELOOP after GGFS_MAX_LINKS links, ENAMETOOLONG when out is too
 * small, or what fstatat / readlinkat said (ENOENT, EACCES, ENOTDIR). */
int ggfs_resolve_beneath(const ggfs_folder *f, const char *rel, char *out, size_t cap, struct stat *st);

/* Opens the directory real_dir (already resolved beneath the folder, ""
 * for its root) for reading, without following a last symlink and without
 * blocking. Returns 0 and the stream in *out, or an errno. */
int ggfs_folder_opendir(const ggfs_folder *f, const char *real_dir, DIR **out);

/* Whether path `inner` is `outer` or lies under it, component-wise ("" is
 * above everything; "a/b" is under "a" but not under "a/b2"). */
bool ggfs_path_within(const char *inner, const char *outer);

/* Whether a directory whose real path is target leads back to one of the
 * n directories shown above the place it is listed, or that place itself
 * (real paths, from the folder down): it is one of them or above one, so
 * following it would make an endless tree. */
bool ggfs_path_leads_back(const char *target, const char *const *ancestors, size_t n);

/* Joins dir and name into out ("" + "x" is "x"); false when it does not
 * fit in cap bytes. */
bool ggfs_path_join(char *out, size_t cap, const char *dir, const char *name);

#endif
