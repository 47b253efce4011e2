/*
 * A file on an HTTP(S) server (or the Hugging Face Hub, or an S3 bucket:
 * each request signed, and S3's error body read for its code) as a source: read
 * in blocks of GGFS_REMOTE_BLOCK_SIZE with range requests, nothing fetched
 * but what is read and what a sequential reader will read next.
 *
 * A read takes each block it touches from the memory cache, else from the
 * disk cache (straight into the reader's buffer), else claims it, and the
 * blocks after it that the read also needs, and fetches them in one request
 * with retries until timeout_s. No lock is held while bytes move, so a
 * stalled request delays only the readers of its blocks.
 *
 * Sequential readers (a stream of reads each starting where the last
 * ended) get read-ahead: a window past the read that grows toward three
 * quarters of the memory cache (shared between the readers being read
 * ahead for), fetched by the mount's fetcher (fetcher.h) over up to
 * connections requests at once, each of a few blocks. A request's blocks
 * are published one by one as their bytes arrive, so a reader waits for
 * its own block only; a request that stalls is given up after
 * GGFS_HTTP_STALL_S and its blocks fetched again by their readers, while
 * the other requests go on.
 *
 * Reads whose blocks are all in memory are replied by the thread that took
 * them (lend_ready); the others go to the remote-read threads.
 *
 * The size and ETag (or Last-Modified) seen at open are checked in every
 * response; a difference marks the source changed for good, and its data
 * reads fail with EIO. With a disk cache they are kept there too
 * (url_record.h), so that an offline mount (-o offline) opens the file as
 * it was, sends no request, and reads what the disk cache holds: a block
 * not there fails with EIO.
 *
 * What the store publishes of the bytes is read from the answers to the
 * open's request (response_headers.h: an hf:// name's X-Linked-Etag and
 * X-Linked-Size, an s3:// object's checksum, asked for, or single-part
 * ETag) into source->published, and kept in the records with the rest.
 */
#define _DEFAULT_SOURCE // strcasecmp
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "source/disk_cache.h"
#include "source/fetcher.h"
#include "source/hf_name.h"
#include "source/remote.h"
#include "source/remote_status.h"
#include "source/response_headers.h"
#include "source/s3_error.h"
#include "source/s3_target.h"
#include "source/source_http.h"
#include "source/transfer_stats.h"
#include "source/url_record.h"
#include "util/clock.h"
#include "util/log.h"

#define BLOCK GGFS_REMOTE_BLOCK_SIZE
#define RUN_MAX 8          // blocks one reader fetches in one request
#define READAHEAD_FIRST 4  // blocks ahead once a stream is seen
#define READAHEAD_RUN 8    // blocks per read-ahead request at most
#define STREAMS 8          // sequential readers followed at once
#define URL_MAX 2048
// How long after a block's request started, or last brought a block of
// its run, a reader stops waiting for it and fetches the bytes it wants
// itself: a stalled request (a slow read-ahead, a reader of a neighbouring
// tensor) holds up nobody for longer, and readers arriving later do not
// wait at all.
#define WAIT_GRACE_NS INT64_C(1000000000)
// A block whose fetch just failed fails again at once for this long: the
// kernel retries a failed read page by page, and each retry would otherwise
// wait a whole timeout again. Each read within a failed read's range
// renews it (and its blocks' failures), for at most timeout_s after the
// failure: on a busy machine the kernel's retries of the pages before the
// failed block can take longer than this, one after another.
#define FAILED_FOR_NS INT64_C(500000000)
// Failed blocks remembered, and failed reads: more than a run of blocks
// one request brings, for two readers' failures at once.
#define FAILURES 32
// S3's error bodies are a few hundred bytes.
#define ERROR_BODY_MAX 4096

typedef struct stream {
    uint64_t last;         // last block read
    uint64_t ahead_to;     // blocks before this are read or being read ahead
    unsigned window;       // blocks to keep ahead
    uint64_t used;         // for replacing the least recently used
    ggfs_fetch_share share; // its read-ahead's part of the connections
} stream;

typedef struct http_source {
    ggfs_source base;
    ggfs_remote *remote;
    char *url;             // where requests start (an hf:// name resolved)
    char *bearer;          // the Hub token of an hf:// name, or NULL
    ggfs_secret secret;    // what requests carry, bound to its origin
    bool has_secret;
    ggfs_s3_target *s3;    // for s3:// names: bucket and signer; else NULL
    char *etag;            // pinned at open, or NULL
    char *last_modified;   // pinned at open (used without an ETag), or NULL
    uint64_t id;           // key of its blocks in the memory cache
    bool kept_by_url;      // block_files.h knows the key: its blocks
                           // outlive the source, for the next open
    uint64_t n_blocks;
    ggfs_disk_cache *disk; // or NULL
    ggfs_transfer_stats stats;
    atomic_bool changed;
    atomic_bool following; // read-ahead on (once the model is open)
    atomic_uint refs;      // the opener's, and one per read-ahead job

    pthread_mutex_t lock;  // guards what follows
    char data_url[URL_MAX]; // where the last redirect led: requests go there
    stream streams[STREAMS];
    uint64_t clock;
    struct {
        uint64_t block;
        int64_t until_ns;  // 0: unused
    } failed[FAILURES];    // blocks whose last fetch failed, recently
    unsigned next_failed;
    struct {
        uint64_t off, end;
        int64_t until_ns, renew_until_ns; // 0: unused
    } failed_reads[FAILURES]; // the reads that failed, recently
    unsigned next_failed_read;
} http_source;

/* ==== Lifetime ==== */

static void source_free(http_source *s)
{
    // Its blocks stay for the next open of the same file (block_files.h),
    // unless no open can find them or the file changed under it.
    if (s->remote && (!s->kept_by_url || atomic_load(&s->changed)))
        ggfs_block_cache_drop_source(s->remote->cache, s->id);
    ggfs_disk_cache_close(s->disk);
    ggfs_transfer_stats_destroy(&s->stats);
    pthread_mutex_destroy(&s->lock);
    free(s->url);
    free(s->bearer);
    if (s->s3) {
        ggfs_s3_target_close(s->s3);
        free(s->s3);
    }
    free(s->etag);
    free(s->last_modified);
    free((char *)s->base.name);
    free(s);
}

static void source_unref(http_source *s)
{
    if (atomic_fetch_sub(&s->refs, 1) == 1)
        source_free(s);
}

static void http_mark_changed(ggfs_source *src, const char *why)
{
    http_source *s = (http_source *)src;
    if (!atomic_exchange(&s->changed, true))
        ggfs_log(GGFS_LOG_ERR,
                 "gguf-fs: %s: changed on the server since it was mounted (%s); reads of tensor data now fail with EIO\n",
                 s->base.name, why);
}

