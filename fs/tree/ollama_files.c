/*
 * The Modelfile and layers/ of an Ollama model's tree (ollama_files.h).
 */
#include <stdio.h>
#include <string.h>

#include "tree/ollama_files.h"

bool ggfs_ollama_node_exists(const ggfs_tree *tree, ggfs_node node)
{
    const ggfs_ollama_layers *l = tree->ollama;
    switch (node.kind) {
    case GGFS_MODELFILE:
    case GGFS_LAYERS_DIR:
        return l != NULL;
    case GGFS_LAYER:
        return l && node.index < l->n_files;
    default:
        return false;
    }
}

ggfs_node ggfs_ollama_lookup(const ggfs_tree *tree, const char *name)
{
    for (size_t i = 0; tree->ollama && i < tree->ollama->n_files; i++)
        if (strcmp(tree->ollama->files[i].name, name) == 0)
            return ggfs_node_at(GGFS_LAYER, i);
    return ggfs_node_at(GGFS_NONE, 0);
}

bool ggfs_ollama_dir_entry(const ggfs_tree *tree, uint64_t i, char *name, size_t cap, ggfs_node *node)
{
    if (!tree->ollama || i >= tree->ollama->n_files)
        return false;
    snprintf(name, cap, "%s", tree->ollama->files[i].name);
    *node = ggfs_node_at(GGFS_LAYER, i);
    return true;
}

bool ggfs_ollama_bytes(const ggfs_tree *tree, ggfs_node node, const char **data, size_t *len)
{
    if (!ggfs_ollama_node_exists(tree, node) || node.kind == GGFS_LAYERS_DIR)
        return false;
    if (node.kind == GGFS_MODELFILE) {
        *data = tree->ollama->modelfile;
        *len = tree->ollama->modelfile_len;
    } else {
        *data = tree->ollama->files[node.index].data;
        *len = tree->ollama->files[node.index].len;
    }
    return true;
}

ggfs_node ggfs_ollama_node_of(const ggfs_tree *tree, uint64_t local_ino)
{
    const ggfs_node node = ggfs_node_at(GGFS_LAYER, local_ino - GGFS_INO_FIRST_LAYER);
    return ggfs_ollama_node_exists(tree, node) ? node : ggfs_node_at(GGFS_NONE, 0);
}
