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

/* ==== Walking a directory ==== */

typedef enum ggfs_each_flags {
    GGFS_EACH_SKIP_HIDDEN = 1u << 0,  // skip every name starting with '.', not only "." and ".."
    GGFS_EACH_KEEP_PARTIAL = 1u << 1, // a failing readdir ends the walk as its end does
} ggfs_each_flags;

/* Called once per entry with its name and its d_type (DT_REG, DT_LNK...,
 * DT_UNKNOWN when the file system does not say). Returns false when out of
 * memory, which stops the walk. */
typedef bool (*ggfs_entry_fn)(void *ctx, const char *name, unsigned char type);

/* Calls fn for each entry of directory real_dir (as ggfs_folder_opendir
 * takes it: resolved beneath the folder, a last symlink not followed, no
 * wait on a FIFO), in the order readdir gives, never for "." or "..".
 * Returns 0; the errno of opening real_dir; the errno of a failing
 * readdir (the entries before it were given), unless KEEP_PARTIAL makes
 * that an end; or ENOMEM when fn returned false. */
int ggfs_folder_each(const ggfs_folder *f, const char *real_dir, unsigned flags, ggfs_entry_fn fn, void *ctx);

/* ==== Reading small files ==== */

/* Both read the file at real (a path resolved beneath the folder, relative
 * to it) through the folder's fd, never a path from the root: a last
 * symlink is not followed (ELOOP), a FIFO or device is opened without
 * waiting and refused (EINVAL: only regular files are read), a terminal
 * never becomes the controlling one, and the kernel reads only the bytes
 * asked for, not its first read-ahead window of the file. */

/* Reads the first cap bytes of the regular file at real into buf (fewer
 * when the file is shorter: *got says how many) and its stat into *st (may
 * be NULL), however large the file is. Returns 0, or an errno: of opening
 * or fstat, EINVAL when not a regular file, or of a failed read (*got
 * then counts the bytes read before it). */
int ggfs_folder_read_head(const ggfs_folder *f, const char *real, void *buf, size_t cap, size_t *got,
                          struct stat *st);

/* Reads the whole regular file at real, when it is at most max bytes by
 * its stat, into a malloc'ed buffer (*data, NUL-terminated after its *len
 * bytes: a file cut short since the stat gives what was there). Returns
 * 0, or an errno: of opening or fstat, EINVAL when not a regular file,
 * EFBIG when larger than max, ENOMEM, or of a failed read (nothing then
 * to free). */
int ggfs_folder_read_small(const ggfs_folder *f, const char *real, size_t max, char **data, size_t *len);

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
