/*
 * The catalog's slots, listings and open models. One lock guards the slot
 * table, the listings, the counts and the errors; directory reads and
 * model opens run outside it, on slots pinned meanwhile.
 *
 * A slot is freed when nothing holds it: no reference of the kernel's,
 * no open model, no request, no live slot below it. Its number goes on a
 * free list for the next slot. A slot the kernel holds and nothing else
 * is idle; idle slots are kept on a list, most recently used first, and
 * those past the catalog's bound move to the list the forgetting thread
 * takes from.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "catalog_listing.h"
#include "catalog_scan.h"
#include "lru.h"
#include "model.h"
#include "ollama.h"
#include "split_name.h"
#include "trim.h"

#define LISTING_TTL_NS INT64_C(1000000000) // a lookup reads a directory again after this
#define TRIM_AFTER_NS INT64_C(1000000000)  // closed models' pages go back this long after
#define MAX_SLOTS (UINT64_C(1) << (64 - GGFS_SLOT_SHIFT))

/* A directory's listings: a lookup trusts the newest for a second, and
 * the forgetting thread drops it after that. */
typedef struct dir_state {
    uint64_t started;           // listings begun
    uint64_t applied;           // the newest listing kept
    ggfs_cat_listing *listing;  // that one, until dropped; NULL then
    int64_t listed_at;          // when it was read, CLOCK_MONOTONIC ns; 0: read again
} dir_state;

enum { ON_NO_LIST, ON_IDLE, ON_FORGET };

typedef struct slot {
    uint64_t id;
    uint64_t parent;
    int64_t lookups;     // the kernel's references to the slot's inodes
    uint32_t pins;       // requests using the slot outside the lock
    uint32_t opens;      // its model is open (once per open of it, see lru.h)
    uint32_t children;   // live slots whose parent this is
    uint32_t shards;
    uint8_t kind;        // ggfs_cat_kind
    uint8_t list;        // ON_*: which of the catalog's lists it is on
    bool stale;          // the name now names another file: replaced by a new slot
    const char *name;    // in the parent
    const char *path;    // model: as found (see catalog_scan.h); directory: its real
                         // path; ollama: the store
    const char *real;    // model: the file it names; directory: its real path;
                         // ollama: the place in the view (often the same string as path)
    char *error;         // why the model cannot be opened, one line; NULL if none known
    struct slot *chain;  // in the (parent, name) hash, while current
    struct slot *newer, *older; // on its list
    dir_state *dir;      // directories only
    ggfs_cat_attrs a;
} slot;

typedef struct slot_list {
    slot *newest, *oldest;
    size_t count;
} slot_list;