static bool http_unchanged(ggfs_source *src)
{
    return !atomic_load(&((http_source *)src)->changed);
}

static void http_opened(ggfs_source *src)
{
    atomic_store(&((http_source *)src)->following, true);
}

static void http_close(ggfs_source *src)
{
    source_unref((http_source *)src);
}

/* ==== Fetching ==== */

/* The URL to send requests to, and the credential they carry where it
 * may go (the engine asks secret_origin.h at every hop). */
static void target(http_source *s, char *url, ggfs_http_range *r)
{
    pthread_mutex_lock(&s->lock);
    memcpy(url, s->data_url, URL_MAX);
    pthread_mutex_unlock(&s->lock);
    r->url = url;
    r->secret = s->has_secret ? &s->secret : NULL;
}

/* Remembers where a request to the start URL was redirected, so that later
 * requests skip the redirect (the Hub sends downloads to a CDN). */
static void learn_redirect(http_source *s, const char *asked, const char *effective)
{
    if (!effective[0] || strcmp(asked, s->url) != 0 || strcmp(effective, s->url) == 0 ||
        strlen(effective) >= URL_MAX)
        return;
    pthread_mutex_lock(&s->lock);
    strcpy(s->data_url, effective);
    pthread_mutex_unlock(&s->lock);
}

static void forget_redirect(http_source *s)
{
    pthread_mutex_lock(&s->lock);
    snprintf(s->data_url, URL_MAX, "%s", s->url);
    pthread_mutex_unlock(&s->lock);
}

/* How a fetch reports the parts it has filled (ggfs_http_range.part_done),
 * or none. */
typedef struct on_part {
    void (*done)(void *ctx, size_t i);
    void *ctx;
} on_part;

/* Passes a fetch's filled parts on, counting them, so that a request
 * started over asks only for the parts still missing. */
typedef struct relay {
    on_part to;
    size_t before;         // parts filled by the fetch's earlier requests
    size_t filled;         // parts filled in all
} relay;

static void relay_part(void *ctx, size_t i)
{
    relay *rl = ctx;
    rl->filled = rl->before + i + 1;
    rl->to.done(rl->to.ctx, rl->before + i);
}

/* An s3:// name's requests keep S3's error body. */
static void sign(const http_source *s, ggfs_http_range *r)
{
    if (!s->s3)
        return;
    r->body_max = ERROR_BODY_MAX;
    r->keep_header = "x-amz-bucket-region";
}

/* What the opening request's answers publish of the file
 * (response_headers.h), gathered as they come. */
static void published_seen(void *ctx, const char *url, const char *line, size_t len)
{
    ggfs_published_headers_line(ctx, url, line, len);
}

/* A failed S3 request's why, in S3's words (its code, from the body). */
static void in_s3_words(const http_source *s, ggfs_http_range *r, ggfs_http_outcome o)
{
    if (!s->s3 || o == GGFS_HTTP_OK || r->status < 300)
        return;
    ggfs_s3_error_explain(s->s3->bucket, r->status, r->body, r->body_len, r->header_got, r->why,
                          sizeof r->why);
}

/* Fetches [off, off + len) into parts (of part_size bytes each), retrying
 * until the deadline when `retry`. Returns 0, or EIO with why filled. */
static int fetch(http_source *s, uint64_t off, uint64_t len, uint8_t *const *parts, size_t part_size,
                 on_part progress, int64_t deadline, bool retry, char *why, size_t why_size)
{
    char url[URL_MAX];
    bool fell_back = false;
    relay rl = {progress, 0, 0};
    if (s->remote->opts.offline) {
        snprintf(why, why_size, "not in cache_dir (offline: no request is made)");
        return EIO;
    }
    for (;;) {
        const uint64_t skip = (uint64_t)rl.before * part_size;
        ggfs_http_range r = {
            .off = off + skip, .len = len - skip, .parts = parts + rl.before, .part_size = part_size,
            .part_done = progress.done ? relay_part : NULL, .part_ctx = &rl,
            .etag = s->etag, .last_modified = s->last_modified, .size = s->base.size,
            .deadline_ns = deadline, .received = &s->stats.received,
        };
        target(s, url, &r);
        sign(s, &r);
        ggfs_transfer_begin(&s->stats);
        const ggfs_http_outcome o = retry ? ggfs_http_fetch(s->remote->http, &r)
                                          : ggfs_http_get(s->remote->http, &r);
        in_s3_words(s, &r, o);
        free(r.body);
        ggfs_transfer_end(&s->stats, r.failures, o == GGFS_HTTP_OK ? NULL : r.why);
        if (o == GGFS_HTTP_OK) {
            learn_redirect(s, url, r.effective_url);
            return 0;
        }
        if (o == GGFS_HTTP_REFUSED && strcmp(url, s->url) != 0 && !fell_back &&
            (uint64_t)rl.filled * part_size < len) {
            // A redirect's target may expire (signed CDN URLs): start over
            // from the name's own URL once, after the parts already in.
            forget_redirect(s);
            fell_back = true;
            rl.before = rl.filled;
            continue;
        }
        if (o == GGFS_HTTP_CHANGED)
            http_mark_changed(&s->base, r.why);
        snprintf(why, why_size, "%s", r.why);
        return EIO;
    }
}

static size_t block_len(const http_source *s, uint64_t index)
{
    const uint64_t left = s->base.size - index * BLOCK;
    return left < BLOCK ? (size_t)left : BLOCK;
}

/* A run of claimed blocks being fetched by one request. */
typedef struct run {
    http_source *s;
    ggfs_block **blocks;
    unsigned n;
    uint64_t first;        // index of blocks[0]
    unsigned arrived;      // blocks[0, arrived) are published
} run;

/* Publishes each block as soon as its bytes are in, so that its readers
 * need not wait for the rest of the run. */
static void block_arrived(void *ctx, size_t i)
{
    run *r = ctx;
    ggfs_block_cache *cache = r->s->remote->cache;
    // Those still to come are on their way too: their readers wait on.
    ggfs_block_progress(cache, r->blocks + i + 1, r->n - (unsigned)i - 1);
    ggfs_block_publish(cache, r->blocks[i], block_len(r->s, r->first + i));
    r->arrived = (unsigned)i + 1;
}

/* Fetches the claimed blocks [first, first + n) in one request, publishing
 * each as it arrives. On return the published ones are still held by the
 * caller (*arrived of them, from the first), the others are abandoned.
 * Returns 0 when all arrived, else EIO with why filled. */
