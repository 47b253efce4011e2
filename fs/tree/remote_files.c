/*
 * The remote model's files and prefetch, over its shards' sources.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/remote_engine.h"
#include "source/remote_status.h"
#include "tree/page_push.h"
#include "tree/prefetch_trigger.h"
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
    // A last block with `verify`'s progress once it started: the bytes
    // digested of all the shards'.
    const uint64_t done = atomic_load_explicit(&tree->verify.done_bytes, memory_order_relaxed);
    if (!text || !done)
        return text;
    char line[96];
    const int n = snprintf(line, sizeof line, "\nverify: %" PRIu64 " of %" PRIu64 " bytes\n", done,
                           tree->verify.total_bytes);
    char *grown = realloc(text, *len + (size_t)n + 1);
    if (!grown)
        return text;
    memcpy(grown + *len, line, (size_t)n + 1);
    *len += (size_t)n;
    return grown;
}

/* Whether the mount asked for a prefetch: from mount on, or once a load
 * of the model lets it go. */
static bool prefetch_asked(const ggfs_tree *tree)
{
    return ggfs_remote_engine_prefetches(tree->remote) || ggfs_remote_engine_prefetch_after(tree->remote, true) > 0;
}

/* Whether model.gguf is the source's bytes as they are, at the same
 * offsets (a split set's model.gguf lays them out anew; an edited one
 * changes). */
static bool gguf_is_the_source(const ggfs_tree *tree)
{
    return tree->model->n_shards == 1 && !ggfs_tree_editable(tree);
}

void ggfs_tree_prefetch_prepare(ggfs_tree *tree, const char *gguf_path)
{
    if (!tree->remote || !prefetch_asked(tree) || tree->page_push)
        return;
    // The source's bytes can go to model.gguf's pages.
    ggfs_source *only = tree->model->shards[0].source;
    if (gguf_is_the_source(tree) && only->ops->lend_held)
        tree->page_push = ggfs_page_push_new(GGFS_INO_MODEL_GGUF + tree->ino_base, gguf_path, only);
}

static void hold_prefetch(void *arg, bool held, uint64_t at)
{
    ggfs_tree *tree = arg;
    // Otherwise the pass begins at the start.
    if (!held && gguf_is_the_source(tree))
        ggfs_remote_engine_prefetch_begin_at(tree->remote, tree->prefetch, 0, at);
    ggfs_remote_engine_prefetch_hold(tree->remote, tree->prefetch, held);
}

void ggfs_tree_prefetch_start(ggfs_tree *tree, struct fuse_session *se)
{
    if (!tree->remote || tree->prefetch)
        return;
    // Without -o prefetch, a prefetch that would keep every byte waits,
    // held, for a load of the model to let it go.
    const bool at_mount = ggfs_remote_engine_prefetches(tree->remote);
    const uint64_t after = ggfs_remote_engine_prefetch_after(tree->remote, tree->page_push != NULL);
    if (!at_mount && after == 0)
        return;
    if (tree->page_push)
        ggfs_page_push_start(tree->page_push, se);
    ggfs_source **sources = sources_of(tree->model);
    if (sources)
        tree->prefetch = ggfs_remote_engine_prefetch_start(tree->remote, sources, tree->model->n_shards,
                                                           tree->page_push ? ggfs_page_push_sink : NULL,
                                                           tree->page_push, !at_mount);
    free(sources);
    if (tree->prefetch && !at_mount) {
        tree->prefetch_trigger = ggfs_prefetch_trigger_new(after, hold_prefetch, tree);
        if (!tree->prefetch_trigger) {
            ggfs_remote_engine_prefetch_stop(tree->remote, tree->prefetch);
            tree->prefetch = NULL;
        }
    }
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
    ggfs_prefetch_trigger_off(tree->prefetch_trigger);
    if (tree->remote)
        ggfs_remote_engine_prefetch_stop(tree->remote, tree->prefetch);
    tree->prefetch = NULL;
    // Both kept (stopped, off) while loop threads may still tell them of
    // lookups and reads: the tree frees them (ggfs_tree_destroy).
}
