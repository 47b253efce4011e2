/*
 * The models of a catalog's slots, opened on first use and closed by the
 * catalog's bounded set (util/lru.h), and why a model cannot be opened.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_private.h"
#include "catalog/ollama_local.h"
#include "model/model.h"
#include "model/split_name.h"
#include "tree/layer_trees.h"
#include "util/log.h"
#include "util/text.h"

/* One line: control bytes of names quoted in the message become '?'. */
static void set_error(ggfs_catalog *cat, slot *s, const char *msg)
{
    char *copy = strdup(msg);
    if (!copy)
        return;
    ggfs_one_line(copy);
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

/* Opens the projector and adapter of the layers of the store at `store`
 * as tree's layer trees; each that cannot be is one log line. */
static void add_layer_trees(ggfs_catalog *cat, ggfs_tree *tree, const char *store, const char *name)
{
    static const char *const what[GGFS_OLLAMA_TREES] = {"projector", "adapter"};
    for (int k = 0; k < GGFS_OLLAMA_TREES; k++) {
        const char *hex = tree->ollama->tree_hex[k];
        char path[2 * PATH_MAX + 2];
        ggfs_model_error merr;
        ggfs_model *model = NULL;
        if (!hex[0])
            continue;
        if (!ggfs_ollama_local_blob(&cat->folder, store, hex, path, sizeof path))
            ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: no layers/%s: blob sha256-%s is not in the folder\n", name,
                     what[k], hex);
        else if (!(model = ggfs_model_open(path, NULL, &merr)))
            ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: no layers/%s: %s: offset 0x%llx: %s\n", name, what[k],
                     relative(cat, merr.where), (unsigned long long)merr.error.offset, merr.error.msg);
        else if (!ggfs_tree_add_layer_tree(tree, k, model))
            ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: no layers/%s: out of memory\n", name, what[k]);
    }
}

/* Gives a model of the ollama/ view (its parent a place of the view) its
 * Modelfile and layers/; none to any other model, or when they cannot be
 * read (one log line; the model is served without them). */
static void ollama_layers(ggfs_catalog *cat, const slot *s, ggfs_tree *tree)
{
    pthread_mutex_lock(&cat->lock);
    const slot *parent = slot_at(cat, s->parent);
    const bool in_view = parent && parent->kind == GGFS_CAT_OLLAMA;
    char *store = in_view ? strdup(parent->path) : NULL, *place = in_view ? strdup(parent->real) : NULL;
    char *name = in_view ? strdup(s->name) : NULL;
    pthread_mutex_unlock(&cat->lock);
    ggfs_ollama_layers *layers = NULL;
    char msg[GGFS_ERROR_MAX];
    if (store && place && name && !(layers = ggfs_ollama_local_layers(&cat->folder, store, place, name, msg, sizeof msg)))
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: no Modelfile or layers/: %s\n", name, msg);
    tree->ollama = layers;
    if (layers)
        add_layer_trees(cat, tree, store, name);
    free(store);
    free(place);
    free(name);
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
        ggfs_cat_unhash(cat, s);
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
    tree->cancel = cat->cancel;
    ollama_layers(cat, s, tree);
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
    ggfs_ollama_layers *layers = (ggfs_ollama_layers *)tree->ollama;
    ggfs_tree_destroy(tree);
    free(tree);
    ggfs_ollama_layers_free(layers);
    ggfs_model_close(model);
    // The model's index was many small allocations: their pages go back
    // once the closes go quiet (util/trim.h).
    ggfs_trim_soon(cat->trim);
    // Its slot lives while open (so the id is still its): now it is idle,
    // or free.
    pthread_mutex_lock(&cat->lock);
    slot *s = slot_at(cat, id);
    if (s) {
        s->opens--;
        ggfs_cat_settle(cat, s);
    }
    pthread_mutex_unlock(&cat->lock);
}

const ggfs_lru_ops ggfs_cat_model_ops = {open_model, close_model};

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
    ggfs_cat_unpin(cat, s);
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
