/*
 * The Hub's answers kept for offline mounts (hf_kept.h), as JSON
 * records (source/record_json.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/hf_kept.h"
#include "source/record_json.h"
#include "util/log.h"

void ggfs_hf_kept_put(const char *cache_dir, const char *url, const ggfs_api_reply *reply, const char *what)
{
    char why[512] = "out of memory";
    json_object *o = reply->len <= INT32_MAX ? json_object_new_object() : NULL;
    if (o) {
        json_object_object_add(o, "next", json_object_new_string(reply->next));
        json_object_object_add(o, "body", json_object_new_string_len(reply->body ? reply->body : "", (int)reply->len));
    }
    if (!o || !ggfs_record_json_put(cache_dir, GGFS_HF_KEPT_KIND, url, o, why, sizeof why))
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: an offline mount will not find it: %s\n", what, why);
    json_object_put(o);
}

/* Fills the reply (a ggfs_api_reply) from the record's JSON; NULL, or
 * what is wrong. */
static const char *fill(json_object *o, void *out)
{
    ggfs_api_reply *reply = out;
    json_object *next, *body;
    if (!json_object_is_type(o, json_type_object))
        return "not a JSON object";
    if (!json_object_object_get_ex(o, "next", &next) || !json_object_is_type(next, json_type_string) ||
        (size_t)json_object_get_string_len(next) >= sizeof reply->next)
        return "no next link";
    if (!json_object_object_get_ex(o, "body", &body) || !json_object_is_type(body, json_type_string))
        return "no body";
    const size_t len = (size_t)json_object_get_string_len(body);
    if (!(reply->body = malloc(len + 1)))
        return "out of memory";
    memcpy(reply->body, json_object_get_string(body), len);
    reply->body[len] = '\0';
    reply->len = len;
    snprintf(reply->next, sizeof reply->next, "%s", json_object_get_string(next));
    reply->status = 200;
    return NULL;
}

ggfs_cache_record_status ggfs_hf_kept_get(const char *cache_dir, const char *url, ggfs_api_reply *reply, char *why,
                                          size_t cap)
{
    memset(reply, 0, sizeof *reply);
    return ggfs_record_json_get(cache_dir, GGFS_HF_KEPT_KIND, url, fill, reply, why, cap);
}
