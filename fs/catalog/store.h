/*
 * The stores a catalog lists its directories from, behind one table (as
 * the byte sources are behind source/source_table.c): a slot's kind names
 * its row, and the row says how the directory is listed, how long a
 * listing of it is trusted, whether opendir reads it again, how an entry's
 * identity is judged, and how the models listed in it are opened. The
 * catalog (dirs.c, models.c) knows nothing of any store but through its
 * row: another store is one file and one row in store_table.c.
 *
 *   store_folder.c    a directory of the local folder (GGFS_CAT_DIR)
 *   store_views.c     the ollama/ and hf/ views of local stores
 *   store_hf_repo.c   a Hugging Face repo at one commit (GGFS_CAT_HF_REPO)
 *   store_hf_author.c a Hugging Face author's repos (GGFS_CAT_HF_AUTHOR)
 *   store_s3.c        a prefix of an S3 bucket (GGFS_CAT_S3)
 *
 * A store lists a directory into a scan (scan.h: entries with their kind,
 * name, path, real path, attributes and identity); the catalog keeps it
 * as a listing (listing.h) and makes slots from it. The path and real
 * strings are the store's own: the catalog hands them back to the store
 * when it lists the directory they name or opens the model they name.
 */
#ifndef GGFS_CATALOG_STORE_H
#define GGFS_CATALOG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/beneath.h"
#include "catalog/hf_index.h"
#include "catalog/kind.h"
#include "catalog/listing.h"
#include "catalog/scan.h"
#include "model/model.h"
#include "source/remote_engine.h"

/* What every store may use, the catalog's own (read-only to stores). */
typedef struct ggfs_store_env {
    const ggfs_folder *folder;   // the local folder; its fd is -1 for a remote mount
    ggfs_hf_index *hf_index;     // a hub cache's repositories, for hf/ORG/
    ggfs_remote_engine *remote;  // the mount's connections; NULL for a folder mount
    void *root;                  // the root store's own state (ggfs_store.root_open)
} ggfs_store_env;

/* The directory to list: its slot's path and real strings, and the real
 * paths of the folder's directories shown above it, from the folder down
 * (for a store that must not list a directory inside itself). */
typedef struct ggfs_store_dir {
    const char *path;
    const char *real;
    const char *const *ancestors;
    size_t n_ancestors;
} ggfs_store_dir;

/* The model to open: its slot's strings, identity, size and shard count. */
typedef struct ggfs_store_model {
    const char *path;
    const char *real;
    const ggfs_cat_ident *ident; // what the listing saw
    uint64_t size;               // of the file listed (a split set's first
                                 // shard listed), as the listing said it
    uint32_t shards;
} ggfs_store_model;

/* How long a directory's listing is trusted before a lookup reads it
 * again, and the forgetting thread drops it. */
typedef enum ggfs_store_life {
    GGFS_LIFE_TTL,   // -o listing_ttl_s (a local folder: a second by default)
    GGFS_LIFE_MOUNT, // the mount's life: what it lists never changes (a commit)
} ggfs_store_life;

typedef struct ggfs_store {
    const char *name;       // for messages and the table's tests
    ggfs_store_life life;
    bool relist_on_opendir; // opendir reads afresh (a folder: to see new files at once);
                            // else a listing within its life is served again
    bool ident_by_place;    // its directories are places in a view: the same
                            // name is always the same directory
    bool read_ahead;        // listing a directory opens its first max_open
                            // models ahead (read_ahead.c): a remote store's
    /* Lists dir into out (allocated: ggfs_scan_free). Returns 0 or an
     * errno (ENOENT: no such directory any more). */
    int (*list)(const ggfs_store_env *env, const ggfs_store_dir *dir, ggfs_scan *out);
    /* Opens the model m listed in a directory of this store. On failure
     * returns NULL with *err set: ENOMEM (tried again next time), ESTALE
     * (it is no longer what was listed: m->ident differs), or EIO with
     * msg (cap bytes) saying why, naming the file and the offset. */
    ggfs_model *(*open_model)(const ggfs_store_env *env, const ggfs_store_model *m, char *msg, size_t cap,
                              int *err);
    /* Optional: what the store's listing publishes of one file of the
     * model m opened (a shard, `name` its source's name): true with *out
     * filled (the digest, kind NONE when it lists none; the size, 0 when
     * none) when the listing has the file. The catalog takes it as the
     * shard's (ggfs_store_take_published). */
    bool (*published)(const ggfs_store_env *env, const ggfs_store_model *m, const char *name,
                      ggfs_published *out);
    /* Frees the root state (env->root) of a catalog whose root is of this
     * store; NULL when the store has none. */
    void (*root_free)(void *root);
    /* The text of `remote` at the root of a mount whose root is of this
     * store (malloc'ed; NULL when out of memory); NULL: no such file. */
    char *(*status)(const ggfs_store_env *env, size_t *len);
} ggfs_store;

/* The row of kind (never GGFS_CAT_MODEL, which is no directory). */
const ggfs_store *ggfs_store_of(ggfs_cat_kind kind);

/* ==== The rows (store_*.c) ==== */

extern const ggfs_store ggfs_store_folder;
extern const ggfs_store ggfs_store_ollama_view;
extern const ggfs_store ggfs_store_hf_view;
extern const ggfs_store ggfs_store_hf_repo;
extern const ggfs_store ggfs_store_hf_author;
extern const ggfs_store ggfs_store_s3;

/* The one line why a model could not be opened: where (a path or URL),
 * then the offset when the problem has one, then what it is. */
void ggfs_store_model_error(const char *where, const ggp_error *e, char *msg, size_t cap);

/* Takes what store's listing publishes of each file of model, just
 * opened from m and not shared yet (source/published.h): each shard's
 * digest, and its size, which must be the file's. False, with msg (cap
 * bytes) naming the file, offset 0 and both sizes, when a file's size
 * differs from the listing's: the model is not what was listed. */
bool ggfs_store_take_published(const ggfs_store *store, const ggfs_store_env *env, const ggfs_store_model *m,
                               ggfs_model *model, char *msg, size_t cap);

/* Opens a model of the local folder (folder mounts' stores share it). */
ggfs_model *ggfs_store_folder_open_model(const ggfs_store_env *env, const ggfs_store_model *m, char *msg,
                                         size_t cap, int *err);

#endif
