/*
 * Layer trees (layer_trees.h).
 */
#include <stdlib.h>

#include "tree/layer_trees.h"
#include "tree/ollama_files.h"

ggfs_tree *ggfs_tree_route(ggfs_tree *tree, uint64_t ino)
{
    if (!tree->layer_trees[0] && !tree->layer_trees[1])
        return tree;
    if (ino < tree->ino_base || (tree->edits && (ino & GGFS_INO_PINNED)))
        return tree;
    const uint64_t k = ((ino - tree->ino_base) >> GGFS_LAYER_TREE_SHIFT) - 1;
    return k < 2 && tree->layer_trees[k] ? tree->layer_trees[k] : tree;
}

bool ggfs_tree_add_layer_tree(ggfs_tree *tree, int k, ggfs_model *model)
{
    ggfs_tree *sub = malloc(sizeof *sub);
    if (!sub || !ggfs_tree_init_shared(sub, model, tree->scratch, tree->ino_base + GGFS_INO_LAYER_TREE(k))) {
        if (sub)
            ggfs_tree_destroy(sub);
        free(sub);
        ggfs_model_close(model);
        return false;
    }
    sub->remote = tree->remote;
    sub->remote_reads = tree->remote_reads;
    sub->cancel = tree->cancel;
    sub->open_texts = tree->open_texts;
    tree->layer_trees[k] = sub;
    return true;
}
