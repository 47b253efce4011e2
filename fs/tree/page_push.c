/*
 * Storing a prefetched model's bytes in the kernel's page cache.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tree/page_push.h"
#include "util/clock.h"
#include "util/cond.h"
#include "util/log.h"

// Bytes handed to the kernel at once: a block of the memory cache (lent
// in place, no copy), so that a store holds the pages it fills briefly.
#define PUSH_BYTES (1u << 20)
// Blocks one push may span (a run that does not begin on a block's start).
#define PUSH_PIECES 2
// How long a push waits for model.gguf to be known before trying again
// (an inode the kernel learned from a directory listing brings no call).
#define RETRY_NS INT64_C(1000000000)

struct ggfs_page_push {
    struct fuse_session *se; // set before the prefetch starts, read by it
    fuse_ino_t ino;
    char *path;              // model.gguf through the mount
    ggfs_source *src;
    struct fuse_bufvec *bufv; // PUSH_PIECES buffers, used by the sink's thread alone
    pthread_mutex_t lock;    // guards what follows
    pthread_cond_t changed;  // known, or stopping
    unsigned known;          // lookups and opens so far
    bool stopping;
    bool in_call;            // a store or a lookup through the mount is under way
    bool failed_logged;
};

ggfs_page_push *ggfs_page_push_new(fuse_ino_t ino, const char *path, ggfs_source *src)
{
    ggfs_page_push *p = calloc(1, sizeof *p);
    const size_t bufv_size = sizeof *p->bufv + (PUSH_PIECES - 1) * sizeof p->bufv->buf[0];
    if (!p || !(p->bufv = calloc(1, bufv_size)) || !(p->path = strdup(path))) {
        if (p)
            free(p->bufv);
        free(p);
        return NULL;
    }
    p->ino = ino;
    p->src = src;
    pthread_mutex_init(&p->lock, NULL);
    ggfs_cond_init_monotonic(&p->changed);
    return p;
}

/* Waits until model.gguf is known again after `seen` (or RETRY_NS
 * passed); false when stopping. */
static bool wait_known(ggfs_page_push *p, unsigned seen)
{
    const struct timespec until = ggfs_timespec_after(RETRY_NS);
    pthread_mutex_lock(&p->lock);
    while (!p->stopping && p->known == seen &&
           pthread_cond_timedwait(&p->changed, &p->lock, &until) != ETIMEDOUT)
        ;
    const bool go = !p->stopping;
    pthread_mutex_unlock(&p->lock);
    return go;
}

/* Marks a call into the mount as under way; false when stopping (and
 * none may start). */
static bool call_begin(ggfs_page_push *p, unsigned *seen)
{
    pthread_mutex_lock(&p->lock);
    const bool go = !p->stopping;
    p->in_call = go;
    *seen = p->known;
    pthread_mutex_unlock(&p->lock);
    return go;
}

static void call_end(ggfs_page_push *p)
{
    pthread_mutex_lock(&p->lock);
    p->in_call = false;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

/* Stores p->bufv at off in the kernel's pages of model.gguf; false when
 * stopping. */
static bool store(ggfs_page_push *p, uint64_t off)
{
    bool tried_lookup = false;
    for (;;) {
        unsigned seen;
        if (!call_begin(p, &seen))
            return false;
        p->bufv->idx = 0;
        p->bufv->off = 0;
        const int r = fuse_lowlevel_notify_store(p->se, p->ino, off, p->bufv, 0);
        // The first time the kernel does not know model.gguf, it is looked
        // up; a kernel that forgets it again is waited for.
        const bool first_unknown = r == -ENOENT && !tried_lookup;
        struct stat st;
        const bool looked_up = first_unknown && stat(p->path, &st) == 0;
        call_end(p);
        if (r != -ENOENT) {
            if (r != 0 && !p->failed_logged) {
                p->failed_logged = true;
                ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s: cannot hand prefetched bytes to the kernel (%d); "
                         "reads fetch them as without -o prefetch\n", p->src->name, -r);
            }
            return true;
        }
        tried_lookup = true;
        if (looked_up)
            continue;
        if (!wait_known(p, seen))
            return false;
    }
}

/* Stores [off, off + len) (at most PUSH_BYTES), lent by the source's
 * memory cache, in the kernel's pages; false when stopping. */
static bool push(ggfs_page_push *p, uint64_t off, size_t len)
{
    struct iovec iov[PUSH_PIECES];
    int n;
    void *token;
    if (p->src->ops->lend_held(p->src, len, off, iov, PUSH_PIECES, &n, &token) != 0)
        return true; // gone from the cache already: read when asked for
    *p->bufv = (struct fuse_bufvec){.count = (size_t)n};
    for (int i = 0; i < n; i++)
        p->bufv->buf[i] = (struct fuse_buf){.size = iov[i].iov_len, .mem = iov[i].iov_base};
    const bool go_on = store(p, off);
    p->src->ops->unlend(p->src, token);
    return go_on;
}

void ggfs_page_push_sink(void *arg, size_t source, uint64_t off, uint64_t len)
{
    ggfs_page_push *p = arg;
    (void)source; // one source: model.gguf's
    for (uint64_t o = off; o < off + len; o += PUSH_BYTES) {
        const uint64_t left = off + len - o;
        if (!push(p, o, left < PUSH_BYTES ? (size_t)left : PUSH_BYTES))
            return;
    }
}

void ggfs_page_push_known(ggfs_page_push *p)
{
    pthread_mutex_lock(&p->lock);
    p->known++;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

void ggfs_page_push_start(ggfs_page_push *p, struct fuse_session *se)
{
    p->se = se;
}

void ggfs_page_push_stop(ggfs_page_push *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->changed);
    while (p->in_call)
        pthread_cond_wait(&p->changed, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

void ggfs_page_push_free(ggfs_page_push *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p->bufv);
    free(p->path);
    free(p);
}