static int load_run(http_source *s, ggfs_block **blocks, unsigned n, uint64_t first,
                    int64_t deadline, bool retry, unsigned *arrived, char *why, size_t why_size)
{
    uint8_t *parts[RUN_MAX > READAHEAD_RUN ? RUN_MAX : READAHEAD_RUN] = {0};
    uint64_t len = 0;
    for (unsigned i = 0; i < n; i++) {
        parts[i] = blocks[i]->data;
        len += block_len(s, first + i);
    }
    run r = {s, blocks, n, first, 0};
    int e = fetch(s, first * BLOCK, len, parts, BLOCK, (on_part){block_arrived, &r}, deadline, retry,
                  why, why_size);
    if (e == 0 && r.arrived < n) {
        snprintf(why, why_size, "blocks %" PRIu64 "-%" PRIu64 " incomplete", first + r.arrived,
                 first + n - 1);
        e = EIO;
    }
    ggfs_block_cache *cache = s->remote->cache;
    for (unsigned i = r.arrived; i < n; i++)
        ggfs_block_abandon(cache, blocks[i]);
    if (s->disk) {
        for (unsigned i = 0; i < r.arrived; i++)
            ggfs_disk_cache_write(s->disk, first + i, blocks[i]->data, blocks[i]->len);
    }
    *arrived = r.arrived;
    return e;
}

/* Fills claimed block `index` from the disk cache and publishes it; false
 * (the block still claimed) when the disk does not have it. Through
 * memory, a block on disk serves its reads from the loop's threads like
 * any other, with no copy and no system call per read. */
static bool load_from_disk(http_source *s, ggfs_block *b, uint64_t index)
{
    const size_t len = block_len(s, index);
    if (!s->disk || !ggfs_disk_cache_has(s->disk, index) || !ggfs_disk_cache_read(s->disk, index, b->data, 0, len))
        return false;
    ggfs_block_publish(s->remote->cache, b, len);
    return true;
}

/* Claims the blocks after `first` (already claimed) up to `last` that are
 * neither cached, loading nor on disk, stopping at the first that is. */
static unsigned extend_claim(http_source *s, ggfs_block **blocks, uint64_t first, uint64_t last,
                             unsigned max)
{
    unsigned n = 1;
    while (n < max && first + n <= last) {
        if (s->disk && ggfs_disk_cache_has(s->disk, first + n))
            break;
        ggfs_block *b = ggfs_block_claim(s->remote->cache, s->id, first + n);
        if (!b)
            break;
        blocks[n++] = b;
    }
    return n;
}

/* ==== Read-ahead ==== */

typedef struct readahead_job {
    http_source *s;
    uint64_t first;
    unsigned n;
} readahead_job;

/* One try, no retries: on failure the blocks go, and a reader that needs
 * them fetches them itself with the full retry budget. */
static void run_readahead(void *arg, bool cancelled)
{
    readahead_job *j = arg;
    http_source *s = j->s;
    if (!cancelled && !atomic_load(&s->changed)) {
        const int64_t deadline = ggfs_now_ns() + (int64_t)s->remote->opts.timeout_s * 1000000000;
        ggfs_block *blocks[READAHEAD_RUN];
        uint64_t b = j->first;
        const uint64_t end = j->first + j->n;
        while (b < end) {
            // Blocks on disk are read from there (lend_blocks): the kernel
            // brings them into its page cache meanwhile.
            if (s->disk && ggfs_disk_cache_has(s->disk, b)) {
                ggfs_disk_cache_advise(s->disk, b);
                b++;
                continue;
            }
            if (!(blocks[0] = ggfs_block_claim(s->remote->cache, s->id, b))) {
                b++;
                continue;
            }
            if (load_from_disk(s, blocks[0], b)) {
                ggfs_block_release(s->remote->cache, blocks[0]);
                b++;
                continue;
            }
            const unsigned n = extend_claim(s, blocks, b, end - 1, j->n);
            char why[256];
            unsigned arrived;
            // Published blocks are held by the job until released here;
            // abandoned ones are gone already.
            load_run(s, blocks, n, b, deadline, false, &arrived, why, sizeof why);
            for (unsigned i = 0; i < arrived; i++)
                ggfs_block_release(s->remote->cache, blocks[i]);
            b += n;
        }
    }
}

/* After the fetcher let go of the stream's share: the source may go. */
static void readahead_done(void *arg)
{
    readahead_job *j = arg;
    source_unref(j->s);
    free(j);
}

/* The most blocks a stream keeps ahead of its reader: its part of three
 * quarters of the memory cache, shared with the other readers being read
 * ahead for (and the prefetch), so that what is read ahead is not pushed
 * out before it is read; 0 (no read-ahead) when that is too few. While a
 * prefetch that keeps every byte goes on, READAHEAD_FIRST at most: the
 * prefetch fetches the file in order over the connections, and a reader's
 * wider window would take them from it for blocks it fetches anyway (and,
 * past the memory cache, push out before anyone reads them). */
static unsigned window_max(const http_source *s)
{
    const uint64_t blocks = ((uint64_t)s->remote->opts.cache_mb << 20) / BLOCK * 3 / 4;
    const unsigned shares = ggfs_fetcher_active_shares(s->remote->fetcher);
    uint64_t max = blocks / (shares > 1 ? shares : 1);
    if (max < READAHEAD_FIRST)
        return 0;
    if (atomic_load(&s->remote->prefetch_going))
        max = READAHEAD_FIRST;
    return max < UINT32_MAX ? (unsigned)max : UINT32_MAX;
}

/* Notes a read of blocks [first, last] of a file that ends before block
 * end_block, and queues read-ahead (up to that end) when it continues a
 * stream. A stream's window doubles with each read, from
 * READAHEAD_FIRST to window_max; blocks are asked for in runs of the
 * window over the connections, up to READAHEAD_RUN (one request each, its
 * blocks published as they arrive), so that a stream that has just begun,
 * or a short file, makes requests of a block or two (a stalled one holds
 * up little) over as many connections as it can use, and a long
 * sequential read keeps every connection busy with requests of a few MiB
 * (each costs a round trip and a ramp-up of the connection's speed). */
