/*
 * Block files under the cache directory, written whole under a temporary
 * name and renamed into place: the rename is atomic, so two daemons sharing
 * the directory (or a daemon killed mid-write) never leave a block that
 * reads as whole but is not. A block file whose size is not the block's is
 * ignored.
 */
#define _GNU_SOURCE // O_DIRECTORY, O_CLOEXEC with openat, gettid-free naming
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/disk_cache.h"
#include "util/fnv.h"
#include "util/pread_full.h"
#include "util/write_full.h"

#define SUBDIR "gguf-fs-blocks"

struct ggfs_disk_cache {
    int dir;               // the file's directory
    uint64_t size;         // the file's size
    size_t block_size;
    atomic_uint_fast64_t tmp_counter;
    // The blocks known to be there (found at open, written, or seen since),
    // so that asking costs no system call, and their bytes.
    _Atomic uint64_t *present;
    _Atomic uint64_t bytes;
};

/* mkdir that accepts a directory someone else made first. */
static bool make_dir(const char *path)
{
    return mkdir(path, 0777) == 0 || errno == EEXIST;
}

/* Writes name in the directory whole, or not at all. */
static bool write_file(ggfs_disk_cache *c, const char *name, const void *data, size_t len)
{
    char tmp[96];
    snprintf(tmp, sizeof tmp, ".%s.%ld.%" PRIuFAST64 ".tmp", name, (long)getpid(),
             atomic_fetch_add(&c->tmp_counter, 1));
    const int fd = openat(c->dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return false;
    const bool ok = ggfs_write_full(fd, data, len) == 0;
    close(fd);
    if (!ok || renameat(c->dir, tmp, c->dir, name) != 0) {
        unlinkat(c->dir, tmp, 0);
        return false;
    }
    return true;
}

static size_t block_len(const ggfs_disk_cache *c, uint64_t index);

/* Notes block index as there. */
static void mark_present(ggfs_disk_cache *c, uint64_t index)
{
    const uint64_t bit = UINT64_C(1) << (index % 64);
    if (!(atomic_fetch_or(&c->present[index / 64], bit) & bit))
        atomic_fetch_add(&c->bytes, block_len(c, index));
}

/* The blocks already there, by their names and sizes. */
static void scan_present(ggfs_disk_cache *c)
{
    const int fd = dup(c->dir);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    const uint64_t n_blocks = (c->size + c->block_size - 1) / c->block_size;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end;
        errno = 0;
        const unsigned long long index = strtoull(e->d_name, &end, 16);
        struct stat st;
        if (e->d_name[0] == '.' || *end != '\0' || end - e->d_name < 8 || errno != 0 || index >= n_blocks ||
            fstatat(c->dir, e->d_name, &st, 0) != 0 || (uint64_t)st.st_size != block_len(c, index))
            continue;
        mark_present(c, index);
    }
    closedir(d);
}

