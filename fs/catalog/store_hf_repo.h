/*
 * A Hugging Face repo at one commit as a catalog's root store
 * (store_hf_repo.c; SPEC "Remote collections").
 */
#ifndef GGFS_CATALOG_STORE_HF_REPO_H
#define GGFS_CATALOG_STORE_HF_REPO_H

#include <stdbool.h>
#include <stddef.h>

#include "source/remote_engine.h"

// Entries of a repo's listing read at most (SPEC: at least 100,000): a
// longer listing is cut there, with a log line.
#define GGFS_HF_MAX_ENTRIES 100000u

typedef struct ggfs_hf_repo ggfs_hf_repo;

/* Whether name is an hf:// collection (a repo, a folder of one), not one
 * file: its path does not end in .gguf. */
bool ggfs_hf_is_collection(const char *name);

/* Resolves the revision of the repo name names and reads its listing,
 * through remote. NULL with why (cap bytes, one line naming the repo and
 * the problem) when the repo or revision is missing, gated, or its
 * listing refused. The catalog frees it (ggfs_store_hf_repo.root_free). */
ggfs_hf_repo *ggfs_hf_repo_open(ggfs_remote_engine *remote, const char *name, char *why, size_t cap);

#endif
