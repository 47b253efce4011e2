/*
 * The catalog's directories: each one's newest listing read by its store
 * (store.h; outside the lock, on the directory's slot pinned meanwhile),
 * kept for lookups the store's listing lifetime and then dropped, and the
 * lookups and listed entries served from it, with the slots they make or
 * find replaced.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/catalog_private.h"
#include "catalog/scan.h"
#include "catalog/store.h"
#include "util/clock.h"

/* ==== Keeping listings ==== */

void ggfs_cat_listing_put(ggfs_catalog *cat, ggfs_cat_listing *l)
{
    (void)cat; // its lock is held
    if (l && --l->refs == 0)
        ggfs_listing_free(l);
}

void ggfs_cat_drop_listing(ggfs_catalog *cat, dir_state *d)
{
    if (!d->listing)
        return;
    ggfs_cat_listing_put(cat, d->listing);
    d->listing = NULL;
    cat->n_listings--;
}

int64_t ggfs_cat_listing_life(const ggfs_catalog *cat, ggfs_cat_kind kind)
{
    return ggfs_store_of(kind)->life == GGFS_LIFE_MOUNT ? INT64_MAX : cat->listing_ttl_ns;
}

/* Whether d's listing, read at listed_at (0: to be read again), is still
 * trusted at now. */
static bool listing_fresh(const ggfs_catalog *cat, const slot *d, int64_t now)
{
    return d->dir->listed_at && now - d->dir->listed_at < ggfs_cat_listing_life(cat, d->kind);
}

void ggfs_cat_drop_old_listings(ggfs_catalog *cat)
{
    const int64_t now = ggfs_now_ns();
    if (cat->n_listings == 0 || now - cat->swept_at < cat->listing_ttl_ns / 2)
        return;
    cat->swept_at = now;
    for (uint64_t id = 0; cat->n_listings > 0 && id < cat->n_ids; id++) {
        slot *s = cat->slots[id];
        if (s && s->dir && s->dir->listing && !listing_fresh(cat, s, now))
            ggfs_cat_drop_listing(cat, s->dir);
    }
}

/* ==== Slots of listed entries ==== */

/* Whether slot s was made for entry e of listing l of directory d: a
 * directory keeps its slot as entries come and go in it; a model only
 * while its file is the same. */
static bool same_thing(const slot *s, const ggfs_cat_listing *l, const ggfs_listed *e, const slot *d)
{
    char buf[PATH_MAX];
    const char *path = ggfs_listed_path(l, e, d->real, buf, sizeof buf);
    if (!path || s->kind != (ggfs_cat_kind)e->kind || strcmp(s->path, path) != 0 ||
        strcmp(s->real, ggfs_listed_real(l, e, path)) != 0)
        return false;
    if (s->kind != GGFS_CAT_MODEL && ggfs_store_of(s->kind)->ident_by_place)
        return true; // a place in a view: its store and place are what it is
    if (!ggfs_cat_ident_equal(&s->a.ident, &e->a.ident))
        return false;
    if (s->kind != GGFS_CAT_MODEL)
        return true;
    // A model listed with an error (an Ollama manifest naming no model)
    // stays that error; one listed without keeps any error opening gave.
    const char *error = ggfs_listed_error(l, e);
    return s->shards == e->shards && (!error || (s->error && strcmp(s->error, error) == 0));
}

/* Marks s replaced by a new slot for its name (under the lock), and frees
 * it if nothing holds it. Returns its id when its model is open, for
 * ggfs_lru_drop, else UINT64_MAX (a slot freed may have its id handed out
 * at once: that is another's). */
static uint64_t make_stale(ggfs_catalog *cat, slot *s)
{
    ggfs_cat_unhash(cat, s);
    s->stale = true;
    const uint64_t open = s->opens > 0 ? s->id : UINT64_MAX;
    ggfs_cat_settle(cat, s);
    return open;
}

/* The slot for entry e of listing l of directory d (under the lock): the
 * one it has, or a new one. When the current slot of that name was made
 * for another file, an authoritative listing (d's newest) replaces it
 * (its id is put in *replaced, else UINT64_MAX); an older one gets NULL.
 * NULL too when out of memory. */
static slot *slot_for(ggfs_catalog *cat, slot *d, const ggfs_cat_listing *l, const ggfs_listed *e,
                      bool authoritative, uint64_t *replaced)
{
    *replaced = UINT64_MAX;
    const char *name = ggfs_listed_name(l, e);
    slot *s = ggfs_cat_find_current(cat, d, name);
    if (s) {
        if (same_thing(s, l, e, d))
            return s;
        if (!authoritative)
            return NULL;
        *replaced = make_stale(cat, s);
    }
    char buf[PATH_MAX];
    const char *path = ggfs_listed_path(l, e, d->real, buf, sizeof buf);
    if (!path)
        return NULL;
    return ggfs_cat_slot_new(cat, d, (ggfs_cat_kind)e->kind, name, path, ggfs_listed_real(l, e, path),
                             ggfs_listed_error(l, e), &e->a, e->shards);
}

