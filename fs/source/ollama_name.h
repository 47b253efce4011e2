/*
 * `ollama://` names: a model in an Ollama registry (an OCI distribution
 * registry), as `ollama pull` names it.
 *
 *   ollama://[HOST/][NAMESPACE/]NAME[:TAG]     over HTTPS
 *   ollama+http://HOST/[NAMESPACE/]NAME[:TAG]  over plain HTTP (a local one)
 *
 * HOST defaults to registry.ollama.ai, NAMESPACE to library, TAG to
 * latest; with two parts, the first is a HOST when it holds a dot or a
 * colon (hf.co/ORG/REPO:QUANT is HOST hf.co, NAMESPACE ORG), as Ollama
 * reads names. Every part is checked: letters, digits, `.`, `_`, `-` (and
 * a HOST's `:PORT`), never `.` or `..` alone, so that no part reaches
 * another path of the server.
 */
#ifndef GGFS_SOURCE_OLLAMA_NAME_H
#define GGFS_SOURCE_OLLAMA_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define GGFS_OLLAMA_DEFAULT_HOST "registry.ollama.ai"
#define GGFS_OLLAMA_DEFAULT_NAMESPACE "library"
#define GGFS_OLLAMA_DEFAULT_TAG "latest"
#define GGFS_OLLAMA_PART_MAX 128

typedef struct ggfs_ollama_name {
    bool plain_http;                           // ollama+http://
    char host[GGFS_OLLAMA_PART_MAX + 1];       // with :PORT when given
    char space[GGFS_OLLAMA_PART_MAX + 1];      // NAMESPACE
    char name[GGFS_OLLAMA_PART_MAX + 1];
    char tag[GGFS_OLLAMA_PART_MAX + 1];
} ggfs_ollama_name;

/* Whether s begins with an ollama scheme. */
bool ggfs_ollama_is_name(const char *s);

/* Parses s; false with one line in why when it is not such a name. */
bool ggfs_ollama_name_parse(const char *s, ggfs_ollama_name *out, char *why, size_t why_size);

/* The registry's URLs: the manifest of the tag, and the blob of a digest's
 * hex. False when they do not fit cap. */
bool ggfs_ollama_manifest_url(const ggfs_ollama_name *n, char *url, size_t cap);
bool ggfs_ollama_blob_url(const ggfs_ollama_name *n, const char *hex, char *url, size_t cap);

/* HOST/NAMESPACE/NAME:TAG, as a Modelfile's FROM names a registry model. */
bool ggfs_ollama_full_name(const ggfs_ollama_name *n, char *out, size_t cap);

#endif
