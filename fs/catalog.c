/*
 * The catalog's slots, listings and open models. One lock guards the slot
 * table, the listings and the errors; directory reads and model opens run
 * outside it.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "catalog_scan.h"
#include "lru.h"
#include "model.h"
#include "ollama.h"
#include "split_name.h"
#include "trim.h"

#define LISTING_TTL_NS INT64_C(1000000000) // a lookup reads a directory again after this
#define TRIM_AFTER_NS INT64_C(1000000000)  // closed models' pages go back this long after
#define MAX_SLOTS (UINT64_C(1) << (64 - GGFS_SLOT_SHIFT))

/* What the mount shows of a file or directory: its stat, less what it
 * never shows (a slot is kept for every entry ever listed). */
typedef struct attrs {
    dev_t dev;
    ino_t ino;
    off_t size;
    mode_t mode;
    uid_t uid;
    gid_t gid;
    struct timespec atim, mtim, ctim;
} attrs;

/* A directory's listings: a lookup trusts the last one for a second. */
typedef struct dir_state {
    uint64_t started;    // listings begun
    uint64_t applied;    // the newest listing whose entries are marked seen
    int64_t listed_at;   // when it was read, CLOCK_MONOTONIC ns; 0: read again
} dir_state;

typedef struct slot {
    uint64_t id;
    uint64_t parent;
    const char *name;    // in the parent
    const char *path;    // model: as found (see catalog_scan.h); directory: its real
                         // path; ollama: the store
    const char *real;    // model: the file it names; directory: its real path;
                         // ollama: the place in the view (often the same string as path)
    char *error;         // why the model cannot be opened, one line; NULL if none known
    struct slot *chain;  // in the (parent, name) hash
    dir_state *dir;      // directories only
    uint64_t seen;       // the parent's listing it was last in
    attrs a;
    uint32_t shards;
    uint8_t kind;        // ggfs_cat_kind
    bool stale;          // the name now names another file: replaced by a new slot
} slot;

