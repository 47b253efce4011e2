/*
 * A catalog: every model under a folder, mounted as one tree that mirrors
 * the folder (SPEC "Folders of models"). The catalog hands out entries
 * (directories, models, the ollama/ view) by slot and models by their
 * tree, opening them on first use and keeping at most max_open of them
 * open (lru.h); fs/catalog_ops.c maps FUSE inodes onto it.
 *
 * An entry's slot is stable for the life of the mount: the same name in
 * the same directory, naming the same file (device, inode, size, mtime),
 * keeps its slot however often its model is closed and opened again. A
 * file changed or replaced gets a new slot, so nothing the kernel cached
 * about the old one is served for the new. An inode is
 *
 *   slot << GGFS_SLOT_SHIFT | the inode inside the entry
 *
 * where the entry's own directory is 1 (slot 0 is the folder: inode 1),
 * a model's files are its tree's inodes, and a model that cannot be
 * opened has one file, `error`, at GGFS_ERROR_INO.
 */
#ifndef GGFS_CATALOG_H
#define GGFS_CATALOG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tree.h"

#define GGFS_SLOT_SHIFT 40
#define GGFS_LOCAL_MASK ((UINT64_C(1) << GGFS_SLOT_SHIFT) - 1)
#define GGFS_ERROR_INO GGFS_LOCAL_MASK // no tree numbers this far
#define GGFS_DEFAULT_MAX_OPEN 16
#define GGFS_ERROR_MAX (PATH_MAX + 1024) // bytes of an error file: a path, a message

typedef struct ggfs_catalog ggfs_catalog;

typedef enum ggfs_cat_kind {
    GGFS_CAT_DIR,    // a directory of the folder
    GGFS_CAT_OLLAMA, // ollama/ or a directory in it
    GGFS_CAT_MODEL,  // a model's directory
} ggfs_cat_kind;

/* What the FUSE side needs of one entry: a copy, valid without locks. */
typedef struct ggfs_cat_entry {
    uint64_t slot;
    ggfs_cat_kind kind;
    struct stat st;   // of what it names (the directory, the model's file)
    uint32_t shards;  // split sets: the N of -of-N
} ggfs_cat_entry;

/* One entry of a directory listing. */
typedef struct ggfs_cat_item {
    char *name;
    ggfs_cat_entry entry;
} ggfs_cat_item;

typedef struct ggfs_cat_listing {
    ggfs_cat_item *items;
    size_t count;
} ggfs_cat_listing;

/* Opens the folder dir as a catalog (mountpoint may be inside it: it is
 * never listed). Reads nothing but the folder's own stat. Returns NULL
 * with *err set (an errno) on failure. */
ggfs_catalog *ggfs_catalog_open(const char *dir, const char *mountpoint, unsigned max_open, int *err);

/* Closes every model and frees the catalog; no model may be in use. */
void ggfs_catalog_close(ggfs_catalog *cat);

/* The entry in slot; false when there is no such slot. */
bool ggfs_catalog_entry(ggfs_catalog *cat, uint64_t slot, ggfs_cat_entry *out);

/* The entry called name in directory `dir` (a slot of kind DIR or OLLAMA).
 * Returns 0, ENOENT, ENOTDIR, or the errno of reading the directory. The
 * directory's listing is read again when over a second old. */
int ggfs_catalog_lookup(ggfs_catalog *cat, uint64_t dir, const char *name, ggfs_cat_entry *out);

/* Every entry of directory `dir`, read afresh. Allocates: free with
 * ggfs_cat_listing_free. Returns 0 or an errno as ggfs_catalog_lookup. */
int ggfs_catalog_list(ggfs_catalog *cat, uint64_t dir, ggfs_cat_listing *out);
void ggfs_cat_listing_free(ggfs_cat_listing *l);

/* The tree of the model in slot, opened if needed, with a reference that
 * ggfs_catalog_put gives back. NULL with *err set when the model cannot
 * be opened: EIO when it failed (ggfs_catalog_error says why), ESTALE when
 * the file is no longer the one the slot was made for. */
ggfs_tree *ggfs_catalog_get(ggfs_catalog *cat, uint64_t slot, int *err);
void ggfs_catalog_put(ggfs_catalog *cat, uint64_t slot, ggfs_tree *tree);

/* Why the model in slot cannot be opened, one line ending in "\n", into
 * buf (cap bytes); false when it has not failed (it may not have been
 * tried: ggfs_catalog_get tries). */
bool ggfs_catalog_error(ggfs_catalog *cat, uint64_t slot, char *buf, size_t cap);

/* How many models are open now. */
size_t ggfs_catalog_open_models(ggfs_catalog *cat);

/* The number of slots handed out so far. */
uint64_t ggfs_catalog_slots(ggfs_catalog *cat);

#endif
