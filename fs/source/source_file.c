/*
 * A local file as a source: opened, checked to be a regular file and
 * mapped read-only once. Reads are pread (a file cut short gives a short
 * count, not SIGBUS); the mapping serves readers that can survive a fault
 * (the SIGBUS guard, or the kernel's own copy of a reply).
 *
 * Change detection: the identity, size and mtime recorded at open are
 * compared with the open file on every data read, and with whatever the
 * path names at most once a second (a file renamed over the model leaves
 * the open one intact). A change is final: from then on data reads fail
 * with EIO, and the log gets one line saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "source/published_local.h"
#include "source/source.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/pread_full.h"

#define PATH_CHECK_NS INT64_C(1000000000)

typedef struct file_source {
    ggfs_source base;
    int fd;
    char *path;          // the name made absolute, links unresolved: for the
                         // path check and the lookup of what is published
    atomic_bool changed;
    atomic_int_least64_t next_path_check; // CLOCK_MONOTONIC ns
} file_source;

static void file_mark_changed(ggfs_source *s, const char *why)
{
    file_source *f = (file_source *)s;
    if (!atomic_exchange(&f->changed, true))
        ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s: %s since it was mounted; reads of tensor data now fail with EIO\n",
                 f->base.name, why);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static bool file_unchanged(ggfs_source *s)
{
    file_source *f = (file_source *)s;
    if (atomic_load(&f->changed))
        return false;
    struct stat st;
    if (fstat(f->fd, &st) != 0 || !same_file(&st, &f->base.st)) {
        char why[96];
        snprintf(why, sizeof why, "changed (size %lld, now %lld)", (long long)f->base.st.st_size,
                 (long long)st.st_size);
        file_mark_changed(s, why);
        return false;
    }
    const int64_t now = ggfs_now_ns();
    int64_t due = atomic_load(&f->next_path_check);
    if (now >= due && atomic_compare_exchange_strong(&f->next_path_check, &due, now + PATH_CHECK_NS)) {
        if (stat(f->path, &st) != 0 || !same_file(&st, &f->base.st)) {
            file_mark_changed(s, "was replaced or removed");
            return false;
        }
    }
    return true;
}

static int file_read(ggfs_source *s, void *buf, size_t len, uint64_t off, uint64_t end)
{
    (void)end; // the kernel reads ahead
    file_source *f = (file_source *)s;
    size_t got;
    if (ggfs_pread_full(f->fd, buf, len, off, &got) != 0 || got < len) {
        file_mark_changed(s, "was cut short");
        return EIO;
    }
    return 0;
}

/* The header has been read: from now on the file's readers are its
 * users', whose sequential reads want the kernel's read-ahead back. */
static void file_opened(ggfs_source *s)
{
    posix_fadvise(((file_source *)s)->fd, 0, 0, POSIX_FADV_NORMAL);
}

static void file_close(ggfs_source *s)
{
    file_source *f = (file_source *)s;
    if (f->base.map)
        munmap((void *)f->base.map, f->base.size);
    if (f->fd >= 0)
        close(f->fd);
    free(f->path);
    free((char *)f->base.name);
    free(f);
}

static void file_look_up_published(const ggfs_source *s, ggfs_published *out)
{
    ggfs_published_local(((const file_source *)s)->path, out);
}

static const ggfs_source_ops file_ops = {
    .read = file_read,
    .unchanged = file_unchanged,
    .mark_changed = file_mark_changed,
    .close = file_close,
    .opened = file_opened,
    .look_up_published = file_look_up_published,
};

/* path, or the working directory then path when it is relative
 * (malloc'ed; NULL with errno set). The working directory is what getcwd
 * says, links resolved, so the result names what path named from it. */
static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    const size_t a = strcmp(cwd, "/") == 0 ? 0 : strlen(cwd), b = strlen(path);
    char *out = malloc(a + 1 + b + 1);
    if (!out)
        return NULL;
    memcpy(out, cwd, a);
    out[a] = '/';
    memcpy(out + a + 1, path, b + 1);
    return out;
}

static ggfs_source *fail(file_source *f, ggp_error *err, const char *fmt, const char *why)
{
    err->code = GGP_ERR_IO;
    err->offset = 0;
    snprintf(err->msg, sizeof err->msg, fmt, why);
    file_close(&f->base);
    return NULL;
}

ggfs_source *ggfs_source_file_open(const char *path, ggp_error *err)
{
    file_source *f = calloc(1, sizeof *f);
    if (!f) {
        *err = (ggp_error){GGP_ERR_NOMEM, 0, "out of memory"};
        return NULL;
    }
    f->fd = -1;
    f->base.ops = &file_ops;
    atomic_init(&f->changed, false);
    atomic_init(&f->next_path_check, 0);
    f->base.name = strdup(path);
    if (!f->base.name)
        return fail(f, err, "%s", "out of memory");
    // O_NONBLOCK: opening a FIFO named as a model must not wait for a
    // writer; it is refused below as not a regular file. (The flag means
    // nothing to a regular file's reads.)
    f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f->fd < 0)
        return fail(f, err, "cannot open: %s", strerror(errno));
    if (fstat(f->fd, &f->base.st) != 0)
        return fail(f, err, "cannot open: %s", strerror(errno));
    if (!S_ISREG(f->base.st.st_mode))
        return fail(f, err, "cannot open: %s", "not a regular file");
    // Watched by name: a relative one made absolute (the daemon leaves its
    // working directory), an absolute one as given. Neither is resolved:
    // what is published is looked up beside the name (published_local.h),
    // and resolving would cost a catalog walk a readlink per component of
    // every model's path.
    f->path = absolute(path);
    if (!f->path)
        return fail(f, err, "cannot open: %s", strerror(errno));
    // No read-ahead past what the header's reads ask: opening a model to
    // read its metadata (a walk over a folder of models) reads no tensor
    // data. Undone once the model is open (file_opened).
    posix_fadvise(f->fd, 0, 0, POSIX_FADV_RANDOM);
    f->base.size = (uint64_t)f->base.st.st_size;
    if (f->base.size > 0) {
        void *map = mmap(NULL, f->base.size, PROT_READ, MAP_SHARED, f->fd, 0);
        if (map == MAP_FAILED)
            return fail(f, err, "cannot map the file: %s", strerror(errno));
        f->base.map = map;
    }
    return &f->base;
}
