/*
 * What the tree of an Ollama model adds beside its own files: `Modelfile`
 * at the root and `layers/` with one file per small layer
 * (model/ollama_layers.h), answered from the layers the tree holds
 * (tree.h's `ollama`). Their inode numbers: the root's fixed ones for
 * Modelfile and layers/, and layers/'s files from GGFS_INO_FIRST_LAYER on,
 * far past any tensor's, within the 40 bits a catalog gives each model.
 */
#ifndef GGFS_TREE_OLLAMA_FILES_H
#define GGFS_TREE_OLLAMA_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/ollama_layers.h"
#include "tree/shape.h"

#define GGFS_INO_FIRST_LAYER (UINT64_C(1) << 39)

/* layers/projector (k 0) and layers/adapter (k 1) are trees of their own,
 * whose inode numbers start at their base, this past their tree's own
 * (ino_base): [2^37, 2^38) and [2^38, 2^39), past any tensor's. */
#define GGFS_LAYER_TREE_SHIFT 37
#define GGFS_INO_LAYER_TREE(k) ((UINT64_C(1) + (uint64_t)(k)) << GGFS_LAYER_TREE_SHIFT)

/* The names of the layer trees in layers/, by k. */
extern const char *const ggfs_layer_tree_names[2];

/* Whether a tree with layers l (NULL: none) has the node of this kind
 * and index: Modelfile, layers/, or file `index` of layers/. */
bool ggfs_ollama_has(const ggfs_ollama_layers *l, ggfs_kind kind, uint64_t index);

/* The index of the file of layers/ called name; UINT64_MAX when none. */
uint64_t ggfs_ollama_find(const ggfs_ollama_layers *l, const char *name);

/* The name of file `index` of layers/; NULL past the last. */
const char *ggfs_ollama_file_name(const ggfs_ollama_layers *l, uint64_t index);

/* The bytes of Modelfile or of file `index` of layers/, held by l; false
 * when there is no such file. */
bool ggfs_ollama_bytes(const ggfs_ollama_layers *l, ggfs_kind kind, uint64_t index, const char **data, size_t *len);

#endif