static void follow_stream(http_source *s, uint64_t first, uint64_t last, uint64_t end_block)
{
    if (!atomic_load(&s->following))
        return; // the model's own reads at open
    const unsigned max = window_max(s);
    if (max == 0)
        return;
    const unsigned connections = ggfs_fetcher_connections(s->remote->fetcher);
    uint64_t from = 0, to = 0;
    unsigned run = 1;
    pthread_mutex_lock(&s->lock);
    stream *st = NULL, *oldest = &s->streams[0];
    for (int i = 0; i < STREAMS; i++) {
        stream *c = &s->streams[i];
        // The kernel keeps a few reads of a stream in flight, and they may
        // arrive slightly out of order.
        if (c->used && first + 2 >= c->last && first <= c->last + 1) {
            st = c;
            break;
        }
        if (c->used < oldest->used)
            oldest = c;
    }
    if (st) {
        st->window = st->window ? (st->window * 2 < max ? st->window * 2 : max) : READAHEAD_FIRST;
        st->last = last > st->last ? last : st->last;
        run = st->window / connections;
        run = run > READAHEAD_RUN ? READAHEAD_RUN : run > 0 ? run : 1;
        from = st->ahead_to > st->last + 1 ? st->ahead_to : st->last + 1;
        to = st->last + 1 + st->window;
        if (to > end_block)
            to = end_block;
        // Wait for a whole run's worth, unless the file ends there.
        if (to > from && (to - from >= run || to == end_block))
            st->ahead_to = to;
        else
            to = from;
    } else {
        // Jobs of the stream it was may still run: they keep its share.
        st = oldest;
        st->last = last;
        st->ahead_to = last + 1;
        st->window = 0;
    }
    st->used = ++s->clock;
    ggfs_fetch_share *share = &st->share;
    pthread_mutex_unlock(&s->lock);

    for (uint64_t b = from; b < to; b += run) {
        readahead_job *j = malloc(sizeof *j);
        if (!j)
            return;
        *j = (readahead_job){s, b, (unsigned)(to - b < run ? to - b : run)};
        atomic_fetch_add(&s->refs, 1);
        if (!ggfs_fetcher_submit(s->remote->fetcher, GGFS_FETCH_AHEAD, share, run_readahead, readahead_done, j)) {
            atomic_fetch_sub(&s->refs, 1);
            free(j);
            return;
        }
    }
}

/* ==== Reads ==== */

/* The slot of block's failure: its own if remembered, else the oldest
 * (s->lock held). */
static unsigned failure_slot(http_source *s, uint64_t block)
{
    for (unsigned i = 0; i < FAILURES; i++)
        if (s->failed[i].until_ns && s->failed[i].block == block)
            return i;
    const unsigned slot = s->next_failed;
    s->next_failed = (s->next_failed + 1) % FAILURES;
    return slot;
}

static void note_failure(http_source *s, uint64_t first, unsigned n)
{
    const int64_t until = ggfs_now_ns() + FAILED_FOR_NS;
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; i < n; i++) {
        const unsigned slot = failure_slot(s, first + i);
        s->failed[slot].block = first + i;
        s->failed[slot].until_ns = until;
    }
    pthread_mutex_unlock(&s->lock);
}

/* Remembers a read of [off, off + len) that failed. */
static void note_failed_read(http_source *s, uint64_t off, size_t len)
{
    const int64_t now = ggfs_now_ns();
    pthread_mutex_lock(&s->lock);
    const unsigned slot = s->next_failed_read;
    s->next_failed_read = (s->next_failed_read + 1) % FAILURES;
    s->failed_reads[slot].off = off;
    s->failed_reads[slot].end = off + len;
    s->failed_reads[slot].until_ns = now + FAILED_FOR_NS;
    s->failed_reads[slot].renew_until_ns = now + (int64_t)s->remote->opts.timeout_s * 1000000000;
    pthread_mutex_unlock(&s->lock);
}

/* A read of [off, off + len) within a read that failed lately is most
 * likely the kernel's retry of it, page by page: the failure of that read,
 * and of the blocks in its range, stands a while longer. */
static void renew_failures(http_source *s, uint64_t off, size_t len)
{
    const int64_t now = ggfs_now_ns(), until = now + FAILED_FOR_NS;
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; i < FAILURES; i++) {
        if (s->failed_reads[i].until_ns <= now || now >= s->failed_reads[i].renew_until_ns ||
            off < s->failed_reads[i].off || off + len > s->failed_reads[i].end)
            continue;
        s->failed_reads[i].until_ns = until;
        const uint64_t first = s->failed_reads[i].off / BLOCK, last = (s->failed_reads[i].end - 1) / BLOCK;
        for (unsigned j = 0; j < FAILURES; j++)
            if (s->failed[j].until_ns > now && s->failed[j].block >= first && s->failed[j].block <= last)
                s->failed[j].until_ns = until;
    }
    pthread_mutex_unlock(&s->lock);
}

static bool failed_lately(http_source *s, uint64_t block)
{
    const int64_t now = ggfs_now_ns();
    bool failed = false;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < FAILURES && !failed; i++)
        failed = s->failed[i].until_ns > now && s->failed[i].block == block;
    pthread_mutex_unlock(&s->lock);
    return failed;
}

/* acquire_block's answers besides 0 and an errno. */
enum {
    NOT_CACHED = -1,    // another request is slow to bring it: fetch its
                        // bytes another way
    FAILED_LATELY = -2, // its fetch just failed: fail again, quietly
};

/* A connection for a reader's own request, by its deadline; false, with
 * why filled, when none came free (all held by requests that stall). */
static bool enter_fetcher(http_source *s, int64_t deadline, char *why, size_t why_size)
{
    if (ggfs_fetcher_enter(s->remote->fetcher, deadline))
        return true;
    snprintf(why, why_size, "no connection free within %u s", s->remote->opts.timeout_s);
    return false;
}

/* Block `index` ready in the cache and held for the caller: found there,
 * or claimed (with the missing blocks after it up to `last`) and fetched.
 * Returns 0, NOT_CACHED, FAILED_LATELY, or EIO with why filled. */
static int acquire_block(http_source *s, uint64_t index, uint64_t last, int64_t deadline,
                         ggfs_block **out, char *why, size_t why_size)
{
    ggfs_block_cache *cache = s->remote->cache;
    ggfs_block *b = ggfs_block_find(cache, s->id, index);
    if (!b) {
        if (failed_lately(s, index))
            return FAILED_LATELY;
        bool claimed = false;
        b = ggfs_block_get(cache, s->id, index, deadline, WAIT_GRACE_NS, &claimed);
        if (!b) {
            if (ggfs_now_ns() < deadline)
                return NOT_CACHED;
            snprintf(why, why_size, "timed out after %u s", s->remote->opts.timeout_s);
            return EIO;
        }
        if (claimed && !load_from_disk(s, b, index)) {
            ggfs_block *blocks[RUN_MAX];
            blocks[0] = b;
            // Without room to keep them, blocks fetched ahead of their use
            // would go at once: fetch one at a time then.
            const unsigned max = s->remote->opts.cache_mb >= RUN_MAX * (BLOCK >> 20) ? RUN_MAX : 1;
            const unsigned count = extend_claim(s, blocks, index, last, max);
            unsigned arrived;
            if (!enter_fetcher(s, deadline, why, why_size)) {
                for (unsigned i = 0; i < count; i++)
                    ggfs_block_abandon(cache, blocks[i]);
                return EIO;
            }
            const int e = load_run(s, blocks, count, index, deadline, true, &arrived, why, why_size);
            ggfs_fetcher_leave(s->remote->fetcher);
            // The blocks after this one are for the same read: leave them
            // in the cache for it.
            for (unsigned i = 1; i < arrived; i++)
                ggfs_block_release(cache, blocks[i]);
            if (e != 0) {
                if (arrived > 0)
                    ggfs_block_release(cache, blocks[0]);
                note_failure(s, index + arrived, count - arrived);
                return e;
            }
        }
    }
    *out = b;
    return 0;
}

