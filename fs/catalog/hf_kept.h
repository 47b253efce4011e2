/*
 * The Hub's API answers an hf:// collection mount got, kept under its
 * cache_dir (source/cache_records.h, kind "hf-api") so that an offline
 * mount (-o offline, HF_HUB_OFFLINE=1) lists the repo as it was then and
 * asks the Hub nothing. A record is keyed by the URL asked, which names
 * HF_ENDPOINT and what was asked: a revision's commit
 * (api/models/ORG/REPO/revision/REV), a page of a tree at a commit
 * (api/models/ORG/REPO/tree/COMMIT[/DIR]?recursive=true[&cursor=...]), a
 * page of an author's repos (api/models?author=ORG&filter=gguf...). It
 * holds the answer's body and its `Link: rel="next"`, as JSON:
 *
 *   {"next": "https://HOST/api/models/ORG/REPO/tree/...&cursor=...", "body": "[{...}, ...]"}
 *
 * A token is never kept: neither the URL nor the answer holds one.
 */
#ifndef GGFS_CATALOG_HF_KEPT_H
#define GGFS_CATALOG_HF_KEPT_H

#include <stddef.h>

#include "source/api_get.h"
#include "source/cache_records.h"

#define GGFS_HF_KEPT_KIND "hf-api"

/* Keeps reply (a 200, whole) as the answer to url under cache_dir. A
 * failure costs only that: one log line naming what. */
void ggfs_hf_kept_put(const char *cache_dir, const char *url, const ggfs_api_reply *reply, const char *what);

/* Reads the answer kept for url into *reply (status 200, its body
 * malloc'ed, next), as if it had just come. MISSING: none was kept; BAD:
 * why (cap bytes) names the record's file, the offset and the problem. */
ggfs_cache_record_status ggfs_hf_kept_get(const char *cache_dir, const char *url, ggfs_api_reply *reply, char *why,
                                          size_t cap);

#endif
