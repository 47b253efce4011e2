/*
 * The store of an S3 bucket, or of a prefix of one (SPEC "S3 buckets"):
 * s3://BUCKET[/PREFIX]. Each directory is listed when looked into, by
 * ListObjectsV2 of its prefix with delimiter '/' (source/s3_list.h, in the
 * remote engine: signed, page after page, hostile keys left out with a
 * log line, a key named as a prefix dropped for the directory), and the
 * listing kept for -o listing_ttl_s. A common prefix is a directory; a key
 * ending in .gguf a model, a split set once under its name, at its first
 * shard listed; names as in a Hub mount (components cut to 255 bytes). A
 * model opens as the URL mount of s3://BUCKET/KEY would, through the
 * mount's remote engine: its ETag recorded at open, a changed object EIO.
 *
 * The root state starts with the Hub's (hf_api.h), so that the counts a
 * collection mount keeps and its `remote` text are the Hub stores' own.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog/hf_api.h"
#include "catalog/store.h"
#include "catalog/store_hf_repo.h"
#include "catalog/store_s3.h"
#include "model/split_name.h"
#include "source/s3_url.h"
#include "util/fnv.h"
#include "util/log.h"
#include "util/store_name.h"
#include "util/text.h"

#define NAME_CUT 255 // bytes of a shown name, at most (as a Hub mount's)

struct ggfs_s3_bucket {
    ggfs_hf_root root;     // first: the collection's counts (hf_api.h)
    char *name;            // s3://BUCKET[/PREFIX], without a final '/'
    ggfs_remote_engine *remote; // the mount's: it outlives the catalog
    int64_t mounted;       // seconds: the entries' times
    _Atomic(ggfs_s3_listing *) top; // the listing made at mount, until
                                    // the catalog first lists the top
};

bool ggfs_s3_is_collection(const char *name)
{
    if (strncmp(name, GGFS_S3_SCHEME, strlen(GGFS_S3_SCHEME)) != 0)
        return false;
    const char *key = strchr(name + strlen(GGFS_S3_SCHEME), '/');
    const size_t n = key ? strlen(key) : 0;
    return !(n > 5 && strcmp(key + n - 5, ".gguf") == 0);
}

static void free_listing(ggfs_remote_engine *remote, ggfs_s3_listing *l)
{
    if (l) {
        ggfs_remote_engine_s3_listing_free(remote, l);
        free(l);
    }
}

/* s3://BUCKET[/PREFIX] joined with rel ("" for the top) and, when name is
 * not NULL, a name in it: malloc'ed, NULL when out of memory. */
static char *s3_name(const ggfs_s3_bucket *b, const char *rel, const char *name)
{
    const size_t len = strlen(b->name) + strlen(rel) + (name ? strlen(name) : 0) + 3;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s%s%s%s%s", b->name, rel[0] ? "/" : "", rel, name ? "/" : "", name ? name : "");
    return s;
}

/* Lists rel of the bucket, counting its pages (and a failure) into the
 * mount's counts. */
static bool list_prefix(ggfs_s3_bucket *b, ggfs_remote_engine *remote, const char *rel, ggfs_s3_listing *l,
                        char *why, size_t cap)
{
    char *name = s3_name(b, rel, NULL);
    if (!name) {
        snprintf(why, cap, "out of memory");
        return false;
    }
    char said[512];
    const bool ok = ggfs_remote_engine_s3_list(remote, name, GGFS_HF_MAX_ENTRIES, l, said, sizeof said);
    ggfs_hf_stats *st = &b->root.stats;
    atomic_fetch_add(&st->listing_requests, ok ? l->pages : 1);
    if (!ok) {
        snprintf(why, cap, "%s: %s", name, said);
        ggfs_one_line(why);
        pthread_mutex_lock(&st->lock);
        snprintf(st->last_error, sizeof st->last_error, "%s", why);
        pthread_mutex_unlock(&st->lock);
    }
    free(name);
    return ok;
}

static void free_bucket(void *root)
{
    ggfs_s3_bucket *b = root;
    if (!b)
        return;
    free_listing(b->remote, atomic_exchange(&b->top, NULL)); // the top, if never listed
    ggfs_hf_root_destroy(&b->root);
    free(b->name);
    free(b);
}

ggfs_s3_bucket *ggfs_s3_bucket_open(ggfs_remote_engine *remote, const char *name, char *why, size_t cap)
{
    ggfs_s3_bucket *b = calloc(1, sizeof *b);
    ggfs_s3_listing *top = calloc(1, sizeof *top);
    if (!b || !top || !(b->name = strdup(name))) {
        snprintf(why, cap, "%s: out of memory", name);
        free(top);
        if (b)
            free(b->name);
        free(b);
        return NULL;
    }
    ggfs_hf_root_init(&b->root, GGFS_HF_ROOT_REPO);
    b->remote = remote;
    b->mounted = (int64_t)time(NULL);
    for (size_t n = strlen(b->name); n > strlen(GGFS_S3_SCHEME) && b->name[n - 1] == '/'; n--)
        b->name[n - 1] = '\0';
    if (!list_prefix(b, remote, "", top, why, cap)) {
        free(top);
        free_bucket(b);
        return NULL;
    }
    atomic_store(&b->top, top);
    return b;
}

/* ==== The store ==== */