/* Gives back a block a reader read from. One read to its end is most
 * likely behind a sequential reader, which will not come back: it goes
 * first when room is needed, before the blocks read ahead of it. */
static void release_read(http_source *s, ggfs_block *b, bool to_end)
{
    if (to_end)
        ggfs_block_release_cold(s->remote->cache, b);
    else
        ggfs_block_release(s->remote->cache, b);
}

/* Copies [within, within + n) of block `index` into dst. */
static int read_block(http_source *s, uint64_t index, uint64_t last, size_t within, size_t n,
                      uint8_t *dst, int64_t deadline, char *why, size_t why_size)
{
    ggfs_block *b;
    const int e = acquire_block(s, index, last, deadline, &b, why, why_size);
    if (e == NOT_CACHED) {
        // Another request has been bringing this block for a while: fetch
        // just the bytes wanted, straight into the reader's buffer.
        uint8_t *part = dst;
        if (!enter_fetcher(s, deadline, why, why_size))
            return EIO;
        const int f = fetch(s, index * BLOCK + within, n, &part, n, (on_part){0}, deadline, true, why,
                            why_size);
        ggfs_fetcher_leave(s->remote->fetcher);
        return f; // a failure is noted by failed_read, as every read's is
    }
    if (e != 0)
        return e;
    const int short_block = within + n > b->len;
    if (!short_block)
        memcpy(dst, b->data + within, n);
    release_read(s, b, within + n == b->len);
    if (short_block) {
        snprintf(why, why_size, "block %" PRIu64 " is short", index);
        return EIO;
    }
    return 0;
}

/* Checks a read's range; 0, or EIO (logged). */
static int check_range(http_source *s, size_t len, uint64_t off)
{
    if (atomic_load(&s->changed))
        return EIO;
    if (off > s->base.size || len > s->base.size - off) {
        ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s: read of %zu bytes at %" PRIu64 " passes the end (%" PRIu64 ")\n",
                 s->base.name, len, off, s->base.size);
        return EIO;
    }
    return 0;
}

/* The one log line of a read that failed at block; a change was logged
 * once when seen, and a block that failed lately fails quietly. The block
 * and the read are remembered, whatever failed (a fetch, a wait for a
 * connection or for another request's block). */
static int failed_read(http_source *s, int e, uint64_t block, size_t len, uint64_t off, const char *why)
{
    if (e == FAILED_LATELY)
        return EIO;
    note_failure(s, block, 1);
    note_failed_read(s, off, len);
    if (!atomic_load(&s->changed))
        ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s: bytes %" PRIu64 "-%" PRIu64 ": %s; the read fails with EIO\n",
                 s->base.name, off, off + len - 1, why);
    return EIO;
}

static int read_range(http_source *s, uint8_t *dst, size_t len, uint64_t off, int64_t deadline)
{
    const uint64_t first = off / BLOCK, last = (off + len - 1) / BLOCK;
    const size_t total = len;
    for (uint64_t b = first; b <= last; b++) {
        const size_t within = b == first ? (size_t)(off % BLOCK) : 0;
        const size_t n = len < BLOCK - within ? len : BLOCK - within;
        char why[256] = "";
        const int e = read_block(s, b, last, within, n, dst, deadline, why, sizeof why);
        if (e != 0)
            return failed_read(s, e, b, total, off, why);
        dst += n;
        len -= n;
    }
    return 0;
}

/* The block before which read-ahead stops for a reader whose file ends at
 * byte end of the source. */
static uint64_t end_block(const http_source *s, uint64_t end)
{
    if (end > s->base.size)
        end = s->base.size;
    return (end + BLOCK - 1) / BLOCK;
}

static int http_read(ggfs_source *src, void *buf, size_t len, uint64_t off, uint64_t end)
{
    http_source *s = (http_source *)src;
    const int e = check_range(s, len, off);
    if (e != 0 || len == 0)
        return e;
    const int64_t deadline = ggfs_now_ns() + (int64_t)s->remote->opts.timeout_s * 1000000000;
    renew_failures(s, off, len);
    follow_stream(s, off / BLOCK, (off + len - 1) / BLOCK, end_block(s, end));
    return read_range(s, buf, len, off, deadline);
}

/* ==== Lending ==== */

/* A block lent from the memory cache, or mapped from the disk cache. */
typedef struct lent_piece {
    ggfs_block *block;     // or NULL
    const uint8_t *map;    // the block file's mapping when block is NULL
    size_t map_len;
} lent_piece;

typedef struct lent {
    unsigned n;
    bool last_read_to_end;  // the last block was read to its end
    lent_piece pieces[];
} lent;

static void http_unlend(ggfs_source *src, void *token)
{
    http_source *s = (http_source *)src;
    lent *l = token;
    if (!l)
        return;
    // Every block but the last was read past its end.
    for (unsigned i = 0; i < l->n; i++) {
        if (l->pieces[i].block)
            release_read(s, l->pieces[i].block, i + 1 < l->n || l->last_read_to_end);
        else
            ggfs_disk_cache_unmap(l->pieces[i].map, l->pieces[i].map_len);
    }
    free(l);
}

/* Holds the blocks of [off, off + len) in the memory cache (fetching the
 * missing ones unless memory_only; mapping those on disk and not in
 * memory, unless memory_only) and points iov at their bytes; EAGAIN when
 * one is not to be had there (perhaps on disk, or slow to come), or when
 * there are more than max. */
