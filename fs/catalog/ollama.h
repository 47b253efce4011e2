/*
 * An Ollama store's models, named as `ollama list` names them. A store
 * (~/.ollama/models, /usr/share/ollama/.ollama/models) holds
 *
 *   manifests/REGISTRY/NAMESPACE/NAME/TAG   JSON (a Docker image manifest,
 *                                           schemaVersion 2) whose layers[]
 *                                           have a mediaType and a digest
 *   blobs/sha256-HEX                        every layer, by its digest
 *
 * and the layer of mediaType application/vnd.ollama.image.model is the
 * GGUF file. The catalog shows the store's models in ollama/ beside
 * manifests/ and blobs/:
 *
 *   ollama/NAME:TAG                         registry.ollama.ai/library
 *   ollama/NAMESPACE/NAME:TAG               other namespaces of registry.ollama.ai
 *   ollama/REGISTRY/NAMESPACE/NAME:TAG      other registries (hf.co/ORG/REPO:TAG)
 *
 * Manifests are read with json-c. A manifest that is not JSON, names no
 * model layer, or whose digest is not sha256 and 64 hex digits (so never a
 * path) is listed as a model whose error says so; blobs are found only
 * inside the folder.
 */
#ifndef GGFS_CATALOG_OLLAMA_H
#define GGFS_CATALOG_OLLAMA_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog/beneath.h"
#include "catalog/scan.h"

#define GGFS_OLLAMA_REGISTRY "registry.ollama.ai"
#define GGFS_OLLAMA_NAMESPACE "library"
#define GGFS_OLLAMA_MODEL_LAYER "application/vnd.ollama.image.model"
#define GGFS_OLLAMA_MAX_MANIFEST (1u << 20) // bytes; real ones are about 1 KiB

/* Lists the directory `place` of the view of the store at `store` (both
 * relative to the folder; place "" is ollama/ itself, then "NAMESPACE",
 * "REGISTRY" or "REGISTRY/NAMESPACE"). Directories are GGFS_SCAN_OLLAMA
 * entries (path the store, real their place); models are GGFS_SCAN_MODEL
 * entries whose path and real name the blob, or, with error set, the
 * manifest. Allocates; free with ggfs_scan_free. Returns 0 or an errno. */
int ggfs_ollama_list(const ggfs_folder *f, const char *store, const char *place, ggfs_scan *out);

/* Reads the manifest at `manifest` (relative to the folder) and writes the
 * path of its model layer's blob, store/blobs/sha256-HEX, into blob (cap
 * bytes). On failure returns false and writes one line into msg naming
 * the manifest, the byte offset when there is one, and the problem. */
bool ggfs_ollama_manifest_blob(const ggfs_folder *f, const char *store, const char *manifest,
                               char *blob, size_t cap, char *msg, size_t msgcap);

#endif
