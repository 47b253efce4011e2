/*
 * A local store's Ollama layers (ollama_local.h), read through the
 * folder's fd (beneath.h), never outside it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/ollama.h"
#include "catalog/ollama_local.h"

typedef struct store_ctx {
    const ggfs_folder *f;
    const char *store;
} store_ctx;

/* The path of a blob of the store, relative to the folder. */
static bool blob_path(const char *store, const char *hex, char *out, size_t cap)
{
    const int n = snprintf(out, cap, "%s%sblobs/sha256-%s", store, store[0] ? "/" : "", hex);
    return n > 0 && (size_t)n < cap;
}

/* Reads a small layer from blobs/ (ggfs_ollama_read). */
static int read_blob(void *ctx, const ggfs_ollama_layer *layer, size_t cap, char **data, size_t *len, char *why,
                     size_t why_size)
{
    const store_ctx *c = ctx;
    char path[PATH_MAX], real[PATH_MAX];
    struct stat st;
    *data = NULL;
    int err = blob_path(c->store, layer->hex, path, sizeof path) ? 0 : ENAMETOOLONG;
    if (!err)
        err = ggfs_resolve_beneath(c->f, path, real, sizeof real, &st);
    if (!err)
        err = ggfs_folder_read_small(c->f, real, cap, data, len);
    if (err && err != EFBIG)
        snprintf(why, why_size, "%s: %s", path, err == EXDEV ? "leads out of the folder" : strerror(err));
    return err;
}

/* The registry and namespace whose models a place of the view lists:
 * "" the default registry's library, NAMESPACE, or REGISTRY/NAMESPACE. */
static bool manifest_path(const char *store, const char *place, const char *name_tag, char *out, size_t cap)
{
    const char *colon = strrchr(name_tag, ':');
    if (!colon)
        return false;
    const char *slash = strchr(place, '/');
    char registry[NAME_MAX + 1], space[NAME_MAX + 1];
    if (!place[0])
        snprintf(registry, sizeof registry, "%s", GGFS_OLLAMA_REGISTRY), snprintf(space, sizeof space, "%s", GGFS_OLLAMA_NAMESPACE);
    else if (!slash)
        snprintf(registry, sizeof registry, "%s", GGFS_OLLAMA_REGISTRY), snprintf(space, sizeof space, "%s", place);
    else if ((size_t)(slash - place) <= NAME_MAX)
        snprintf(registry, sizeof registry, "%.*s", (int)(slash - place), place),
            snprintf(space, sizeof space, "%s", slash + 1);
    else
        return false;
    const int n = snprintf(out, cap, "%s%smanifests/%s/%s/%.*s/%s", store, store[0] ? "/" : "", registry, space,
                           (int)(colon - name_tag), name_tag, colon + 1);
    return n > 0 && (size_t)n < cap;
}

bool ggfs_ollama_local_blob(const ggfs_folder *f, const char *store, const char *hex, char *path, size_t cap)
{
    char blob[PATH_MAX], real[PATH_MAX];
    struct stat st;
    if (!blob_path(store, hex, blob, sizeof blob) || ggfs_resolve_beneath(f, blob, real, sizeof real, &st) != 0 ||
        !S_ISREG(st.st_mode))
        return false;
    const int n = snprintf(path, cap, "%s/%s", strcmp(f->real, "/") ? f->real : "", real);
    return n > 0 && (size_t)n < cap;
}

/* Where a blob of the store is (ggfs_ollama_store's path). */
static bool blob_at(void *ctx, const char *hex, char *out, size_t cap)
{
    const store_ctx *c = ctx;
    return ggfs_ollama_local_blob(c->f, c->store, hex, out, cap);
}

ggfs_ollama_layers *ggfs_ollama_local_layers(const ggfs_folder *f, const char *store, const char *place,
                                             const char *name_tag, char *msg, size_t msgcap)
{
    char manifest[PATH_MAX], real[PATH_MAX];
    struct stat st;
    if (!manifest_path(store, place, name_tag, manifest, sizeof manifest)) {
        snprintf(msg, msgcap, "%s: the manifest's path is too long", name_tag);
        return NULL;
    }
    char *data = NULL;
    size_t len = 0;
    int err = ggfs_resolve_beneath(f, manifest, real, sizeof real, &st);
    if (!err)
        err = ggfs_folder_read_small(f, real, GGFS_OLLAMA_MANIFEST_MAX, &data, &len);
    if (err) {
        snprintf(msg, msgcap, "%s: %s", manifest, err == EXDEV ? "leads out of the folder" : strerror(err));
        return NULL;
    }
    ggfs_ollama_manifest m;
    const bool parsed = ggfs_ollama_manifest_parse(data, len, manifest, &m, msg, msgcap);
    free(data);
    if (!parsed)
        return NULL;
    // FROM names the model blob where it is, as Ollama's own show does.
    char from[2 * PATH_MAX + 2], shown[2 * PATH_MAX];
    if (!ggfs_ollama_local_blob(f, store, m.layers[m.model].hex, from, sizeof from))
        snprintf(from, sizeof from, "%s%sblobs/sha256-%s", store, store[0] ? "/" : "", m.layers[m.model].hex);
    // The name `ollama list` gives it: its place in ollama/ and NAME:TAG.
    snprintf(shown, sizeof shown, "%s%s%s", place, place[0] ? "/" : "", name_tag);
    store_ctx ctx = {f, store};
    const ggfs_ollama_store source = {.read = read_blob, .path = blob_at, .ctx = &ctx};
    ggfs_ollama_layers *l = ggfs_ollama_layers_new(&m, manifest, from, shown, &source, msg, msgcap);
    ggfs_ollama_manifest_free(&m);
    return l;
}
