/*
 * An Ollama manifest's layers and the Modelfile made of them
 * (ollama_layers.h). The Modelfile follows Ollama's own writer (its
 * parser.Command.String and the model's String): FROM, ADAPTER, TEMPLATE,
 * SYSTEM, one PARAMETER per value, LICENSE, MESSAGE, each value quoted as
 * Ollama's quote() does.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ollama_layers.h"
#include "model/text_buffer.h"
#include "util/log.h"
#include "util/text.h"

#define DIGEST_PREFIX "sha256:"

static const char *const media_types[GGFS_OLLAMA_KIND_COUNT] = {
    [GGFS_OLLAMA_MODEL] = "application/vnd.ollama.image.model",
    [GGFS_OLLAMA_TEMPLATE] = "application/vnd.ollama.image.template",
    [GGFS_OLLAMA_SYSTEM] = "application/vnd.ollama.image.system",
    [GGFS_OLLAMA_PARAMS] = "application/vnd.ollama.image.params",
    [GGFS_OLLAMA_LICENSE] = "application/vnd.ollama.image.license",
    [GGFS_OLLAMA_MESSAGES] = "application/vnd.ollama.image.messages",
    [GGFS_OLLAMA_PROJECTOR] = "application/vnd.ollama.image.projector",
    [GGFS_OLLAMA_ADAPTER] = "application/vnd.ollama.image.adapter",
};

/* ==== The manifest ==== */

static ggfs_ollama_kind kind_of(const char *media_type)
{
    for (int k = 0; k < GGFS_OLLAMA_KIND_COUNT; k++)
        if (strcmp(media_type, media_types[k]) == 0)
            return (ggfs_ollama_kind)k;
    return GGFS_OLLAMA_KIND_COUNT;
}

/* Writes d (dlen bytes of untrusted text) into out, escaped and cut. */
static void shown(const char *d, size_t dlen, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t j = 0; j < dlen && o + 8 < cap; j++) {
        const unsigned char c = (unsigned char)d[j];
        o += (size_t)snprintf(out + o, cap - o, c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? "%c" : "\\x%02x", c);
    }
    snprintf(out + o, cap - o, "%s", o + 8 >= cap ? "..." : "");
}

/* The kind of a layer by its mediaType; GGFS_OLLAMA_KIND_COUNT when it is
 * not a known one (or no string). */
static ggfs_ollama_kind layer_kind(json_object *layer)
{
    json_object *type;
    if (!json_object_is_type(layer, json_type_object) || !json_object_object_get_ex(layer, "mediaType", &type) ||
        !json_object_is_type(type, json_type_string))
        return GGFS_OLLAMA_KIND_COUNT;
    return kind_of(json_object_get_string(type));
}

static bool has_model(const ggfs_ollama_manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->layers[i].kind == GGFS_OLLAMA_MODEL)
            return true;
    return false;
}

/* Takes layer i of the manifest when its media type is known: false with
 * msg filled when its digest is not sha256 and 64 lower-case hex digits. */
static bool take_layer(json_object *layer, size_t i, ggfs_ollama_manifest *out, char *msg, size_t msgcap)
{
    json_object *digest, *size;
    const ggfs_ollama_kind kind = layer_kind(layer);
    if (kind == GGFS_OLLAMA_KIND_COUNT)
        return true;
    const char *d = "";
    size_t dlen = 0;
    if (json_object_object_get_ex(layer, "digest", &digest) && json_object_is_type(digest, json_type_string)) {
        d = json_object_get_string(digest);
        dlen = (size_t)json_object_get_string_len(digest);
    }
    const size_t plen = strlen(DIGEST_PREFIX);
    if (dlen != plen + GGFS_OLLAMA_HEX || strncmp(d, DIGEST_PREFIX, plen) != 0 ||
        ggfs_lower_hex_span(d + plen, GGFS_OLLAMA_HEX) != GGFS_OLLAMA_HEX) {
        char text[80];
        shown(d, dlen, text, sizeof text);
        snprintf(msg, msgcap, "layers[%zu]: digest \"%s\" is not sha256:<64 lower-case hex digits>", i, text);
        return false;
    }
    ggfs_ollama_layer *l = &out->layers[out->n++];
    l->kind = kind;
    memcpy(l->hex, d + plen, GGFS_OLLAMA_HEX);
    l->hex[GGFS_OLLAMA_HEX] = '\0';
    l->size = json_object_object_get_ex(layer, "size", &size) && json_object_is_type(size, json_type_int) &&
                      json_object_get_int64(size) > 0
                  ? (uint64_t)json_object_get_int64(size)
                  : 0;
    l->index = i;
    return true;
}

