/*
 * Entries of one model's tree, and the versions lookups find (see
 * entry.h).
 */
#include <string.h>

#include "tree/affinity.h"
#include "tree/attr.h"
#include "tree/entry.h"
#include "tree/shape.h"

static bool comes_and_goes(ggfs_kind kind)
{
    return kind == GGFS_TOKENIZER_DIR || kind == GGFS_MEMORY_DIR || kind == GGFS_OFFLOAD_DIR;
}

double ggfs_tree_entry_timeout(const ggfs_tree *tree, ggfs_kind kind)
{
    // A file that follows the keys is looked up at each open, which finds
    // the version meant for the process (a new inode after an edit).
    const bool changes = comes_and_goes(kind) || ggfs_kind_is(kind, GGFS_K_FOLLOWS_KEYS);
    return ggfs_tree_editable(tree) && changes ? 0 : GGFS_CACHE_SECONDS;
}

double ggfs_tree_attr_timeout(const ggfs_tree *tree, ggfs_kind kind)
{
    return ggfs_tree_editable(tree) && kind == GGFS_ROOT ? 0 : GGFS_CACHE_SECONDS;
}

bool ggfs_tree_entry(ggfs_tree *tree, ggfs_view *view, ggfs_node node, struct fuse_entry_param *e)
{
    memset(e, 0, sizeof *e);
    node = ggfs_node_pin(tree, view, node);
    if (!ggfs_tree_hold(tree, node, view, 1))
        return false;
    if (!ggfs_stat(tree, node, &e->attr)) {
        if (node.pinned)
            ggfs_tree_forget(tree, ggfs_ino_of(tree, node), 1);
        return false;
    }
    e->ino = e->attr.st_ino;
    e->attr_timeout = ggfs_tree_attr_timeout(tree, node.kind);
    e->entry_timeout = ggfs_tree_entry_timeout(tree, node.kind);
    return true;
}

/* Whether node is a file of the root that follows the keys (affinity.h). */
static bool loaded_whole(const ggfs_tree *tree, ggfs_node node)
{
    return tree->affinity && node.kind != GGFS_KV && ggfs_kind_is(node.kind, GGFS_K_FOLLOWS_KEYS);
}

/* The process of req's thread. */
static pid_t process_of(fuse_req_t req)
{
    return ggfs_affinity_process(fuse_req_ctx(req)->pid);
}

ggfs_view *ggfs_tree_lookup_view(ggfs_tree *tree, fuse_req_t req, ggfs_node node)
{
    ggfs_view *view = loaded_whole(tree, node) ? ggfs_affinity_view(tree->affinity, process_of(req)) : NULL;
    return view ? view : ggfs_tree_view(tree);
}

void ggfs_tree_opened_by(ggfs_tree *tree, fuse_req_t req, ggfs_node node)
{
    if (!node.pinned || !loaded_whole(tree, node))
        return;
    ggfs_view *view = ggfs_node_view(tree, node);
    if (view)
        ggfs_affinity_opened(tree->affinity, process_of(req), view);
    ggfs_view_put(view);
}

void ggfs_tree_edited_by(ggfs_tree *tree, fuse_req_t req)
{
    if (tree->affinity)
        ggfs_affinity_forget(tree->affinity, process_of(req));
}
