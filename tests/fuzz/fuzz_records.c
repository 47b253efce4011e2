/*
 * Records kept in cache_dir (fs/source/cache_records.c, record_json.c,
 * url_record.c, catalog/hf_kept.c): what a disk that was written by
 * another version, cut short or tampered with hands back. The first byte
 * picks how the rest lands in a fresh cache_dir: as a whole record's data
 * (framed and summed by ggfs_cache_record_put, so the JSON readers see
 * it) or as a record file's raw bytes (so the framing's checks do). Then
 * each reader gets it: the bytes, a URL's record, a kept Hub answer. A
 * found record's fields must be whole strings; a bad one's why must name
 * the file.
 */
#define _DEFAULT_SOURCE // mkdtemp
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/hf_kept.h"
#include "source/cache_records.h"
#include "source/url_record.h"
#include "util/fnv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char name[] = "https://example.org/org/repo/resolve/main/model.gguf";
static const char *const kinds[] = {"bytes", GGFS_URL_RECORD_KIND, GGFS_HF_KEPT_KIND};

static void raw_record(const char *dir, const char *kind, const uint8_t *bytes, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" GGFS_CACHE_RECORD_SUBDIR "/%s-%016" PRIx64, dir, kind,
             ggfs_fnv64(GGFS_FNV64_OFFSET, name, strlen(name)));
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        abort();
    if (len && write(fd, bytes, len) != (ssize_t)len)
        abort();
    close(fd);
}

static void check_why(ggfs_cache_record_status st, const char *why)
{
    if (st == GGFS_CACHE_RECORD_BAD && !strstr(why, GGFS_CACHE_RECORD_SUBDIR "/"))
        abort();
}

static void read_back(const char *dir)
{
    char why[512] = "";
    void *bytes;
    size_t len;
    ggfs_cache_record_status st = ggfs_cache_record_get(dir, kinds[0], name, &bytes, &len, why, sizeof why);
    check_why(st, why);
    if (st == GGFS_CACHE_RECORD_FOUND) {
        if (((const char *)bytes)[len] != '\0') // NUL-terminated after its len
            abort();
        free(bytes);
    }
    ggfs_url_record r;
    st = ggfs_url_record_get(dir, name, &r, why, sizeof why);
    check_why(st, why);
    if (st == GGFS_CACHE_RECORD_FOUND) {
        if (!r.url || !r.url[0] || (!r.etag && !r.last_modified) || r.size > UINT64_C(1) << 62)
            abort();
        ggfs_url_record_destroy(&r);
    }
    ggfs_api_reply reply;
    st = ggfs_hf_kept_get(dir, name, &reply, why, sizeof why);
    check_why(st, why);
    if (st == GGFS_CACHE_RECORD_FOUND) {
        if (!reply.body || reply.body[reply.len] != '\0' || !memchr(reply.next, '\0', sizeof reply.next))
            abort();
        free(reply.body);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char dir[] = "/tmp/ggfs-fuzz-records-XXXXXX", sub[64];
    if (!mkdtemp(dir))
        abort();
    snprintf(sub, sizeof sub, "%s/" GGFS_CACHE_RECORD_SUBDIR, dir);
    if (mkdir(sub, 0755) != 0)
        abort();
    char why[512];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (data[0] & 1)
            raw_record(dir, kinds[k], data + 1, size - 1);
        else if (!ggfs_cache_record_put(dir, kinds[k], name, data + 1, size - 1, why, sizeof why))
            abort();
    }
    read_back(dir);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s-%016" PRIx64, sub, kinds[k], ggfs_fnv64(GGFS_FNV64_OFFSET, name, strlen(name)));
        unlink(path);
    }
    rmdir(sub);
    rmdir(dir);
    return 0;
}