static int lend_blocks(http_source *s, size_t len, uint64_t off, bool memory_only, int64_t deadline,
                       struct iovec *iov, int max, int *n, lent **out)
{
    const uint64_t first = off / BLOCK, last = (off + len - 1) / BLOCK;
    if (last - first + 1 > (uint64_t)max)
        return EAGAIN;
    lent *l = malloc(sizeof *l + (size_t)(last - first + 1) * sizeof l->pieces[0]);
    if (!l)
        return EAGAIN;
    l->n = 0;
    l->last_read_to_end = false;
    size_t left = len;
    for (uint64_t b = first; b <= last; b++) {
        const size_t within = b == first ? (size_t)(off % BLOCK) : 0;
        const size_t take = left < BLOCK - within ? left : BLOCK - within;
        char why[256] = "";
        lent_piece piece = {0};
        int r = 0;
        piece.block = ggfs_block_find(s->remote->cache, s->id, b);
        // A block on disk is read from there: through memory it would cost
        // clearing a fresh block and copying into it.
        if (!piece.block && !memory_only && s->disk && ggfs_disk_cache_has(s->disk, b))
            piece.map = ggfs_disk_cache_map(s->disk, b, &piece.map_len);
        if (!piece.block && !piece.map)
            r = memory_only ? NOT_CACHED : acquire_block(s, b, last, deadline, &piece.block, why, sizeof why);
        const uint8_t *data = piece.block ? piece.block->data : piece.map;
        const size_t have = piece.block ? piece.block->len : piece.map_len;
        if (r == 0 && within + take > have) {
            l->pieces[l->n++] = piece;
            snprintf(why, sizeof why, "block %" PRIu64 " is short", b);
            r = EIO;
        }
        if (r != 0) {
            http_unlend(&s->base, l);
            return r == NOT_CACHED ? EAGAIN : failed_read(s, r, b, len, off, why);
        }
        l->pieces[l->n++] = piece;
        l->last_read_to_end = within + take == have;
        iov[l->n - 1] = (struct iovec){(void *)(data + within), take};
        left -= take;
    }
    *n = (int)l->n;
    *out = l;
    return 0;
}

static int http_lend(ggfs_source *src, void *buf, size_t len, uint64_t off, uint64_t end,
                     struct iovec *iov, int max, int *n, void **token)
{
    http_source *s = (http_source *)src;
    *n = 0;
    *token = NULL;
    const int e = check_range(s, len, off);
    if (e != 0 || len == 0)
        return e;
    const int64_t deadline = ggfs_now_ns() + (int64_t)s->remote->opts.timeout_s * 1000000000;
    renew_failures(s, off, len);
    follow_stream(s, off / BLOCK, (off + len - 1) / BLOCK, end_block(s, end));
    lent *l = NULL;
    const int r = lend_blocks(s, len, off, false, deadline, iov, max, n, &l);
    if (r != EAGAIN) {
        *token = l;
        return r;
    }
    // Bytes that are not in the cache are read the ordinary way.
    const int f = read_range(s, buf, len, off, deadline);
    if (f == 0) {
        iov[0] = (struct iovec){buf, len};
        *n = 1;
    }
    return f;
}

static int http_lend_ready(ggfs_source *src, size_t len, uint64_t off, uint64_t end,
                           struct iovec *iov, int max, int *n, void **token)
{
    http_source *s = (http_source *)src;
    *n = 0;
    *token = NULL;
    const int e = check_range(s, len, off);
    if (e != 0 || len == 0)
        return e;
    lent *l = NULL;
    const int r = lend_blocks(s, len, off, true, 0, iov, max, n, &l);
    if (r == EAGAIN)
        return EWOULDBLOCK;
    if (r == 0)
        follow_stream(s, off / BLOCK, (off + len - 1) / BLOCK, end_block(s, end));
    *token = l;
    return r;
}

/* ==== Prefetch and status ==== */

/* Claims and fetches the missing blocks of [off, off + len), runs of up to
 * READAHEAD_RUN in one request each, one try, and waits for those being
 * fetched already. With a disk cache every block goes there, and those
 * fetched here are the first to leave memory. */
static int http_prefetch(ggfs_source *src, uint64_t off, uint64_t len)
{
    http_source *s = (http_source *)src;
    if (atomic_load(&s->changed))
        return EIO;
    if (len == 0 || off >= s->base.size)
        return 0;
    ggfs_block_cache *cache = s->remote->cache;
    const int64_t deadline = ggfs_now_ns() + (int64_t)s->remote->opts.timeout_s * 1000000000;
    const uint64_t last = (off + (len < s->base.size - off ? len : s->base.size - off) - 1) / BLOCK;
    int failed = 0;
    for (uint64_t b = off / BLOCK; b <= last && !failed;) {
        ggfs_block *blocks[READAHEAD_RUN];
        if (s->disk && ggfs_disk_cache_has(s->disk, b)) {
            b++;
            continue;
        }
        // A block someone else is loading is waited for: should that load
        // fail, this one fetches it.
        bool claimed;
        blocks[0] = ggfs_block_get(cache, s->id, b, deadline, deadline - ggfs_now_ns(), &claimed);
        if (!blocks[0]) {
            failed = EIO;
            break;
        }
        if (!claimed) {
            // In memory already: on disk too, so that all of it is.
            if (s->disk)
                ggfs_disk_cache_write(s->disk, b, blocks[0]->data, blocks[0]->len);
            ggfs_block_release(cache, blocks[0]);
            b++;
            continue;
        }
        const unsigned n = extend_claim(s, blocks, b, last, READAHEAD_RUN);
        char why[256];
        unsigned arrived;
        failed = load_run(s, blocks, n, b, deadline, false, &arrived, why, sizeof why);
        for (unsigned i = 0; i < arrived; i++) {
            if (s->disk)
                ggfs_block_release_cold(cache, blocks[i]);
            else
                ggfs_block_release(cache, blocks[i]);
        }
        b += n;
    }
    return failed;
}

static int http_lend_held(ggfs_source *src, size_t len, uint64_t off, struct iovec *iov, int max, int *n,
                          void **token)
{
    http_source *s = (http_source *)src;
    *n = 0;
    *token = NULL;
    if (check_range(s, len, off) != 0 || len == 0)
        return EAGAIN;
    lent *l = NULL;
    const int r = lend_blocks(s, len, off, true, 0, iov, max, n, &l);
    if (r != 0)
        return EAGAIN;
    // Handed on whole: each block is the first to leave memory once back.
    l->last_read_to_end = true;
    *token = l;
    return 0;
}

static void http_status(ggfs_source *src, ggfs_source_status *out)
{
    http_source *s = (http_source *)src;
    out->url = s->base.name;
    out->size = s->base.size;
    out->in_memory = ggfs_block_cache_source_bytes(s->remote->cache, s->id);
    out->on_disk = s->disk ? ggfs_disk_cache_bytes(s->disk) : 0;
    ggfs_transfer_snapshot_of(&s->stats, &out->transfers);
}

static const ggfs_source_ops http_ops = {
    .prefetch = http_prefetch,
    .lend_held = http_lend_held,
    .status = http_status,
    .read = http_read,
    .unchanged = http_unchanged,
    .mark_changed = http_mark_changed,
    .opened = http_opened,
    .lend = http_lend,
    .lend_ready = http_lend_ready,
    .unlend = http_unlend,
    .close = http_close,
};

