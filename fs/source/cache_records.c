/*
 * Kept records (cache_records.h): one file per record, written whole
 * under a temporary name and renamed into place; read whole and checked
 * field by field before anything of it is believed.
 */
#define _DEFAULT_SOURCE // fsync on a directory's descriptor, O_NOFOLLOW
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/cache_records.h"
#include "util/fnv.h"
#include "util/pread_full.h"
#include "util/write_full.h"

#define MAGIC "gguf-fs record 1\n"
#define MAGIC_LEN (sizeof MAGIC - 1)
#define AT_NAME_LEN MAGIC_LEN
#define AT_DATA_LEN (AT_NAME_LEN + 4)
#define AT_SUM (AT_DATA_LEN + 4)
#define HEADER_LEN (AT_SUM + 8)
#define FILE_NAME_MAX (GGFS_CACHE_RECORD_KIND_MAX + 1 + 16 + 1)
_Static_assert(HEADER_LEN == 33, "the layout in cache_records.h");

// Temporary names of one process differ by this; of two, by their pids.
static atomic_uint_fast64_t tmp_counter;

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t checksum(const char *name, size_t name_len, const void *data, size_t len)
{
    return ggfs_fnv64(ggfs_fnv64(GGFS_FNV64_OFFSET, name, name_len), data, len);
}

/* The record's file name, KIND-HASH; false, with why filled, when the kind
 * or the name is not allowed. */
static bool file_name(const char *kind, const char *name, char out[FILE_NAME_MAX], char *why, size_t why_size)
{
    const size_t kind_len = strlen(kind);
    bool ok = kind_len > 0 && kind_len <= GGFS_CACHE_RECORD_KIND_MAX;
    for (size_t i = 0; ok && i < kind_len; i++)
        ok = (kind[i] >= 'a' && kind[i] <= 'z') || (kind[i] >= '0' && kind[i] <= '9') || kind[i] == '-';
    if (!ok) {
        snprintf(why, why_size, "record kind '%.*s' is not 1 to %d of a-z, 0-9 and '-'",
                 GGFS_CACHE_RECORD_KIND_MAX, kind, GGFS_CACHE_RECORD_KIND_MAX);
        return false;
    }
    const size_t name_len = strlen(name);
    if (name_len == 0 || name_len > GGFS_CACHE_RECORD_NAME_MAX) {
        snprintf(why, why_size, "a record's name is 1 to %d bytes, not %zu", GGFS_CACHE_RECORD_NAME_MAX,
                 name_len);
        return false;
    }
    snprintf(out, FILE_NAME_MAX, "%s-%016" PRIx64, kind, ggfs_fnv64(GGFS_FNV64_OFFSET, name, name_len));
    return true;
}

/* The records' directory under cache_dir, opened (made first when make);
 * -1, with why filled and errno kept, when it cannot be. */
static int open_records_dir(const char *cache_dir, bool make, char *why, size_t why_size)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/" GGFS_CACHE_RECORD_SUBDIR, cache_dir) >= (int)sizeof path) {
        snprintf(why, why_size, "%s: path too long", cache_dir);
        errno = ENAMETOOLONG;
        return -1;
    }
    int dir = -1;
    if (!make || ((mkdir(cache_dir, 0777) == 0 || errno == EEXIST) && (mkdir(path, 0777) == 0 || errno == EEXIST)))
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        const int err = errno;
        snprintf(why, why_size, "cannot %s %s: %s", make ? "make" : "open", path, strerror(err));
        errno = err;
    }
    return dir;
}

bool ggfs_cache_record_put(const char *cache_dir, const char *kind, const char *name, const void *data,
                           size_t len, char *why, size_t why_size)
{
    char file[FILE_NAME_MAX];
    if (!file_name(kind, name, file, why, why_size))
        return false;
    if (len > GGFS_CACHE_RECORD_DATA_MAX) {
        snprintf(why, why_size, "record %s: %zu bytes, over the %u a record may hold", file, len,
                 GGFS_CACHE_RECORD_DATA_MAX);
        return false;
    }
    const int dir = open_records_dir(cache_dir, true, why, why_size);
    if (dir < 0)
        return false;
    const size_t name_len = strlen(name);
    uint8_t header[HEADER_LEN];
    memcpy(header, MAGIC, MAGIC_LEN);
    put_le(header + AT_NAME_LEN, name_len, 4);
    put_le(header + AT_DATA_LEN, len, 4);
    put_le(header + AT_SUM, checksum(name, name_len, data, len), 8);

    char tmp[FILE_NAME_MAX + 64];
    snprintf(tmp, sizeof tmp, ".%s.%ld.%" PRIuFAST64 ".tmp", file, (long)getpid(),
             atomic_fetch_add(&tmp_counter, 1));
    int err = 0;
    const int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        err = errno;
    } else {
        err = ggfs_write_full(fd, header, sizeof header);
        if (!err)
            err = ggfs_write_full(fd, name, name_len);
        if (!err)
            err = ggfs_write_full(fd, data, len);
        // Flushed before the rename: a crash never leaves the name on a
        // file whose blocks are not on disk yet.
        if (!err && fsync(fd) != 0)
            err = errno;
        if (close(fd) != 0 && !err)
            err = errno;
        if (!err && renameat(dir, tmp, dir, file) != 0)
            err = errno;
        if (err)
            unlinkat(dir, tmp, 0);
        else
            fsync(dir); // the rename itself; a failure here loses only durability
    }
    close(dir);
    if (err)
        snprintf(why, why_size, "cannot write %s/" GGFS_CACHE_RECORD_SUBDIR "/%s: %s", cache_dir, file,
                 strerror(err));
    return err == 0;
}

