/*
 * Records kept in cache_dir (fs/source/cache_records.c, record_json.c,
 * url_record.c, catalog/hf_kept.c): what a disk that was written by
 * another version, cut short or tampered with hands back. The first byte
 * picks how the rest lands in a fresh cache_dir: as a whole record's data
 * (framed and summed, so the JSON readers see it) or as a record file's raw bytes (so the framing's checks do). Then
 * each reader gets it: the bytes, a URL's record, a kept Hub answer. A
 * found record's fields must be whole strings (what it says was published
 * of the file one line of text); a bad one's why must name the file.
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

static void raw_record(const char *dir, const char *kind, const uint8_t *bytes, size_t len);

/* A whole record of bytes, framed as cache_records.h lays it out (magic,
 * name and data lengths, the FNV-1a sum of name then data, the name), and
 * written without the writer's fsyncs, which would slow each run to a
 * crawl. */
static void framed_record(const char *dir, const char *kind, const uint8_t *bytes, size_t len)
{
    static const char magic[] = "gguf-fs record 1\n";
    const size_t n = strlen(name), m = sizeof magic - 1;
    uint8_t *rec = malloc(m + 16 + n + len);
    if (!rec)
        abort();
    const uint64_t sum = ggfs_fnv64(ggfs_fnv64(GGFS_FNV64_OFFSET, name, n), bytes, len);
    memcpy(rec, magic, m);
    for (int i = 0; i < 4; i++) {
        rec[m + i] = (uint8_t)(n >> (8 * i));
        rec[m + 4 + i] = (uint8_t)(len >> (8 * i));
    }
    for (int i = 0; i < 8; i++)
        rec[m + 8 + i] = (uint8_t)(sum >> (8 * i));
    memcpy(rec + m + 16, name, n);
    if (len)
        memcpy(rec + m + 16 + n, bytes, len);
    raw_record(dir, kind, rec, m + 16 + n + len);
    free(rec);
}

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
        // What was published: a known kind, one line of text naming where
        // (it goes into warnings and log lines), a size under the limit.
        const ggfs_published *p = &r.published;
        if (p->kind > GGFS_PUBLISHED_MD5 || !memchr(p->where, '\0', sizeof p->where) ||
            p->size > UINT64_C(1) << 62 || (p->kind == GGFS_PUBLISHED_NONE && p->where[0]))
            abort();
        for (const char *c = p->where; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
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
    // In memory when the machine has a tmpfs there: on a disk, making and
    // removing the folder each run waits on the journal.
    char dir[] = "/dev/shm/ggfs-fuzz-records-XXXXXX", sub[64];
    if (!mkdtemp(dir)) {
        memcpy(dir, "/tmp/ggfs-fuzz-records-XXXXXX", sizeof "/tmp/ggfs-fuzz-records-XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    snprintf(sub, sizeof sub, "%s/" GGFS_CACHE_RECORD_SUBDIR, dir);
    if (mkdir(sub, 0755) != 0)
        abort();
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        (data[0] & 1 ? raw_record : framed_record)(dir, kinds[k], data + 1, size - 1);
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