ggfs_disk_cache *ggfs_disk_cache_open(const char *root, const char *url, const char *validator,
                                      uint64_t size, size_t block_size, char *why, size_t why_size)
{
    if (block_size == 0 || size / block_size >= GGFS_DISK_CACHE_BLOCKS_MAX) {
        snprintf(why, why_size, "a file of %" PRIu64 " bytes is over the %" PRIu64 " blocks it keeps", size,
                 (uint64_t)GGFS_DISK_CACHE_BLOCKS_MAX);
        return NULL;
    }
    char identity[4096 + 512];
    const int id_len = snprintf(identity, sizeof identity, "%s\n%s\n%" PRIu64 "\n", url, validator, size);
    if (id_len < 0 || (size_t)id_len >= sizeof identity) {
        snprintf(why, why_size, "URL too long for the disk cache");
        return NULL;
    }
    const uint64_t key = ggfs_fnv64(GGFS_FNV64_OFFSET, identity, (size_t)id_len);
    char path[4096];
    snprintf(path, sizeof path, "%s/" SUBDIR, root);
    if (!make_dir(root) || !make_dir(path)) {
        snprintf(why, why_size, "cannot make %s: %s", path, strerror(errno));
        return NULL;
    }
    const size_t at = strlen(path);
    snprintf(path + at, sizeof path - at, "/%016" PRIx64, key);
    if (!make_dir(path)) {
        snprintf(why, why_size, "cannot make %s: %s", path, strerror(errno));
        return NULL;
    }
    ggfs_disk_cache *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    c->size = size;
    c->block_size = block_size;
    atomic_init(&c->tmp_counter, 0);
    atomic_init(&c->bytes, 0);
    c->present = calloc((size + block_size - 1) / block_size / 64 + 1, sizeof *c->present);
    c->dir = c->present ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (c->dir < 0) {
        snprintf(why, why_size, "cannot open %s: %s", path, c->present ? strerror(errno) : "out of memory");
        free(c->present);
        free(c);
        return NULL;
    }
    // The key file says whose blocks these are.
    char found[sizeof identity];
    ssize_t n = -1;
    const int fd = openat(c->dir, "key", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = read(fd, found, sizeof found);
        close(fd);
    }
    if (n < 0 && !write_file(c, "key", identity, (size_t)id_len)) {
        snprintf(why, why_size, "cannot write in %s: %s", path, strerror(errno));
        ggfs_disk_cache_close(c);
        return NULL;
    }
    if (n >= 0 && (n != id_len || memcmp(found, identity, (size_t)id_len) != 0)) {
        snprintf(why, why_size, "%s holds another file's blocks", path);
        ggfs_disk_cache_close(c);
        return NULL;
    }
    scan_present(c);
    return c;
}

void ggfs_disk_cache_close(ggfs_disk_cache *c)
{
    if (!c)
        return;
    close(c->dir);
    free(c->present);
    free(c);
}

static size_t block_len(const ggfs_disk_cache *c, uint64_t index)
{
    const uint64_t start = index * c->block_size;
    if (start >= c->size)
        return 0;
    const uint64_t left = c->size - start;
    return left < c->block_size ? (size_t)left : c->block_size;
}

static int open_block(ggfs_disk_cache *c, uint64_t index)
{
    char name[32];
    snprintf(name, sizeof name, "%08" PRIx64, index);
    const int fd = openat(c->dir, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    const size_t want = block_len(c, index);
    if (want == 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size != want) {
        close(fd);
        return -1;
    }
    return fd;
}

bool ggfs_disk_cache_has(ggfs_disk_cache *c, uint64_t index)
{
    if (index * c->block_size >= c->size)
        return false;
    if (atomic_load(&c->present[index / 64]) & (UINT64_C(1) << (index % 64)))
        return true;
    // Another daemon sharing the directory may have written it since.
    const int fd = open_block(c, index);
    if (fd < 0)
        return false;
    close(fd);
    mark_present(c, index);
    return true;
}

uint64_t ggfs_disk_cache_bytes(ggfs_disk_cache *c)
{
    return atomic_load(&c->bytes);
}

bool ggfs_disk_cache_read(ggfs_disk_cache *c, uint64_t index, void *dst, size_t off, size_t len)
{
    if (off > block_len(c, index) || len > block_len(c, index) - off)
        return false;
    const int fd = open_block(c, index);
    if (fd < 0)
        return false;
    size_t got;
    const int err = ggfs_pread_full(fd, dst, len, off, &got);
    close(fd);
    return err == 0 && got == len;
}

const uint8_t *ggfs_disk_cache_map(ggfs_disk_cache *c, uint64_t index, size_t *len)
{
    const int fd = open_block(c, index);
    if (fd < 0)
        return NULL;
    *len = block_len(c, index);
    void *map = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return map == MAP_FAILED ? NULL : map;
}

void ggfs_disk_cache_unmap(const uint8_t *map_from_map, size_t len)
{
    munmap((void *)map_from_map, len);
}

void ggfs_disk_cache_advise(ggfs_disk_cache *c, uint64_t index)
{
    const int fd = open_block(c, index);
    if (fd < 0)
        return;
    posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
    close(fd);
}

void ggfs_disk_cache_write(ggfs_disk_cache *c, uint64_t index, const void *data, size_t len)
{
    if (len != block_len(c, index))
        return;
    char name[32];
    snprintf(name, sizeof name, "%08" PRIx64, index);
    if (write_file(c, name, data, len))
        mark_present(c, index);
}
