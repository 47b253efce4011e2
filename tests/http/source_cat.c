/*
 * Reads ranges of a remote source the way the daemon does, for the tests:
 * opens NAME (http://, https:// or hf://) as a source and writes each range
 * OFF:LEN, read in chunks like the kernel's requests, to stdout or to the
 * file OUT. With -j the ranges are read at the same time, one thread each.
 * Every range reports "OFF LEN errno SECONDS" on stderr; `size N` and
 * `etag_pinned` come first when -i is given.
 *
 *   usage: source_cat [-i] [-j] [-c CHUNK] [-m CACHE_MB] [-n CONNECTIONS]
 *                     [-d CACHE_DIR] [-t TIMEOUT_S] [-r REPEAT] [-w MS]
 *                     [-k MS] NAME [OFF:LEN[:OUT]]...
 *
 * -r reads each range REPEAT times (writing it once); -w waits MS
 * milliseconds between opening and reading (so that a test can change the
 * server's behaviour in between) and again before closing (so that
 * read-ahead has run). -k retries a range whose read failed as the kernel
 * does: page by page (4 KiB) from its start until a page fails, MS
 * milliseconds between pages (a busy machine's pace), and reports
 * "retry OFF PAGES_READ ERRNO SECONDS", the seconds the failing page took.
 *
 * Exit status: 0 when every range read, 1 when one failed, 2 when NAME
 * did not open (its message on stderr, as the daemon prints it).
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/remote.h"
#include "source/source_http.h"
#include "util/clock.h"

typedef struct job {
    ggfs_source *src;
    uint64_t off, len;
    const char *out;
    size_t chunk;
    int repeat;
    int retry_ms;          // -k, or -1
    int status;
    double seconds;
} job;

#define PAGE 4096

/* The kernel's retry of a failed read, page by page. */
static void retry_by_page(const job *j, uint8_t *buf)
{
    uint64_t pages = 0;
    int status = 0;
    double seconds = 0;
    const size_t page = j->chunk < PAGE ? j->chunk : PAGE; // buf holds a chunk
    for (uint64_t at = 0; at < j->len && status == 0; at += page, pages += status == 0) {
        usleep((useconds_t)j->retry_ms * 1000);
        const size_t n = j->len - at < page ? (size_t)(j->len - at) : page;
        const int64_t start = ggfs_now_ns();
        status = ggfs_source_read(j->src, buf, n, j->off + at, j->src->size);
        seconds = (double)(ggfs_now_ns() - start) / 1e9;
    }
    fprintf(stderr, "retry %" PRIu64 " %" PRIu64 " %d %.3f\n", j->off, pages, status, seconds);
}

static void *read_range(void *arg)
{
    job *j = arg;
    FILE *out = j->out ? fopen(j->out, "wb") : stdout;
    if (!out) {
        j->status = errno;
        return NULL;
    }
    uint8_t *buf = malloc(j->chunk);
    const int64_t start = ggfs_now_ns();
    for (int rep = 0; rep < j->repeat && j->status == 0; rep++) {
        for (uint64_t at = 0; at < j->len && j->status == 0;) {
            const size_t n = j->len - at < j->chunk ? (size_t)(j->len - at) : j->chunk;
            j->status = buf ? ggfs_source_read(j->src, buf, n, j->off + at, j->src->size) : ENOMEM;
            if (j->status == 0 && rep == 0 && fwrite(buf, 1, n, out) != n)
                j->status = EIO;
            at += n;
        }
    }
    j->seconds = (double)(ggfs_now_ns() - start) / 1e9;
    if (j->status != 0 && j->retry_ms >= 0 && buf)
        retry_by_page(j, buf);
    free(buf);
    if (out != stdout)
        fclose(out);
    else
        fflush(out);
    return NULL;
}

int main(int argc, char **argv)
{
    ggfs_remote_options opts = {.cache_mb = GGFS_REMOTE_DEFAULT_CACHE_MB, .timeout_s = GGFS_REMOTE_DEFAULT_TIMEOUT_S};
    bool info = false, parallel = false;
    size_t chunk = 1 << 20;
    int repeat = 1, wait_ms = 0, retry_ms = -1, c;
    while ((c = getopt(argc, argv, "ijc:m:n:d:t:r:w:k:")) != -1) {
        switch (c) {
        case 'i': info = true; break;
        case 'j': parallel = true; break;
        case 'c': chunk = strtoull(optarg, NULL, 10); break;
        case 'm': opts.cache_mb = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'n': opts.connections = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'd': opts.cache_dir = optarg; break;
        case 't': opts.timeout_s = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'r': repeat = atoi(optarg); break;
        case 'w': wait_ms = atoi(optarg); break;
        case 'k': retry_ms = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-i] [-j] [-c CHUNK] [-m CACHE_MB] [-d CACHE_DIR] [-t TIMEOUT_S] [-r N] [-w MS] [-k MS] NAME "
                    "[OFF:LEN[:OUT]]...\n",
                    argv[0]);
            return 2;
        }
    }
    if (optind >= argc || chunk == 0)
        return 2;
    const char *name = argv[optind];
    char why[256];
    ggfs_remote *remote = ggfs_remote_new(&opts, why, sizeof why);
    if (!remote) {
        fprintf(stderr, "gguf-fs: %s\n", why);
        return 2;
    }
    ggp_error err;
    ggfs_source *src = ggfs_source_http_open(name, remote, &err);
    if (!src) {
        fprintf(stderr, "gguf-fs: %s: %s\n", name, err.msg);
        ggfs_remote_free(remote);
        return 2;
    }
    if (info)
        fprintf(stderr, "size %" PRIu64 "\n", src->size);
    src->ops->opened(src);
    if (wait_ms > 0)
        usleep((useconds_t)wait_ms * 1000);
    const int n = argc - optind - 1;
    job *jobs = calloc(n > 0 ? (size_t)n : 1, sizeof *jobs);
    pthread_t *threads = calloc(n > 0 ? (size_t)n : 1, sizeof *threads);
    for (int i = 0; i < n; i++) {
        char *spec = argv[optind + 1 + i];
        char *end;
        jobs[i] = (job){.src = src, .chunk = chunk, .repeat = repeat, .retry_ms = retry_ms};
        jobs[i].off = strtoull(spec, &end, 10);
        jobs[i].len = *end == ':' ? strtoull(end + 1, &end, 10) : 0;
        jobs[i].out = *end == ':' ? end + 1 : NULL;
        if (parallel)
            pthread_create(&threads[i], NULL, read_range, &jobs[i]);
        else
            read_range(&jobs[i]);
    }
    int status = 0;
    for (int i = 0; i < n; i++) {
        if (parallel)
            pthread_join(threads[i], NULL);
        fprintf(stderr, "range %" PRIu64 " %" PRIu64 " %d %.3f\n", jobs[i].off, jobs[i].len,
                jobs[i].status, jobs[i].seconds);
        if (jobs[i].status != 0)
            status = 1;
    }
    if (info)
        fprintf(stderr, "unchanged %d\n", ggfs_source_unchanged(src));
    if (wait_ms > 0)
        usleep((useconds_t)wait_ms * 1000);
    free(jobs);
    free(threads);
    ggfs_source_close(src);
    ggfs_remote_free(remote);
    return status;
}
