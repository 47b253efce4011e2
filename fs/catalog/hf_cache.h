/*
 * A Hugging Face hub cache's models, by repository and revision. A hub
 * cache (~/.cache/huggingface/hub, $HF_HUB_CACHE) holds one directory per
 * repository,
 *
 *   models--ORG--NAME/snapshots/COMMIT/FILE   a link into ../../blobs/HASH
 *                                             (or the file itself, where
 *                                             links are not made); FILE
 *                                             may be in subfolders
 *   models--ORG--NAME/refs/REF                text: the COMMIT REF is at
 *                                             (refs/main, refs/v1, and
 *                                             refs/refs/pr/1 for PR 1)
 *   models--ORG--NAME/blobs/HASH              every file, by its hash
 *
 * (datasets--ORG--NAME and spaces--ORG--NAME alike), and newer
 * huggingface_hub keeps blobs shared by repositories in blobs/ beside
 * them, marked by blobs/.huggingface-shared-blobs. The catalog shows the
 * models by name in hf/ beside the repositories:
 *
 *   hf/ORG/NAME/COMMIT/FILE.gguf              every snapshot
 *   hf/ORG/NAME/REF/FILE.gguf                 every ref, as its snapshot
 *
 * and leaves the blobs out of the mirror (their files are the snapshots'
 * under hash names; a split set's shards there cannot be told apart).
 * A ref and a commit are each the snapshot directory itself, mirrored as
 * any directory: split sets are found by the snapshot's names.
 *
 * Everything in the cache is untrusted: a ref must hold a commit (40 hex
 * digits, never a path) whose snapshot lies inside the repository's
 * snapshots/; a ref that does not is listed as a model whose error says
 * why. Repositories, snapshots and refs are followed only inside the
 * folder, never back up the tree.
 */
#ifndef GGFS_CATALOG_HF_CACHE_H
#define GGFS_CATALOG_HF_CACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "catalog/beneath.h"
#include "catalog/hf_index.h"
#include "catalog/scan.h"

#define GGFS_HF_VIEW "hf"
#define GGFS_HF_SHARED_MARKER ".huggingface-shared-blobs"
#define GGFS_HF_COMMIT_HEX 40 // a git commit: sha1, in lower-case hex
#define GGFS_HF_MAX_REF 64    // bytes of a ref: a commit and a newline or so
#define GGFS_HF_MSG_MAX (2 * PATH_MAX + 256) // a ref's error: its path, the snapshot's, the problem

/* Whether name is a repository's directory of a hub cache: models--ID,
 * datasets--ID or spaces--ID, ID not empty. */
bool ggfs_hf_is_repo(const char *name);

/* Splits a model repository's directory name, models--ORG--NAME, into org
 * and name (each NAME_MAX + 1 bytes). False when it is not one: another
 * kind of repository, a repository without an ORG (models--gpt2), an
 * empty part, "--" in NAME (the Hub allows none), or a part "." or "..". */
bool ggfs_hf_model_repo(const char *dirname, char *org, char *name);

/* Parses the bytes of a ref (len of them read; size the file's size):
 * 40 lower-case hex digits, then nothing but spaces, tabs and newlines.
 * Writes the commit (GGFS_HF_COMMIT_HEX + 1 bytes). On failure returns
 * false with *offset the byte at fault and why (cap bytes) the problem. */
bool ggfs_hf_parse_ref(const char *data, size_t len, unsigned long long size, char *commit,
                       size_t *offset, char *why, size_t cap);

/* After directory real_dir (relative to the folder) was scanned into scan
 * (sorted): drops blobs/ from a repository that has snapshots/ and from
 * beside the repositories when it is the shared store, and adds the hf/
 * view (GGFS_SCAN_HF: path real_dir, real "") when real_dir holds a model
 * repository with snapshots/ and no entry of that name. Returns false
 * when out of memory. */
bool ggfs_hf_tidy_scan(const ggfs_folder *f, const char *real_dir, ggfs_scan *scan);

/* Lists the directory `place` of the hf/ view of the hub cache at `hub`
 * (symlink-free, relative to the folder): place "" is hf/ (the ORGs),
 * then "ORG" (its NAMEs), "ORG/NAME" (its commits and refs), and
 * "ORG/NAME/DIR..." (the refs in refs/DIR..., as refs/refs/pr/ for
 * refs/pr/N). Directories of the view are GGFS_SCAN_HF entries (path the
 * hub, real their place); commits and refs are GGFS_SCAN_DIR entries of
 * their snapshot directory; a ref that names no usable snapshot is a
 * GGFS_SCAN_MODEL entry of the ref file with error set. `ancestors` are
 * the real paths of the folder's directories shown above (as for
 * ggfs_scan_dir): a repository or snapshot leading back to one of them is
 * left out. The hub cache's repositories are found through idx (NULL: the
 * hub is read every time). Allocates; free with ggfs_scan_free. Returns
 * 0, ENOENT when there is no such place, or ENOMEM. */
int ggfs_hf_list(const ggfs_folder *f, ggfs_hf_index *idx, const char *hub, const char *place,
                 const char *const *ancestors, size_t n_ancestors, ggfs_scan *out);

#endif