/* Checks a record file's bytes (size of them) against the name; NULL when
 * it is whole (and *other when it is another name's, hashed alike), else
 * what is wrong, with *at its offset. */
static const char *check_record(const uint8_t *bytes, size_t size, const char *name, uint64_t *at, bool *other)
{
    *other = false;
    *at = 0;
    if (size < HEADER_LEN)
        return "shorter than a record's header";
    if (memcmp(bytes, MAGIC, MAGIC_LEN) != 0)
        return "not a gguf-fs record (format line)";
    const uint64_t name_len = get_le(bytes + AT_NAME_LEN, 4), data_len = get_le(bytes + AT_DATA_LEN, 4);
    *at = AT_NAME_LEN;
    if (name_len > GGFS_CACHE_RECORD_NAME_MAX || name_len > size - HEADER_LEN)
        return "name length past the end of the file";
    *at = AT_DATA_LEN;
    if (data_len != size - HEADER_LEN - name_len)
        return "data length is not what the file holds after the name";
    *at = HEADER_LEN;
    if (name_len != strlen(name) || memcmp(bytes + HEADER_LEN, name, name_len) != 0)
        return *other = true, NULL;
    *at = AT_SUM;
    if (get_le(bytes + AT_SUM, 8) != checksum(name, name_len, bytes + HEADER_LEN + name_len, data_len))
        return "checksum does not match the name and data";
    return NULL;
}

ggfs_cache_record_status ggfs_cache_record_get(const char *cache_dir, const char *kind, const char *name,
                                               void **data, size_t *len, char *why, size_t why_size)
{
    *data = NULL;
    *len = 0;
    char file[FILE_NAME_MAX];
    if (!file_name(kind, name, file, why, why_size))
        return GGFS_CACHE_RECORD_BAD;
    const int dir = open_records_dir(cache_dir, false, why, why_size);
    if (dir < 0)
        return errno == ENOENT ? GGFS_CACHE_RECORD_MISSING : GGFS_CACHE_RECORD_BAD;
    const int fd = openat(dir, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    const int open_err = errno;
    close(dir);
    if (fd < 0 && open_err == ENOENT)
        return GGFS_CACHE_RECORD_MISSING;
    const char *problem = NULL;
    uint64_t at = 0;
    bool other = false;
    uint8_t *bytes = NULL;
    struct stat st;
    size_t got = 0;
    if (fd < 0)
        problem = strerror(open_err);
    else if (fstat(fd, &st) != 0)
        problem = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        problem = "not a regular file";
    else if ((uint64_t)st.st_size > HEADER_LEN + GGFS_CACHE_RECORD_NAME_MAX + (uint64_t)GGFS_CACHE_RECORD_DATA_MAX)
        problem = "larger than a record may be";
    else if (!(bytes = malloc((size_t)st.st_size + 1)))
        problem = "out of memory";
    else if (ggfs_pread_full(fd, bytes, (size_t)st.st_size, 0, &got) != 0 || got != (size_t)st.st_size)
        problem = "cannot be read whole";
    else
        problem = check_record(bytes, got, name, &at, &other);
    if (fd >= 0)
        close(fd);
    if (problem || other) {
        if (problem)
            snprintf(why, why_size, GGFS_CACHE_RECORD_SUBDIR "/%s: offset %" PRIu64 ": %s", file, at, problem);
        free(bytes);
        return problem ? GGFS_CACHE_RECORD_BAD : GGFS_CACHE_RECORD_MISSING;
    }
    const size_t name_len = (size_t)get_le(bytes + AT_NAME_LEN, 4);
    *len = got - HEADER_LEN - name_len;
    memmove(bytes, bytes + HEADER_LEN + name_len, *len);
    bytes[*len] = '\0';
    *data = bytes;
    return GGFS_CACHE_RECORD_FOUND;
}

void ggfs_cache_record_blame(const char *kind, const char *name, uint64_t data_offset, const char *problem,
                             char *why, size_t why_size)
{
    char file[FILE_NAME_MAX];
    if (!file_name(kind, name, file, why, why_size))
        return;
    snprintf(why, why_size, GGFS_CACHE_RECORD_SUBDIR "/%s: offset %" PRIu64 ": %s", file,
             HEADER_LEN + strlen(name) + data_offset, problem);
}