/* Parses json whole (nothing but blanks after it): the root, or NULL with
 * msg naming the offset. */
static json_object *parse_whole(const char *json, size_t len, char *msg, size_t msgcap)
{
    if (len > GGFS_OLLAMA_MANIFEST_MAX) {
        snprintf(msg, msgcap, "larger than 1 MiB, not a manifest");
        return NULL;
    }
    struct json_tokener *tok = json_tokener_new();
    if (!tok) {
        snprintf(msg, msgcap, "out of memory");
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *root = json_tokener_parse_ex(tok, json, (int)len);
    const enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (!root)
        snprintf(msg, msgcap, "offset 0x%zx: not JSON: %s", jerr == json_tokener_continue ? len : end,
                 jerr == json_tokener_continue ? "ends inside a value" : json_tokener_error_desc(jerr));
    while (root && end < len && strchr(" \t\r\n", json[end]))
        end++;
    if (root && end < len) {
        snprintf(msg, msgcap, "offset 0x%zx: not JSON: bytes after the manifest", end);
        json_object_put(root);
        root = NULL;
    }
    json_tokener_free(tok);
    return root;
}

bool ggfs_ollama_manifest_parse(const char *json, size_t len, const char *where, ggfs_ollama_manifest *out,
                                char *msg, size_t msgcap)
{
    memset(out, 0, sizeof *out);
    char why[200];
    json_object *root = parse_whole(json, len, why, sizeof why), *layers;
    bool ok = false;
    if (!root)
        goto out;
    if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "layers", &layers) ||
        !json_object_is_type(layers, json_type_array)) {
        snprintf(why, sizeof why, "no \"layers\" array");
        goto out;
    }
    const size_t n = json_object_array_length(layers);
    // At most the cap and a model layer are taken (below).
    const size_t room = n < GGFS_OLLAMA_LAYERS_MAX + 1 ? n : GGFS_OLLAMA_LAYERS_MAX + 1;
    out->layers = calloc(room ? room : 1, sizeof *out->layers);
    if (!out->layers) {
        snprintf(why, sizeof why, "out of memory");
        goto out;
    }
    size_t cut = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *layer = json_object_array_get_idx(layers, i);
        // Past the cap only the first model layer is still taken: a manifest
        // of thousands of layers is read as its first ones.
        if (out->n >= GGFS_OLLAMA_LAYERS_MAX && (has_model(out) || layer_kind(layer) != GGFS_OLLAMA_MODEL)) {
            cut += layer_kind(layer) != GGFS_OLLAMA_KIND_COUNT;
            continue;
        }
        if (!take_layer(layer, i, out, why, sizeof why))
            goto out;
    }
    if (cut)
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: over %u layers: %zu left out\n", where, GGFS_OLLAMA_LAYERS_MAX, cut);
    for (out->model = 0; out->model < out->n && out->layers[out->model].kind != GGFS_OLLAMA_MODEL; out->model++)
        ;
    if (out->model == out->n) {
        snprintf(why, sizeof why, "no layer of mediaType %s", media_types[GGFS_OLLAMA_MODEL]);
        goto out;
    }
    ok = true;
out:
    json_object_put(root);
    if (!ok) {
        snprintf(msg, msgcap, "%s: %s", where, why);
        ggfs_ollama_manifest_free(out);
    }
    return ok;
}

void ggfs_ollama_manifest_free(ggfs_ollama_manifest *m)
{
    free(m->layers);
    memset(m, 0, sizeof *m);
}

/* ==== The Modelfile ==== */

static void put(ggfs_buffer *t, const char *s, size_t n)
{
    t->sink.write(&t->sink, s, n);
}

static void puts_(ggfs_buffer *t, const char *s)
{
    put(t, s, strlen(s));
}

/* A value as Ollama's quote() writes it: as it is, unless it holds a
 * newline or begins or ends with a space; then in "...", or in """...""" when
 * it holds a quote. */
