/*
 * The catalog's side of forgetting: the idle slots past the bound, which
 * the forgetting thread (forget_thread.c) takes to ask the kernel to
 * forget them, and what it asks of an entry the kernel kept.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "catalog/catalog_private.h"
#include "util/clock.h"

/* An entry the kernel kept when asked to forget it is not asked again for
 * ten seconds, then twenty, ... up to about 43 minutes. */
#define FIRST_KEEP_NS INT64_C(10000000000)
#define MAX_KEEP_DOUBLINGS 8u

size_t ggfs_catalog_next_forgets(ggfs_catalog *cat, ggfs_cat_forget *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&cat->lock);
    while (!cat->stopping) {
        ggfs_cat_drop_old_listings(cat);
        for (slot *s; n < max && (s = slot_of_link(ggfs_dlist_back(&cat->forget.head))) != NULL;) {
            ggfs_cat_unlist(cat, s);
            out[n] = (ggfs_cat_forget){.slot = s->id, .dir = s->parent};
            if ((size_t)snprintf(out[n].name, sizeof out[n].name, "%s", s->name) < sizeof out[n].name)
                n++;
        }
        if (n > 0)
            break;
        if (cat->n_listings == 0) {
            pthread_cond_wait(&cat->work, &cat->lock);
            continue;
        }
        const struct timespec until = ggfs_timespec_after(cat->listing_ttl_ns); // a listing's lifetime
        pthread_cond_timedwait(&cat->work, &cat->lock, &until);
    }
    pthread_mutex_unlock(&cat->lock);
    return n;
}

/* The path of slot s from the mount's root into path (cap bytes), under
 * the lock; false when it does not fit. */
static bool path_of(ggfs_catalog *cat, const slot *s, char *path, size_t cap)
{
    size_t len = 0;
    for (const slot *p = s; p && p->id != 0; p = slot_at(cat, p->parent))
        len += strlen(p->name) + 1;
    if (len == 0 || len > cap)
        return false;
    path[len - 1] = '\0';
    for (const slot *p = s; p && p->id != 0; p = slot_at(cat, p->parent)) {
        const size_t n = strlen(p->name);
        len -= n + 1;
        memcpy(path + len, p->name, n);
        if (len > 0)
            path[len - 1] = '/';
    }
    return true;
}

bool ggfs_catalog_still_held(ggfs_catalog *cat, const ggfs_cat_forget *f, char *path, size_t cap)
{
    pthread_mutex_lock(&cat->lock);
    slot *s = slot_at(cat, f->slot);
    const bool held = s && s->parent == f->dir && s->lookups > 0 && strcmp(s->name, f->name) == 0 &&
                      path_of(cat, s, path, cap);
    if (held) {
        // Kept again and again, it is in use for long: ask less often.
        const unsigned doublings = s->kept < MAX_KEEP_DOUBLINGS ? s->kept++ : MAX_KEEP_DOUBLINGS;
        s->kept_until = ggfs_now_ns() + (FIRST_KEEP_NS << doublings);
    }
    pthread_mutex_unlock(&cat->lock);
    return held;
}

void ggfs_catalog_stop_forgetting(ggfs_catalog *cat)
{
    pthread_mutex_lock(&cat->lock);
    cat->stopping = true;
    pthread_cond_broadcast(&cat->work);
    pthread_mutex_unlock(&cat->lock);
}