struct ggfs_catalog {
    ggfs_folder folder;
    pthread_mutex_t lock;
    pthread_cond_t work;    // for the forgetting thread: an entry to forget,
                            // a listing to drop later, or stopping
    slot **slots;           // by id; NULL for a free id
    uint64_t n_ids, cap_ids; // ids handed out so far (the table's length)
    uint64_t *free_ids;     // ids of freed slots, to hand out again
    uint64_t n_free, cap_free;
    uint64_t live;          // slots alive
    slot **hash;            // by (parent, name), current slots only
    size_t mask;
    slot_list idle;         // held by the kernel only, most recently used first
    slot_list forget;       // idle past max_idle: for the forgetting thread
    size_t max_idle;
    size_t n_listings;      // directories holding a listing
    int64_t swept_at;       // when drop_old_listings last looked
    bool stopping;          // ggfs_catalog_stop_forgetting was called
    ggfs_lru *models;       // ggfs_tree of each open model, by slot
    ggfs_trim *trim;        // hands closed models' pages back
    pthread_key_t scratch;  // the loop threads' buffers, shared by all trees
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ==== Lists of slots ==== */

static void list_push(slot_list *l, slot *s)
{
    s->newer = NULL;
    s->older = l->newest;
    if (l->newest)
        l->newest->newer = s;
    else
        l->oldest = s;
    l->newest = s;
    l->count++;
}

static void list_remove(slot_list *l, slot *s)
{
    if (s->newer)
        s->newer->older = s->older;
    else
        l->newest = s->older;
    if (s->older)
        s->older->newer = s->newer;
    else
        l->oldest = s->newer;
    s->newer = s->older = NULL;
    l->count--;
}

static void unlist(ggfs_catalog *cat, slot *s)
{
    if (s->list != ON_NO_LIST)
        list_remove(s->list == ON_IDLE ? &cat->idle : &cat->forget, s);
    s->list = ON_NO_LIST;
}

/* ==== Slots ==== */

static size_t bucket_of(const ggfs_catalog *cat, uint64_t parent, const char *name)
{
    uint64_t h = UINT64_C(14695981039346656037) ^ parent;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * UINT64_C(1099511628211);
    return (size_t)(h ^ (h >> 29)) & cat->mask;
}

static void unhash(ggfs_catalog *cat, slot *s)
{
    slot **p = &cat->hash[bucket_of(cat, s->parent, s->name)];
    while (*p && *p != s)
        p = &(*p)->chain;
    if (*p)
        *p = s->chain;
    s->chain = NULL;
}

static bool grow_hash(ggfs_catalog *cat)
{
    const size_t n = (cat->mask + 1) * 2;
    slot **fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return false;
    slot **old = cat->hash;
    const size_t old_n = cat->mask + 1;
    cat->hash = fresh;
    cat->mask = n - 1;
    for (size_t b = 0; b < old_n; b++) {
        for (slot *s = old[b], *next; s; s = next) {
            next = s->chain;
            slot **head = &cat->hash[bucket_of(cat, s->parent, s->name)];
            s->chain = *head;
            *head = s;
        }
    }
    free(old);
    return true;
}

static ggfs_cat_kind kind_of(ggfs_scan_kind k)
{
    return k == GGFS_SCAN_DIR ? GGFS_CAT_DIR : k == GGFS_SCAN_OLLAMA ? GGFS_CAT_OLLAMA : GGFS_CAT_MODEL;
}

static slot *slot_at(ggfs_catalog *cat, uint64_t id)
{
    return id < cat->n_ids ? cat->slots[id] : NULL;
}

/* A free id, or a new one (under the lock); false when out of ids or memory. */
static bool take_id(ggfs_catalog *cat, uint64_t *id)
{
    if (cat->n_free > 0) {
        *id = cat->free_ids[--cat->n_free];
        return true;
    }
    if (cat->n_ids >= MAX_SLOTS)
        return false;
    if (cat->n_ids == cat->cap_ids) {
        const uint64_t cap = cat->cap_ids ? cat->cap_ids * 2 : 256;
        slot **grown = realloc(cat->slots, (size_t)cap * sizeof *grown);
        if (!grown)
            return false;
        cat->slots = grown;
        cat->cap_ids = cap;
    }
    // The free list can hold every id: a slot freed never waits for room.
    if (cat->cap_free < cat->cap_ids) {
        uint64_t *grown = realloc(cat->free_ids, (size_t)cat->cap_ids * sizeof *grown);
        if (!grown)
            return false;
        cat->free_ids = grown;
        cat->cap_free = cat->cap_ids;
    }
    *id = cat->n_ids;
    cat->slots[cat->n_ids++] = NULL;
    return true;
}

/* Adds a slot under parent (under the lock). Returns NULL when out of
 * memory or ids. */
static slot *slot_new(ggfs_catalog *cat, slot *parent, ggfs_cat_kind kind, const char *name,
                      const char *path, const char *real, const char *error, const ggfs_cat_attrs *a,
                      uint32_t shards)
{
    if (cat->live + 1 > 2 * (cat->mask + 1) && !grow_hash(cat))
        return NULL;
    // One block: the slot, then its strings (real only when it differs).
    const bool same = strcmp(path, real) == 0;
    const size_t ln = strlen(name) + 1, lp = strlen(path) + 1, lr = same ? 0 : strlen(real) + 1;
    slot *s = calloc(1, sizeof *s + ln + lp + lr);
    char *err_copy = error ? strdup(error) : NULL;
    dir_state *dir = kind != GGFS_CAT_MODEL ? calloc(1, sizeof *dir) : NULL;
    uint64_t id;
    if (!s || (error && !err_copy) || (kind != GGFS_CAT_MODEL && !dir) || !take_id(cat, &id)) {
        free(s);
        free(err_copy);
        free(dir);
        return NULL;
    }
    char *strings = (char *)(s + 1);
    s->name = memcpy(strings, name, ln);
    s->path = memcpy(strings + ln, path, lp);
    s->real = same ? s->path : memcpy(strings + ln + lp, real, lr);
    s->id = id;
    s->parent = parent ? parent->id : 0;
    s->kind = (uint8_t)kind;
    s->a = *a;
    s->shards = shards;
    s->error = err_copy;
    s->dir = dir;
    cat->slots[id] = s;
    cat->live++;
    if (parent)
        parent->children++;
    slot **head = &cat->hash[bucket_of(cat, s->parent, name)];
    s->chain = *head;
    *head = s;
    return s;
}

static void listing_put(ggfs_catalog *cat, ggfs_cat_listing *l)
{
    (void)cat; // its lock is held
    if (l && --l->refs == 0)
        ggfs_listing_free(l);
}

/* Drops directory d's listing (under the lock). */
static void drop_listing(ggfs_catalog *cat, dir_state *d)
{
    if (!d->listing)
        return;
    listing_put(cat, d->listing);
    d->listing = NULL;
    cat->n_listings--;
}

/* Frees slot s, which nothing holds (under the lock); its number may be
 * handed out again. */
static void slot_free(ggfs_catalog *cat, slot *s)
{
    unlist(cat, s);
    if (!s->stale)
        unhash(cat, s);
    if (s->dir) {
        drop_listing(cat, s->dir);
        free(s->dir);
    }
    cat->slots[s->id] = NULL;
    cat->free_ids[cat->n_free++] = s->id;
    cat->live--;
    free(s->error);
    free(s);
}

static bool in_use(const slot *s)
{
    return s->pins || s->opens || s->children;
}

/* Past the bound, moves the oldest idle slots to the forgetting thread's
 * list, down to three quarters of it: the kernel forgets in bursts, and
 * each burst costs a walk through the directory one fresh look at its
 * attributes (forgetting an entry makes the kernel doubt its parent's),
 * not one per entry. */
static void trim_idle(ggfs_catalog *cat)
{
    if (cat->idle.count <= cat->max_idle)
        return;
    bool moved = false;
    while (cat->idle.count > cat->max_idle / 4 * 3) {
        slot *s = cat->idle.oldest;
        list_remove(&cat->idle, s);
        list_push(&cat->forget, s);
        s->list = ON_FORGET;
        moved = true;
    }
    if (moved)
        pthread_cond_signal(&cat->work);
}

/* After a count of s changed (under the lock): frees s if nothing holds
 * it any more (then its parent may follow), else puts it on the idle list
 * or takes it off. */
static void settle(ggfs_catalog *cat, slot *s)
{
    bool freed = false;
    while (s && s->id != 0) {
        if (s->lookups != 0 || in_use(s)) {
            // A lookup count below 0 is a forget that overtook its
            // remember (ggfs_catalog_remember): the slot is in use then.
            const bool idle = s->lookups > 0 && !in_use(s);
            if (idle && s->list == ON_NO_LIST) {
                list_push(&cat->idle, s);
                s->list = ON_IDLE;
            } else if (!idle) {
                unlist(cat, s);
            }
            break;
        }
        slot *parent = slot_at(cat, s->parent);
        slot_free(cat, s);
        freed = true;
        if (parent)
            parent->children--;
        s = parent;
    }
    trim_idle(cat);
    if (freed)
        ggfs_trim_soon(cat->trim); // a walk frees thousands: their pages go back
}

/* s was used: first in line to stay (under the lock). */
static void touch(ggfs_catalog *cat, slot *s)
{
    unlist(cat, s);
    settle(cat, s);
}

/* Whether slot s was made for entry e of listing l of directory d: a
 * directory keeps its slot as entries come and go in it; a model only
 * while its file is the same. */
static bool same_thing(const slot *s, const ggfs_cat_listing *l, const ggfs_listed *e, const slot *d)
{
    char buf[PATH_MAX];
    const char *path = ggfs_listed_path(l, e, d->real, buf, sizeof buf);
    if (!path || s->kind != kind_of(e->kind) || strcmp(s->path, path) != 0 ||
        strcmp(s->real, ggfs_listed_real(l, e, path)) != 0)
        return false;
    if (s->kind == GGFS_CAT_OLLAMA)
        return true;
    if (s->kind == GGFS_CAT_DIR)
        return s->a.dev == e->a.dev && s->a.ino == e->a.ino;
    // A model listed with an error (an Ollama manifest naming no model)
    // stays that error; one listed without keeps any error opening gave.
    const char *error = ggfs_listed_error(l, e);
    return ggfs_cat_attrs_equal_file(&s->a, &e->a) && s->shards == e->shards &&
           (!error || (s->error && strcmp(s->error, error) == 0));
}

/* The current slot called name in directory d, or NULL (under the lock). */
static slot *find_current(ggfs_catalog *cat, const slot *d, const char *name)
{
    for (slot *s = cat->hash[bucket_of(cat, d->id, name)]; s; s = s->chain)
        if (s->parent == d->id && strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

/* Marks s replaced by a new slot for its name (under the lock), and frees
 * it if nothing holds it. Returns its id when its model is open, for
 * ggfs_lru_drop, else UINT64_MAX (a slot freed may have its id handed out
 * at once: that is another's). */
static uint64_t make_stale(ggfs_catalog *cat, slot *s)
{
    unhash(cat, s);
    s->stale = true;
    const uint64_t open = s->opens > 0 ? s->id : UINT64_MAX;
    settle(cat, s);
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
    slot *s = find_current(cat, d, name);
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
    return slot_new(cat, d, kind_of(e->kind), name, path, ggfs_listed_real(l, e, path),
                    ggfs_listed_error(l, e), &e->a, e->shards);
}

static void entry_of(const slot *s, ggfs_cat_entry *out)
{
    memset(out, 0, sizeof *out);
    out->slot = s->id;
    out->kind = (ggfs_cat_kind)s->kind;
    ggfs_cat_attrs_stat(&s->a, &out->st);
    out->shards = s->shards;
}

bool ggfs_catalog_entry(ggfs_catalog *cat, uint64_t id, ggfs_cat_entry *out)
{
    pthread_mutex_lock(&cat->lock);
    const slot *s = slot_at(cat, id);
    if (s)
        entry_of(s, out);
    pthread_mutex_unlock(&cat->lock);
    return s != NULL;
}

uint64_t ggfs_catalog_slots(ggfs_catalog *cat)
{
    pthread_mutex_lock(&cat->lock);
    const uint64_t n = cat->live;
    pthread_mutex_unlock(&cat->lock);
    return n;
}

bool ggfs_catalog_remember(ggfs_catalog *cat, uint64_t id, uint64_t n)
{
    pthread_mutex_lock(&cat->lock);
    slot *s = slot_at(cat, id);
    if (s) {
        s->lookups += (int64_t)n;
        touch(cat, s);
    }
    pthread_mutex_unlock(&cat->lock);
    return s != NULL;
}

void ggfs_catalog_forget(ggfs_catalog *cat, uint64_t id, uint64_t n)
{
    pthread_mutex_lock(&cat->lock);
    slot *s = slot_at(cat, id);
    if (s) {
        s->lookups -= (int64_t)n;
        settle(cat, s);
    }
    pthread_mutex_unlock(&cat->lock);
}

/* ==== Listings ==== */

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

/* Under the lock. */
static void unpin(ggfs_catalog *cat, slot *s)
{
    s->pins--;
    settle(cat, s);
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
        slot *s = find_current(cat, d, ggfs_listed_name(l, e));
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
    // The real paths of the directories shown above d and d itself: d is
    // pinned, and each slot holds its parent.
    size_t depth = 0;
    for (const slot *s = d; s->id != 0; s = cat->slots[s->parent])
        depth++;
    const char **ancestors = malloc((depth + 1) * sizeof *ancestors);
    if (ancestors) {
        size_t i = depth + 1;
        for (const slot *s = d;; s = cat->slots[s->parent]) {
            ancestors[--i] = s->real;
            if (s->id == 0)
                break;
        }
    }
    pthread_mutex_unlock(&cat->lock);
    if (!ancestors)
        return ENOMEM;
    ggfs_scan scan;
    int err = d->kind == GGFS_CAT_OLLAMA ? ggfs_ollama_list(&cat->folder, d->path, d->real, &scan)
                                         : ggfs_scan_dir(&cat->folder, d->real, ancestors, depth + 1, &scan);
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
            pthread_cond_signal(&cat->work); // to drop it in a second
        listing_put(cat, d->dir->listing);
        d->dir->listing = l;
        l->refs++;
        d->dir->listed_at = now_ns();
        replaced = replace_changed(cat, d, l, &n_replaced);
    }
    if (out) {
        l->refs++;
        *out = l;
    }
    listing_put(cat, l);
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
    if (l && d->dir->listed_at && now_ns() - d->dir->listed_at < LISTING_TTL_NS)
        l->refs++;
    else
        l = NULL;
    pthread_mutex_unlock(&cat->lock);
    if (!l)
        err = read_directory(cat, d, &l);
    uint64_t replaced = UINT64_MAX;
    pthread_mutex_lock(&cat->lock);
    if (!err) {
        // A listing under a second old (or read just now) is the truth.
        const ggfs_listed *e = ggfs_listing_find(l, name);
        slot *s = e ? slot_for(cat, d, l, e, true, &replaced) : NULL;
        err = !e ? ENOENT : !s ? ENOMEM : 0;
        if (s) {
            s->lookups++;
            touch(cat, s);
            entry_of(s, out);
        }
        listing_put(cat, l);
    }
    unpin(cat, d);
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
    err = read_directory(cat, d, out);
    pthread_mutex_lock(&cat->lock);
    unpin(cat, d);
    pthread_mutex_unlock(&cat->lock);
    return err;
}

void ggfs_catalog_unlist(ggfs_catalog *cat, ggfs_cat_listing *l)
{
    pthread_mutex_lock(&cat->lock);
    listing_put(cat, l);
    pthread_mutex_unlock(&cat->lock);
}

size_t ggfs_cat_listing_count(const ggfs_cat_listing *l)
{
    return l->count;
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
            s = find_current(cat, d, ggfs_listed_name(l, e));
            if (s || cat->idle.count < cat->max_idle)
                s = slot_for(cat, d, l, e, l == d->dir->listing, &replaced);
            if (s) {
                s->lookups++;
                touch(cat, s);
            }
        } else {
            s = find_current(cat, d, ggfs_listed_name(l, e));
            if (s && !same_thing(s, l, e, d))
                s = NULL;
        }
    }
    if (s) {
        entry_of(s, out);
    } else {
        memset(out, 0, sizeof *out);
        out->slot = GGFS_NO_SLOT;
        out->kind = kind_of(e->kind);
        ggfs_cat_attrs_stat(&e->a, &out->st);
        out->shards = e->shards;
    }
    pthread_mutex_unlock(&cat->lock);
    if (replaced != UINT64_MAX)
        ggfs_lru_drop(cat->models, replaced);
    return s != NULL || !remember;
}