static void put_quoted(ggfs_buffer *t, const char *s, size_t n)
{
    const bool plain = !memchr(s, '\n', n) && !(n && (s[0] == ' ' || s[n - 1] == ' '));
    const char *q = plain ? "" : memchr(s, '"', n) ? "\"\"\"" : "\"";
    puts_(t, q);
    put(t, s, n);
    puts_(t, q);
}

/* One command line: NAME ARG-quoted. */
static void command(ggfs_buffer *t, const char *name, const char *arg, size_t n)
{
    puts_(t, name);
    puts_(t, " ");
    put_quoted(t, arg, n);
    puts_(t, "\n");
}

/* A JSON value as Go's %v prints a decoded one: strings as they are,
 * numbers and booleans as written. */
static const char *value_text(json_object *v, size_t *n)
{
    const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                              : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    *n = json_object_is_type(v, json_type_string) ? (size_t)json_object_get_string_len(v) : strlen(s);
    return s;
}

/* A small layer's JSON, read to its length: a reader need not end the
 * bytes with a NUL (ggfs_ollama_read). NULL when it is none. */
static json_object *layer_json(const ggfs_ollama_file *f)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = tok && f->len <= INT_MAX ? json_tokener_parse_ex(tok, f->data, (int)f->len) : NULL;
    if (tok)
        json_tokener_free(tok);
    return o;
}

/* PARAMETER lines, one per value of each key of the params object. */
static void put_params(ggfs_buffer *t, const ggfs_ollama_file *f, const char *where)
{
    json_object *root = layer_json(f);
    if (!json_object_is_type(root, json_type_object)) {
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: the params layer is not a JSON object: no PARAMETER lines\n", where);
        json_object_put(root);
        return;
    }
    json_object_object_foreach(root, key, val)
    {
        const size_t count = json_object_is_type(val, json_type_array) ? json_object_array_length(val) : 1;
        for (size_t i = 0; i < count; i++) {
            json_object *v = json_object_is_type(val, json_type_array) ? json_object_array_get_idx(val, i) : val;
            size_t n;
            const char *s = value_text(v, &n);
            puts_(t, "PARAMETER ");
            command(t, key, s, n);
        }
    }
    json_object_put(root);
}

/* MESSAGE lines, one per {role, content} of the messages array. */
static void put_messages(ggfs_buffer *t, const ggfs_ollama_file *f, const char *where)
{
    json_object *root = layer_json(f), *role, *content;
    if (!json_object_is_type(root, json_type_array)) {
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: the messages layer is not a JSON array: no MESSAGE lines\n", where);
        json_object_put(root);
        return;
    }
    for (size_t i = 0; i < json_object_array_length(root); i++) {
        json_object *m = json_object_array_get_idx(root, i);
        if (!json_object_object_get_ex(m, "role", &role) || !json_object_is_type(role, json_type_string) ||
            !json_object_object_get_ex(m, "content", &content) || !json_object_is_type(content, json_type_string))
            continue;
        puts_(t, "MESSAGE ");
        command(t, json_object_get_string(role), json_object_get_string(content),
                (size_t)json_object_get_string_len(content));
    }
    json_object_put(root);
}

/* ==== Reading the layers ==== */

static const char *const file_names[GGFS_OLLAMA_KIND_COUNT] = {
    [GGFS_OLLAMA_TEMPLATE] = "template",
    [GGFS_OLLAMA_SYSTEM] = "system",
    [GGFS_OLLAMA_PARAMS] = "params",
    [GGFS_OLLAMA_LICENSE] = "license",
    [GGFS_OLLAMA_MESSAGES] = "messages",
};

/* Whether a kind is read whole into memory. */
static bool is_small(ggfs_ollama_kind k)
{
    return file_names[k] != NULL;
}

/* The first file of kind k from `from` on, or NULL. */
static const ggfs_ollama_file *file_of(const ggfs_ollama_layers *l, const ggfs_ollama_kind *kinds, ggfs_ollama_kind k,
                                       size_t *from)
{
    for (; *from < l->n_files; (*from)++)
        if (kinds[*from] == k)
            return &l->files[(*from)++];
    return NULL;
}

/* The lines naming where the adapter and projector blobs are, after the
 * model's FROM, as Ollama writes its adapters and projectors. */
