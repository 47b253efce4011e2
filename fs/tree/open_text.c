/*
 * Open text files (see open_text.h).
 */
#include <stdlib.h>

#include "tree/open_text.h"

ggfs_open_text *ggfs_open_text_new(bool writable)
{
    ggfs_open_text *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    atomic_init(&o->refs, 1);
    ggfs_buffer_init(&o->text);
    o->writable = writable;
    if (writable)
        pthread_mutex_init(&o->lock, NULL);
    return o;
}

void ggfs_open_text_ref(ggfs_open_text *o)
{
    atomic_fetch_add(&o->refs, 1);
}

void ggfs_open_text_put(ggfs_open_text *o)
{
    if (atomic_fetch_sub(&o->refs, 1) != 1)
        return;
    if (o->writable) {
        if (o->reserved)
            ggfs_edits_reserve(o->mount->tree->edits, -(int64_t)o->reserved);
        pthread_mutex_destroy(&o->lock);
    }
    free(o->text.data);
    free(o);
}
