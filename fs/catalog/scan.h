/*
 * One directory of a catalog, as the mount shows it. The catalog mirrors
 * its folder lazily: a directory is listed when someone looks into it,
 * never the whole tree at once. Listing reads directory entries, stats
 * them, and reads the first 8 bytes of files not named .gguf; nothing more.
 *
 *   subdirectory              a directory (symlinks to directories inside
 *                             the folder too, unless they lead back up)
 *   x.gguf                    a model, named as its file
 *   x-00001-of-00003.gguf …   one model named x.gguf, for the whole set
 *   sha256-…                  a model when it starts with GGUF or FUGG
 *   manifests/ + blobs/       an Ollama store: adds ollama/ (see ollama.h)
 *
 * (A Hugging Face hub cache's hf/ view is added, and its blobs/ left
 * out, by ggfs_hf_tidy_scan: see hf_cache.h.)
 *
 * FIFOs, sockets and devices are skipped without being opened; so are
 * symlinks that leave the folder, dangle or loop, and files that cannot be
 * read. A directory that cannot be read lists as an error (the errno).
 */
#ifndef GGFS_CATALOG_SCAN_H
#define GGFS_CATALOG_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "catalog/attrs.h"
#include "catalog/beneath.h"
#include "catalog/kind.h"

/* An entry is of one of the catalog's kinds (kind.h) from the scan to its
 * slot; the local stores' names for them: */
typedef ggfs_cat_kind ggfs_scan_kind;
#define GGFS_SCAN_DIR GGFS_CAT_DIR       // a directory of the folder
#define GGFS_SCAN_MODEL GGFS_CAT_MODEL   // a model (one file or a split set)
#define GGFS_SCAN_OLLAMA GGFS_CAT_OLLAMA // the ollama/ view of an Ollama store, or a directory in it
#define GGFS_SCAN_HF GGFS_CAT_HF         // the hf/ view of a Hugging Face hub cache, or a directory in it

typedef struct ggfs_scan_entry {
    ggfs_scan_kind kind;
    const char *name;  // in the mount
    const char *path;  // relative to the folder, as found: a link is not
                       // resolved (a split set's shards are found beside
                       // it by name). For a split set, its lowest-numbered
                       // shard present.
    const char *real;  // what path names, symlink-free: directories are
                       // listed through it, models opened from it.
                       // GGFS_SCAN_OLLAMA: path is the store's directory
                       // (symlink-free) and real the place in the view
                       // ("" for ollama/ itself, "hf.co/org" further in);
                       // GGFS_SCAN_HF alike: path the hub cache, real
                       // the place ("" for hf/ itself, "ORG/NAME" further in)
    const char *error; // NULL, or why this model cannot be opened (an
                       // Ollama manifest that names no model): one line
    ggfs_cat_attrs a;  // of what path names (the link's target), with its identity
    uint32_t shards;   // split sets: the N of -of-N; 0 for one file
} ggfs_scan_entry;

/* A listing: entries sorted by name (bytewise), names unique. */
typedef struct ggfs_scan {
    ggfs_scan_entry *entries;
    size_t count;
    size_t cap;
    struct ggfs_scan_chunk *chunks; // the entries' strings, in a few blocks
} ggfs_scan;

/* Lists the directory whose symlink-free path is `real_dir` (relative to
 * the folder; "" for the folder). `ancestors` holds the real paths of the
 * directories the mount shows above this one, from the folder down, and
 * this one last: a symlink to any of them or above them would make an
 * endless tree and is skipped. Allocates; free with ggfs_scan_free.
 * Returns 0 or the errno of opening or reading the directory. */
int ggfs_scan_dir(const ggfs_folder *f, const char *real_dir, const char *const *ancestors,
                  size_t n_ancestors, ggfs_scan *out);

void ggfs_scan_free(ggfs_scan *scan);

/* The entry called name, or NULL. */
const ggfs_scan_entry *ggfs_scan_find(const ggfs_scan *scan, const char *name);

/* Whether the file at real (relative to the folder) is a regular file that
 * starts with a GGUF magic ("GGUF" or "FUGG"). Opens with O_NONBLOCK and
 * O_NOFOLLOW and checks the type before reading, so a FIFO or device that
 * took its place is never waited on. */
bool ggfs_has_gguf_magic(const ggfs_folder *f, const char *real);

/* ==== Building listings (also used by the Ollama view) ==== */

/* Appends an entry, copying the strings (error may be NULL), with the
 * attributes and identity of the local file of stat st. Returns false
 * when out of memory. */
bool ggfs_scan_add(ggfs_scan *scan, ggfs_scan_kind kind, const char *name, const char *path,
                   const char *real, const char *error, const struct stat *st, uint32_t shards);
/* The same, with attributes (and identity) a store made. */
bool ggfs_scan_add_attrs(ggfs_scan *scan, ggfs_scan_kind kind, const char *name, const char *path,
                         const char *real, const char *error, const ggfs_cat_attrs *a, uint32_t shards);

/* Sorts by name and keeps the first of entries with the same name. */
void ggfs_scan_finish(ggfs_scan *scan);

/* Removes the entry called name, if any (from a finished scan). */
void ggfs_scan_drop(ggfs_scan *scan, const char *name);

#endif