static void put_blob_paths(ggfs_buffer *t, const ggfs_ollama_layers *l, const ggfs_ollama_store *store)
{
    static const char *const commands[GGFS_OLLAMA_TREES] = {"FROM", "ADAPTER"};
    static const int order[GGFS_OLLAMA_TREES] = {GGFS_OLLAMA_ADAPTER_TREE, GGFS_OLLAMA_PROJECTOR_TREE};
    for (int i = 0; i < GGFS_OLLAMA_TREES; i++) {
        const int k = order[i];
        char path[4096];
        if (l->tree_hex[k][0] && store->path && store->path(store->ctx, l->tree_hex[k], path, sizeof path))
            command(t, commands[k], path, strlen(path));
    }
}

static bool make_modelfile(ggfs_ollama_layers *l, const ggfs_ollama_kind *kinds, const char *where, const char *from,
                           const char *short_name, const ggfs_ollama_store *store)
{
    ggfs_buffer t;
    ggfs_buffer_init(&t);
    puts_(&t, "# Modelfile generated by \"ollama show\"\n# To build a new Modelfile based on this, replace FROM with:\n# FROM ");
    puts_(&t, short_name);
    puts_(&t, "\n\nFROM ");
    puts_(&t, from);
    puts_(&t, "\n");
    put_blob_paths(&t, l, store);
    size_t at = 0;
    const ggfs_ollama_file *f;
    if ((at = 0, f = file_of(l, kinds, GGFS_OLLAMA_TEMPLATE, &at)))
        command(&t, "TEMPLATE", f->data, f->len);
    if ((at = 0, f = file_of(l, kinds, GGFS_OLLAMA_SYSTEM, &at)))
        command(&t, "SYSTEM", f->data, f->len);
    if ((at = 0, f = file_of(l, kinds, GGFS_OLLAMA_PARAMS, &at)))
        put_params(&t, f, where);
    for (at = 0; (f = file_of(l, kinds, GGFS_OLLAMA_LICENSE, &at));)
        command(&t, "LICENSE", f->data, f->len);
    if ((at = 0, f = file_of(l, kinds, GGFS_OLLAMA_MESSAGES, &at)))
        put_messages(&t, f, where);
    put(&t, "", 1); // a NUL after the text, for callers that want a string
    if (t.failed) {
        free(t.data);
        return false;
    }
    l->modelfile = t.data;
    l->modelfile_len = t.len - 1;
    return true;
}

/* One small layer read by a thread of a batch. */
typedef struct layer_read {
    const ggfs_ollama_store *store;
    const ggfs_ollama_layer *layer;
    size_t cap;      // bytes it may hold
    char *data;
    size_t len;
    int err;
    char why[256];
    pthread_t thread;
    bool started;
} layer_read;

static void *read_one(void *arg)
{
    layer_read *r = arg;
    r->why[0] = '\0';
    r->err = r->cap ? r->store->read(r->store->ctx, r->layer, r->cap, &r->data, &r->len, r->why, sizeof r->why)
                    : EFBIG; // once all is used, nothing more is asked for
    return NULL;
}

/* Reads the batch's layers at once, a thread each (inline when no thread
 * starts), and waits for them all. */
static void read_batch(layer_read *batch, size_t n)
{
    for (size_t i = 0; i < n; i++)
        batch[i].started = pthread_create(&batch[i].thread, NULL, read_one, &batch[i]) == 0;
    for (size_t i = 0; i < n; i++) {
        if (batch[i].started)
            pthread_join(batch[i].thread, NULL);
        else
            read_one(&batch[i]);
    }
}

/* Keeps what batch entry r read as the next file of l, or leaves it out
 * with a log line (over its cap, or past what is left of the total).
 * False with msg filled when its read failed. */
static bool keep_read(ggfs_ollama_layers *l, ggfs_ollama_kind *kinds, unsigned *seen, size_t *used, layer_read *r,
                      const char *where, char *msg, size_t msgcap)
{
    const ggfs_ollama_layer *layer = r->layer;
    const size_t left = GGFS_OLLAMA_SMALL_TOTAL - *used;
    if (r->err == EFBIG || (!r->err && r->len > left)) {
        if (r->err != EFBIG || r->cap < GGFS_OLLAMA_SMALL_MAX)
            ggfs_log(GGFS_LOG_WARNING,
                     "gguf-fs: %s: layers[%zu]: the %s layer does not fit in the %zu bytes left of 16 MiB for all text layers: left out\n",
                     where, layer->index, file_names[layer->kind], left);
        else
            ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: layers[%zu]: the %s layer is larger than %u bytes: left out\n",
                     where, layer->index, file_names[layer->kind], GGFS_OLLAMA_SMALL_MAX);
        free(r->data);
        r->data = NULL;
        return true;
    }
    if (r->err) {
        snprintf(msg, msgcap, "%s: layers[%zu]: %s", where, layer->index, r->why);
        return false;
    }
    *used += r->len;
    ggfs_ollama_file *f = &l->files[l->n_files];
    f->data = r->data;
    f->len = r->len;
    r->data = NULL;
    // Later layers of a kind (licenses) are KIND.2, KIND.3, ...
    const unsigned nth = ++seen[layer->kind];
    snprintf(f->name, sizeof f->name, nth == 1 ? "%s" : "%s.%u", file_names[layer->kind], nth);
    kinds[l->n_files++] = layer->kind;
    return true;
}

