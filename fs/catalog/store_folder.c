/*
 * The store of a local folder's directories (store.h): listed by the scan
 * (scan.h, with a hub cache's hf/ view added and its blobs/ left out:
 * hf_cache.h), trusted for -o listing_ttl_s and read again at each
 * opendir, so a file added shows at once; models opened from their files
 * inside the folder. The ollama/ and hf/ views (store_views.c) open their
 * models here too: theirs are files of the folder as well.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/hf_cache.h"
#include "catalog/store.h"
#include "model/split_name.h"

static int list_folder(const ggfs_store_env *env, const ggfs_store_dir *dir, ggfs_scan *out)
{
    int err = ggfs_scan_dir(env->folder, dir->real, dir->ancestors, dir->n_ancestors, out);
    if (!err && !ggfs_hf_tidy_scan(env->folder, dir->real, out)) {
        ggfs_scan_free(out);
        err = ENOMEM;
    }
    return err;
}

/* The path relative to the folder, for messages. */
static const char *relative(const ggfs_folder *f, const char *path)
{
    const size_t n = strlen(f->real);
    if (strncmp(path, f->real, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

/* A split set's other shards are found beside it by name: each must stay
 * inside the folder, as the first did. */
static bool shards_inside(const ggfs_folder *f, const char *first, char *msg, size_t cap)
{
    size_t prefix_len;
    unsigned k, n;
    if (!ggfs_split_name_parse(first, &prefix_len, &k, &n))
        return true;
    for (unsigned i = 1; i <= n; i++) {
        char *shard = ggfs_split_name_make(first, prefix_len, i, n);
        char real[PATH_MAX];
        struct stat st;
        const int err = shard ? ggfs_resolve_beneath(f, shard, real, sizeof real, &st) : ENOMEM;
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

/* Whether the model opened is the file m was listed as. */
static bool is_listed_file(const ggfs_store_model *m, const ggfs_model *model)
{
    const char *base = strrchr(m->path, '/');
    base = base ? base + 1 : m->path;
    for (uint32_t k = 0; k < model->n_shards; k++) {
        if (strcmp(model->shards[k].file_name, base) == 0) {
            ggfs_cat_ident id;
            ggfs_cat_ident_of_stat(&model->shards[k].source->st, &id);
            return ggfs_cat_ident_equal(m->ident, &id);
        }
    }
    return false;
}

ggfs_model *ggfs_store_folder_open_model(const ggfs_store_env *env, const ggfs_store_model *m, char *msg,
                                         size_t cap, int *err)
{
    const ggfs_folder *f = env->folder;
    if (!shards_inside(f, m->path, msg, cap)) {
        *err = EIO;
        return NULL;
    }
    const size_t len = strlen(f->real) + 1 + strlen(m->path) + 1;
    char *path = malloc(len);
    if (!path) {
        *err = ENOMEM;
        return NULL;
    }
    snprintf(path, len, "%s/%s", strcmp(f->real, "/") ? f->real : "", m->path);
    ggfs_model_error merr;
    ggfs_model *model = ggfs_model_open(path, NULL, &merr);
    free(path);
    if (!model) {
        const ggp_error *e = &merr.error;
        if (e->code == GGP_ERR_NOMEM) {
            *err = ENOMEM; // not the file's fault: tried again next time
            return NULL;
        }
        ggfs_store_model_error(relative(f, merr.where), e, msg, cap);
        *err = EIO;
        return NULL;
    }
    if (!is_listed_file(m, model)) {
        ggfs_model_close(model);
        *err = ESTALE;
        return NULL;
    }
    return model;
}

const ggfs_store ggfs_store_folder = {
    .name = "folder",
    .life = GGFS_LIFE_TTL,
    .relist_on_opendir = true,
    .ident_by_place = false,
    .list = list_folder,
    .open_model = ggfs_store_folder_open_model,
};