struct ggfs_catalog {
    ggfs_folder folder;
    pthread_mutex_t lock;
    slot **slots;        // by id; a slot is never freed before the catalog
    uint64_t n_slots, cap_slots;
    slot **hash;         // by (parent, name), current slots only
    size_t mask;
    ggfs_lru *models;    // ggfs_tree of each open model, by slot
    ggfs_trim *trim;     // hands closed models' pages back
    pthread_key_t scratch; // the loop threads' buffers, shared by all trees
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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

static void attrs_of(const struct stat *st, attrs *a)
{
    *a = (attrs){st->st_dev, st->st_ino,  st->st_size, st->st_mode, st->st_uid,
                 st->st_gid, st->st_atim, st->st_mtim, st->st_ctim};
}

static bool same_file(const attrs *a, const struct stat *st)
{
    return a->dev == st->st_dev && a->ino == st->st_ino && a->size == st->st_size &&
           a->mtim.tv_sec == st->st_mtim.tv_sec && a->mtim.tv_nsec == st->st_mtim.tv_nsec;
}

/* Whether slot s was made for what e lists: a directory keeps its slot as
 * entries come and go in it; a model only while its file is the same. */
static bool same_thing(const slot *s, const ggfs_scan_entry *e)
{
    if (s->kind != kind_of(e->kind) || strcmp(s->path, e->path) != 0 || strcmp(s->real, e->real) != 0)
        return false;
    if (s->kind == GGFS_CAT_OLLAMA)
        return true;
    if (s->kind == GGFS_CAT_DIR)
        return s->a.dev == e->st.st_dev && s->a.ino == e->st.st_ino;
    // A model listed with an error (an Ollama manifest naming no model)
    // stays that error; one listed without keeps any error opening gave.
    return same_file(&s->a, &e->st) && s->shards == e->shards &&
           (!e->error || (s->error && strcmp(s->error, e->error) == 0));
}

/* Adds a slot (under the lock). Returns NULL when out of memory or slots. */
static slot *slot_new(ggfs_catalog *cat, uint64_t parent, ggfs_cat_kind kind, const char *name,
                      const char *path, const char *real, const char *error, const struct stat *st,
                      uint32_t shards)
{
    if (cat->n_slots >= MAX_SLOTS)
        return NULL;
    if (cat->n_slots == cat->cap_slots) {
        const uint64_t cap = cat->cap_slots ? cat->cap_slots * 2 : 256;
        slot **grown = realloc(cat->slots, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        cat->slots = grown;
        cat->cap_slots = cap;
    }
    if (cat->n_slots + 1 > 2 * (cat->mask + 1) && !grow_hash(cat))
        return NULL;
    // One block: the slot, then its strings (real only when it differs).
    const bool same = strcmp(path, real) == 0;
    const size_t ln = strlen(name) + 1, lp = strlen(path) + 1, lr = same ? 0 : strlen(real) + 1;
    slot *s = calloc(1, sizeof *s + ln + lp + lr);
    char *err_copy = error ? strdup(error) : NULL;
    dir_state *dir = kind != GGFS_CAT_MODEL ? calloc(1, sizeof *dir) : NULL;
    if (!s || (error && !err_copy) || (kind != GGFS_CAT_MODEL && !dir)) {
        free(s);
        free(err_copy);
        free(dir);
        return NULL;
    }
    char *strings = (char *)(s + 1);
    s->name = memcpy(strings, name, ln);
    s->path = memcpy(strings + ln, path, lp);
    s->real = same ? s->path : memcpy(strings + ln + lp, real, lr);
    s->id = cat->n_slots;
    s->parent = parent;
    s->kind = (uint8_t)kind;
    attrs_of(st, &s->a);
    s->shards = shards;
    s->error = err_copy;
    s->dir = dir;
    cat->slots[cat->n_slots++] = s;
    slot **head = &cat->hash[bucket_of(cat, parent, name)];
    s->chain = *head;
    *head = s;
    return s;
}

/* The slot for entry e of directory `parent` (under the lock): the one it
 * had, or a new one when there was none or the old one named another
 * file (whose id is put in *replaced, else UINT64_MAX). */
static slot *slot_for(ggfs_catalog *cat, uint64_t parent, const ggfs_scan_entry *e, uint64_t *replaced)
{
    *replaced = UINT64_MAX;
    for (slot *s = cat->hash[bucket_of(cat, parent, e->name)]; s; s = s->chain) {
        if (s->parent != parent || strcmp(s->name, e->name) != 0)
            continue;
        if (!s->stale && same_thing(s, e))
            return s;
        unhash(cat, s);
        s->stale = true;
        if (s->kind == GGFS_CAT_MODEL)
            *replaced = s->id;
        break;
    }
    return slot_new(cat, parent, kind_of(e->kind), e->name, e->path, e->real, e->error, &e->st, e->shards);
}

static slot *slot_at(ggfs_catalog *cat, uint64_t id)
{
    return id < cat->n_slots ? cat->slots[id] : NULL;
}

static void entry_of(const slot *s, ggfs_cat_entry *out)
{
    memset(out, 0, sizeof *out);
    out->slot = s->id;
    out->kind = (ggfs_cat_kind)s->kind;
    out->st.st_dev = s->a.dev;
    out->st.st_ino = s->a.ino;
    out->st.st_size = s->a.size;
    out->st.st_mode = s->a.mode;
    out->st.st_uid = s->a.uid;
    out->st.st_gid = s->a.gid;
    out->st.st_atim = s->a.atim;
    out->st.st_mtim = s->a.mtim;
    out->st.st_ctim = s->a.ctim;
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
    const uint64_t n = cat->n_slots;
    pthread_mutex_unlock(&cat->lock);
    return n;
}

/* ==== Listings ==== */

/* Reads directory d (outside the lock) and marks each entry's slot seen in
 * this listing, making slots for new entries; with out, also hands the
 * entries back. A listing that ends after a later one began is not
 * applied (it may be the older view), but out still gets it. */
static int read_directory(ggfs_catalog *cat, slot *d, ggfs_cat_listing *out)
{
    pthread_mutex_lock(&cat->lock);
    const uint64_t mine = ++d->dir->started;
    // The real paths of the directories shown above d and d itself: slots
    // and their strings live as long as the catalog.
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
    uint64_t *replaced = calloc(scan.count ? scan.count : 1, sizeof *replaced);
    size_t n_replaced = 0;
    if (out) {
        out->items = calloc(scan.count ? scan.count : 1, sizeof *out->items);
        out->count = 0;
    }
    err = replaced && (!out || out->items) ? 0 : ENOMEM;
    pthread_mutex_lock(&cat->lock);
    const bool apply = !err && mine > d->dir->applied;
    if (apply) {
        d->dir->applied = mine;
        d->dir->listed_at = now_ns();
    }
    for (size_t i = 0; !err && i < scan.count; i++) {
        const ggfs_scan_entry *e = &scan.entries[i];
        uint64_t r;
        slot *s = slot_for(cat, d->id, e, &r);
        if (!s) {
            err = ENOMEM;
            break;
        }
        if (r != UINT64_MAX)
            replaced[n_replaced++] = r;
        if (apply)
            s->seen = mine;
        if (out) {
            ggfs_cat_item *item = &out->items[out->count];
            if (!(item->name = strdup(e->name))) {
                err = ENOMEM;
                break;
            }
            entry_of(s, &item->entry);
            out->count++;
        }
    }
    if (err && apply)
        d->dir->listed_at = 0; // half applied: read it again next time
    pthread_mutex_unlock(&cat->lock);
    for (size_t i = 0; i < n_replaced; i++)
        ggfs_lru_drop(cat->models, replaced[i]);
    free(replaced);
    ggfs_scan_free(&scan);
    if (err && out)
        ggfs_cat_listing_free(out);
    return err;
}

/* The directory slot `id`, or NULL with *err set. */
static slot *directory(ggfs_catalog *cat, uint64_t id, int *err)
{
    pthread_mutex_lock(&cat->lock);
    slot *d = slot_at(cat, id);
    pthread_mutex_unlock(&cat->lock);
    *err = !d ? ENOENT : d->kind == GGFS_CAT_MODEL ? ENOTDIR : 0;
    return *err ? NULL : d;
}

/* The current slot called name in directory d (under the lock): one the
 * newest listing of d saw. */
static const slot *find_listed(ggfs_catalog *cat, const slot *d, const char *name)
{
    for (const slot *s = cat->hash[bucket_of(cat, d->id, name)]; s; s = s->chain) {
        if (s->parent == d->id && !s->stale && strcmp(s->name, name) == 0)
            return s->seen == d->dir->applied ? s : NULL;
    }
    return NULL;
}

int ggfs_catalog_lookup(ggfs_catalog *cat, uint64_t dir, const char *name, ggfs_cat_entry *out)
{
    int err;
    slot *d = directory(cat, dir, &err);
    if (!d)
        return err;
    pthread_mutex_lock(&cat->lock);
    const bool fresh = d->dir->listed_at && now_ns() - d->dir->listed_at < LISTING_TTL_NS;
    pthread_mutex_unlock(&cat->lock);
    if (!fresh && (err = read_directory(cat, d, NULL)) != 0)
        return err;
    pthread_mutex_lock(&cat->lock);
    const slot *s = find_listed(cat, d, name);
    if (s)
        entry_of(s, out);
    pthread_mutex_unlock(&cat->lock);
    return s ? 0 : ENOENT;
}

int ggfs_catalog_list(ggfs_catalog *cat, uint64_t dir, ggfs_cat_listing *out)
{
    memset(out, 0, sizeof *out);
    int err;
    slot *d = directory(cat, dir, &err);
    return d ? read_directory(cat, d, out) : err;
}

void ggfs_cat_listing_free(ggfs_cat_listing *l)
{
    for (size_t i = 0; l->items && i < l->count; i++)
        free(l->items[i].name);
    free(l->items);
    memset(l, 0, sizeof *l);
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
            return same_file(&s->a, &m->shards[k].source->st);
    }
    return false;
}

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
    return tree;
}

