/*
 * The layers of an Ollama model: its manifest (a Docker image manifest,
 * schemaVersion 2, read with json-c) and what `ollama show` makes of the
 * small layers beside the model: the Modelfile and the files of layers/
 * (template, system, params, license, license.2, ...). Where the layers'
 * bytes come from (a registry, a local store's blobs/) is the caller's
 * read function; this knows nothing of HTTP or of folders.
 */
#ifndef GGFS_MODEL_OLLAMA_LAYERS_H
#define GGFS_MODEL_OLLAMA_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGFS_OLLAMA_MANIFEST_MAX (1u << 20) // bytes; real ones are about 1 KiB
#define GGFS_OLLAMA_SMALL_MAX (1u << 20)    // a text layer read whole, at most
#define GGFS_OLLAMA_SMALL_TOTAL (16u << 20) // all of a model's text layers, at most
#define GGFS_OLLAMA_HEX 64                  // a sha256 digest's hex digits
// Layers of known media types taken from a manifest, at most (and its
// first model layer): real ones have fewer than 10; the rest is left out
// with a log line, so that no manifest makes a mount ask for thousands.
#define GGFS_OLLAMA_LAYERS_MAX 64u
// Small layers read at once (over the mount's connections, or the disk).
#define GGFS_OLLAMA_READ_THREADS 8u

typedef enum ggfs_ollama_kind {
    GGFS_OLLAMA_MODEL,     // the GGUF file
    GGFS_OLLAMA_TEMPLATE,  // a Go template
    GGFS_OLLAMA_SYSTEM,
    GGFS_OLLAMA_PARAMS,    // a JSON object
    GGFS_OLLAMA_LICENSE,
    GGFS_OLLAMA_MESSAGES,  // a JSON array of {role, content}
    GGFS_OLLAMA_PROJECTOR, // a multimodal projector GGUF
    GGFS_OLLAMA_ADAPTER,   // a LoRA GGUF
    GGFS_OLLAMA_KIND_COUNT,
} ggfs_ollama_kind;

typedef struct ggfs_ollama_layer {
    ggfs_ollama_kind kind;
    char hex[GGFS_OLLAMA_HEX + 1]; // the digest's, checked: 64 lower-case hex digits
    uint64_t size;                 // as the manifest says (0 when it says none)
    size_t index;                  // in the manifest's layers[]
} ggfs_ollama_layer;

/* A manifest's layers of the known media types, in its order; others are
 * left out. */
typedef struct ggfs_ollama_manifest {
    ggfs_ollama_layer *layers;
    size_t n;
    size_t model; // the first model layer's place in layers
} ggfs_ollama_manifest;

/* Parses the manifest in json (len bytes). On refusal returns false with
 * one line in msg naming `where`, the byte offset when there is one, and
 * the problem: not JSON, no layers array, no model layer, a digest that is
 * not sha256: and 64 lower-case hex digits. Fields are read by type: one
 * missing, null or of another type is absent. Past GGFS_OLLAMA_LAYERS_MAX
 * layers (the model's aside) the rest is left out, with a log line. Free
 * with _free. */
bool ggfs_ollama_manifest_parse(const char *json, size_t len, const char *where, ggfs_ollama_manifest *out,
                                char *msg, size_t msgcap);
void ggfs_ollama_manifest_free(ggfs_ollama_manifest *m);

/* A file of layers/: its name and bytes. */
typedef struct ggfs_ollama_file {
    char name[24];
    char *data;
    size_t len;
} ggfs_ollama_file;

/* The layers shown as a model's tree of their own, in layers/. */
enum { GGFS_OLLAMA_PROJECTOR_TREE, GGFS_OLLAMA_ADAPTER_TREE, GGFS_OLLAMA_TREES };

typedef struct ggfs_ollama_layers {
    char *modelfile; // as `ollama show --modelfile` writes it, NUL-terminated
    size_t modelfile_len;
    ggfs_ollama_file *files;
    size_t n_files;
    char tree_hex[GGFS_OLLAMA_TREES][GGFS_OLLAMA_HEX + 1]; // the first projector's and
                     // adapter's digests, "" when the manifest has none
} ggfs_ollama_layers;

/* Reads a small layer whole: 0, with *data malloc'd, *len its size;
 * EFBIG when it holds more than cap bytes; another errno with why filled. */
typedef int ggfs_ollama_read(void *ctx, const ggfs_ollama_layer *layer, size_t cap, char **data, size_t *len,
                             char *why, size_t why_size);

/* Where the layers' bytes come from: read reads a small layer whole (from
 * several threads at once); path writes where a blob is (a local store's
 * path, a registry's blob URL) for the Modelfile's ADAPTER and a
 * projector's FROM, false when it has none. Every store gives both: one
 * Modelfile writer for every store. */
typedef struct ggfs_ollama_store {
    ggfs_ollama_read *read;
    bool (*path)(void *ctx, const char *hex, char *out, size_t cap);
    void *ctx;
} ggfs_ollama_store;

/* Reads the manifest's small layers, GGFS_OLLAMA_READ_THREADS at once (a
 * layer over GGFS_OLLAMA_SMALL_MAX, or
 * past GGFS_OLLAMA_SMALL_TOTAL with those before it, is left out with a
 * log line: a manifest of thousands of layers takes no more memory than
 * that) and makes the Modelfile, whose FROM is `from`
 * and whose comment names `short_name`. NULL with msg filled when a layer
 * cannot be read or memory runs out. Free with _free. */
ggfs_ollama_layers *ggfs_ollama_layers_new(const ggfs_ollama_manifest *m, const char *where, const char *from,
                                           const char *short_name, const ggfs_ollama_store *store, char *msg,
                                           size_t msgcap);
void ggfs_ollama_layers_free(ggfs_ollama_layers *l);

#endif