static void attrs_of(const ggfs_s3_bucket *b, bool dir, uint64_t size, ggfs_cat_attrs *a)
{
    *a = (ggfs_cat_attrs){
        .atime = b->mounted,
        .mtime = b->mounted,
        .ctime = b->mounted,
        .mode = dir ? S_IFDIR | 0555 : S_IFREG | 0444,
        .uid = (uint32_t)getuid(),
        .gid = (uint32_t)getgid(),
        .size = (int64_t)size,
    };
}

/* rel/name (name alone at the top), malloc'ed; NULL when out of memory. */
static char *join(const char *rel, const char *name)
{
    const size_t len = strlen(rel) + strlen(name) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s%s%s", rel, rel[0] ? "/" : "", name);
    return s;
}

static bool add_prefix(const ggfs_s3_bucket *b, const char *rel, const char *prefix, ggfs_scan *out)
{
    char *shown = ggfs_store_path_shown(prefix, strlen(prefix));
    char *sub = join(rel, prefix);
    ggfs_cat_attrs a;
    attrs_of(b, true, 0, &a);
    const bool ok = shown && sub && ggfs_scan_add_attrs(out, GGFS_CAT_S3, shown, sub, sub, NULL, &a, 0);
    free(shown);
    free(sub);
    return ok;
}

/* Adds a key ending in .gguf (a split set once, under its name, when last
 * holds the name of the one added before). */
static bool add_object(const ggfs_s3_bucket *b, const char *rel, const ggfs_s3_object *o, char *last, ggfs_scan *out)
{
    const size_t len = strlen(o->name);
    if (len <= 5 || strcmp(o->name + len - 5, ".gguf") != 0)
        return true;
    char *shown = ggfs_store_path_shown(o->name, len);
    if (!shown)
        return false;
    size_t prefix_len;
    unsigned k, n;
    char name[NAME_CUT + 1];
    uint32_t shards = 0;
    if (ggfs_split_name_parse(shown, &prefix_len, &k, &n) && prefix_len + 5 <= NAME_CUT) {
        snprintf(name, sizeof name, "%.*s.gguf", (int)prefix_len, shown);
        shards = n;
    } else {
        snprintf(name, sizeof name, "%s", shown);
    }
    free(shown);
    if (shards && strcmp(name, last) == 0)
        return true;
    memcpy(last, name, sizeof name);
    ggfs_cat_attrs a;
    attrs_of(b, false, o->size, &a);
    // What the listing saw of it: its ETag, which changes with the object.
    a.ident.w[0] = ggfs_fnv64(GGFS_FNV64_OFFSET, o->etag, strlen(o->etag));
    a.ident.w[1] = o->size;
    // Its path is its name as a URL mount's.
    char *url = s3_name(b, rel, o->name), *real = join(rel, o->name);
    const bool ok = url && real && ggfs_scan_add_attrs(out, GGFS_CAT_MODEL, name, url, real, NULL, &a, shards);
    free(url);
    free(real);
    return ok;
}

static int list_bucket(const ggfs_store_env *env, const ggfs_store_dir *dir, ggfs_scan *out)
{
    memset(out, 0, sizeof *out);
    ggfs_s3_bucket *b = env->root;
    ggfs_s3_listing *l = dir->real[0] ? NULL : atomic_exchange(&b->top, NULL);
    if (!l) {
        char why[640];
        if (!(l = calloc(1, sizeof *l)))
            return ENOMEM;
        if (!list_prefix(b, env->remote, dir->real, l, why, sizeof why)) {
            ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s\n", why);
            free(l);
            return EIO;
        }
    }
    // A prefix with nothing under it any more is no directory; one whose
    // every entry was left out (an empty folder marker dir/, a key a/./b)
    // is listed empty, never ENOENT after its parent listed it.
    int err = dir->real[0] && l->n_objects == 0 && l->n_prefixes == 0 && l->left_out == 0 ? ENOENT : 0;
    char last[NAME_CUT + 1] = "";
    for (size_t i = 0; !err && i < l->n_prefixes; i++)
        if (!add_prefix(b, dir->real, l->prefixes[i], out))
            err = ENOMEM;
    for (size_t i = 0; !err && i < l->n_objects; i++)
        if (!add_object(b, dir->real, &l->objects[i], last, out))
            err = ENOMEM;
    free_listing(env->remote, l);
    if (err) {
        ggfs_scan_free(out);
        return err;
    }
    ggfs_scan_finish(out);
    return 0;
}

/* As a Hub repo's: the URL's model, counted into the mount's counts. */
static ggfs_model *open_bucket_model(const ggfs_store_env *env, const ggfs_store_model *m, char *msg, size_t cap,
                                     int *err)
{
    return ggfs_store_hf_repo.open_model(env, m, msg, cap, err);
}

/* What the listing says of the object listed, the key a model's slot
 * names: its Size. (Its ETag the object's open reads again, with its
 * checksum.) A split set's other shards were listed, and dropped, on the
 * way to it. */
static bool published_of(const ggfs_store_env *env, const ggfs_store_model *m, const char *name, ggfs_published *out)
{
    (void)env;
    if (strcmp(name, m->path) != 0)
        return false;
    memset(out, 0, sizeof *out);
    out->size = m->size;
    return true;
}

static char *status_text(const ggfs_store_env *env, size_t *len)
{
    return ggfs_hf_status_text(env->root, env->remote, len);
}

const ggfs_store ggfs_store_s3 = {
    .name = "s3 bucket",
    .life = GGFS_LIFE_TTL,
    .relist_on_opendir = false,
    .ident_by_place = false,
    .read_ahead = true,
    .list = list_bucket,
    .open_model = open_bucket_model,
    .published = published_of,
    .root_free = free_bucket,
    .status = status_text,
};