/* ==== Opening ==== */

static ggfs_source *refuse(http_source *s, ggp_error *err, ggp_err code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static ggfs_source *refuse(http_source *s, ggp_error *err, ggp_err code, const char *fmt, ...)
{
    err->code = code;
    err->offset = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    s->remote = NULL; // nothing of it is in the cache yet
    source_free(s);
    return NULL;
}

/* The tree's times: the server's Last-Modified, else now. */
static time_t mtime_of(const char *last_modified)
{
    const time_t t = last_modified && *last_modified ? curl_getdate(last_modified, NULL) : -1;
    return t < 0 ? time(NULL) : t;
}

/* Owner, mode and times for the tree: the daemon's user, read-only, t. */
static void fill_stat(http_source *s, time_t t)
{
    struct stat *st = &s->base.st;
    memset(st, 0, sizeof *st);
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_size = (off_t)s->base.size;
    st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec = t;
}

/* Keeps the bytes the opening request brought as block 0 of the cache. */
static void keep_first_block(http_source *s, const uint8_t *bytes, size_t len)
{
    if (len != block_len(s, 0))
        return;
    ggfs_block *b = ggfs_block_claim(s->remote->cache, s->id, 0);
    if (!b)
        return;
    memcpy(b->data, bytes, len);
    ggfs_block_publish(s->remote->cache, b, len);
    ggfs_block_release(s->remote->cache, b);
    if (s->disk)
        ggfs_disk_cache_write(s->disk, 0, bytes, len);
}

/* The key of its blocks in the memory cache: an earlier open's, when that
 * one saw the same validators and size. */
static uint64_t blocks_key(http_source *s, int64_t mtime)
{
    const ggfs_url_record r = {
        .url = s->url, .size = s->base.size, .etag = s->etag, .last_modified = s->last_modified, .mtime = mtime,
        .published = s->base.published,
    };
    const uint64_t key = s->etag || s->last_modified ? ggfs_block_files_key(s->remote->files, &r) : 0;
    s->kept_by_url = key != 0;
    return key ? key : ggfs_block_cache_source_id(s->remote->cache);
}

/* What an earlier open of the same bytes (validators and size) was told
 * of them stays when this one was told less: an open that asks for one
 * byte, its first block in memory or on disk, is sent no whole object's
 * checksum. */
static void take_known_published(http_source *s, const ggfs_url_record *k)
{
    if (!k->url || k->size != s->base.size)
        return;
    const bool same = s->etag ? k->etag && strcmp(k->etag, s->etag) == 0
                              : s->last_modified && k->last_modified && strcmp(k->last_modified, s->last_modified) == 0;
    if (same && ggfs_published_most(&s->base.published, &k->published) != &s->base.published)
        s->base.published = k->published;
}

/* Takes what an earlier open of the URL learnt (its record r, its blocks
 * under key) as this open's. */
static void take_known(http_source *s, ggfs_url_record *r, uint64_t key)
{
    s->base.size = r->size;
    s->n_blocks = (r->size + BLOCK - 1) / BLOCK;
    s->etag = r->etag;
    s->last_modified = r->last_modified;
    r->etag = r->last_modified = NULL;
    s->base.published = r->published;
    fill_stat(s, (time_t)r->mtime);
    s->id = key;
    s->kept_by_url = key != 0;
}

/* Whether block i of the blocks under key is in memory. */
static bool block_in_memory(http_source *s, uint64_t key, uint64_t i)
{
    ggfs_block *b = ggfs_block_find(s->remote->cache, key, i);
    if (b)
        ggfs_block_release(s->remote->cache, b);
    return b != NULL;
}

/* Uses the disk cache, when the mount has one, for the file as pinned. */
static void open_disk(http_source *s, const char *name)
{
    const char *validator = s->etag ? s->etag : s->last_modified;
    char why[256];
    if (!validator)
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: the server sends no ETag or Last-Modified: not using the disk cache\n",
                 name);
    else if (!(s->disk = ggfs_disk_cache_open(s->remote->opts.cache_dir, s->url, validator, s->base.size, BLOCK, why,
                                              sizeof why)))
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: not using the disk cache: %s\n", name, why);
}

/* Opens a file this mount opened before and that cannot have changed
 * since (a commit's): as that open found it, with no request. */
static ggfs_source *open_known(http_source *s, const char *name, ggfs_url_record *known, uint64_t key)
{
    take_known(s, known, key);
    ggfs_url_record_destroy(known);
    if (s->remote->opts.cache_dir)
        open_disk(s, name);
    return &s->base;
}

/* Keeps what the open learnt in the disk cache's directory, for a later
 * offline mount of name; a failure costs only that (one log line). */
static void keep_record(http_source *s, const char *name)
{
    const ggfs_url_record r = {
        .url = s->url, .size = s->base.size, .etag = s->etag, .last_modified = s->last_modified,
        .mtime = (int64_t)s->base.st.st_mtim.tv_sec, .published = s->base.published,
    };
    char why[512];
    if (!ggfs_url_record_put(s->remote->opts.cache_dir, name, &r, why, sizeof why))
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: an offline mount will not find it: %s\n", name, why);
}

/* Opens name offline: as its record in cache_dir says it was, its bytes
 * those of the disk cache, without a request. */
static ggfs_source *open_offline(http_source *s, const char *name, ggp_error *err)
{
    const char *dir = s->remote->opts.cache_dir;
    ggfs_url_record r;
    char why[512];
    switch (ggfs_url_record_get(dir, name, &r, why, sizeof why)) {
    case GGFS_CACHE_RECORD_FOUND:
        break;
    case GGFS_CACHE_RECORD_MISSING:
        return refuse(s, err, GGP_ERR_IO, "offline, and not in cache_dir %s", dir);
    case GGFS_CACHE_RECORD_BAD:
    default:
        return refuse(s, err, GGP_ERR_IO, "offline: in cache_dir, %s", why);
    }
    // An hf:// name resolves by HF_ENDPOINT: kept from another endpoint,
    // it is another file.
    if (strcmp(r.url, s->url) != 0) {
        ggfs_url_record_destroy(&r);
        return refuse(s, err, GGP_ERR_IO, "offline, and not in cache_dir %s for this HF_ENDPOINT", dir);
    }
    take_known(s, &r, 0);
    s->id = blocks_key(s, r.mtime);
    ggfs_url_record_destroy(&r);
    if (!(s->disk = ggfs_disk_cache_open(dir, s->url, s->etag ? s->etag : s->last_modified, s->base.size, BLOCK,
                                         why, sizeof why)))
        return refuse(s, err, GGP_ERR_IO, "offline: %s", why);
    return &s->base;
}

