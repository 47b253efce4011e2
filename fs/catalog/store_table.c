/*
 * The table of stores (store.h): one row per kind of directory slot, and
 * what the rows share.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "source/published.h"

#include "catalog/store.h"

static const ggfs_store *const rows[] = {
    [GGFS_CAT_DIR] = &ggfs_store_folder,
    [GGFS_CAT_OLLAMA] = &ggfs_store_ollama_view,
    [GGFS_CAT_HF] = &ggfs_store_hf_view,
    [GGFS_CAT_HF_REPO] = &ggfs_store_hf_repo,
    [GGFS_CAT_HF_AUTHOR] = &ggfs_store_hf_author,
    [GGFS_CAT_S3] = &ggfs_store_s3,
    [GGFS_CAT_MODEL] = NULL, // no directory of models' own: its tree is the model's
};

void ggfs_store_model_error(const char *where, const ggp_error *e, char *msg, size_t cap)
{
    if (e->code == GGP_ERR_IO && e->offset == 0)
        snprintf(msg, cap, "%s: %s", where, e->msg);
    else
        snprintf(msg, cap, "%s: offset 0x%llx: %s", where, (unsigned long long)e->offset, e->msg);
}

bool ggfs_store_take_published(const ggfs_store *store, const ggfs_store_env *env, const ggfs_store_model *m,
                               ggfs_model *model, char *msg, size_t cap)
{
    if (!store->published)
        return true;
    char said_by[64], why[256];
    snprintf(said_by, sizeof said_by, "the %s's listing", store->name);
    for (uint32_t k = 0; k < model->n_shards; k++) {
        ggfs_source *src = model->shards[k].source;
        ggfs_published listed;
        memset(&listed, 0, sizeof listed);
        if (!store->published(env, m, src->name, &listed))
            continue;
        if (!ggfs_published_take(&src->published, src->size, &listed, said_by, why, sizeof why)) {
            snprintf(msg, cap, "%s: %s", src->name, why); // why says the offset
            return false;
        }
    }
    return true;
}

const ggfs_store *ggfs_store_of(ggfs_cat_kind kind)
{
    return (size_t)kind < sizeof rows / sizeof rows[0] ? rows[kind] : NULL;
}
