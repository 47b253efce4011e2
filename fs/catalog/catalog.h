/*
 * A catalog: every model under a folder, mounted as one tree that mirrors
 * the folder (SPEC "Folders of models"). The catalog hands out entries
 * (directories, models, the ollama/ and hf/ views) by slot and models by
 * their tree, opening them on first use and keeping at most max_open of
 * them open (util/lru.h); ops.c and ops_dirs.c map FUSE inodes onto it.
 *
 * An entry's slot lives while the kernel holds an inode of it (a lookup
 * it has not forgotten), while its model is open, or while a request
 * uses it; then its number may be given to another entry. While it lives,
 * the same name in the same directory, of the same identity (its store
 * says: store.h), keeps its slot however often its model is closed
 * and opened again. A file changed or replaced gets a new slot, so nothing
 * the kernel cached about the old one is served for the new. An inode is
 *
 *   slot << GGFS_SLOT_SHIFT | the inode inside the entry
 *
 * where the entry's own directory is 1 (slot 0 is the folder: inode 1),
 * a model's files are its tree's inodes, and a model that cannot be
 * opened has one file, `error`, at GGFS_ERROR_INO.
 *
 * What the catalog keeps is bounded by what is in use: a directory's
 * listing (one compact block) while it is open or younger than the
 * listing lifetime (-o listing_ttl_s, a second by default),
 * and a slot per entry the kernel holds. The kernel holds what it looked
 * up until memory is short, so the catalog keeps a list of the entries it
 * holds that nothing uses (no model open, no request, no entry below);
 * past GGFS_IDLE_PER_OPEN × max_open of them, the least recently used are
 * handed to ggfs_catalog_next_forgets, for the FUSE side to ask the kernel
 * to forget them.
 */
#ifndef GGFS_CATALOG_CATALOG_H
#define GGFS_CATALOG_CATALOG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "catalog/kind.h"
#include "tree/tree.h"

#define GGFS_SLOT_SHIFT 40
#define GGFS_LOCAL_MASK ((UINT64_C(1) << GGFS_SLOT_SHIFT) - 1)
#define GGFS_ERROR_INO GGFS_LOCAL_MASK // no tree numbers this far
#define GGFS_STATUS_INO (GGFS_LOCAL_MASK - 1) // `remote` at a remote collection's root (slot 0)
#define GGFS_DEFAULT_MAX_OPEN 16
// How long a directory's listing is trusted before it is read again, in
// seconds (-o listing_ttl_s): lookups within it are answered from the
// listing, and the kernel keeps the entries and attributes of the folder's
// mirror as long; so a file added to or removed from the folder shows in
// a lookup after at most this (a listing, opendir, reads afresh always).
#define GGFS_DEFAULT_LISTING_TTL_S 1
#define GGFS_ERROR_MAX (PATH_MAX + 1024) // bytes of an error file: a path, a message
// Entries the kernel may hold that nothing uses, per model open at once:
// an entry costs the daemon about 200 bytes, a model its whole index.
#define GGFS_IDLE_PER_OPEN 64
#define GGFS_NO_SLOT UINT64_MAX
// The inode readdir gives an entry that has no slot (libfuse's own
// FUSE_UNKNOWN_INO): stat gives the real one.
#define GGFS_UNKNOWN_INO UINT64_C(0xffffffff)

typedef struct ggfs_catalog ggfs_catalog;


/* What the FUSE side needs of one entry: a copy, valid without locks. */
typedef struct ggfs_cat_entry {
    uint64_t slot;    // GGFS_NO_SLOT: a listed entry that has none (ggfs_catalog_listed)
    ggfs_cat_kind kind;
    struct stat st;   // of what it names (the directory, the model's file)
    uint32_t shards;  // split sets: the N of -of-N
} ggfs_cat_entry;

/* A directory's entries as read at one time, sorted by name: shared by
 * the directory (for lookups, a second) and the handles that list it. */
typedef struct ggfs_cat_listing ggfs_cat_listing;

/* Opens the folder dir as a catalog (mountpoint may be inside it: it is
 * never listed), trusting a directory's listing for listing_ttl_s seconds
 * (GGFS_DEFAULT_LISTING_TTL_S). Reads nothing but the folder's own stat.
 * Returns NULL with *err set (an errno) on failure. */
ggfs_catalog *ggfs_catalog_open(const char *dir, const char *mountpoint, unsigned max_open, unsigned listing_ttl_s,
                                int *err);

/* Opens a catalog whose root is a directory of a remote store (kind root,
 * store.h), with the store's state root_state (freed with the catalog, by
 * the store's root_free), its models opened through remote. Returns NULL
 * with *err set on failure; root_state is then the caller's still. */
ggfs_catalog *ggfs_catalog_open_store(ggfs_cat_kind root, void *root_state, ggfs_remote_engine *remote,
                                      unsigned max_open, unsigned listing_ttl_s, int *err);

/* The listing lifetime in seconds, for the kernel's entry and attribute
 * timeouts of the catalog's own entries. */
double ggfs_catalog_listing_ttl(const ggfs_catalog *cat);

/* The mount is stopping: requests to servers in flight (a remote store's
 * reads ahead, its models' reads) give up within about a second. Nothing
 * for a folder mount. */
void ggfs_catalog_stop_remote(ggfs_catalog *cat);

/* Closes every model and frees the catalog; no model may be in use. */
void ggfs_catalog_close(ggfs_catalog *cat);

/* The entry in slot; false when there is no such slot. */
bool ggfs_catalog_entry(ggfs_catalog *cat, uint64_t slot, ggfs_cat_entry *out);

