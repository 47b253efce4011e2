/*
 * The catalog's life (open, close) and its slots: the table by id, the
 * free list of ids, the (parent, name) hash, the lists of idle slots, the
 * counts that keep a slot alive.
 *
 * A slot is freed when nothing holds it: no reference of the kernel's,
 * no open model, no request, no live slot below it. Its number goes on a
 * free list for the next slot. A slot the kernel holds and nothing else
 * is idle; idle slots are kept on a list, most recently used first, and
 * those past the catalog's bound move to the list the forgetting thread
 * takes from.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog/catalog_private.h"
#include "util/clock.h"
#include "util/cond.h"
#include "util/fnv.h"
#include "util/workers.h"

#define TRIM_AFTER_NS INT64_C(1000000000)  // closed models' pages go back this long after
#define MAX_SLOTS (UINT64_C(1) << (64 - GGFS_SLOT_SHIFT))

/* ==== Lists of slots ==== */

static void list_push(slot_list *l, slot *s)
{
    ggfs_dlist_push_front(&l->head, &s->link);
    l->count++;
}

static void list_remove(slot_list *l, slot *s)
{
    ggfs_dlist_remove(&s->link);
    l->count--;
}

void ggfs_cat_unlist(ggfs_catalog *cat, slot *s)
{
    if (s->list != ON_NO_LIST)
        list_remove(s->list == ON_IDLE ? &cat->idle : &cat->forget, s);
    s->list = ON_NO_LIST;
}

/* ==== Slots ==== */

static size_t bucket_of(const ggfs_catalog *cat, uint64_t parent, const char *name)
{
    const uint64_t h = ggfs_fnv64(GGFS_FNV64_OFFSET ^ parent, name, strlen(name));
    return (size_t)(h ^ (h >> 29)) & cat->mask;
}

void ggfs_cat_unhash(ggfs_catalog *cat, slot *s)
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

