/*
 * The Ollama layers (model/ollama_layers.h) of a model in the ollama/ view
 * of a local store (catalog/ollama.h): its manifest and small layers read
 * from the store's manifests/ and blobs/ inside the folder, for the
 * Modelfile and layers/ beside the model's tree.
 */
#ifndef GGFS_CATALOG_OLLAMA_LOCAL_H
#define GGFS_CATALOG_OLLAMA_LOCAL_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog/beneath.h"
#include "model/ollama_layers.h"

/* The layers of model `name_tag` (NAME:TAG) listed in the view's place
 * `place` of the store at `store` (both relative to the folder, as
 * ggfs_ollama_list takes them). NULL with one line in msg (naming the
 * manifest, the offset, the problem) when they cannot be read. */
ggfs_ollama_layers *ggfs_ollama_local_layers(const ggfs_folder *f, const char *store, const char *place,
                                             const char *name_tag, char *msg, size_t msgcap);

/* The path of the store's blob of digest hex as the folder's real path
 * and the blob's resolved inside it, for opening; false when it is not
 * there or leads out of the folder. */
bool ggfs_ollama_local_blob(const ggfs_folder *f, const char *store, const char *hex, char *path, size_t cap);

#endif
