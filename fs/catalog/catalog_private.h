/*
 * Private to the catalog: included only by the files that implement
 * catalog.h (catalog.c, dirs.c, forget_queue.c, models.c); everyone else
 * uses catalog.h. It holds the slot table and the catalog itself, and the
 * helpers one of those files lends the others:
 *
 *   catalog.c       the catalog's life, and its slots: ids, the free
 *                   list, the (parent, name) hash, the idle list, the
 *                   counts that keep a slot alive
 *   dirs.c          directories: listings read, kept and dropped, and
 *                   the lookups and entries served from them
 *   forget_queue.c  the entries handed to the forgetting thread
 *                   (forget_thread.c)
 *   models.c        opening and closing the models of slots
 *   read_ahead.c    a remote directory's models opened ahead when it is listed
 *
 * What is listed and opened, and how, is the stores' (store.h): the
 * catalog reaches them through the row of each directory's kind.
 *
 * One lock guards the slot table, the listings, the counts and the
 * errors; directory reads and model opens run outside it, on slots pinned
 * meanwhile. The functions below are called under the lock.
 */
#ifndef GGFS_CATALOG_CATALOG_PRIVATE_H
#define GGFS_CATALOG_CATALOG_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "catalog/listing.h"
#include "catalog/store.h"
#include "tree/open_text.h"
#include "util/dlist.h"
#include "util/lru.h"
#include "util/trim.h"

/* A directory's listings: a lookup trusts the newest for the listing
 * lifetime, and the forgetting thread drops it after that. */
typedef struct dir_state {
    uint64_t started;           // listings begun
    uint64_t applied;           // the newest listing kept
    ggfs_cat_listing *listing;  // that one, until dropped; NULL then
    int64_t listed_at;          // when it was read, CLOCK_MONOTONIC ns; 0: read again
    bool read_ahead;            // its models were queued to be opened ahead
} dir_state;

enum { ON_NO_LIST, ON_IDLE, ON_FORGET };

typedef struct slot {
    uint64_t id;
    uint64_t parent;
    int64_t lookups;     // the kernel's references to the slot's inodes
    uint32_t pins;       // requests using the slot outside the lock
    uint32_t opens;      // its model is open (once per open of it, see util/lru.h)
    uint32_t children;   // live slots whose parent this is
    uint32_t shards;
    uint8_t kind;        // ggfs_cat_kind
    uint8_t list;        // ON_*: which of the catalog's lists it is on
    bool stale;          // the name now names another file: replaced by a new slot
    uint8_t kept;        // times the kernel kept it when asked to forget it
    int64_t kept_until;  // not asked again before then (ggfs_now_ns); 0: no wait
    const char *name;    // in the parent
    const char *path;    // model: as found (see scan.h); directory: its real
                         // path; ollama, hf: the store, the hub cache
    const char *real;    // model: the file it names; directory: its real path;
                         // ollama, hf: the place in the view (often the same string as path)
    char *error;         // why the model cannot be opened, one line; NULL if none known
    struct slot *chain;  // in the (parent, name) hash, while current
    ggfs_dlink link;     // on its list
    dir_state *dir;      // directories only
    ggfs_cat_attrs a;
} slot;

/* The models whose `verify` was looked up, waiting for an open of one
 * (verify_ahead.c). */
#define GGFS_VERIFY_WANTED_MAX 4096
typedef struct verify_item {
    uint64_t slot;
    int64_t at; // when, ggfs_now_ns
} verify_item;
typedef struct verify_wanted {
    verify_item items[GGFS_VERIFY_WANTED_MAX];
    size_t count;
} verify_wanted;

typedef struct slot_list {
    ggfs_dlink head;     // the most recently used at the front
    size_t count;
} slot_list;

static inline slot *slot_of_link(ggfs_dlink *link)
{
    return link ? GGFS_CONTAINER_OF(link, slot, link) : NULL;
}