static void close_model(void *ctx, uint64_t id, void *thing)
{
    (void)id;
    ggfs_catalog *cat = ctx;
    ggfs_tree *tree = thing;
    ggfs_model *model = tree->model;
    ggfs_tree_destroy(tree);
    free(tree);
    ggfs_model_close(model);
    // The model's index was many small allocations: their pages go back
    // once the closes go quiet (trim.h).
    ggfs_trim_soon(cat->trim);
}

static const ggfs_lru_ops model_ops = {open_model, close_model};

ggfs_tree *ggfs_catalog_get(ggfs_catalog *cat, uint64_t id, int *err)
{
    pthread_mutex_lock(&cat->lock);
    const slot *s = slot_at(cat, id);
    *err = !s ? ENOENT : s->kind != GGFS_CAT_MODEL ? EISDIR : s->error ? EIO : s->stale ? ESTALE : 0;
    pthread_mutex_unlock(&cat->lock);
    if (*err)
        return NULL;
    return ggfs_lru_get(cat->models, id, err);
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
    struct stat st;
    cat->mask = 255;
    cat->hash = calloc(cat->mask + 1, sizeof *cat->hash);
    if (fstat(cat->folder.fd, &st) != 0) {
        *err = errno;
    } else if (!cat->hash || pthread_mutex_init(&cat->lock, NULL) != 0) {
        *err = ENOMEM;
    } else if (pthread_key_create(&cat->scratch, ggfs_scratch_destroy) != 0) {
        *err = EAGAIN;
        pthread_mutex_destroy(&cat->lock);
    } else {
        cat->models = ggfs_lru_new(max_open ? max_open : GGFS_DEFAULT_MAX_OPEN, &model_ops, cat);
        cat->trim = ggfs_trim_new(TRIM_AFTER_NS);
        // Slot 0 is the folder: inode 1, FUSE's root.
        if (cat->models && cat->trim && slot_new(cat, 0, GGFS_CAT_DIR, "", "", "", NULL, &st, 0))
            return cat;
        ggfs_lru_free(cat->models);
        ggfs_trim_free(cat->trim);
        pthread_key_delete(cat->scratch);
        pthread_mutex_destroy(&cat->lock);
        *err = ENOMEM;
    }
    for (uint64_t i = 0; i < cat->n_slots; i++) {
        free(cat->slots[i]->dir);
        free(cat->slots[i]);
    }
    free(cat->slots);
    free(cat->hash);
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
    for (uint64_t i = 0; i < cat->n_slots; i++) {
        free(cat->slots[i]->dir);
        free(cat->slots[i]->error);
        free(cat->slots[i]);
    }
    free(cat->slots);
    free(cat->hash);
    pthread_mutex_destroy(&cat->lock);
    ggfs_folder_close(&cat->folder);
    free(cat);
}