ggfs_ollama_layers *ggfs_ollama_layers_new(const ggfs_ollama_manifest *m, const char *where, const char *from,
                                           const char *short_name, const ggfs_ollama_store *store, char *msg,
                                           size_t msgcap)
{
    ggfs_ollama_layers *l = calloc(1, sizeof *l);
    ggfs_ollama_kind *kinds = calloc(m->n ? m->n : 1, sizeof *kinds);
    layer_read *batch = calloc(GGFS_OLLAMA_READ_THREADS, sizeof *batch);
    if (l)
        l->files = calloc(m->n ? m->n : 1, sizeof *l->files);
    if (!l || !kinds || !batch || !l->files)
        goto nomem;
    unsigned seen[GGFS_OLLAMA_KIND_COUNT] = {0};
    size_t used = 0; // bytes of the small layers kept so far
    for (size_t i = 0; i < m->n; i++) {
        const ggfs_ollama_layer *layer = &m->layers[i];
        const int tree = layer->kind == GGFS_OLLAMA_PROJECTOR ? GGFS_OLLAMA_PROJECTOR_TREE
                       : layer->kind == GGFS_OLLAMA_ADAPTER   ? GGFS_OLLAMA_ADAPTER_TREE
                                                              : -1;
        if (tree >= 0 && !l->tree_hex[tree][0])
            memcpy(l->tree_hex[tree], layer->hex, sizeof l->tree_hex[tree]);
    }
    // The small layers, GGFS_OLLAMA_READ_THREADS at a time over the
    // store's connections, each batch asked for at most what is left of
    // the total when it starts (so a batch holds at most its share more),
    // kept in the manifest's order.
    // The first batch is one layer: a registry's token, asked for at its
    // first 401, is then had before the others go at once.
    for (size_t i = 0, most = 1; i < m->n; most = GGFS_OLLAMA_READ_THREADS) {
        size_t n = 0;
        const size_t left = GGFS_OLLAMA_SMALL_TOTAL - used;
        for (; i < m->n && n < most; i++)
            if (is_small(m->layers[i].kind))
                batch[n++] = (layer_read){.store = store, .layer = &m->layers[i],
                                          .cap = left < GGFS_OLLAMA_SMALL_MAX ? left : GGFS_OLLAMA_SMALL_MAX};
        read_batch(batch, n);
        bool ok = true;
        for (size_t k = 0; k < n; k++) {
            ok = ok && keep_read(l, kinds, seen, &used, &batch[k], where, msg, msgcap);
            free(batch[k].data); // what was not kept (after a failure)
        }
        if (!ok)
            goto fail;
    }
    if (!make_modelfile(l, kinds, where, from, short_name, store))
        goto nomem;
    // The messages are in the Modelfile; layers/ shows the files SPEC lists.
    size_t kept = 0;
    for (size_t i = 0; i < l->n_files; i++) {
        if (kinds[i] == GGFS_OLLAMA_MESSAGES)
            free(l->files[i].data);
        else
            l->files[kept++] = l->files[i];
    }
    l->n_files = kept;
    free(kinds);
    free(batch);
    return l;
nomem:
    snprintf(msg, msgcap, "%s: out of memory", where);
fail:
    free(kinds);
    free(batch);
    ggfs_ollama_layers_free(l);
    return NULL;
}

void ggfs_ollama_layers_free(ggfs_ollama_layers *l)
{
    if (!l)
        return;
    for (size_t i = 0; l->files && i < l->n_files; i++)
        free(l->files[i].data);
    free(l->files);
    free(l->modelfile);
    free(l);
}
