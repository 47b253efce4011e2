/*
 * The Hugging Face Hub's API as the hf:// collection stores ask it
 * (store_hf_repo.c, store_hf_author.c), through the mount's remote engine:
 * one answer, its status told in one line, its JSON parsed whole, and the
 * root states of the two stores, which share the repo store's listing.
 */
#ifndef GGFS_CATALOG_HF_API_H
#define GGFS_CATALOG_HF_API_H

#include <json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "source/remote_engine.h"
#include "util/page_guard.h"

#define GGFS_HF_PAGE_MAX (16u << 20) // bytes of one answer, at most
// Entries of a listing read at most (SPEC: at least 100,000): a longer
// listing is cut there, with a log line (util/page_guard.h).
#define GGFS_HF_MAX_ENTRIES GGFS_PAGE_ENTRIES_MAX

typedef enum ggfs_hf_root_type {
    GGFS_HF_ROOT_REPO,   // a ggfs_hf_repo: hf://ORG/REPO[/DIR]
    GGFS_HF_ROOT_AUTHOR, // a ggfs_hf_author: hf://ORG
} ggfs_hf_root_type;

/* What the mount asked of the Hub and opened, for `remote` at its root. */
typedef struct ggfs_hf_stats {
    _Atomic uint64_t listing_requests; // API requests (attempts)
    _Atomic uint64_t models_opened;
    _Atomic uint64_t header_bytes;     // of the models opened
    _Atomic uint64_t api_bytes;        // bodies of API answers
    _Atomic uint64_t retries;
    _Atomic uint64_t rate_limit_waits;
    pthread_mutex_t lock;              // guards last_error
    char last_error[256];              // "" when none
} ggfs_hf_stats;

/* What a collection mount's root state starts with: which it is, and its
 * counts. */
typedef struct ggfs_hf_root {
    ggfs_hf_root_type type;
    ggfs_hf_stats stats;
} ggfs_hf_root;

void ggfs_hf_root_init(ggfs_hf_root *root, ggfs_hf_root_type type);
void ggfs_hf_root_destroy(ggfs_hf_root *root);

/* The `remote` text of a collection mount (SPEC "Remote collections"),
 * malloc'ed; NULL when out of memory. */
char *ggfs_hf_status_text(ggfs_hf_root *root, ggfs_remote_engine *remote, size_t *len);

/* snprintf into why (cap bytes). */
void ggfs_hf_say(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* GETs an API URL: 0 and the reply (its body the caller's to free), or -1
 * with why naming what (the repo, the page) and the status: 404 "not
 * found", 401/403 "a gated or private repo needs a token". With cache_dir
 * the answer is kept (hf_kept.h); offline it is that kept answer, and no
 * request is made (-1, why saying it is not in cache_dir, when none). */
int ggfs_hf_api_get(ggfs_remote_engine *remote, ggfs_hf_stats *stats, const char *url, const char *token, ggfs_api_reply *reply,
                    const char *what, char *why, size_t cap);

/* The JSON of a reply, whole; NULL with why when it does not parse or is
 * cut short (the offset where it stops). */
json_object *ggfs_hf_parse(const ggfs_api_reply *reply, const char *what, char *why, size_t cap);

/* Reads a paged listing from the URL first, page after page by `Link:
 * <URL>; rel="next"`, each page a JSON array whose entries go to each
 * (false: out of memory), each once: an entry is known by its string field
 * key_field ("path", "id"); one without it is left out, one whose key was
 * listed before is dropped. The bounds are page_guard.h's: at most
 * GGFS_PAGE_ENTRIES_MAX entries (past them the listing is cut, with a log
 * line) and GGFS_PAGE_MAX pages. Returns 0, or -1 with why naming what and
 * the page: an answer refused or not JSON, not an array, a Link back to a
 * page already read, or GGFS_PAGE_STALL_MAX pages in a row adding no new
 * entry (both loops). */
int ggfs_hf_pages(ggfs_remote_engine *remote, ggfs_hf_stats *stats, const char *first, const char *token, const char *what,
                  const char *key_field, bool (*each)(void *ctx, json_object *entry), void *ctx, char *why, size_t cap);

/* Gets one page: 0 and the reply (its body the caller's to free), or -1
 * with why (ggfs_hf_api_get's contract). */
typedef int ggfs_hf_get(void *ctx, const char *url, ggfs_api_reply *reply, const char *what, char *why, size_t cap);

/* What ggfs_hf_engine_get asks through: ggfs_hf_api_get's arguments. */
typedef struct ggfs_hf_getter {
    ggfs_remote_engine *remote;
    ggfs_hf_stats *stats;
    const char *token;
} ggfs_hf_getter;

/* A ggfs_hf_get over ggfs_hf_api_get (ctx: a ggfs_hf_getter). */
int ggfs_hf_engine_get(void *ctx, const char *url, ggfs_api_reply *reply, const char *what, char *why, size_t cap);

/* ggfs_hf_pages with pages from get (the unit tests script a server). */
int ggfs_hf_pages_from(ggfs_hf_get *get, void *get_ctx, const char *first, const char *what, const char *key_field,
                       bool (*each)(void *ctx, json_object *entry), void *ctx, char *why, size_t cap);

#endif