/* ==== Reading and looking up ==== */

/* The directory slot `id`, pinned, or NULL with *err set. */
static slot *pin_directory(ggfs_catalog *cat, uint64_t id, int *err)
{
    pthread_mutex_lock(&cat->lock);
    slot *d = slot_at(cat, id);
    *err = !d ? ENOENT : d->kind == GGFS_CAT_MODEL ? ENOTDIR : 0;
    if (!*err)
        d->pins++;
    pthread_mutex_unlock(&cat->lock);
    return *err ? NULL : d;
}

/* Slots of d that name other files than listing l says: replaced (under
 * the lock). Returns the ids whose models may be open, for ggfs_lru_drop
 * (allocated; NULL when none, or out of memory: then they stay open
 * until the set closes them, never served since ggfs_catalog_get refuses
 * a stale slot). */
static uint64_t *replace_changed(ggfs_catalog *cat, slot *d, const ggfs_cat_listing *l, size_t *n)
{
    uint64_t *ids = NULL;
    size_t cap = 0;
    *n = 0;
    if (d->children == 0)
        return NULL; // nothing to compare with: the common case of a large folder
    for (size_t i = 0; i < l->count; i++) {
        const ggfs_listed *e = &l->entries[i];
        slot *s = ggfs_cat_find_current(cat, d, ggfs_listed_name(l, e));
        if (!s || same_thing(s, l, e, d))
            continue;
        const uint64_t id = make_stale(cat, s);
        if (id == UINT64_MAX)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            uint64_t *grown = realloc(ids, cap * sizeof *ids);
            if (!grown)
                continue;
            ids = grown;
        }
        ids[(*n)++] = id;
    }
    return ids;
}

/* Reads directory d (pinned; outside the lock) into a listing and keeps it
 * as d's, unless a later one was begun and kept first; with out, also
 * hands it back with a reference. */
static int read_directory(ggfs_catalog *cat, slot *d, ggfs_cat_listing **out)
{
    pthread_mutex_lock(&cat->lock);
    const uint64_t mine = ++d->dir->started;
    // The real paths of the folder's directories shown above d, and d's
    // own when it is one (a view's places are no paths of the folder): d
    // is pinned, and each slot holds its parent.
    size_t depth = 0;
    for (const slot *s = d; s->id != 0; s = cat->slots[s->parent])
        depth++;
    const char **ancestors = malloc((depth + 1) * sizeof *ancestors);
    size_t n = 0;
    if (ancestors) {
        for (const slot *s = d;; s = cat->slots[s->parent]) {
            if (s->kind == GGFS_CAT_DIR)
                ancestors[n++] = s->real;
            if (s->id == 0)
                break;
        }
        for (size_t i = 0; i < n / 2; i++) { // from the folder down
            const char *t = ancestors[i];
            ancestors[i] = ancestors[n - 1 - i];
            ancestors[n - 1 - i] = t;
        }
    }
    pthread_mutex_unlock(&cat->lock);
    if (!ancestors)
        return ENOMEM;
    ggfs_scan scan;
    const ggfs_store_dir dir = {.path = d->path, .real = d->real, .ancestors = ancestors, .n_ancestors = n};
    int err = ggfs_store_of(d->kind)->list(&cat->env, &dir, &scan);
    free(ancestors);
    if (err)
        return err;
    ggfs_cat_listing *l = ggfs_listing_build(&scan, d->real);
    ggfs_scan_free(&scan);
    if (!l)
        return ENOMEM;
    uint64_t *replaced = NULL;
    size_t n_replaced = 0;
    pthread_mutex_lock(&cat->lock);
    if (mine > d->dir->applied) {
        d->dir->applied = mine;
        if (!d->dir->listing && cat->n_listings++ == 0)
            pthread_cond_signal(&cat->work); // to drop it after its lifetime
        ggfs_cat_listing_put(cat, d->dir->listing);
        d->dir->listing = l;
        l->refs++;
        d->dir->listed_at = ggfs_now_ns();
        replaced = replace_changed(cat, d, l, &n_replaced);
        if (ggfs_store_of(d->kind)->read_ahead && !d->dir->read_ahead) {
            d->dir->read_ahead = true; // once: a remote listing does not change
            ggfs_cat_read_ahead(cat, d, l);
        }
    }
    if (out) {
        l->refs++;
        *out = l;
    }
    ggfs_cat_listing_put(cat, l);
    pthread_mutex_unlock(&cat->lock);
    for (size_t i = 0; i < n_replaced; i++)
        ggfs_lru_drop(cat->models, replaced[i]);
    free(replaced);
    return 0;
}

