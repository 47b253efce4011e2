/*
 * Resolving paths beneath a folder of models, one component at a time;
 * walking its directories and reading its small files through the
 * folder's fd.
 */
#define _GNU_SOURCE // O_PATH, memrchr
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/beneath.h"
#include "util/store_name.h"
#include "util/pread_full.h"

bool ggfs_path_within(const char *inner, const char *outer)
{
    const size_t n = strlen(outer);
    if (n == 0)
        return true;
    return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

bool ggfs_path_leads_back(const char *target, const char *const *ancestors, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ggfs_path_within(ancestors[i], target))
            return true;
    return false;
}

bool ggfs_path_join(char *out, size_t cap, const char *dir, const char *name)
{
    const size_t dlen = strlen(dir), nlen = strlen(name);
    const size_t need = dlen + (dlen ? 1 : 0) + nlen + 1;
    if (need > cap)
        return false;
    memmove(out + dlen + (dlen ? 1 : 0), name, nlen + 1);
    if (out != dir)
        memcpy(out, dir, dlen);
    if (dlen)
        out[dlen] = '/';
    return true;
}

/* The part of absolute path p under absolute directory base ("" when p is
 * base itself), or NULL when p is not under base. */
static const char *under(const char *p, const char *base)
{
    const size_t n = strlen(base);
    if (n == 1 && base[0] == '/')
        return p + 1;
    if (strncmp(p, base, n) != 0 || (p[n] != '\0' && p[n] != '/'))
        return NULL;
    return p[n] == '/' ? p + n + 1 : p + n;
}

/* Removes ".", "..", and repeated or trailing slashes from an absolute path,
 * in place, without touching the file system. */
static void normalize(char *p)
{
    char *o = p; // p[0] is '/'
    const char *s = p;
    while (*s) {
        while (*s == '/')
            s++;
        const size_t n = strcspn(s, "/");
        if (n == 0)
            break;
        if (n == 1 && s[0] == '.') {
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            while (o > p && *--o != '/')
                ;
        } else {
            *o++ = '/';
            memmove(o, s, n);
            o += n;
        }
        s += n;
    }
    if (o == p)
        *o++ = '/';
    *o = '\0';
}

int ggfs_folder_open(ggfs_folder *f, const char *path, const char *mountpoint)
{
    memset(f, 0, sizeof *f);
    f->fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (f->fd < 0)
        return errno;
    int err = ENOMEM;
    char *abs = NULL, *real = NULL, *mnt = NULL;
    if (path[0] == '/') {
        abs = strdup(path);
    } else {
        char *cwd = getcwd(NULL, 0);
        if (!cwd) {
            err = errno;
            goto fail;
        }
        abs = malloc(strlen(cwd) + strlen(path) + 2);
        if (abs)
            strcat(strcat(strcpy(abs, cwd), "/"), path);
        free(cwd);
    }
    if (!abs)
        goto fail;
    normalize(abs);
    real = realpath(path, NULL);
    if (!real) {
        err = errno;
        goto fail;
    }
    if (mountpoint && (mnt = realpath(mountpoint, NULL)) != NULL) {
        const char *rel = under(mnt, real);
        if (rel && !(f->skip = strdup(rel)))
            goto fail;
    }
    free(mnt);
    f->abs = abs;
    f->real = real;
    return 0;
fail:
    free(abs);
    free(real);
    free(mnt);
    close(f->fd);
    f->fd = -1;
    return err;
}