/* The entry called name in directory `dir` (a slot of kind DIR, OLLAMA or HF),
 * with one reference of the kernel's taken on its slot: the caller replies
 * with it, and gives the reference back with ggfs_catalog_forget if the
 * reply fails. Returns 0, ENOENT, ENOTDIR, ENOMEM, or the errno of reading
 * the directory. The directory is read again when its listing is over a
 * second old. */
int ggfs_catalog_lookup(ggfs_catalog *cat, uint64_t dir, const char *name, ggfs_cat_entry *out);

/* The kernel took n more references on inodes of slot (lookups inside a
 * model, its error file), or gave n back (FUSE forget). Remembering takes
 * place while the caller holds the model (ggfs_catalog_get) or the slot is
 * otherwise known to live; false when there is no such slot. */
bool ggfs_catalog_remember(ggfs_catalog *cat, uint64_t slot, uint64_t n);
void ggfs_catalog_forget(ggfs_catalog *cat, uint64_t slot, uint64_t n);

/* Every entry of directory `dir`, read afresh, with a reference that
 * ggfs_catalog_unlist gives back. Returns 0 or an errno as
 * ggfs_catalog_lookup. */
int ggfs_catalog_list(ggfs_catalog *cat, uint64_t dir, ggfs_cat_listing **out);
void ggfs_catalog_unlist(ggfs_catalog *cat, ggfs_cat_listing *l);

size_t ggfs_cat_listing_count(const ggfs_cat_listing *l);
/* Whether the listing has an entry called name. */
bool ggfs_cat_listing_has(const ggfs_cat_listing *l, const char *name);
const char *ggfs_cat_listing_name(const ggfs_cat_listing *l, size_t i);

/* Entry i of listing l of directory `dir`. With remember, as a lookup
 * gives it (a slot made if needed, one kernel reference taken; false when
 * out of memory, or when the listing is older than the directory's and the
 * name now names another file: then no inode is handed out for it).
 * Without, for readdir: the slot it has, or GGFS_NO_SLOT and only the
 * attributes. */
bool ggfs_catalog_listed(ggfs_catalog *cat, uint64_t dir, const ggfs_cat_listing *l, size_t i,
                         bool remember, ggfs_cat_entry *out);

/* The tree of the model in slot, opened if needed, with a reference that
 * ggfs_catalog_put gives back. NULL with *err set when the model cannot
 * be opened: EIO when it failed (ggfs_catalog_error says why), ESTALE when
 * the file is no longer the one the slot was made for. */
ggfs_tree *ggfs_catalog_get(ggfs_catalog *cat, uint64_t slot, int *err);
void ggfs_catalog_put(ggfs_catalog *cat, uint64_t slot, ggfs_tree *tree);

/* What the trees of models opened from now on ask between chunks of their
 * hashes' and stats' computations (tree.h); never asked until set. Set
 * before any request is served. */
void ggfs_catalog_set_cancel(ggfs_catalog *cat, ggfs_cancel cancel);

/* The `verify` of the model in slot was looked up (verify_ahead.c). */
void ggfs_catalog_verify_wanted(ggfs_catalog *cat, uint64_t slot);
/* The `verify` of the model in slot is opened: those of the other models
 * looked up lately are computed ahead, on threads of their own. */
void ggfs_catalog_verify_ahead(ggfs_catalog *cat, uint64_t slot);

/* The mount's session (set before any request), which every tree tells
 * when a file of it grows (tree.h). */
void ggfs_catalog_set_session(ggfs_catalog *cat, struct fuse_session *const *session);

/* Why the model in slot cannot be opened, one line ending in "\n", into
 * buf (cap bytes); false when it has not failed (it may not have been
 * tried: ggfs_catalog_get tries). */
bool ggfs_catalog_error(ggfs_catalog *cat, uint64_t slot, char *buf, size_t cap);

/* The text of `remote` at the root of a mount whose root store has one
 * (store.h), made now (malloc'ed); NULL when it has none, or out of
 * memory. */
char *ggfs_catalog_status(ggfs_catalog *cat, size_t *len);

/* How many models are open now. */
size_t ggfs_catalog_open_models(ggfs_catalog *cat);

/* The number of slots alive now. */
uint64_t ggfs_catalog_slots(ggfs_catalog *cat);

/* An entry the kernel should forget: its slot, its directory's slot, its
 * name. */
typedef struct ggfs_cat_forget {
    uint64_t slot;
    uint64_t dir;
    char name[NAME_MAX + 1];
} ggfs_cat_forget;

/* For the one thread that asks the kernel to forget: waits until entries
 * the kernel holds should be forgotten, and gives up to max of them.
 * Meanwhile drops listings past their lifetime. Returns 0 once
 * ggfs_catalog_stop_forgetting was called. */
size_t ggfs_catalog_next_forgets(ggfs_catalog *cat, ggfs_cat_forget *out, size_t max);
void ggfs_catalog_stop_forgetting(ggfs_catalog *cat);

/* Whether the kernel still holds entry f after being asked to forget it:
 * then it is in use (a working directory, a file open below it), path
 * (cap bytes) gets its path from the mount's root, and the entry is not
 * handed out again for ten seconds, twice that each time it is kept
 * again (up to about 43 minutes). */
bool ggfs_catalog_still_held(ggfs_catalog *cat, const ggfs_cat_forget *f, char *path, size_t cap);

/* The files open in the catalog's mount (tree/open_text.h): what an
 * unmount leaves of them is freed with the catalog. */
struct ggfs_open_texts *ggfs_catalog_open_texts(ggfs_catalog *cat);

#endif
