/*
 * Listing one directory of a catalog: models, split sets, subdirectories
 * and Ollama stores, from directory entries and 8-byte magics.
 */
#define _GNU_SOURCE // qsort_r, the DT_ types of dirent.h
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/scan.h"
#include "model/split_name.h"

#define SUFFIX ".gguf"
#define SUFFIX_LEN 5

/* ==== Listings ==== */

/* The strings of a scan's entries go in blocks that double in size: a
 * folder of 10,000 models is a few blocks, large enough that malloc maps
 * them apart and freeing them hands the memory back at once, rather than
 * 10,000 small allocations left scattered over the heap. */
#define FIRST_CHUNK 4096
#define LAST_CHUNK (4u << 20)

typedef struct ggfs_scan_chunk {
    struct ggfs_scan_chunk *next;
    size_t used, cap;
    char data[];
} ggfs_scan_chunk;

/* n bytes for strings, or NULL when out of memory. */
static char *scan_bytes(ggfs_scan *scan, size_t n)
{
    ggfs_scan_chunk *c = scan->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = c ? c->cap * 2 : FIRST_CHUNK;
        if (cap > LAST_CHUNK)
            cap = LAST_CHUNK;
        if (cap < n)
            cap = n;
        ggfs_scan_chunk *fresh = malloc(sizeof *fresh + cap);
        if (!fresh)
            return NULL;
        fresh->next = c;
        fresh->used = 0;
        fresh->cap = cap;
        scan->chunks = c = fresh;
    }
    char *p = c->data + c->used;
    c->used += n;
    return p;
}

bool ggfs_scan_add_attrs(ggfs_scan *scan, ggfs_scan_kind kind, const char *name, const char *path,
                         const char *real, const char *error, const ggfs_cat_attrs *a, uint32_t shards)
{
    if (scan->count == scan->cap) {
        const size_t cap = scan->cap ? scan->cap * 2 : 16;
        ggfs_scan_entry *grown = realloc(scan->entries, cap * sizeof *grown);
        if (!grown)
            return false;
        scan->entries = grown;
        scan->cap = cap;
    }
    // Name, path, real and error, each NUL-terminated, side by side.
    const size_t ln = strlen(name) + 1, lp = strlen(path) + 1, lr = strlen(real) + 1;
    const size_t le = error ? strlen(error) + 1 : 0;
    char *block = scan_bytes(scan, ln + lp + lr + le);
    if (!block)
        return false;
    ggfs_scan_entry *e = &scan->entries[scan->count++];
    e->kind = kind;
    e->name = memcpy(block, name, ln);
    e->path = memcpy(block + ln, path, lp);
    e->real = memcpy(block + ln + lp, real, lr);
    e->error = error ? memcpy(block + ln + lp + lr, error, le) : NULL;
    e->a = *a;
    e->shards = shards;
    return true;
}

bool ggfs_scan_add(ggfs_scan *scan, ggfs_scan_kind kind, const char *name, const char *path,
                   const char *real, const char *error, const struct stat *st, uint32_t shards)
{
    ggfs_cat_attrs a;
    ggfs_cat_attrs_of(st, &a);
    return ggfs_scan_add_attrs(scan, kind, name, path, real, error, &a, shards);
}

