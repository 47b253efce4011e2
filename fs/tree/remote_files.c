/*
 * The remote model's files and prefetch, over its shards' sources.
 */
#include <stdlib.h>

#include "source/remote_engine.h"
#include "source/remote_status.h"
#include "tree/page_push.h"
#include "tree/remote_files.h"
#include "util/log.h"

/* The model's sources in shard order, malloc'd; NULL when out of memory. */
static ggfs_source **sources_of(const ggfs_model *m)
{
    ggfs_source **s = malloc((m->n_shards ? m->n_shards : 1) * sizeof *s);
    if (s)
        for (uint32_t i = 0; i < m->n_shards; i++)
            s[i] = m->shards[i].source;
    return s;
}

char *ggfs_tree_remote_text(ggfs_tree *tree, size_t *len)
{
    ggfs_source **sources = sources_of(tree->model);
    char *text = sources ? ggfs_remote_status_text(sources, tree->model->n_shards, len) : NULL;
    free(sources);
    return text;
}

void ggfs_tree_prefetch_prepare(ggfs_tree *tree, const char *gguf_path)
{
    if (!tree->remote || !ggfs_remote_engine_prefetches(tree->remote) || tree->page_push)
        return;
    // model.gguf is the source's bytes as they are: they can go to its
    // pages. (A split set's model.gguf lays them out anew; an edited one
    // changes.)
    ggfs_source *only = tree->model->shards[0].source;
    if (tree->model->n_shards == 1 && !ggfs_tree_editable(tree) && only->ops->copy_held)
        tree->page_push = ggfs_page_push_new(GGFS_INO_MODEL_GGUF + tree->ino_base, gguf_path, only);
}

void ggfs_tree_prefetch_start(ggfs_tree *tree, struct fuse_session *se)
{
    if (!tree->remote || !ggfs_remote_engine_prefetches(tree->remote) || tree->prefetch)
        return;
    if (tree->page_push)
        ggfs_page_push_start(tree->page_push, se);
    ggfs_source **sources = sources_of(tree->model);
    if (sources)
        tree->prefetch = ggfs_remote_engine_prefetch_start(tree->remote, sources, tree->model->n_shards,
                                                           tree->page_push ? ggfs_page_push_sink : NULL,
                                                           tree->page_push);
    free(sources);
    if (!tree->prefetch)
        ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s: cannot start the prefetch (out of memory); reads fetch as without it\n",
                 tree->model->shards[0].source->name);
}

void ggfs_tree_prefetch_quiet(ggfs_tree *tree)
{
    ggfs_page_push_stop(tree->page_push);
}

void ggfs_tree_prefetch_stop(ggfs_tree *tree)
{
    ggfs_page_push_stop(tree->page_push);
    if (tree->remote)
        ggfs_remote_engine_prefetch_stop(tree->remote, tree->prefetch);
    tree->prefetch = NULL;
    // Kept (stopped) while loop threads may still tell it of lookups: the
    // tree frees it (ggfs_tree_destroy).
}
