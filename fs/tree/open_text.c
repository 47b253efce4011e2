/*
 * Open text files (see open_text.h).
 */
#include <stdlib.h>

#include "tree/open_text.h"

void ggfs_open_texts_init(ggfs_open_texts *set)
{
    pthread_mutex_init(&set->lock, NULL);
    ggfs_dlist_init(&set->all);
}

ggfs_open_text *ggfs_open_text_new(ggfs_open_texts *set, bool writable)
{
    ggfs_open_text *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    atomic_init(&o->refs, 1);
    ggfs_buffer_init(&o->text);
    o->writable = writable;
    if (writable)
        pthread_mutex_init(&o->lock, NULL);
    o->set = set;
    if (set) {
        pthread_mutex_lock(&set->lock);
        ggfs_dlist_push_back(&set->all, &o->link);
        pthread_mutex_unlock(&set->lock);
    }
    return o;
}

static void destroy(ggfs_open_text *o)
{
    if (o->writable) {
        if (o->reserved)
            ggfs_edits_reserve(o->mount->tree->edits, -(int64_t)o->reserved);
        pthread_mutex_destroy(&o->lock);
    }
    free(o->text.data);
    free(o);
}

void ggfs_open_texts_drain(ggfs_open_texts *set)
{
    while (!ggfs_dlist_empty(&set->all)) {
        ggfs_open_text *o = GGFS_CONTAINER_OF(ggfs_dlist_front(&set->all), ggfs_open_text, link);
        ggfs_dlist_remove(&o->link);
        destroy(o);
    }
    pthread_mutex_destroy(&set->lock);
}

void ggfs_open_text_ref(ggfs_open_text *o)
{
    atomic_fetch_add(&o->refs, 1);
}

void ggfs_open_text_put(ggfs_open_text *o)
{
    if (atomic_fetch_sub(&o->refs, 1) != 1)
        return;
    if (o->set) {
        pthread_mutex_lock(&o->set->lock);
        ggfs_dlist_remove(&o->link);
        pthread_mutex_unlock(&o->set->lock);
    }
    destroy(o);
}
