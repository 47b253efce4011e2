/*
 * The models of a catalog's slots, opened on first use by the store of
 * the directory they were listed in (store.h) and closed by the catalog's
 * bounded set (util/lru.h), and why a model cannot be opened.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_private.h"
#include "catalog/ollama_local.h"
#include "catalog/store.h"
#include "model/model.h"
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
    char msg[GGFS_ERROR_MAX - 1] = ""; // the text, without its newline
    // The store of the directory it was listed in opens it; the slot and
    // its parent live while pinned, and their strings never change.
    pthread_mutex_lock(&cat->lock);
    const ggfs_store *store = ggfs_store_of(cat->slots[s->parent]->kind);
    const ggfs_store_model m = {.path = s->path, .real = s->real, .ident = &s->a.ident,
                                .size = s->a.size > 0 ? (uint64_t)s->a.size : 0, .shards = s->shards};
    pthread_mutex_unlock(&cat->lock);
    ggfs_model *model = store->open_model(&cat->env, &m, msg, sizeof msg, err);
    // What the listing published of its files is theirs before the model
    // is shared; a file of another size than listed is not what was listed.
    if (model && !ggfs_store_take_published(store, &cat->env, &m, model, msg, sizeof msg)) {
        ggfs_model_close(model);
        model = NULL;
        *err = EIO;
    }
    if (!model && *err == EIO)
        set_error(cat, s, msg);
    if (!model && *err == ESTALE) {
        // Changed since it was listed: this slot's inodes must not serve
        // the new file. The next lookup reads the directory again.
        pthread_mutex_lock(&cat->lock);
        s->stale = true;
        ggfs_cat_unhash(cat, s);
        cat->slots[s->parent]->dir->listed_at = 0;
        pthread_mutex_unlock(&cat->lock);
    }
    if (!model)
        return NULL;
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
    tree->session = cat->session;
    tree->open_texts = &cat->open_texts;
    ollama_layers(cat, s, tree);
    tree->remote = cat->env.remote; // its own `remote` file: a remote store's model
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

char *ggfs_catalog_status(ggfs_catalog *cat, size_t *len)
{
    pthread_mutex_lock(&cat->lock);
    const ggfs_store *root = ggfs_store_of(cat->slots[0]->kind);
    pthread_mutex_unlock(&cat->lock);
    return root->status ? root->status(&cat->env, len) : NULL;
}

size_t ggfs_catalog_open_models(ggfs_catalog *cat)
{
    return ggfs_lru_open_count(cat->models);
}
