/*
 * The versions the kernel holds (see versions.h): a hash table of inode
 * numbers, chained, that grows as it fills. It holds a few entries per
 * edit still open or cached (the root's four files and the keys changed),
 * so one lock is enough.
 */
#include <pthread.h>
#include <stdlib.h>

#include "tree/versions.h"
#include "util/fnv.h"
#include "util/log.h"

typedef struct held {
    struct held *next;
    uint64_t ino;
    uint64_t lookups;
    ggfs_view *view; // one reference
} held;

struct ggfs_versions {
    pthread_mutex_t lock;
    held **buckets;
    size_t n_buckets; // a power of two
    size_t count;
    bool log_frees;
};

#define FIRST_BUCKETS 64

static size_t bucket_of(size_t n_buckets, uint64_t ino)
{
    return (size_t)(ggfs_fnv64(GGFS_FNV64_OFFSET, &ino, sizeof ino) & (n_buckets - 1));
}

ggfs_versions *ggfs_versions_new(bool log_frees)
{
    ggfs_versions *vs = calloc(1, sizeof *vs);
    if (!vs)
        return NULL;
    vs->buckets = calloc(FIRST_BUCKETS, sizeof *vs->buckets);
    if (!vs->buckets) {
        free(vs);
        return NULL;
    }
    vs->n_buckets = FIRST_BUCKETS;
    vs->log_frees = log_frees;
    pthread_mutex_init(&vs->lock, NULL);
    return vs;
}

void ggfs_versions_free(ggfs_versions *vs)
{
    if (!vs)
        return;
    for (size_t b = 0; b < vs->n_buckets; b++) {
        for (held *h = vs->buckets[b], *next; h; h = next) {
            next = h->next;
            ggfs_view_put(h->view);
            free(h);
        }
    }
    pthread_mutex_destroy(&vs->lock);
    free(vs->buckets);
    free(vs);
}

/* The link that points at ino's entry, or at the end of its chain. */
static held **find(ggfs_versions *vs, uint64_t ino)
{
    held **link = &vs->buckets[bucket_of(vs->n_buckets, ino)];
    while (*link && (*link)->ino != ino)
        link = &(*link)->next;
    return link;
}

/* Doubles the buckets once there are more entries than buckets; stays as
 * it is when out of memory (chains just grow longer). */
static void grow(ggfs_versions *vs)
{
    if (vs->count < vs->n_buckets)
        return;
    const size_t n = vs->n_buckets * 2;
    held **buckets = calloc(n, sizeof *buckets);
    if (!buckets)
        return;
    for (size_t b = 0; b < vs->n_buckets; b++) {
        for (held *h = vs->buckets[b], *next; h; h = next) {
            next = h->next;
            held **head = &buckets[bucket_of(n, h->ino)];
            h->next = *head;
            *head = h;
        }
    }
    free(vs->buckets);
    vs->buckets = buckets;
    vs->n_buckets = n;
}

bool ggfs_versions_hold(ggfs_versions *vs, uint64_t ino, ggfs_view *view, uint64_t n)
{
    pthread_mutex_lock(&vs->lock);
    held **link = find(vs, ino);
    if (!*link) {
        held *h = malloc(sizeof *h);
        if (!h) {
            pthread_mutex_unlock(&vs->lock);
            return false;
        }
        ggfs_view_ref(view);
        *h = (held){NULL, ino, 0, view};
        *link = h;
        vs->count++;
        grow(vs);
        link = find(vs, ino);
    }
    (*link)->lookups += n;
    pthread_mutex_unlock(&vs->lock);
    return true;
}

void ggfs_versions_forget(ggfs_versions *vs, uint64_t ino, uint64_t n)
{
    pthread_mutex_lock(&vs->lock);
    held **link = find(vs, ino);
    held *gone = NULL;
    if (*link) {
        held *h = *link;
        h->lookups = h->lookups > n ? h->lookups - n : 0;
        if (h->lookups == 0) {
            *link = h->next;
            vs->count--;
            gone = h;
        }
    }
    pthread_mutex_unlock(&vs->lock);
    if (!gone)
        return;
    if (vs->log_frees)
        ggfs_log(GGFS_LOG_INFO, "gguf-fs: inode %llu forgotten: version %llu of the keys let go by it\n",
                 (unsigned long long)gone->ino, (unsigned long long)gone->view->version);
    ggfs_view_put(gone->view); // the last reference frees a whole header: outside the lock
    free(gone);
}

ggfs_view *ggfs_versions_view(ggfs_versions *vs, uint64_t ino)
{
    pthread_mutex_lock(&vs->lock);
    held *h = *find(vs, ino);
    ggfs_view *view = h ? h->view : NULL;
    if (view)
        ggfs_view_ref(view);
    pthread_mutex_unlock(&vs->lock);
    return view;
}

size_t ggfs_versions_count(ggfs_versions *vs)
{
    pthread_mutex_lock(&vs->lock);
    const size_t n = vs->count;
    pthread_mutex_unlock(&vs->lock);
    return n;
}
