/*
 * The Hub's API as the hf:// collections ask it (hf_api.h).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/hf_api.h"
#include "catalog/hf_kept.h"
#include "util/log.h"
#include "util/page_guard.h"

void ggfs_hf_say(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
}

/* Counts one answer's requests, and its failure when it failed. */
static void count(ggfs_hf_stats *stats, const ggfs_api_reply *reply, const char *failure)
{
    atomic_fetch_add(&stats->listing_requests, 1 + reply->retries + reply->rate_limit_waits);
    atomic_fetch_add(&stats->retries, reply->retries);
    atomic_fetch_add(&stats->rate_limit_waits, reply->rate_limit_waits);
    atomic_fetch_add(&stats->api_bytes, reply->bytes);
    if (failure) {
        pthread_mutex_lock(&stats->lock);
        snprintf(stats->last_error, sizeof stats->last_error, "%s", failure);
        pthread_mutex_unlock(&stats->lock);
    }
}

/* Offline: the answer kept for url (hf_kept.h), and no request. */
static int kept_get(const char *cache_dir, const char *url, ggfs_api_reply *reply, const char *what, char *why,
                    size_t cap)
{
    char bad[512];
    switch (ggfs_hf_kept_get(cache_dir, url, reply, bad, sizeof bad)) {
    case GGFS_CACHE_RECORD_FOUND:
        return 0;
    case GGFS_CACHE_RECORD_MISSING:
        ggfs_hf_say(why, cap, "%s: offline, and not in cache_dir %s", what, cache_dir);
        return -1;
    case GGFS_CACHE_RECORD_BAD:
    default:
        ggfs_hf_say(why, cap, "%s: offline: in cache_dir, %s", what, bad);
        return -1;
    }
}

int ggfs_hf_api_get(ggfs_remote_engine *remote, ggfs_hf_stats *stats, const char *url, const char *token,
                    ggfs_api_reply *reply, const char *what, char *why, size_t cap)
{
    const char *cache_dir = ggfs_remote_engine_cache_dir(remote);
    if (ggfs_remote_engine_offline(remote))
        return kept_get(cache_dir, url, reply, what, why, cap);
    if (!ggfs_remote_engine_api_get(remote, url, token, GGFS_HF_PAGE_MAX, reply)) {
        ggfs_hf_say(why, cap, "%s: %s", what, reply->why);
        count(stats, reply, why);
        return -1;
    }
    if (reply->status == 200 && !reply->cut) {
        count(stats, reply, NULL);
        if (cache_dir)
            ggfs_hf_kept_put(cache_dir, url, reply, what);
        return 0;
    }
    if (reply->cut)
        ggfs_hf_say(why, cap, "%s: an answer over %u MiB", what, GGFS_HF_PAGE_MAX >> 20);
    else if (reply->status == 404)
        ggfs_hf_say(why, cap, "%s: not found (HTTP 404)", what);
    else if (reply->status == 401 || reply->status == 403)
        ggfs_hf_say(why, cap, "%s: HTTP %ld: a gated or private repo needs a token with access (HF_TOKEN)", what,
                    reply->status);
    else
        ggfs_hf_say(why, cap, "%s: %s", what, reply->why[0] ? reply->why : "refused");
    count(stats, reply, why);
    return -1;
}

void ggfs_hf_root_init(ggfs_hf_root *root, ggfs_hf_root_type type)
{
    memset(root, 0, sizeof *root);
    root->type = type;
    pthread_mutex_init(&root->stats.lock, NULL);
}

void ggfs_hf_root_destroy(ggfs_hf_root *root)
{
    pthread_mutex_destroy(&root->stats.lock);
}

char *ggfs_hf_status_text(ggfs_hf_root *root, ggfs_remote_engine *remote, size_t *len)
{
    ggfs_hf_stats *st = &root->stats;
    uint64_t received = 0;
    unsigned in_flight = 0;
    ggfs_remote_engine_totals(remote, &received, &in_flight);
    char last[sizeof st->last_error];
    pthread_mutex_lock(&st->lock);
    memcpy(last, st->last_error, sizeof last);
    pthread_mutex_unlock(&st->lock);
    char text[1024];
    const int n = snprintf(text, sizeof text,
                           "listing_requests: %llu\nmodels_opened: %llu\nheader_bytes: %llu\nbytes_fetched: %llu\n"
                           "in_flight: %u\nretries: %llu\nrate_limit_waits: %llu\nlast_error: %s\n",
                           (unsigned long long)atomic_load(&st->listing_requests),
                           (unsigned long long)atomic_load(&st->models_opened),
                           (unsigned long long)atomic_load(&st->header_bytes),
                           (unsigned long long)(received + atomic_load(&st->api_bytes)), in_flight,
                           (unsigned long long)atomic_load(&st->retries),
                           (unsigned long long)atomic_load(&st->rate_limit_waits), last);
    if (n < 0)
        return NULL;
    *len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    return strndup(text, *len);
}

