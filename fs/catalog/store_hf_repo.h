/*
 * A Hugging Face repo at one commit as a catalog's root store
 * (store_hf_repo.c; SPEC "Remote collections").
 */
#ifndef GGFS_CATALOG_STORE_HF_REPO_H
#define GGFS_CATALOG_STORE_HF_REPO_H

#include <stdbool.h>
#include <stddef.h>

#include "source/remote_engine.h"

#include "catalog/hf_api.h"

struct json_object;

typedef struct ggfs_hf_repo ggfs_hf_repo;

/* Whether name is an hf:// collection (a repo, a folder of one), not one
 * file: its path does not end in .gguf. */
bool ggfs_hf_is_collection(const char *name);

/* Resolves the revision of the repo name names and reads its listing,
 * through remote. NULL with why (cap bytes, one line naming the repo and
 * the problem) when the repo or revision is missing, gated, or its
 * listing refused. The catalog frees it (ggfs_store_hf_repo.root_free). */
ggfs_hf_repo *ggfs_hf_repo_open(ggfs_remote_engine *remote, const char *name, char *why, size_t cap);

/* ==== For the author store (store_hf_author.c) ==== */

/* An empty repo ORG/REPO (org_repo), named source in messages, its
 * requests counted in stats; NULL when out of memory. */
ggfs_hf_repo *ggfs_hf_repo_new(const char *org_repo, const char *source, ggfs_hf_stats *stats);
/* Resolves rev and reads the repo's listing (under dir: "" for all) into
 * r. Returns 0, or -1 with why. */
int ggfs_hf_repo_read(ggfs_hf_repo *r, ggfs_remote_engine *remote, const char *endpoint, const char *token,
                      const char *rev, const char *dir, char *why, size_t cap);
/* ggfs_hf_repo_read with answers from get (hf_api.h: the unit tests
 * script a Hub). */
int ggfs_hf_repo_read_from(ggfs_hf_repo *r, ggfs_hf_get *get, void *get_ctx, const char *endpoint, const char *rev,
                           const char *dir, char *why, size_t cap);
void ggfs_hf_repo_free(ggfs_hf_repo *r);
/* Adds one entry of a tree page (any JSON) to r when it is a GGUF file
 * under dir, as reading the listing does; false when out of memory.
 * What tests/fuzz drives. */
bool ggfs_hf_repo_add_entry(ggfs_hf_repo *r, const char *dir, struct json_object *e);


/* ==== hf://ORG (store_hf_author.c) ==== */

typedef struct ggfs_hf_author ggfs_hf_author;

/* Whether name is hf://ORG (an author: no '/' after the scheme). */
bool ggfs_hf_is_author(const char *name);
/* Reads the first page of the author's repos holding GGUF files; NULL
 * with why (one line) when refused. */
ggfs_hf_author *ggfs_hf_author_open(ggfs_remote_engine *remote, const char *name, char *why, size_t cap);
void ggfs_hf_author_free(ggfs_hf_author *a);
/* An author with no repo read yet, its listing not asked for (the unit
 * tests'); NULL with why when name is no author or out of memory. */
ggfs_hf_author *ggfs_hf_author_new(const char *name, char *why, size_t cap);
/* Adds the repo of one entry of the author's listing (any JSON) to out
 * as a directory, as reading the listing does; false when out of memory.
 * What tests/fuzz drives. */
struct ggfs_scan;
bool ggfs_hf_author_add_entry(const char *org, struct json_object *e, struct ggfs_scan *out);

/* The author's repo ORG/REPO (key), read (at main) the first time it is
 * asked for and kept for the mount's life. NULL with why when it cannot
 * be read (errno ENOMEM when out of memory). */
const ggfs_hf_repo *ggfs_hf_author_repo(ggfs_hf_author *a, ggfs_remote_engine *remote, const char *key, char *why,
                                        size_t cap);
/* ggfs_hf_author_repo with answers from get (hf_api.h). No lock another
 * lookup needs is held while get runs. */
const ggfs_hf_repo *ggfs_hf_author_repo_from(ggfs_hf_author *a, ggfs_hf_get *get, void *get_ctx, const char *key,
                                             char *why, size_t cap);

#endif