ggfs_source *ggfs_source_http_open(const char *name, ggfs_remote *remote, ggp_error *err)
{
    http_source *s = calloc(1, sizeof *s);
    if (!s) {
        *err = (ggp_error){GGP_ERR_NOMEM, 0, "out of memory"};
        return NULL;
    }
    s->base.ops = &http_ops;
    s->remote = remote;
    atomic_init(&s->changed, false);
    atomic_init(&s->following, false);
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->lock, NULL);
    ggfs_transfer_stats_init(&s->stats);
    s->base.name = strdup(name);
    if (!s->base.name)
        return refuse(s, err, GGP_ERR_NOMEM, "out of memory");
    const bool is_hf = strncmp(name, GGFS_HF_SCHEME, strlen(GGFS_HF_SCHEME)) == 0;
    if (is_hf) {
        char why[160];
        if (!ggfs_hf_resolve(name, &s->url, &s->bearer, why, sizeof why))
            return refuse(s, err, GGP_ERR_IO, "cannot open: %s", why);
    } else if (strncmp(name, GGFS_S3_SCHEME, strlen(GGFS_S3_SCHEME)) == 0) {
        char why[200];
        if (!(s->s3 = malloc(sizeof *s->s3)))
            return refuse(s, err, GGP_ERR_NOMEM, "out of memory");
        if (!ggfs_s3_target_open(name, &remote->opts, s->s3, why, sizeof why)) {
            free(s->s3);
            s->s3 = NULL;
            return refuse(s, err, GGP_ERR_IO, "%s", why);
        }
        if (!s->s3->key[0] || s->s3->key[strlen(s->s3->key) - 1] == '/')
            return refuse(s, err, GGP_ERR_IO, "name an object of the bucket: s3://BUCKET/KEY.gguf");
        s->url = ggfs_s3_url(&s->s3->endpoint, s->s3->bucket, s->s3->key, NULL, 0, URL_MAX);
    } else {
        s->url = strdup(name);
        // A registry's blob: the token it gave at mount, for its origin
        // (kept by the mount until its end).
        s->has_secret = ggfs_remote_registry_secret(remote, &s->secret);
    }
    if (!s->url || strlen(s->url) >= URL_MAX)
        return refuse(s, err, GGP_ERR_IO, "cannot open: URL missing or longer than %d bytes", URL_MAX - 1);
    // The credential is bound to its origin once, here: the Hub token to
    // the endpoint its name resolved at, a registry's token to that
    // registry, S3's signature to the bucket's endpoint.
    if (s->s3)
        s->secret = s->s3->secret, s->has_secret = true;
    else if (s->bearer && is_hf)
        s->has_secret = ggfs_secret_bind(&s->secret, GGFS_SECRET_HUB_TOKEN, s->url, s->bearer, NULL);
    strcpy(s->data_url, s->url);
    if (remote->opts.offline)
        return open_offline(s, name, err);

    // Opened before in this mount: a commit's file is as it was then, and
    // so is a collection's file the server named within the time its
    // listing is trusted (reopen_trust_s); its blocks still in memory are
    // read with no request.
    ggfs_url_record known = {0};
    uint64_t known_key = 0;
    int64_t checked_ns = 0;
    const bool was_open = ggfs_block_files_find(remote->files, s->url, &known, &known_key, &checked_ns);
    const bool trusted = remote->opts.reopen_trust_s &&
                         ggfs_now_ns() - checked_ns < (int64_t)remote->opts.reopen_trust_s * 1000000000;
    if (was_open && (ggfs_hf_names_commit(name) || trusted))
        return open_known(s, name, &known, known_key);
    // One range request learns the size and validators. With a disk cache,
    // or the first block in memory from an earlier open, it asks for one
    // byte, so that what is kept is not fetched again; otherwise it brings
    // the first block, where the header starts.
    const bool first_kept = was_open && block_in_memory(s, known_key, 0);
    const size_t want = remote->opts.cache_dir || first_kept ? 1 : BLOCK;
    uint8_t *first = malloc(want);
    if (!first) {
        ggfs_url_record_destroy(&known);
        return refuse(s, err, GGP_ERR_NOMEM, "out of memory");
    }
    // The answers say what the store publishes of the bytes: the Hub's
    // resolve answer its LFS SHA-256, S3 its checksum when asked for it.
    ggfs_published_headers published;
    ggfs_published_headers_init(&published, s->url, is_hf, s->s3 != NULL);
    ggfs_http_range r = {
        .url = s->url, .secret = s->has_secret ? &s->secret : NULL, .off = 0, .len = want, .parts = &first,
        .part_size = want, .open = true,
        .deadline_ns = ggfs_now_ns() + (int64_t)remote->opts.timeout_s * 1000000000,
        .received = &s->stats.received,
        .header = s->s3 ? "x-amz-checksum-mode: ENABLED" : NULL,
        .header_seen = published_seen, .header_ctx = &published,
    };
    sign(s, &r);
    ggfs_transfer_begin(&s->stats);
    const ggfs_http_outcome o = ggfs_http_fetch(remote->http, &r);
    in_s3_words(s, &r, o);
    free(r.body);
    ggfs_transfer_end(&s->stats, r.failures, o == GGFS_HTTP_OK ? NULL : r.why);
    if (o != GGFS_HTTP_OK) {
        free(first);
        ggfs_url_record_destroy(&known);
        return refuse(s, err, GGP_ERR_IO, "%s%s", s->s3 ? "" : "cannot open: ", r.why);
    }
    s->base.size = r.total;
    s->n_blocks = (r.total + BLOCK - 1) / BLOCK;
    s->etag = r.etag_got[0] ? strdup(r.etag_got) : NULL;
    s->last_modified = r.last_modified_got[0] ? strdup(r.last_modified_got) : NULL;
    ggfs_published_headers_result(&published, &s->base.published);
    take_known_published(s, &known);
    ggfs_url_record_destroy(&known);
    // Only the Hub's answers say a size (X-Linked-Size): a file of another
    // is not the one its name publishes.
    char why[320];
    if (!ggfs_published_size_fits(&s->base.published, s->base.size, "X-Linked-Size", why, sizeof why)) {
        free(first);
        return refuse(s, err, GGP_ERR_IO, "%s", why);
    }
    fill_stat(s, mtime_of(r.last_modified_got));
    learn_redirect(s, s->url, r.effective_url);
    s->id = blocks_key(s, (int64_t)s->base.st.st_mtim.tv_sec);
    if (remote->opts.cache_dir) {
        open_disk(s, name);
        if (s->disk)
            keep_record(s, name);
    }
    keep_first_block(s, first, (size_t)r.got);
    free(first);
    return &s->base;
}
