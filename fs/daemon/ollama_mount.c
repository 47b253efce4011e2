/*
 * An `ollama://` mount's model and layers (ollama_mount.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/ollama_mount.h"
#include "source/ollama_name.h"
#include "source/published.h"

#define URL_CAP 2048
#define MANIFEST_ACCEPT "application/vnd.docker.distribution.manifest.v2+json"

typedef struct registry_ctx {
    const ggfs_ollama_name *name;
    ggfs_remote_engine *remote;
} registry_ctx;

/* Reads a small layer from the registry (ggfs_ollama_read). */
static int read_blob(void *ctx, const ggfs_ollama_layer *layer, size_t cap, char **data, size_t *len, char *why,
                     size_t why_size)
{
    const registry_ctx *c = ctx;
    char url[URL_CAP];
    *data = NULL;
    if (!ggfs_ollama_blob_url(c->name, layer->hex, url, sizeof url)) {
        snprintf(why, why_size, "the blob's URL is too long");
        return ENAMETOOLONG;
    }
    return ggfs_remote_engine_registry_get(c->remote, url, NULL, cap, data, len, why, why_size);
}

/* Where a blob is, for the Modelfile's ADAPTER and a projector's FROM: the
 * registry's URL of it (a local store gives its path; a registry model's
 * blobs are nowhere else). */
static bool blob_at(void *ctx, const char *hex, char *out, size_t cap)
{
    const registry_ctx *c = ctx;
    return ggfs_ollama_blob_url(c->name, hex, out, cap);
}

/* As `ollama list` names it: NAME:TAG for the default registry's library,
 * else with what differs. */
static void short_name(const ggfs_ollama_name *n, char *out, size_t cap)
{
    if (strcmp(n->host, GGFS_OLLAMA_DEFAULT_HOST) != 0)
        snprintf(out, cap, "%s/%s/%s:%s", n->host, n->space, n->name, n->tag);
    else if (strcmp(n->space, GGFS_OLLAMA_DEFAULT_NAMESPACE) != 0)
        snprintf(out, cap, "%s/%s:%s", n->space, n->name, n->tag);
    else
        snprintf(out, cap, "%s:%s", n->name, n->tag);
}

/* What the manifest publishes of the blob hex: its digest, and the size
 * of the first layer of that digest that says one. */
static void published_of(const ggfs_ollama_manifest *m, const char *hex, ggfs_published *out)
{
    memset(out, 0, sizeof *out);
    ggfs_published_set_hex(out, GGFS_PUBLISHED_SHA256, hex, strlen(hex), "manifest");
    for (size_t i = 0; i < m->n && !out->size; i++)
        if (strcmp(m->layers[i].hex, hex) == 0)
            out->size = m->layers[i].size;
}

/* Opens the model of the blob hex as a URL, what the manifest publishes
 * of it its source's; NULL after one line naming the layer. */
static ggfs_model *open_blob(const char *name, const ggfs_ollama_name *n, const ggfs_ollama_manifest *m,
                             const char *hex, const char *what, ggfs_remote_engine *remote)
{
    char url[URL_CAP];
    if (!ggfs_ollama_blob_url(n, hex, url, sizeof url)) {
        fprintf(stderr, "gguf-fs: %s: the %s's URL is too long\n", name, what);
        return NULL;
    }
    ggfs_model_error err;
    ggfs_model *model = ggfs_model_open(url, remote, &err);
    const ggp_error *e = &err.error;
    if (!model && ((e->code == GGP_ERR_IO && e->offset == 0) || e->code == GGP_ERR_NOMEM))
        fprintf(stderr, "gguf-fs: %s: %s layer %s: %s\n", name, what, err.where, e->msg);
    else if (!model)
        fprintf(stderr, "gguf-fs: %s: %s layer %s: offset 0x%llx: %s\n", name, what, err.where,
                (unsigned long long)e->offset, e->msg);
    if (!model)
        return NULL;
    // A blob is one file: one shard, named by its digest.
    ggfs_source *src = model->shards[0].source;
    ggfs_published published;
    char why[256];
    published_of(m, hex, &published);
    if (!ggfs_published_take(&src->published, src->size, &published, "the manifest", why, sizeof why)) {
        fprintf(stderr, "gguf-fs: %s: %s layer %s: %s\n", name, what, url, why);
        ggfs_model_close(model);
        return NULL;
    }
    return model;
}

ggfs_model *ggfs_ollama_mount_open(const char *name, ggfs_remote_engine *remote, ggfs_ollama_layers **layers,
                                   ggfs_model *trees[GGFS_OLLAMA_TREES])
{
    *layers = NULL;
    for (int k = 0; k < GGFS_OLLAMA_TREES; k++)
        trees[k] = NULL;
    ggfs_ollama_name n;
    char why[512], url[URL_CAP], msg[768];
    if (!ggfs_ollama_name_parse(name, &n, why, sizeof why)) {
        fprintf(stderr, "gguf-fs: %s: %s\n", name, why);
        return NULL;
    }
    if (!ggfs_ollama_manifest_url(&n, url, sizeof url)) {
        fprintf(stderr, "gguf-fs: %s: the manifest's URL is too long\n", name);
        return NULL;
    }
    char *body;
    size_t len;
    if (ggfs_remote_engine_registry_get(remote, url, MANIFEST_ACCEPT, GGFS_OLLAMA_MANIFEST_MAX, &body, &len, why,
                                        sizeof why) != 0) {
        fprintf(stderr, "gguf-fs: %s: manifest: %s\n", name, why);
        return NULL;
    }
    ggfs_ollama_manifest m;
    const bool parsed = ggfs_ollama_manifest_parse(body, len, url, &m, msg, sizeof msg);
    free(body);
    if (!parsed) {
        fprintf(stderr, "gguf-fs: %s: %s\n", name, msg);
        return NULL;
    }
    ggfs_model *model = NULL;
    char from[4 * GGFS_OLLAMA_PART_MAX + 8], shown[sizeof from];
    if (!ggfs_ollama_full_name(&n, from, sizeof from)) {
        fprintf(stderr, "gguf-fs: %s: the name is too long\n", name);
        goto out;
    }
    if (!(model = open_blob(name, &n, &m, m.layers[m.model].hex, "model", remote)))
        goto out;
    short_name(&n, shown, sizeof shown);
    registry_ctx ctx = {&n, remote};
    const ggfs_ollama_store store = {.read = read_blob, .path = blob_at, .ctx = &ctx};
    if (!(*layers = ggfs_ollama_layers_new(&m, name, from, shown, &store, msg, sizeof msg))) {
        fprintf(stderr, "gguf-fs: %s\n", msg);
        goto fail;
    }
    static const char *const what[GGFS_OLLAMA_TREES] = {"projector", "adapter"};
    for (int k = 0; k < GGFS_OLLAMA_TREES; k++)
        if ((*layers)->tree_hex[k][0] &&
            !(trees[k] = open_blob(name, &n, &m, (*layers)->tree_hex[k], what[k], remote)))
            goto fail;
    goto out;
fail:
    for (int k = 0; k < GGFS_OLLAMA_TREES; k++) {
        ggfs_model_close(trees[k]);
        trees[k] = NULL;
    }
    ggfs_ollama_layers_free(*layers);
    *layers = NULL;
    ggfs_model_close(model);
    model = NULL;
out:
    ggfs_ollama_manifest_free(&m);
    return model;
}