/* ==== Forgetting ==== */

/* Drops the listings past their second (under the lock), looking at most
 * twice a second. */
static void drop_old_listings(ggfs_catalog *cat)
{
    const int64_t now = now_ns();
    if (cat->n_listings == 0 || now - cat->swept_at < LISTING_TTL_NS / 2)
        return;
    cat->swept_at = now;
    for (uint64_t id = 0; cat->n_listings > 0 && id < cat->n_ids; id++) {
        slot *s = cat->slots[id];
        if (s && s->dir && s->dir->listing && now - s->dir->listed_at >= LISTING_TTL_NS)
            drop_listing(cat, s->dir);
    }
}

size_t ggfs_catalog_next_forgets(ggfs_catalog *cat, ggfs_cat_forget *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&cat->lock);
    while (!cat->stopping) {
        drop_old_listings(cat);
        for (slot *s; n < max && (s = cat->forget.oldest) != NULL;) {
            unlist(cat, s);
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
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 1; // a listing's second
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
    const slot *s = slot_at(cat, f->slot);
    const bool held = s && s->parent == f->dir && s->lookups > 0 && strcmp(s->name, f->name) == 0 &&
                      path_of(cat, s, path, cap);
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

/* ==== Models ==== */

/* One line: control bytes of names quoted in the message become '?'. */
static void set_error(ggfs_catalog *cat, slot *s, const char *msg)
{
    char *copy = strdup(msg);
    if (!copy)
        return;
    for (char *p = copy; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    }
    pthread_mutex_lock(&cat->lock);
    if (!s->error) {
        s->error = copy;
        copy = NULL;
    }
    pthread_mutex_unlock(&cat->lock);
    free(copy);
}

/* The path relative to the folder, for messages. */
static const char *relative(const ggfs_catalog *cat, const char *path)
{
    const size_t n = strlen(cat->folder.real);
    if (strncmp(path, cat->folder.real, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

/* A split set's other shards are found beside it by name: each must stay
 * inside the folder, as the first did. */
static bool shards_inside(ggfs_catalog *cat, const slot *s, char *msg, size_t cap)
{
    size_t prefix_len;
    unsigned k, n;
    if (!ggfs_split_name_parse(s->path, &prefix_len, &k, &n))
        return true;
    for (unsigned i = 1; i <= n; i++) {
        char *shard = ggfs_split_name_make(s->path, prefix_len, i, n);
        char real[PATH_MAX];
        struct stat st;
        const int err = shard ? ggfs_resolve_beneath(&cat->folder, shard, real, sizeof real, &st) : ENOMEM;
        if (err == EXDEV || err == ELOOP) {
            snprintf(msg, cap, "%s: shard %u of %u %s", shard, i, n,
                     err == EXDEV ? "leads out of the folder" : "is a symlink loop");
            free(shard);
            return false;
        }
        free(shard);
    }
    return true;
}

/* Whether the model opened is the file the slot was made for. */
static bool is_slots_file(const slot *s, const ggfs_model *m)
{
    const char *base = strrchr(s->path, '/');
    base = base ? base + 1 : s->path;
    for (uint32_t k = 0; k < m->n_shards; k++) {
        if (strcmp(m->shards[k].file_name, base) == 0)
            return ggfs_cat_attrs_same_file(&s->a, &m->shards[k].source->st);
    }
    return false;
}

/* Opens the model of slot id, which ggfs_catalog_get pinned. */
static void *open_model(void *ctx, uint64_t id, int *err)
{
    ggfs_catalog *cat = ctx;
    pthread_mutex_lock(&cat->lock);
    slot *s = slot_at(cat, id);
    const bool known_bad = s && s->error;
    pthread_mutex_unlock(&cat->lock);
    if (!s || known_bad) {
        *err = s ? EIO : ENOENT;
        return NULL;
    }
    char msg[GGFS_ERROR_MAX - 1]; // the text, without its newline
    if (!shards_inside(cat, s, msg, sizeof msg)) {
        set_error(cat, s, msg);
        *err = EIO;
        return NULL;
    }
    const size_t len = strlen(cat->folder.real) + 1 + strlen(s->path) + 1;
    char *path = malloc(len);
    if (!path) {
        *err = ENOMEM;
        return NULL;
    }
    snprintf(path, len, "%s/%s", strcmp(cat->folder.real, "/") ? cat->folder.real : "", s->path);
    ggfs_model_error merr;
    ggfs_model *model = ggfs_model_open(path, NULL, &merr);
    free(path);
    if (!model) {
        const ggp_error *e = &merr.error;
        if (e->code == GGP_ERR_NOMEM) {
            *err = ENOMEM; // not the file's fault: tried again next time
            return NULL;
        }
        if (e->code == GGP_ERR_IO && e->offset == 0)
            snprintf(msg, sizeof msg, "%s: %s", relative(cat, merr.where), e->msg);
        else
            snprintf(msg, sizeof msg, "%s: offset 0x%llx: %s", relative(cat, merr.where),
                     (unsigned long long)e->offset, e->msg);
        set_error(cat, s, msg);
        *err = EIO;
        return NULL;
    }
    if (!is_slots_file(s, model)) {
        // Changed since it was listed: this slot's inodes must not serve
        // the new file. The next lookup reads the directory again.
        ggfs_model_close(model);
        pthread_mutex_lock(&cat->lock);
        s->stale = true;
        unhash(cat, s);
        cat->slots[s->parent]->dir->listed_at = 0;
        pthread_mutex_unlock(&cat->lock);
        *err = ESTALE;
        return NULL;
    }
    ggfs_tree *tree = malloc(sizeof *tree);
    if (!tree || !ggfs_tree_init_shared(tree, model, cat->scratch, id << GGFS_SLOT_SHIFT)) {
        if (tree)
            ggfs_tree_destroy(tree);
        free(tree);
        ggfs_model_close(model);
        *err = ENOMEM;
        return NULL;
    }
    pthread_mutex_lock(&cat->lock);
    s->opens++;
    pthread_mutex_unlock(&cat->lock);
    return tree;
}

static void close_model(void *ctx, uint64_t id, void *thing)
{
    ggfs_catalog *cat = ctx;
    ggfs_tree *tree = thing;
    ggfs_model *model = tree->model;
    ggfs_tree_destroy(tree);
    free(tree);
    ggfs_model_close(model);
    // The model's index was many small allocations: their pages go back
    // once the closes go quiet (trim.h).
    ggfs_trim_soon(cat->trim);
    // Its slot lives while open (so the id is still its): now it is idle,
    // or free.
    pthread_mutex_lock(&cat->lock);
    slot *s = slot_at(cat, id);
    if (s) {
        s->opens--;
        settle(cat, s);
    }
    pthread_mutex_unlock(&cat->lock);
}

static const ggfs_lru_ops model_ops = {open_model, close_model};

ggfs_tree *ggfs_catalog_get(ggfs_catalog *cat, uint64_t id, int *err)
{
    pthread_mutex_lock(&cat->lock);
    slot *s = slot_at(cat, id);
    *err = !s ? ENOENT : s->kind != GGFS_CAT_MODEL ? EISDIR : s->error ? EIO : s->stale ? ESTALE : 0;
    if (!*err)
        s->pins++; // for open_model
    pthread_mutex_unlock(&cat->lock);
    if (*err)
        return NULL;
    ggfs_tree *tree = ggfs_lru_get(cat->models, id, err);
    pthread_mutex_lock(&cat->lock);
    unpin(cat, s);
    pthread_mutex_unlock(&cat->lock);
    return tree;
}

void ggfs_catalog_put(ggfs_catalog *cat, uint64_t id, ggfs_tree *tree)
{
    ggfs_lru_put(cat->models, id, tree);
}

bool ggfs_catalog_error(ggfs_catalog *cat, uint64_t id, char *buf, size_t cap)
{
    pthread_mutex_lock(&cat->lock);
    const slot *s = slot_at(cat, id);
    const bool has = s && s->error;
    if (has)
        snprintf(buf, cap, "%s\n", s->error);
    pthread_mutex_unlock(&cat->lock);
    return has;
}

size_t ggfs_catalog_open_models(ggfs_catalog *cat)
{
    return ggfs_lru_open_count(cat->models);
}

/* ==== The catalog ==== */

static void free_slots(ggfs_catalog *cat)
{
    for (uint64_t i = 0; i < cat->n_ids; i++) {
        slot *s = cat->slots[i];
        if (!s)
            continue;
        if (s->dir) {
            // A handle still listing it (a connection that ended without
            // releasing it) keeps its reference.
            listing_put(cat, s->dir->listing);
            free(s->dir);
        }
        free(s->error);
        free(s);
    }
    free(cat->slots);
    free(cat->free_ids);
    free(cat->hash);
}

ggfs_catalog *ggfs_catalog_open(const char *dir, const char *mountpoint, unsigned max_open, int *err)
{
    ggfs_catalog *cat = calloc(1, sizeof *cat);
    if (!cat) {
        *err = ENOMEM;
        return NULL;
    }
    *err = ggfs_folder_open(&cat->folder, dir, mountpoint);
    if (*err) {
        free(cat);
        return NULL;
    }
    if (!max_open)
        max_open = GGFS_DEFAULT_MAX_OPEN;
    cat->max_idle = (size_t)max_open * GGFS_IDLE_PER_OPEN;
    struct stat st;
    cat->mask = 255;
    cat->hash = calloc(cat->mask + 1, sizeof *cat->hash);
    pthread_condattr_t attr;
    if (fstat(cat->folder.fd, &st) != 0) {
        *err = errno;
    } else if (!cat->hash || pthread_mutex_init(&cat->lock, NULL) != 0) {
        *err = ENOMEM;
    } else if (pthread_condattr_init(&attr) != 0) {
        *err = ENOMEM;
        pthread_mutex_destroy(&cat->lock);
    } else if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
               pthread_cond_init(&cat->work, &attr) != 0) {
        *err = ENOMEM;
        pthread_condattr_destroy(&attr);
        pthread_mutex_destroy(&cat->lock);
    } else if (pthread_condattr_destroy(&attr), pthread_key_create(&cat->scratch, ggfs_scratch_destroy) != 0) {
        *err = EAGAIN;
        pthread_cond_destroy(&cat->work);
        pthread_mutex_destroy(&cat->lock);
    } else {
        cat->models = ggfs_lru_new(max_open, &model_ops, cat);
        cat->trim = ggfs_trim_new(TRIM_AFTER_NS);
        // Slot 0 is the folder: inode 1, FUSE's root.
        ggfs_cat_attrs a;
        ggfs_cat_attrs_of(&st, &a);
        if (cat->models && cat->trim && slot_new(cat, NULL, GGFS_CAT_DIR, "", "", "", NULL, &a, 0))
            return cat;
        ggfs_lru_free(cat->models);
        ggfs_trim_free(cat->trim);
        pthread_key_delete(cat->scratch);
        pthread_cond_destroy(&cat->work);
        pthread_mutex_destroy(&cat->lock);
        *err = ENOMEM;
    }
    free_slots(cat);
    ggfs_folder_close(&cat->folder);
    free(cat);
    return NULL;
}

void ggfs_catalog_close(ggfs_catalog *cat)
{
    if (!cat)
        return;
    ggfs_lru_free(cat->models);
    ggfs_trim_free(cat->trim);
    void *own = pthread_getspecific(cat->scratch);
    if (own)
        ggfs_scratch_destroy(own);
    pthread_key_delete(cat->scratch);
    free_slots(cat);
    pthread_cond_destroy(&cat->work);
    pthread_mutex_destroy(&cat->lock);
    ggfs_folder_close(&cat->folder);
    free(cat);
}
