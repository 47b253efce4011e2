/*
 * The table of stores (store.h): one row per kind of directory slot.
 */
#include <stddef.h>

#include "catalog/store.h"

static const ggfs_store *const rows[] = {
    [GGFS_CAT_DIR] = &ggfs_store_folder,
    [GGFS_CAT_OLLAMA] = &ggfs_store_ollama_view,
    [GGFS_CAT_HF] = &ggfs_store_hf_view,
    [GGFS_CAT_MODEL] = NULL, // no directory of models' own: its tree is the model's
};

const ggfs_store *ggfs_store_of(ggfs_cat_kind kind)
{
    return (size_t)kind < sizeof rows / sizeof rows[0] ? rows[kind] : NULL;
}
