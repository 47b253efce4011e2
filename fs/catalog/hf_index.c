/*
 * The model repositories of a hub cache directory, kept while it is
 * unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog/hf_index.h"

#define SETTLED_NS INT64_C(1000000000) // a directory changed more recently is read again
#define MODELS_PREFIX "models--"

struct ggfs_hf_index {
    pthread_mutex_t lock;
    char *hub;       // the directory the names are of; NULL: none yet
    struct stat st;  // its stat, taken before it was read
    bool trusted;    // it was read over SETTLED_NS after its last change
    char **names;    // sorted; one block with the strings
    size_t count;
    uint64_t reads;
};

ggfs_hf_index *ggfs_hf_index_new(void)
{
    ggfs_hf_index *idx = calloc(1, sizeof *idx);
    if (idx && pthread_mutex_init(&idx->lock, NULL) != 0) {
        free(idx);
        return NULL;
    }
    return idx;
}

void ggfs_hf_index_free(ggfs_hf_index *idx)
{
    if (!idx)
        return;
    pthread_mutex_destroy(&idx->lock);
    free(idx->hub);
    free(idx->names);
    free(idx);
}

uint64_t ggfs_hf_index_reads(ggfs_hf_index *idx)
{
    pthread_mutex_lock(&idx->lock);
    const uint64_t n = idx->reads;
    pthread_mutex_unlock(&idx->lock);
    return n;
}

/* ==== Blocks of names ==== */

/* A list of names: count pointers, then the strings, in one allocation. */
typedef struct name_list {
    char **v;
    size_t count, cap, bytes;
} name_list;

static bool list_add(name_list *l, const char *name)
{
    if (l->count == l->cap) {
        const size_t cap = l->cap ? l->cap * 2 : 64;
        char **grown = realloc(l->v, cap * sizeof *grown);
        if (!grown)
            return false;
        l->v = grown;
        l->cap = cap;
    }
    if (!(l->v[l->count] = strdup(name)))
        return false;
    l->count++;
    l->bytes += strlen(name) + 1;
    return true;
}

static void list_free(name_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->v[i]);
    free(l->v);
}

/* The names v[0..n) as one block; NULL when out of memory. */
static char **block_of(char *const *v, size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(v[i]) + 1;
    char **block = malloc(n * sizeof *block + bytes + 1);
    if (!block)
        return NULL;
    char *p = (char *)(block + n);
    for (size_t i = 0; i < n; i++) {
        const size_t len = strlen(v[i]) + 1;
        block[i] = memcpy(p, v[i], len);
        p += len;
    }
    return block;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool add_repo_name(void *ctx, const char *name, unsigned char type)
{
    (void)type;
    return strncmp(name, MODELS_PREFIX, strlen(MODELS_PREFIX)) != 0 || list_add(ctx, name);
}

/* Reads the names of hub that start with models-- into a sorted block.
 * Returns 0 or an errno. */
static int read_hub(const ggfs_folder *f, const char *hub, char ***names, size_t *count)
{
    name_list l = {0};
    int err = ggfs_folder_each(f, hub, 0, add_repo_name, &l);
    if (!err) {
        qsort(l.v, l.count, sizeof *l.v, by_name);
        *names = block_of(l.v, l.count);
        *count = l.count;
        if (!*names)
            err = ENOMEM;
    }
    list_free(&l);
    return err;
}

/* The names of ORG org among the sorted names[0..n) (all when org is
 * NULL), as a new block. */
static int select_org(char *const *names, size_t n, const char *org, char ***out, size_t *count)
{
    size_t first = 0, last = n;
    if (org) {
        char prefix[NAME_MAX + 16];
        const size_t plen = (size_t)snprintf(prefix, sizeof prefix, "models--%s--", org);
        if (plen >= sizeof prefix) {
            first = last = 0;
        } else {
            size_t lo = 0, hi = n;
            while (lo < hi) { // the first name not below the prefix
                const size_t mid = lo + (hi - lo) / 2;
                if (strcmp(names[mid], prefix) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            first = last = lo;
            while (last < n && strncmp(names[last], prefix, plen) == 0)
                last++;
        }
    }
    *out = block_of(names + first, last - first);
    *count = last - first;
    return *out ? 0 : ENOMEM;
}

/* ==== The index ==== */

static bool same_dir(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Whether a directory of stat st, read at now, was read over SETTLED_NS
 * after its last change. */
static bool settled(const struct stat *st, const struct timespec *now)
{
    const int64_t changed = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    const int64_t read = (int64_t)now->tv_sec * 1000000000 + now->tv_nsec;
    return read - changed >= SETTLED_NS;
}

int ggfs_hf_index_repos(ggfs_hf_index *idx, const ggfs_folder *f, const char *hub, const char *org,
                        char ***names, size_t *count)
{
    struct stat st;
    struct timespec now;
    if (fstatat(f->fd, hub[0] ? hub : ".", &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno;
    if (!S_ISDIR(st.st_mode))
        return ENOTDIR;
    clock_gettime(CLOCK_REALTIME, &now); // the clock file times are of
    if (idx) {
        pthread_mutex_lock(&idx->lock);
        int err = -1;
        if (idx->hub && idx->trusted && strcmp(idx->hub, hub) == 0 && same_dir(&idx->st, &st))
            err = select_org(idx->names, idx->count, org, names, count);
        pthread_mutex_unlock(&idx->lock);
        if (err >= 0)
            return err;
    }
    char **all = NULL;
    size_t n = 0;
    int err = read_hub(f, hub, &all, &n);
    if (err)
        return err;
    err = select_org(all, n, org, names, count);
    if (!idx || err) {
        free(all);
        return err;
    }
    char *hub_copy = strdup(hub);
    pthread_mutex_lock(&idx->lock);
    idx->reads++;
    if (hub_copy) {
        // The newest reading replaces the last (another thread may have
        // read the same directory meanwhile: either is right).
        free(idx->hub);
        free(idx->names);
        idx->hub = hub_copy;
        idx->st = st;
        idx->trusted = settled(&st, &now);
        idx->names = all;
        idx->count = n;
        all = NULL;
    }
    pthread_mutex_unlock(&idx->lock);
    free(all);
    return 0;
}
