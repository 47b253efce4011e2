/*
 * Telling the kernel about the files an edit changed (see invalidate.h).
 */
#include <stdlib.h>
#include <string.h>

#include "tree/invalidate.h"
#include "tree/names.h"
#include "util/workers.h"

#define MAX_INODES 4
#define MAX_ENTRIES 16

typedef struct stale_entry {
    uint64_t parent;
    char name[GGFS_NAME_MAX + 1];
} stale_entry;

typedef struct drop_job {
    struct fuse_session *session;
    uint64_t inos[MAX_INODES];    // pages to drop
    size_t n_inos;
    stale_entry entries[MAX_ENTRIES]; // entries to drop
    size_t n_entries;
} drop_job;

static void run_drop(void *arg, bool cancelled)
{
    drop_job *d = arg;
    for (size_t i = 0; !cancelled && i < d->n_inos; i++)
        fuse_lowlevel_notify_inval_inode(d->session, d->inos[i], 0, 0);
    for (size_t i = 0; !cancelled && i < d->n_entries; i++)
        fuse_lowlevel_notify_inval_entry(d->session, d->entries[i].parent, d->entries[i].name,
                                         strlen(d->entries[i].name));
    free(d);
}

/* The entries whose versions the edit made old: the files of the root and
 * of tokenizer/ that follow the keys, tokenizer/ itself (there only with
 * a vocabulary), and the files of metadata/ that are keys of view. */
static void add_stale_entries(const ggfs_tree *tree, const ggfs_view *view, const uint64_t *ids, size_t n_ids,
                              drop_job *d)
{
    static const ggfs_kind dirs[] = {GGFS_ROOT, GGFS_TOKENIZER_DIR};
    const uint64_t metadata = ggfs_ino_of(tree, ggfs_node_at(GGFS_METADATA_DIR, 0));
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        const uint64_t parent = ggfs_ino_of(tree, ggfs_node_at(dirs[k], 0));
        for (const ggfs_row *r = ggfs_fixed_rows(dirs[k]); r->name && d->n_entries < MAX_ENTRIES; r++) {
            if (!ggfs_kind_is(r->kind, GGFS_K_FOLLOWS_KEYS) && r->kind != GGFS_TOKENIZER_DIR &&
                r->kind != GGFS_MEMORY_DIR && r->kind != GGFS_OFFLOAD_DIR)
                continue;
            stale_entry *s = &d->entries[d->n_entries++];
            s->parent = parent;
            strcpy(s->name, r->name);
        }
    }
    for (size_t i = 0; i < n_ids && d->n_entries < MAX_ENTRIES; i++) {
        const uint64_t index = ids[i] == UINT64_MAX ? UINT64_MAX : ggfs_view_index_of(view, ids[i]);
        if (index == UINT64_MAX)
            continue;
        const ggp_str key = ggp_kv_at(view->keys, index)->key;
        stale_entry *s = &d->entries[d->n_entries++];
        s->parent = metadata;
        ggfs_name_encode(key.ptr, key.len, s->name);
    }
}

void ggfs_invalidate_edit(ggfs_model_mount *mount, uint64_t ino, const uint64_t *ids, size_t n_ids,
                          bool keys_changed)
{
    if (!mount->session)
        return;
    ggfs_tree *tree = mount->tree;
    drop_job *d = calloc(1, sizeof *d);
    uint64_t inos[MAX_INODES];
    size_t n = 0;
    if (ino)
        inos[n++] = ino;
    for (size_t i = 0; i < n_ids && n < MAX_INODES; i++) {
        ggfs_scratch_info scratch;
        if (ids[i] != UINT64_MAX && ggfs_edits_scratch_of(tree->edits, ids[i], &scratch))
            inos[n++] = ggfs_ino_of(tree, ggfs_kv_node(ids[i]));
    }
    // Attributes only (offset -1): no page is touched, nothing waits.
    for (size_t i = 0; i < n; i++)
        fuse_lowlevel_notify_inval_inode(mount->session, inos[i], -1, 0);
    if (!d)
        return;
    d->session = mount->session;
    d->n_inos = n;
    memcpy(d->inos, inos, n * sizeof *inos);
    if (keys_changed) {
        ggfs_view *view = ggfs_tree_view(tree);
        add_stale_entries(tree, view, ids, n_ids, d);
        ggfs_view_put(view);
    }
    pthread_mutex_lock(&mount->invalidator_lock);
    const bool queued = mount->invalidator && ggfs_workers_submit(mount->invalidator, run_drop, d);
    pthread_mutex_unlock(&mount->invalidator_lock);
    if (!queued)
        free(d); // pages stay until the next open drops them
}

void ggfs_invalidate_stop(ggfs_model_mount *mount)
{
    pthread_mutex_lock(&mount->invalidator_lock);
    struct ggfs_workers *w = mount->invalidator;
    mount->invalidator = NULL;
    pthread_mutex_unlock(&mount->invalidator_lock);
    ggfs_workers_free(w); // waits for a drop under way: the loop still answers
}