int ggfs_catalog_lookup(ggfs_catalog *cat, uint64_t dir, const char *name, ggfs_cat_entry *out)
{
    int err;
    slot *d = pin_directory(cat, dir, &err);
    if (!d)
        return err;
    pthread_mutex_lock(&cat->lock);
    ggfs_cat_listing *l = d->dir->listing;
    if (l && listing_fresh(cat, d, ggfs_now_ns()))
        l->refs++;
    else
        l = NULL;
    pthread_mutex_unlock(&cat->lock);
    if (!l)
        err = read_directory(cat, d, &l);
    uint64_t replaced = UINT64_MAX;
    pthread_mutex_lock(&cat->lock);
    if (!err) {
        // A listing within its lifetime (or read just now) is the truth.
        const ggfs_listed *e = ggfs_listing_find(l, name);
        slot *s = e ? slot_for(cat, d, l, e, true, &replaced) : NULL;
        err = !e ? ENOENT : !s ? ENOMEM : 0;
        if (s) {
            s->lookups++;
            ggfs_cat_touch(cat, s);
            ggfs_cat_entry_of(s, out);
        }
        ggfs_cat_listing_put(cat, l);
    }
    ggfs_cat_unpin(cat, d);
    pthread_mutex_unlock(&cat->lock);
    if (replaced != UINT64_MAX)
        ggfs_lru_drop(cat->models, replaced);
    return err;
}

int ggfs_catalog_list(ggfs_catalog *cat, uint64_t dir, ggfs_cat_listing **out)
{
    *out = NULL;
    int err;
    slot *d = pin_directory(cat, dir, &err);
    if (!d)
        return err;
    // A store whose listings change rarely (a remote one: each listing is
    // requests) serves one within its life again.
    pthread_mutex_lock(&cat->lock);
    ggfs_cat_listing *l = d->dir->listing;
    if (l && !ggfs_store_of(d->kind)->relist_on_opendir && listing_fresh(cat, d, ggfs_now_ns())) {
        l->refs++;
        *out = l;
    }
    pthread_mutex_unlock(&cat->lock);
    if (!*out)
        err = read_directory(cat, d, out);
    pthread_mutex_lock(&cat->lock);
    ggfs_cat_unpin(cat, d);
    pthread_mutex_unlock(&cat->lock);
    return err;
}

void ggfs_catalog_unlist(ggfs_catalog *cat, ggfs_cat_listing *l)
{
    pthread_mutex_lock(&cat->lock);
    ggfs_cat_listing_put(cat, l);
    pthread_mutex_unlock(&cat->lock);
}

size_t ggfs_cat_listing_count(const ggfs_cat_listing *l)
{
    return l->count;
}

bool ggfs_cat_listing_has(const ggfs_cat_listing *l, const char *name)
{
    return ggfs_listing_find(l, name) != NULL;
}

const char *ggfs_cat_listing_name(const ggfs_cat_listing *l, size_t i)
{
    return ggfs_listed_name(l, &l->entries[i]);
}

bool ggfs_catalog_listed(ggfs_catalog *cat, uint64_t dir, const ggfs_cat_listing *l, size_t i,
                         bool remember, ggfs_cat_entry *out)
{
    const ggfs_listed *e = &l->entries[i];
    uint64_t replaced = UINT64_MAX;
    pthread_mutex_lock(&cat->lock);
    slot *d = slot_at(cat, dir), *s = NULL;
    if (d && d->dir) {
        if (remember) {
            // A listing larger than the room left for idle entries would
            // have the kernel forget the first of them before anyone uses
            // them: past that room, entries go without an inode, and a
            // lookup makes their slot when one is used.
            s = ggfs_cat_find_current(cat, d, ggfs_listed_name(l, e));
            if (s || cat->idle.count < cat->max_idle)
                s = slot_for(cat, d, l, e, l == d->dir->listing, &replaced);
            if (s) {
                s->lookups++;
                ggfs_cat_touch(cat, s);
            }
        } else {
            s = ggfs_cat_find_current(cat, d, ggfs_listed_name(l, e));
            if (s && !same_thing(s, l, e, d))
                s = NULL;
        }
    }
    if (s) {
        ggfs_cat_entry_of(s, out);
    } else {
        memset(out, 0, sizeof *out);
        out->slot = GGFS_NO_SLOT;
        out->kind = (ggfs_cat_kind)e->kind;
        ggfs_cat_attrs_stat(&e->a, &out->st);
        out->shards = e->shards;
    }
    pthread_mutex_unlock(&cat->lock);
    if (replaced != UINT64_MAX)
        ggfs_lru_drop(cat->models, replaced);
    return s != NULL || !remember;
}
