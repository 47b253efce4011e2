/*
 * The table of stores (store.h): one row per kind of directory slot, and
 * what the rows share.
 */
#include <stddef.h>
#include <stdio.h>

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

const ggfs_store *ggfs_store_of(ggfs_cat_kind kind)
{
    return (size_t)kind < sizeof rows / sizeof rows[0] ? rows[kind] : NULL;
}