json_object *ggfs_hf_parse(const ggfs_api_reply *reply, const char *what, char *why, size_t cap)
{
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        ggfs_hf_say(why, cap, "%s: out of memory", what);
        return NULL;
    }
    json_object *o = reply->body ? json_tokener_parse_ex(tok, reply->body, (int)reply->len) : NULL;
    const enum json_tokener_error e = json_tokener_get_error(tok);
    if (!o || e != json_tokener_success || (size_t)json_tokener_get_parse_end(tok) < reply->len) {
        const size_t at = json_tokener_get_parse_end(tok);
        ggfs_hf_say(why, cap, "%s: offset %zu: the answer is not JSON (%s)", what, at,
            e == json_tokener_continue || !reply->body ? "cut short" : json_tokener_error_desc(e));
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}


/* The key an entry is known by in its listing: the string field key_field,
 * or NULL when it has none (such an entry adds nothing). */
static const char *entry_key(json_object *e, const char *key_field, size_t *len)
{
    json_object *k;
    if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, key_field, &k) ||
        !json_object_is_type(k, json_type_string))
        return NULL;
    *len = (size_t)json_object_get_string_len(k);
    return json_object_get_string(k);
}

int ggfs_hf_pages_from(ggfs_hf_get *get, void *get_ctx, const char *first, const char *what, const char *key_field,
                       bool (*each)(void *ctx, json_object *entry), void *ctx, char *why, size_t cap)
{
    char url[GGFS_API_URL_MAX];
    snprintf(url, sizeof url, "%s", first);
    ggfs_page_guard guard;
    ggfs_page_guard_init(&guard, "Link");
    int err = 0;
    bool full = false;
    while (!err && !full && url[0]) {
        if (ggfs_page_guard_count(&guard) >= GGFS_PAGE_ENTRIES_MAX) {
            // A next page past the cap: the listing is longer, and cut here.
            ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: over %u entries: the rest is left out\n", what,
                     GGFS_PAGE_ENTRIES_MAX);
            break;
        }
        if (!ggfs_page_guard_page(&guard, url, strlen(url), what, why, cap)) {
            err = -1;
            break;
        }
        ggfs_api_reply reply;
        char page_what[GGFS_API_URL_MAX + 32];
        snprintf(page_what, sizeof page_what, "%s page %zu", what, guard.n_pages);
        err = get(get_ctx, url, &reply, page_what, why, cap);
        json_object *o = err ? NULL : ggfs_hf_parse(&reply, page_what, why, cap);
        if (!err && !o)
            err = -1;
        if (!err && !json_object_is_type(o, json_type_array)) {
            ggfs_hf_say(why, cap, "%s: the answer is not a list of entries", page_what);
            err = -1;
        }
        const size_t count = err ? 0 : json_object_array_length(o);
        for (size_t i = 0; i < count && !err && !full; i++) {
            json_object *e = json_object_array_get_idx(o, i);
            size_t len = 0;
            const char *key = entry_key(e, key_field, &len);
            if (!key)
                continue;
            switch (ggfs_page_guard_entry(&guard, key, len)) {
            case GGFS_PAGE_NEW:
                if (!each(ctx, e)) {
                    ggfs_hf_say(why, cap, "%s: out of memory", what);
                    err = -1;
                }
                break;
            case GGFS_PAGE_SEEN: // listed twice (a page repeated): kept once
                break;
            case GGFS_PAGE_FULL:
                ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: over %u entries: the rest is left out\n", what,
                         GGFS_PAGE_ENTRIES_MAX);
                full = true;
                break;
            case GGFS_PAGE_NOMEM:
                ggfs_hf_say(why, cap, "%s: out of memory", what);
                err = -1;
                break;
            }
        }
        json_object_put(o);
        if (!err && !full && !ggfs_page_guard_page_done(&guard, what, why, cap))
            err = -1;
        snprintf(url, sizeof url, "%s", err ? "" : reply.next);
        free(reply.body);
    }
    ggfs_page_guard_destroy(&guard);
    return err;
}

int ggfs_hf_engine_get(void *ctx, const char *url, ggfs_api_reply *reply, const char *what, char *why, size_t cap)
{
    const ggfs_hf_getter *g = ctx;
    return ggfs_hf_api_get(g->remote, g->stats, url, g->token, reply, what, why, cap);
}

int ggfs_hf_pages(ggfs_remote_engine *remote, ggfs_hf_stats *stats, const char *first, const char *token, const char *what,
                  const char *key_field, bool (*each)(void *ctx, json_object *entry), void *ctx, char *why, size_t cap)
{
    ggfs_hf_getter g = {remote, stats, token};
    return ggfs_hf_pages_from(ggfs_hf_engine_get, &g, first, what, key_field, each, ctx, why, cap);
}