slot *ggfs_cat_slot_new(ggfs_catalog *cat, slot *parent, ggfs_cat_kind kind, const char *name,
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

/* Frees slot s, which nothing holds (under the lock); its number may be
 * handed out again. */
static void slot_free(ggfs_catalog *cat, slot *s)
{
    ggfs_cat_unlist(cat, s);
    if (!s->stale)
        ggfs_cat_unhash(cat, s);
    if (s->dir) {
        ggfs_cat_drop_listing(cat, s->dir);
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
 * not one per entry. A slot the kernel kept when last asked (someone's
 * working directory) waits out its time at the front instead: each ask
 * unhashes it for a moment, in which getcwd(2) there fails. */
static void trim_idle(ggfs_catalog *cat)
{
    if (cat->idle.count <= cat->max_idle)
        return;
    bool moved = false;
    int64_t now = 0;
    for (size_t looked = 0; cat->idle.count > cat->max_idle / 4 * 3 && looked < cat->idle.count; looked++) {
        slot *s = slot_of_link(ggfs_dlist_back(&cat->idle.head));
        list_remove(&cat->idle, s);
        if (s->kept_until != 0) {
            now = now != 0 ? now : ggfs_now_ns();
            if (s->kept_until > now) {
                list_push(&cat->idle, s);
                continue;
            }
        }
        list_push(&cat->forget, s);
        s->list = ON_FORGET;
        moved = true;
    }
    if (moved)
        pthread_cond_signal(&cat->work);
}

void ggfs_cat_settle(ggfs_catalog *cat, slot *s)
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
                ggfs_cat_unlist(cat, s);
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

void ggfs_cat_touch(ggfs_catalog *cat, slot *s)
{
    ggfs_cat_unlist(cat, s);
    ggfs_cat_settle(cat, s);
}

void ggfs_cat_unpin(ggfs_catalog *cat, slot *s)
{
    s->pins--;
    ggfs_cat_settle(cat, s);
}

slot *ggfs_cat_find_current(ggfs_catalog *cat, const slot *d, const char *name)
{
    for (slot *s = cat->hash[bucket_of(cat, d->id, name)]; s; s = s->chain)
        if (s->parent == d->id && strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

void ggfs_cat_entry_of(const slot *s, ggfs_cat_entry *out)
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
        ggfs_cat_entry_of(s, out);
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
        ggfs_cat_touch(cat, s);
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
        ggfs_cat_settle(cat, s);
    }
    pthread_mutex_unlock(&cat->lock);
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
            ggfs_cat_listing_put(cat, s->dir->listing);
            free(s->dir);
        }
        free(s->error);
        free(s);
    }
    free(cat->slots);
    free(cat->free_ids);
    free(cat->hash);
}

/* Sets up cat, whose root (slot 0, inode 1) is a directory of kind root
 * with the stat st. On failure frees cat and returns NULL, *err set. */
static ggfs_catalog *set_up(ggfs_catalog *cat, ggfs_cat_kind root, const struct stat *st, unsigned max_open,
                            unsigned listing_ttl_s, int *err)
{
    if (!max_open)
        max_open = GGFS_DEFAULT_MAX_OPEN;
    cat->max_idle = (size_t)max_open * GGFS_IDLE_PER_OPEN;
    cat->max_open = max_open;
    cat->listing_ttl_ns = (int64_t)listing_ttl_s * 1000000000;
    cat->mask = 255;
    cat->hash = calloc(cat->mask + 1, sizeof *cat->hash);
    ggfs_dlist_init(&cat->idle.head);
    ggfs_dlist_init(&cat->forget.head);
    if (!cat->hash || pthread_mutex_init(&cat->lock, NULL) != 0) {
        *err = ENOMEM;
    } else if (ggfs_cond_init_monotonic(&cat->work) != 0) {
        *err = ENOMEM;
        pthread_mutex_destroy(&cat->lock);
    } else if (pthread_key_create(&cat->scratch, ggfs_scratch_destroy) != 0) {
        *err = EAGAIN;
        pthread_cond_destroy(&cat->work);
        pthread_mutex_destroy(&cat->lock);
    } else {
        ggfs_open_texts_init(&cat->open_texts);
        cat->models = ggfs_lru_new(max_open, &ggfs_cat_model_ops, cat);
        cat->trim = ggfs_trim_new(TRIM_AFTER_NS);
        cat->env.folder = &cat->folder;
        cat->env.hf_index = ggfs_hf_index_new();
        // Slot 0 is the root: inode 1, FUSE's root.
        ggfs_cat_attrs a;
        ggfs_cat_attrs_of(st, &a);
        if (cat->models && cat->trim && cat->env.hf_index &&
            ggfs_cat_slot_new(cat, NULL, root, "", "", "", NULL, &a, 0))
            return cat;
        ggfs_lru_free(cat->models);
        ggfs_trim_free(cat->trim);
        ggfs_hf_index_free(cat->env.hf_index);
        ggfs_open_texts_drain(&cat->open_texts);
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

ggfs_catalog *ggfs_catalog_open(const char *dir, const char *mountpoint, unsigned max_open, unsigned listing_ttl_s,
                                int *err)
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
    struct stat st;
    if (fstat(cat->folder.fd, &st) != 0) {
        *err = errno;
        ggfs_folder_close(&cat->folder);
        free(cat);
        return NULL;
    }
    return set_up(cat, GGFS_CAT_DIR, &st, max_open, listing_ttl_s, err);
}

ggfs_catalog *ggfs_catalog_open_store(ggfs_cat_kind root, void *root_state, ggfs_remote_engine *remote,
                                      unsigned max_open, unsigned listing_ttl_s, int *err)
{
    ggfs_catalog *cat = calloc(1, sizeof *cat);
    if (!cat) {
        *err = ENOMEM;
        return NULL;
    }
    cat->folder.fd = -1; // no local folder
    cat->env.remote = remote;
    cat->env.root = root_state;
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_mode = S_IFDIR | 0555;
    st.st_uid = getuid();
    st.st_gid = getgid();
    st.st_atim.tv_sec = st.st_mtim.tv_sec = st.st_ctim.tv_sec = time(NULL);
    return set_up(cat, root, &st, max_open, listing_ttl_s, err);
}

void ggfs_catalog_set_cancel(ggfs_catalog *cat, ggfs_cancel cancel)
{
    cat->cancel = cancel;
}

void ggfs_catalog_set_session(ggfs_catalog *cat, struct fuse_session *const *session)
{
    cat->session = session;
}

double ggfs_catalog_listing_ttl(const ggfs_catalog *cat)
{
    return (double)(cat->listing_ttl_ns / 1000000000);
}

void ggfs_catalog_stop_remote(ggfs_catalog *cat)
{
    ggfs_remote_engine_abort(cat->env.remote); // NULL for a folder: nothing
}

void ggfs_catalog_close(ggfs_catalog *cat)
{
    if (!cat)
        return;
    ggfs_workers_free(cat->ahead); // its jobs use everything below
    ggfs_workers_free(cat->verifiers);
    ggfs_lru_free(cat->models);
    ggfs_trim_free(cat->trim);
    ggfs_hf_index_free(cat->env.hf_index);
    const ggfs_store *root = ggfs_store_of(cat->slots[0] ? cat->slots[0]->kind : GGFS_CAT_DIR);
    if (root && root->root_free && cat->env.root)
        root->root_free(cat->env.root);
    void *own = pthread_getspecific(cat->scratch);
    if (own)
        ggfs_scratch_destroy(own);
    pthread_key_delete(cat->scratch);
    free_slots(cat);
    ggfs_open_texts_drain(&cat->open_texts);
    pthread_cond_destroy(&cat->work);
    pthread_mutex_destroy(&cat->lock);
    ggfs_folder_close(&cat->folder);
    free(cat);
}

struct ggfs_open_texts *ggfs_catalog_open_texts(ggfs_catalog *cat)
{
    return &cat->open_texts;
}
