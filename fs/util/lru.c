/*
 * The set is a chained hash of nodes plus a doubly linked list of the idle
 * ones (no references), most recently used first. Closing pops the tail.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/dlist.h"
#include "util/lru.h"

typedef struct node {
    uint64_t key;
    void *thing;          // NULL while opening
    unsigned refs;
    bool opening;
    struct node *chain;   // next in the hash bucket, or in the dropped list
    ggfs_dlink idle;      // in the idle list, when refs == 0
} node;

struct ggfs_lru {
    pthread_mutex_t lock;
    pthread_cond_t opened; // some node finished opening (or failed)
    const ggfs_lru_ops *ops;
    void *ctx;
    size_t capacity;
    size_t count;          // nodes in the hash: open or opening
    node **buckets;
    size_t mask;           // buckets - 1, a power of two minus one
    ggfs_dlink idle;       // front: the most recently used
    node *doomed;          // dropped while in use, out of the hash
};

static size_t bucket_of(const ggfs_lru *lru, uint64_t key)
{
    key ^= key >> 33;
    key *= UINT64_C(0xff51afd7ed558ccd);
    key ^= key >> 33;
    return (size_t)key & lru->mask;
}

static node *find(const ggfs_lru *lru, uint64_t key)
{
    for (node *n = lru->buckets[bucket_of(lru, key)]; n; n = n->chain)
        if (n->key == key)
            return n;
    return NULL;
}

static void unhash(ggfs_lru *lru, node *n)
{
    node **p = &lru->buckets[bucket_of(lru, n->key)];
    while (*p != n)
        p = &(*p)->chain;
    *p = n->chain;
    lru->count--;
}

static void idle_remove(node *n)
{
    ggfs_dlist_remove(&n->idle);
}

static void idle_push(ggfs_lru *lru, node *n)
{
    ggfs_dlist_push_front(&lru->idle, &n->idle);
}

/* Takes idle nodes out, oldest first, while more than capacity are open;
 * returns them chained through ->chain for closing outside the lock. */
static node *evict(ggfs_lru *lru)
{
    node *victims = NULL;
    ggfs_dlink *oldest;
    while (lru->count > lru->capacity && (oldest = ggfs_dlist_back(&lru->idle)) != NULL) {
        node *n = GGFS_CONTAINER_OF(oldest, node, idle);
        idle_remove(n);
        unhash(lru, n);
        n->chain = victims;
        victims = n;
    }
    return victims;
}

static void close_all(ggfs_lru *lru, node *victims)
{
    while (victims) {
        node *next = victims->chain;
        lru->ops->close(lru->ctx, victims->key, victims->thing);
        free(victims);
        victims = next;
    }
}

ggfs_lru *ggfs_lru_new(size_t capacity, const ggfs_lru_ops *ops, void *ctx)
{
    ggfs_lru *lru = calloc(1, sizeof *lru);
    if (!lru)
        return NULL;
    lru->capacity = capacity ? capacity : 1;
    size_t nb = 16;
    while (nb < 2 * lru->capacity && nb < ((size_t)1 << 24))
        nb *= 2;
    lru->buckets = calloc(nb, sizeof *lru->buckets);
    if (!lru->buckets || pthread_mutex_init(&lru->lock, NULL) != 0) {
        free(lru->buckets);
        free(lru);
        return NULL;
    }
    if (pthread_cond_init(&lru->opened, NULL) != 0) {
        pthread_mutex_destroy(&lru->lock);
        free(lru->buckets);
        free(lru);
        return NULL;
    }
    lru->mask = nb - 1;
    ggfs_dlist_init(&lru->idle);
    lru->ops = ops;
    lru->ctx = ctx;
    return lru;
}

void ggfs_lru_free(ggfs_lru *lru)
{
    if (!lru)
        return;
    node *all = NULL;
    for (size_t b = 0; b <= lru->mask; b++) {
        for (node *n = lru->buckets[b], *next; n; n = next) {
            next = n->chain;
            n->chain = all;
            all = n;
        }
    }
    close_all(lru, all);
    close_all(lru, lru->doomed);
    pthread_cond_destroy(&lru->opened);
    pthread_mutex_destroy(&lru->lock);
    free(lru->buckets);
    free(lru);
}

void *ggfs_lru_get(ggfs_lru *lru, uint64_t key, int *err)
{
    pthread_mutex_lock(&lru->lock);
    node *n;
    while ((n = find(lru, key)) != NULL && n->opening)
        pthread_cond_wait(&lru->opened, &lru->lock);
    if (n) {
        if (n->refs++ == 0)
            idle_remove(n);
        void *thing = n->thing;
        pthread_mutex_unlock(&lru->lock);
        return thing;
    }
    n = calloc(1, sizeof *n);
    if (!n) {
        pthread_mutex_unlock(&lru->lock);
        *err = ENOMEM;
        return NULL;
    }
    n->key = key;
    n->refs = 1;
    n->opening = true;
    node **bucket = &lru->buckets[bucket_of(lru, key)];
    n->chain = *bucket;
    *bucket = n;
    lru->count++;
    node *victims = evict(lru);
    pthread_mutex_unlock(&lru->lock);

    close_all(lru, victims);
    void *thing = lru->ops->open(lru->ctx, key, err);

    pthread_mutex_lock(&lru->lock);
    if (thing) {
        n->thing = thing;
        n->opening = false;
    } else {
        unhash(lru, n);
    }
    pthread_cond_broadcast(&lru->opened);
    pthread_mutex_unlock(&lru->lock);
    if (!thing)
        free(n);
    return thing;
}

void ggfs_lru_put(ggfs_lru *lru, uint64_t key, void *thing)
{
    pthread_mutex_lock(&lru->lock);
    node *n = find(lru, key), *victims = NULL;
    if (n && n->thing == thing) {
        if (--n->refs == 0) {
            idle_push(lru, n);
            victims = evict(lru);
        }
    } else {
        // A thing dropped while in use: closed once its last user is done.
        node **p = &lru->doomed;
        while (*p && (*p)->thing != thing)
            p = &(*p)->chain;
        if (*p && --(*p)->refs == 0) {
            victims = *p;
            *p = victims->chain;
            victims->chain = NULL;
        }
    }
    pthread_mutex_unlock(&lru->lock);
    close_all(lru, victims);
}

void ggfs_lru_drop(ggfs_lru *lru, uint64_t key)
{
    pthread_mutex_lock(&lru->lock);
    node *n = find(lru, key), *victim = NULL;
    if (n && !n->opening) {
        unhash(lru, n);
        if (n->refs == 0) {
            idle_remove(n);
            n->chain = NULL;
            victim = n;
        } else {
            n->chain = lru->doomed;
            lru->doomed = n;
        }
    }
    pthread_mutex_unlock(&lru->lock);
    close_all(lru, victim);
}

size_t ggfs_lru_open_count(ggfs_lru *lru)
{
    pthread_mutex_lock(&lru->lock);
    const size_t count = lru->count;
    pthread_mutex_unlock(&lru->lock);
    return count;
}