void ggfs_folder_close(ggfs_folder *f)
{
    if (f->fd >= 0)
        close(f->fd);
    free((char *)f->abs);
    free((char *)f->real);
    free((char *)f->skip);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

static int stat_at(const ggfs_folder *f, const char *rel, struct stat *st)
{
    return fstatat(f->fd, rel[0] ? rel : ".", st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

int ggfs_resolve_beneath(const ggfs_folder *f, const char *rel, char *out, size_t cap, struct stat *st)
{
    char todo[PATH_MAX], next[PATH_MAX], link[PATH_MAX];
    if (cap == 0)
        return ENAMETOOLONG;
    if (strlen(rel) >= sizeof todo)
        return ENAMETOOLONG;
    strcpy(todo, rel);
    out[0] = '\0';
    size_t olen = 0, pos = 0;
    unsigned links = 0;
    int err = stat_at(f, "", st);
    if (err)
        return err;
    for (;;) {
        while (todo[pos] == '/')
            pos++;
        if (!todo[pos])
            return 0;
        const char *comp = todo + pos;
        const size_t clen = strcspn(comp, "/");
        pos += clen;
        if (clen == 1 && comp[0] == '.')
            continue;
        if (!S_ISDIR(st->st_mode))
            return ENOTDIR;
        if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
            if (olen == 0)
                return EXDEV;
            const char *slash = memrchr(out, '/', olen);
            olen = slash ? (size_t)(slash - out) : 0;
            out[olen] = '\0';
            if ((err = stat_at(f, out, st)) != 0)
                return err;
            continue;
        }
        const size_t sep = olen ? 1 : 0;
        if (olen + sep + clen + 1 > cap)
            return ENAMETOOLONG;
        if (sep)
            out[olen] = '/';
        memcpy(out + olen + sep, comp, clen);
        out[olen + sep + clen] = '\0';
        // Passing through the mount point would ask the mount about itself.
        if (f->skip && strcmp(out, f->skip) == 0)
            return EXDEV;
        if ((err = stat_at(f, out, st)) != 0)
            return err;
        if (!S_ISLNK(st->st_mode)) {
            olen += sep + clen;
            continue;
        }
        if (++links > GGFS_MAX_LINKS)
            return ELOOP;
        const ssize_t n = readlinkat(f->fd, out, link, sizeof link);
        if (n < 0)
            return errno;
        if ((size_t)n >= sizeof link)
            return ENAMETOOLONG;
        link[n] = '\0';
        out[olen] = '\0'; // the link's directory: where a relative target starts
        const char *target = link;
        if (link[0] == '/') {
            // An absolute target counts when it starts with either name of
            // the folder; the rest is walked from the folder like any path,
            // so "/folder/../x" still ends outside.
            target = under(link, f->abs);
            if (!target)
                target = under(link, f->real);
            if (!target)
                return EXDEV;
            olen = 0;
            out[0] = '\0';
        }
        const size_t tlen = strlen(target), rlen = strlen(todo + pos);
        if (tlen + 1 + rlen + 1 > sizeof next)
            return ENAMETOOLONG;
        memcpy(next, target, tlen);
        next[tlen] = '/';
        memcpy(next + tlen + 1, todo + pos, rlen + 1);
        memcpy(todo, next, tlen + 1 + rlen + 1);
        pos = 0;
        if ((err = stat_at(f, out, st)) != 0)
            return err;
    }
}

int ggfs_folder_opendir(const ggfs_folder *f, const char *real_dir, DIR **out)
{
    const int fd = openat(f->fd, real_dir[0] ? real_dir : ".",
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno;
    *out = fdopendir(fd);
    if (!*out) {
        const int err = errno;
        close(fd);
        return err;
    }
    return 0;
}

/* ==== Walking a directory, reading a small file ==== */

int ggfs_folder_each(const ggfs_folder *f, const char *real_dir, unsigned flags, ggfs_entry_fn fn, void *ctx)
{
    DIR *d;
    int err = ggfs_folder_opendir(f, real_dir, &d);
    if (err)
        return err;
    for (;;) {
        errno = 0; // readdir's NULL means an error only when it set errno
        const struct dirent *de = readdir(d);
        if (!de) {
            err = flags & GGFS_EACH_KEEP_PARTIAL ? 0 : errno;
            break;
        }
        const char *name = de->d_name;
        // The stores' one check (util/store_name.h): for a directory's
        // entries it leaves out "." and "..".
        const bool dots = ggfs_store_path_unfit(name, strlen(name)) != NULL;
        if (dots || (name[0] == '.' && (flags & GGFS_EACH_SKIP_HIDDEN)))
            continue;
        if (!fn(ctx, name, de->d_type)) {
            err = ENOMEM;
            break;
        }
    }
    closedir(d);
    return err;
}

/* Opens the regular file at real as ggfs_folder_read_head says, with its
 * stat in *st. Returns the fd, or an errno negated. */
static int open_regular(const ggfs_folder *f, const char *real, struct stat *st)
{
    const int fd = openat(f->fd, real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    const int err = fstat(fd, st) != 0 ? errno : !S_ISREG(st->st_mode) ? EINVAL : 0;
    if (err) {
        close(fd);
        return -err;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    return fd;
}

int ggfs_folder_read_head(const ggfs_folder *f, const char *real, void *buf, size_t cap, size_t *got,
                          struct stat *st)
{
    struct stat own;
    *got = 0;
    const int fd = open_regular(f, real, st ? st : &own);
    if (fd < 0)
        return -fd;
    const int err = ggfs_pread_full(fd, buf, cap, 0, got);
    close(fd);
    return err;
}

int ggfs_folder_read_small(const ggfs_folder *f, const char *real, size_t max, char **data, size_t *len)
{
    struct stat st;
    const int fd = open_regular(f, real, &st);
    if (fd < 0)
        return -fd;
    int err = 0;
    char *buf = NULL;
    size_t got = 0;
    if ((uint64_t)st.st_size > max)
        err = EFBIG;
    else if (!(buf = malloc((size_t)st.st_size + 1)))
        err = ENOMEM;
    else
        err = ggfs_pread_full(fd, buf, (size_t)st.st_size, 0, &got);
    close(fd);
    if (err) {
        free(buf);
        return err;
    }
    buf[got] = '\0';
    *data = buf;
    *len = got;
    return 0;
}
