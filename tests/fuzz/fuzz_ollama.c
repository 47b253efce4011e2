/*
 * Ollama's manifests and the Modelfile made from them
 * (fs/model/ollama_layers.h): the input is a manifest (an OCI image
 * manifest, JSON) up to its first NUL, then the bytes of the small layers
 * (template, system, params, license, messages), one after another,
 * each ending at a NUL; layer i reads piece i (cycling, empty when there
 * are none). The Modelfile and the layer files are read whole (a bad
 * pointer or length faults), the manifest's digests must be 64 lower-case
 * hex digits, and its model layer one of its layers. The same JSON is
 * also read as a registry's token answer (fs/source/registry.h): a token
 * taken from it holds only a bearer token's characters.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ollama_layers.h"
#include "source/registry.h"
#include "util/log.h"
#include "quiet_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct pieces {
    const char *start[64];
    size_t len[64];
    size_t n;
} pieces;

static int read_layer(void *ctx, const ggfs_ollama_layer *layer, size_t cap, char **data, size_t *len, char *why,
                      size_t why_size)
{
    const pieces *p = ctx;
    const size_t i = p->n ? layer->index % p->n : 0;
    const size_t n = p->n ? p->len[i] : 0;
    if (n > cap)
        return EFBIG;
    if (layer->index % 7 == 6) {
        snprintf(why, why_size, "layer %zu cannot be read", layer->index);
        return EIO;
    }
    *data = malloc(n ? n : 1);
    if (!*data)
        return ENOMEM;
    if (n)
        memcpy(*data, p->start[i], n);
    *len = n;
    return 0;
}

static bool blob_path(void *ctx, const char *hex, char *out, size_t cap)
{
    (void)ctx;
    return (size_t)snprintf(out, cap, "/store/blobs/sha256-%s", hex) < cap;
}

static uint64_t sum(const char *s, size_t n)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (unsigned char)s[i];
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ggfs_log_set_sink(quiet);
    const char *text = (const char *)data, *end = text + size;
    const char *nul = memchr(text, '\0', size);
    const size_t json_len = nul ? (size_t)(nul - text) : size;
    char *json = malloc(json_len ? json_len : 1); // exact size: a read past it is caught
    if (!json)
        return 0;
    memcpy(json, text, json_len);
    char *token = ggfs_registry_token_parse(json, json_len);
    for (const char *c = token; c && *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              strchr("-._~+/=", *c)))
            abort();
    free(token);
    pieces p = {.n = 0};
    for (const char *c = nul ? nul + 1 : end; c < end && p.n < 64;) {
        const char *stop = memchr(c, '\0', (size_t)(end - c));
        p.start[p.n] = c;
        p.len[p.n++] = (size_t)((stop ? stop : end) - c);
        c = stop ? stop + 1 : end;
    }

    ggfs_ollama_manifest m;
    char msg[256];
    if (ggfs_ollama_manifest_parse(json, json_len, "fuzz", &m, msg, sizeof msg)) {
        if (m.model >= m.n || m.layers[m.model].kind != GGFS_OLLAMA_MODEL)
            abort();
        for (size_t i = 0; i < m.n; i++)
            if (strlen(m.layers[i].hex) != GGFS_OLLAMA_HEX ||
                strspn(m.layers[i].hex, "0123456789abcdef") != GGFS_OLLAMA_HEX)
                abort();
        const ggfs_ollama_store store = {read_layer, size % 2 ? blob_path : NULL, &p};
        ggfs_ollama_layers *l = ggfs_ollama_layers_new(&m, "fuzz", "/store/model.gguf", "library/x:latest",
                                                       &store, msg, sizeof msg);
        if (l) {
            uint64_t c = sum(l->modelfile, l->modelfile_len);
            if (l->modelfile[l->modelfile_len] != '\0')
                abort();
            for (size_t i = 0; i < l->n_files; i++) {
                if (!memchr(l->files[i].name, '\0', sizeof l->files[i].name))
                    abort();
                c += sum(l->files[i].data, l->files[i].len);
            }
            if (c == 1) // keeps the sums read
                msg[0] = '\0';
            ggfs_ollama_layers_free(l);
        }
        ggfs_ollama_manifest_free(&m);
    } else if (!memchr(msg, '\0', sizeof msg)) {
        abort();
    }
    free(json);
    return 0;
}
