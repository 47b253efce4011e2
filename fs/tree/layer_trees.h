/*
 * An Ollama model's projector and adapter layers (multimodal projector and
 * LoRA GGUF files) as trees of their own, in its layers/: each a model's
 * tree (tree.h) numbered from its base (ollama_files.h), sharing the loop
 * threads' buffers, the remote engine and the cancel of the tree it is in.
 * Every operation of the tree first finds which tree an inode is of.
 */
#ifndef GGFS_TREE_LAYER_TREES_H
#define GGFS_TREE_LAYER_TREES_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "tree/tree.h"

/* The tree inode ino is of: tree itself, or one of its layer trees. */
ggfs_tree *ggfs_tree_route(ggfs_tree *tree, uint64_t ino);

/* Makes model the layer tree k of tree (0 projector, 1 adapter), after
 * tree's remote engine, remote reads and cancel are set. The tree owns
 * model from then on, whatever the outcome; false when out of memory. */
bool ggfs_tree_add_layer_tree(ggfs_tree *tree, int k, ggfs_model *model);

#endif
