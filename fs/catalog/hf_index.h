/*
 * The model repositories of a Hugging Face hub cache directory, read once
 * and kept while the directory is unchanged. Listing hf/ORG/ needs the
 * repositories models--ORG--NAME, which only a listing of the whole hub
 * cache finds: a walk over every hf/ORG/ would read it once per ORG,
 * thousands of times over for a cache of thousands of repositories.
 *
 * The directory counts as unchanged while its device, inode, mtime and
 * ctime are those it had when read, and it was read over a second after
 * its last change (as git's index trusts files: a change within the same
 * tick of a coarse clock as the reading would leave the times the same).
 * The index keeps one directory, the last one read; it is shared by the
 * threads of a mount.
 */
#ifndef GGFS_CATALOG_HF_INDEX_H
#define GGFS_CATALOG_HF_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "catalog/beneath.h"

typedef struct ggfs_hf_index ggfs_hf_index;

/* NULL when out of memory. */
ggfs_hf_index *ggfs_hf_index_new(void);
void ggfs_hf_index_free(ggfs_hf_index *idx);

/* The names in the directory hub (symlink-free, relative to the folder)
 * that start with models-- (models--ORG-- when org is not NULL), sorted:
 * the model repositories, and names that only look like them
 * (ggfs_hf_model_repo tells). *names is one allocation (the array, then the
 * strings): free it with free(). The directory is read unless idx holds it
 * unchanged; idx may be NULL (read every time). Returns 0, ENOMEM, or the
 * errno of reading the directory. */
int ggfs_hf_index_repos(ggfs_hf_index *idx, const ggfs_folder *f, const char *hub, const char *org,
                        char ***names, size_t *count);

/* How many times idx read a directory (for tests). */
uint64_t ggfs_hf_index_reads(ggfs_hf_index *idx);

#endif
