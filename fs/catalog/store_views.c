/*
 * The stores of the views a folder mount adds over local stores (store.h):
 * ollama/ over an Ollama store (ollama.h), hf/ over a Hugging Face hub
 * cache (hf_cache.h). A directory of a view is a place in it, named by
 * the store's directory (path) and the place (real); its models are files
 * of the folder, opened as the folder's are.
 */
#include "catalog/hf_cache.h"
#include "catalog/ollama.h"
#include "catalog/store.h"

static int list_ollama(const ggfs_store_env *env, const ggfs_store_dir *dir, ggfs_scan *out)
{
    return ggfs_ollama_list(env->folder, dir->path, dir->real, out);
}

static int list_hf(const ggfs_store_env *env, const ggfs_store_dir *dir, ggfs_scan *out)
{
    return ggfs_hf_list(env->folder, env->hf_index, dir->path, dir->real, dir->ancestors, dir->n_ancestors, out);
}

const ggfs_store ggfs_store_ollama_view = {
    .name = "ollama view",
    .life = GGFS_LIFE_TTL,
    .relist_on_opendir = true,
    .ident_by_place = true,
    .list = list_ollama,
    .open_model = ggfs_store_folder_open_model,
};

const ggfs_store ggfs_store_hf_view = {
    .name = "hf view",
    .life = GGFS_LIFE_TTL,
    .relist_on_opendir = true,
    .ident_by_place = true,
    .list = list_hf,
    .open_model = ggfs_store_folder_open_model,
};