struct ggfs_catalog {
    ggfs_folder folder;     // a folder mount's (the stores reach it through env)
    ggfs_store_env env;     // what the stores use
    ggfs_open_texts open_texts; // the files open (tree/open_text.h): freed at close
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
    size_t max_open;        // models open at once (-o max_open)
    struct ggfs_workers *ahead; // read_ahead.c's threads; NULL until first used
    struct ggfs_workers *verifiers; // verify_ahead.c's threads; NULL until first used
    verify_wanted verify_wanted;    // the same's lookups noted
    size_t n_listings;      // directories holding a listing
    int64_t listing_ttl_ns; // GGFS_LIFE_TTL: a lookup reads a directory again after this (-o listing_ttl_s)
    int64_t swept_at;       // when drop_old_listings last looked
    bool stopping;          // ggfs_catalog_stop_forgetting was called
    ggfs_lru *models;       // ggfs_tree of each open model, by slot
    ggfs_trim *trim;        // hands closed models' pages back
    pthread_key_t scratch;  // the loop threads' buffers, shared by all trees
    ggfs_cancel cancel;     // given to every tree (ggfs_catalog_set_cancel)
    struct fuse_session *const *session; // the same (ggfs_catalog_set_session)
};

/* The slot numbered id, or NULL when it is free or was never handed out. */
static inline slot *slot_at(ggfs_catalog *cat, uint64_t id)
{
    return id < cat->n_ids ? cat->slots[id] : NULL;
}

/* ==== catalog.c: slots ==== */

/* Takes s off whichever list it is on. */
void ggfs_cat_unlist(ggfs_catalog *cat, slot *s);
/* Takes s out of the (parent, name) hash: its name no longer finds it. */
void ggfs_cat_unhash(ggfs_catalog *cat, slot *s);
/* Adds a slot under parent. Returns NULL when out of memory or ids. */
slot *ggfs_cat_slot_new(ggfs_catalog *cat, slot *parent, ggfs_cat_kind kind, const char *name,
                        const char *path, const char *real, const char *error, const ggfs_cat_attrs *a,
                        uint32_t shards);
/* After a count of s changed: frees s if nothing holds it any more (then
 * its parent may follow), else puts it on the idle list or takes it off. */
void ggfs_cat_settle(ggfs_catalog *cat, slot *s);
/* s was used: first in line to stay. */
void ggfs_cat_touch(ggfs_catalog *cat, slot *s);
/* Gives back a pin a request took on s. */
void ggfs_cat_unpin(ggfs_catalog *cat, slot *s);
/* The current slot called name in directory d, or NULL. */
slot *ggfs_cat_find_current(ggfs_catalog *cat, const slot *d, const char *name);
/* What the FUSE side is given of s. */
void ggfs_cat_entry_of(const slot *s, ggfs_cat_entry *out);

/* ==== dirs.c: listings ==== */

/* Gives back a reference to listing l (NULL: nothing). */
void ggfs_cat_listing_put(ggfs_catalog *cat, ggfs_cat_listing *l);
/* Drops directory d's listing. */
void ggfs_cat_drop_listing(ggfs_catalog *cat, dir_state *d);
/* Drops the listings past their lifetime, looking at most twice the
 * shortest lifetime. */
void ggfs_cat_drop_old_listings(ggfs_catalog *cat);
/* How long a listing of a directory of kind is trusted, in ns. */
int64_t ggfs_cat_listing_life(const ggfs_catalog *cat, ggfs_cat_kind kind);

/* ==== read_ahead.c ==== */

/* Queues the first models of listing l of directory d (a remote store's:
 * as many as cache_mb keeps headers of, at least max_open) to be opened
 * ahead, each job pinning d. Under the lock. */
void ggfs_cat_read_ahead(ggfs_catalog *cat, slot *d, const ggfs_cat_listing *l);

/* ==== models.c ==== */

/* Opens and closes the models of slots for the catalog's set of open
 * models (util/lru.h, which calls them outside the lock). */
extern const ggfs_lru_ops ggfs_cat_model_ops;

#endif
