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

// The bytes go through one buffer of this size: the daemon's memory
// grows by it, not by the model.
#define PUSH_BYTES (1u << 20)
// How long a push waits for model.gguf to be known before trying again
// (an inode the kernel learned from a directory listing brings no call).
#define RETRY_NS INT64_C(1000000000)

struct ggfs_page_push {
    struct fuse_session *se;
    fuse_ino_t ino;
    char *path;              // model.gguf through the mount
    ggfs_source *src;
    uint8_t *buf;            // used by the prefetch's thread alone
    pthread_mutex_t lock;    // guards what follows
    pthread_cond_t changed;  // known, or stopping
    unsigned known;          // lookups and opens so far
    bool stopping;
    bool failed_logged;
};

ggfs_page_push *ggfs_page_push_new(struct fuse_session *se, fuse_ino_t ino, const char *path, ggfs_source *src)
{
    ggfs_page_push *p = calloc(1, sizeof *p);
    if (!p || !(p->buf = malloc(PUSH_BYTES)) || !(p->path = strdup(path))) {
        if (p)
            free(p->buf);
        free(p);
        return NULL;
    }
    p->se = se;
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

/* Pushes [off, off + len) (at most PUSH_BYTES), held by the source's
 * caches; false when stopping. */
static bool push(ggfs_page_push *p, uint64_t off, size_t len)
{
    if (p->src->ops->copy_held(p->src, p->buf, len, off) != 0)
        return true; // gone from the caches already: read when asked for
    bool tried_lookup = false;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        const unsigned seen = p->known;
        const bool stopping = p->stopping;
        pthread_mutex_unlock(&p->lock);
        if (stopping)
            return false;
        struct fuse_bufvec bufv = FUSE_BUFVEC_INIT(len);
        bufv.buf[0].mem = p->buf;
        const int r = fuse_lowlevel_notify_store(p->se, p->ino, off, &bufv, 0);
        if (r != -ENOENT) {
            if (r != 0 && !p->failed_logged) {
                p->failed_logged = true;
                ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s: cannot hand prefetched bytes to the kernel (%d); "
                         "reads fetch them as without -o prefetch\n", p->src->name, -r);
            }
            return true;
        }
        // Once: a kernel that forgets the inode again is waited for.
        struct stat st;
        if (!tried_lookup) {
            tried_lookup = true;
            if (stat(p->path, &st) == 0)
                continue;
        }
        if (!wait_known(p, seen))
            return false;
    }
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

void ggfs_page_push_stop(ggfs_page_push *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

void ggfs_page_push_free(ggfs_page_push *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->changed);
    free(p->buf);
    free(p->path);
    free(p);
}
