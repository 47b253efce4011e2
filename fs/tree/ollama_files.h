/*
 * What the tree of an Ollama model adds beside its own files: `Modelfile`
 * at the root and `layers/` with one file per small layer
 * (model/ollama_layers.h). Their inode numbers: the root's fixed ones for
 * Modelfile and layers/, and layers/'s files from GGFS_INO_FIRST_LAYER on,
 * far past any tensor's, within the 40 bits a catalog gives each model.
 */
#ifndef GGFS_TREE_OLLAMA_FILES_H
#define GGFS_TREE_OLLAMA_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/ollama_layers.h"
#include "tree/tree.h"

#define GGFS_INO_FIRST_LAYER (UINT64_C(1) << 39)

/* Whether node is one of the Ollama files, and whether this tree has it. */
bool ggfs_ollama_node_exists(const ggfs_tree *tree, ggfs_node node);

/* The file of layers/ called name; GGFS_NONE when none. */
ggfs_node ggfs_ollama_lookup(const ggfs_tree *tree, const char *name);

/* Entry i of layers/: false past the last. */
bool ggfs_ollama_dir_entry(const ggfs_tree *tree, uint64_t i, char *name, size_t cap, ggfs_node *node);

/* The bytes of Modelfile or of a file of layers/, held by the tree; false
 * when node is neither. */
bool ggfs_ollama_bytes(const ggfs_tree *tree, ggfs_node node, const char **data, size_t *len);

/* The node of a (local) inode number at or past GGFS_INO_FIRST_LAYER. */
ggfs_node ggfs_ollama_node_of(const ggfs_tree *tree, uint64_t local_ino);

#endif
