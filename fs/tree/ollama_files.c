/*
 * The Modelfile and layers/ of an Ollama model's tree (ollama_files.h).
 */
#include <string.h>

#include "tree/ollama_files.h"

const char *const ggfs_layer_tree_names[2] = {"projector", "adapter"};

bool ggfs_ollama_has(const ggfs_ollama_layers *l, ggfs_kind kind, uint64_t index)
{
    switch (kind) {
    case GGFS_MODELFILE:
    case GGFS_LAYERS_DIR:
        return l != NULL;
    case GGFS_LAYER:
        return l && index < l->n_files;
    default:
        return false;
    }
}

uint64_t ggfs_ollama_find(const ggfs_ollama_layers *l, const char *name)
{
    for (size_t i = 0; l && i < l->n_files; i++)
        if (strcmp(l->files[i].name, name) == 0)
            return i;
    return UINT64_MAX;
}

const char *ggfs_ollama_file_name(const ggfs_ollama_layers *l, uint64_t index)
{
    return ggfs_ollama_has(l, GGFS_LAYER, index) ? l->files[index].name : NULL;
}

bool ggfs_ollama_bytes(const ggfs_ollama_layers *l, ggfs_kind kind, uint64_t index, const char **data, size_t *len)
{
    if (kind == GGFS_MODELFILE && l) {
        *data = l->modelfile;
        *len = l->modelfile_len;
        return true;
    }
    if (kind != GGFS_LAYER || !ggfs_ollama_has(l, kind, index))
        return false;
    *data = l->files[index].data;
    *len = l->files[index].len;
    return true;
}
