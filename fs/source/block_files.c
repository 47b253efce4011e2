/*
 * The files of the block cache: a hash table of URLs under one mutex, with
 * a list in the order they were last opened, so that the oldest goes when
 * the table is full.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "source/block_files.h"
#include "util/clock.h"
#include "util/dlist.h"
#include "util/fnv.h"

#define BUCKETS 1024

typedef struct file {
    ggfs_url_record r;     // what the last open learnt
    uint64_t key;          // its blocks' key in the cache
    int64_t checked_ns;    // when the server last named r's validators
    struct file *hash_next;
    ggfs_dlink order;      // on the list, the least recently opened first
} file;

struct ggfs_block_files {
    pthread_mutex_t lock;
    ggfs_block_cache *cache;
    size_t max, count;
    file *buckets[BUCKETS];
    ggfs_dlink order;
};

ggfs_block_files *ggfs_block_files_new(ggfs_block_cache *cache, size_t max)
{
    ggfs_block_files *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cache = cache;
    t->max = max ? max : 1;
    ggfs_dlist_init(&t->order);
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

static void file_free(file *f)
{
    ggfs_url_record_destroy(&f->r);
    free(f);
}

void ggfs_block_files_free(ggfs_block_files *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < BUCKETS; i++)
        for (file *f = t->buckets[i], *next; f; f = next) {
            next = f->hash_next;
            file_free(f);
        }
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* ==== Under the lock ==== */

static file **slot_of(ggfs_block_files *t, const char *url)
{
    file **p = &t->buckets[ggfs_fnv64(GGFS_FNV64_OFFSET, url, strlen(url)) % BUCKETS];
    while (*p && strcmp((*p)->r.url, url) != 0)
        p = &(*p)->hash_next;
    return p;
}

static void forget(ggfs_block_files *t, file *f)
{
    file **p = slot_of(t, f->r.url);
    *p = f->hash_next;
    ggfs_dlist_remove(&f->order);
    t->count--;
    file_free(f);
}

static bool same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether the two name the same bytes: the disk cache's test (its key is
 * the URL, the ETag or else the Last-Modified, and the size). */
static bool same_file(const ggfs_url_record *a, const ggfs_url_record *b)
{
    if (a->size != b->size)
        return false;
    if (a->etag || b->etag)
        return same_string(a->etag, b->etag);
    return a->last_modified && same_string(a->last_modified, b->last_modified);
}

static bool copy_record(ggfs_url_record *to, const ggfs_url_record *from)
{
    *to = (ggfs_url_record){
        .url = strdup(from->url),
        .size = from->size,
        .etag = from->etag ? strdup(from->etag) : NULL,
        .last_modified = from->last_modified ? strdup(from->last_modified) : NULL,
        .mtime = from->mtime,
        .published = from->published,
    };
    if (to->url && (to->etag || !from->etag) && (to->last_modified || !from->last_modified))
        return true;
    ggfs_url_record_destroy(to);
    return false;
}

/* ==== Interface ==== */

uint64_t ggfs_block_files_key(ggfs_block_files *t, const ggfs_url_record *r)
{
    pthread_mutex_lock(&t->lock);
    file **slot = slot_of(t, r->url);
    file *f = *slot;
    const int64_t now = ggfs_now_ns();
    if (f && same_file(&f->r, r)) {
        f->checked_ns = now;
        // What any open of these bytes was told of them stays.
        if (ggfs_published_most(&f->r.published, &r->published) != &f->r.published)
            f->r.published = r->published;
        ggfs_dlist_remove(&f->order);
        ggfs_dlist_push_back(&t->order, &f->order);
        const uint64_t key = f->key;
        pthread_mutex_unlock(&t->lock);
        return key;
    }
    if (f) {
        // Changed on the server: its old bytes are of no use to anyone.
        ggfs_block_cache_drop_source(t->cache, f->key);
        forget(t, f);
    } else if (t->count >= t->max) {
        forget(t, GGFS_CONTAINER_OF(ggfs_dlist_front(&t->order), file, order));
    }
    uint64_t key = 0;
    f = calloc(1, sizeof *f);
    if (f && copy_record(&f->r, r)) {
        key = f->key = ggfs_block_cache_source_id(t->cache);
        f->checked_ns = now;
        slot = slot_of(t, r->url); // the chain may have changed above
        f->hash_next = *slot;
        *slot = f;
        ggfs_dlist_push_back(&t->order, &f->order);
        t->count++;
    } else {
        free(f);
    }
    pthread_mutex_unlock(&t->lock);
    return key;
}

bool ggfs_block_files_find(ggfs_block_files *t, const char *url, ggfs_url_record *out, uint64_t *key,
                           int64_t *checked_ns)
{
    pthread_mutex_lock(&t->lock);
    const file *f = *slot_of(t, url);
    const bool found = f && copy_record(out, &f->r);
    if (found) {
        *key = f->key;
        *checked_ns = f->checked_ns;
    }
    pthread_mutex_unlock(&t->lock);
    return found;
}