void ggfs_scan_free(ggfs_scan *scan)
{
    for (ggfs_scan_chunk *c = scan->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(scan->entries);
    memset(scan, 0, sizeof *scan);
}

static int by_name_then_order(const void *a, const void *b, void *arg)
{
    const ggfs_scan_entry *v = arg;
    const size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const int c = strcmp(v[i].name, v[j].name);
    return c ? c : (i > j) - (i < j);
}

void ggfs_scan_finish(ggfs_scan *scan)
{
    if (scan->count < 2)
        return;
    size_t *order = malloc(scan->count * sizeof *order);
    ggfs_scan_entry *sorted = malloc(scan->count * sizeof *sorted);
    if (!order || !sorted) {
        // Too little memory to sort: leave the listing unsorted but unique
        // by dropping nothing; lookups fall back to a linear search.
        free(order);
        free(sorted);
        return;
    }
    for (size_t i = 0; i < scan->count; i++)
        order[i] = i;
    qsort_r(order, scan->count, sizeof *order, by_name_then_order, scan->entries);
    size_t n = 0;
    for (size_t i = 0; i < scan->count; i++) {
        const ggfs_scan_entry *e = &scan->entries[order[i]];
        if (n > 0 && strcmp(sorted[n - 1].name, e->name) == 0)
            continue; // a later entry of the same name
        sorted[n++] = *e;
    }
    free(order);
    free(scan->entries);
    scan->entries = sorted;
    scan->count = n;
    scan->cap = scan->count;
}

const ggfs_scan_entry *ggfs_scan_find(const ggfs_scan *scan, const char *name)
{
    size_t lo = 0, hi = scan->count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(name, scan->entries[mid].name);
        if (c == 0)
            return &scan->entries[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    // An unsorted listing (see ggfs_scan_finish) is searched in full.
    for (size_t i = 0; i < scan->count; i++)
        if (strcmp(name, scan->entries[i].name) == 0)
            return &scan->entries[i];
    return NULL;
}

void ggfs_scan_drop(ggfs_scan *scan, const char *name)
{
    const ggfs_scan_entry *e = ggfs_scan_find(scan, name);
    if (!e)
        return;
    const size_t i = (size_t)(e - scan->entries);
    memmove(&scan->entries[i], &scan->entries[i + 1], (scan->count - i - 1) * sizeof *scan->entries);
    scan->count--;
}

/* ==== Names and magics ==== */

static bool has_suffix(const char *name)
{
    const size_t len = strlen(name);
    return len > SUFFIX_LEN && memcmp(name + len - SUFFIX_LEN, SUFFIX, SUFFIX_LEN) == 0;
}

bool ggfs_has_gguf_magic(const ggfs_folder *f, const char *real)
{
    unsigned char magic[8];
    size_t got;
    // Eight bytes, not the kernel's first read-ahead window of each file.
    return ggfs_folder_read_head(f, real, magic, sizeof magic, &got, NULL) == 0 && got >= 4 &&
           (memcmp(magic, "GGUF", 4) == 0 || memcmp(magic, "FUGG", 4) == 0);
}

/* ==== Split sets ==== */

typedef struct shard {
    char *path;     // the shard's own path (a link stays a link)
    char *real;
    char *stem;     // NAME of NAME-KKKKK-of-NNNNN.gguf
    char *fname;    // the file name
    unsigned k, n;
    struct stat st;
} shard;

typedef struct shard_list {
    shard *v;
    size_t count, cap;
} shard_list;

static bool shard_add(shard_list *l, const char *fname, size_t stem_len, unsigned k, unsigned n,
                      const char *path, const char *real, const struct stat *st)
{
    if (l->count == l->cap) {
        const size_t cap = l->cap ? l->cap * 2 : 8;
        shard *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return false;
        l->v = grown;
        l->cap = cap;
    }
    shard *s = &l->v[l->count];
    s->path = strdup(path);
    s->real = strdup(real);
    s->stem = strndup(fname, stem_len);
    s->fname = strdup(fname);
    s->k = k;
    s->n = n;
    s->st = *st;
    if (!s->path || !s->real || !s->stem || !s->fname) {
        free(s->path), free(s->real), free(s->stem), free(s->fname);
        return false;
    }
    l->count++;
    return true;
}

static void shard_list_free(shard_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->v[i].path), free(l->v[i].real), free(l->v[i].stem), free(l->v[i].fname);
    free(l->v);
}

static int by_set_then_k(const void *a, const void *b)
{
    const shard *x = a, *y = b;
    const int c = strcmp(x->stem, y->stem);
    if (c)
        return c;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* Adds one entry per split set, at its lowest shard present. A set is
 * named NAME.gguf unless that name is taken (by a file, a directory or a
 * set of another count), in which case it keeps its first shard's name. */
static bool add_split_sets(ggfs_scan *scan, shard_list *l)
{
    if (l->count == 0)
        return true;
    qsort(l->v, l->count, sizeof *l->v, by_set_then_k);
    ggfs_scan_finish(scan); // sorted, for the lookups below
    size_t i = 0;
    while (i < l->count) {
        const shard *first = &l->v[i];
        size_t j = i + 1;
        while (j < l->count && l->v[j].n == first->n && strcmp(l->v[j].stem, first->stem) == 0)
            j++;
        char name[NAME_MAX + 1];
        bool clash = strlen(first->stem) + SUFFIX_LEN > NAME_MAX;
        if (!clash) {
            strcat(strcpy(name, first->stem), SUFFIX);
            clash = ggfs_scan_find(scan, name) != NULL ||
                    (i > 0 && strcmp(l->v[i - 1].stem, first->stem) == 0) ||
                    (j < l->count && strcmp(l->v[j].stem, first->stem) == 0);
        }
        if (!ggfs_scan_add(scan, GGFS_SCAN_MODEL, clash ? first->fname : name, first->path, first->real,
                           NULL, &first->st, first->n))
            return false;
        i = j;
    }
    return true;
}

/* ==== One directory ==== */

/* What a directory's entries are gathered into while it is read. */
typedef struct dir_walk {
    const ggfs_folder *f;
    const char *real_dir;
    const char *const *ancestors;
    size_t n_ancestors;
    ggfs_scan *scan;
    shard_list shards;
} dir_walk;

/* Classifies one directory entry and adds it (or its shard) to the lists.
 * Returns false only when out of memory. */
static bool add_entry(void *ctx, const char *name, unsigned char type)
{
    dir_walk *w = ctx;
    const ggfs_folder *f = w->f;
    char path[PATH_MAX], real[PATH_MAX];
    struct stat st;
    if (!ggfs_path_join(path, sizeof path, w->real_dir, name))
        return true;
    if (f->skip && strcmp(path, f->skip) == 0)
        return true;
    if (type == DT_FIFO || type == DT_SOCK || type == DT_CHR || type == DT_BLK)
        return true;
    bool linked = false;
    if (type == DT_LNK || type == DT_UNKNOWN) {
        if (ggfs_resolve_beneath(f, path, real, sizeof real, &st) != 0)
            return true; // leaves the folder, dangles, loops or cannot be read
        linked = strcmp(real, path) != 0;
    } else {
        strcpy(real, path);
        if (fstatat(f->fd, path, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return true; // gone since it was listed
    }
    if (S_ISDIR(st.st_mode)) {
        if (linked && ggfs_path_leads_back(real, w->ancestors, w->n_ancestors))
            return true;
        return ggfs_scan_add(w->scan, GGFS_SCAN_DIR, name, path, real, NULL, &st, 0);
    }
    if (!S_ISREG(st.st_mode))
        return true;
    size_t stem_len;
    unsigned k, n;
    if (ggfs_split_name_parse(name, &stem_len, &k, &n))
        return shard_add(&w->shards, name, stem_len, k, n, path, real, &st);
    if (has_suffix(name) || ggfs_has_gguf_magic(f, real))
        return ggfs_scan_add(w->scan, GGFS_SCAN_MODEL, name, path, real, NULL, &st, 0);
    return true;
}

/* An Ollama store keeps manifests/ and blobs/ side by side. */
static bool add_ollama_view(ggfs_scan *scan, const char *real_dir)
{
    const ggfs_scan_entry *m = ggfs_scan_find(scan, "manifests");
    const ggfs_scan_entry *b = ggfs_scan_find(scan, "blobs");
    if (!m || !b || m->kind != GGFS_SCAN_DIR || b->kind != GGFS_SCAN_DIR)
        return true;
    const ggfs_cat_attrs a = m->a;
    return ggfs_scan_add_attrs(scan, GGFS_SCAN_OLLAMA, "ollama", real_dir, "", NULL, &a, 0);
}

int ggfs_scan_dir(const ggfs_folder *f, const char *real_dir, const char *const *ancestors,
                  size_t n_ancestors, ggfs_scan *out)
{
    memset(out, 0, sizeof *out);
    dir_walk w = {.f = f, .real_dir = real_dir, .ancestors = ancestors, .n_ancestors = n_ancestors,
                  .scan = out};
    int err = ggfs_folder_each(f, real_dir, 0, add_entry, &w);
    if (!err && !add_split_sets(out, &w.shards))
        err = ENOMEM;
    shard_list_free(&w.shards);
    if (!err) {
        ggfs_scan_finish(out);
        if (!add_ollama_view(out, real_dir))
            err = ENOMEM;
        ggfs_scan_finish(out);
    }
    if (err)
        ggfs_scan_free(out);
    return err;
}
