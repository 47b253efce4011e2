/*
 * The Hub's answers kept for offline mounts (hf_kept.h), as JSON with
 * json-c.
 */
#include <json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/hf_kept.h"
#include "util/log.h"

void ggfs_hf_kept_put(const char *cache_dir, const char *url, const ggfs_api_reply *reply, const char *what)
{
    char why[512] = "out of memory";
    json_object *o = json_object_new_object();
    bool ok = false;
    if (o && reply->len <= INT32_MAX) {
        json_object_object_add(o, "next", json_object_new_string(reply->next));
        json_object_object_add(o, "body", json_object_new_string_len(reply->body ? reply->body : "", (int)reply->len));
        size_t len = 0;
        const char *text = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
        ok = text && ggfs_cache_record_put(cache_dir, GGFS_HF_KEPT_KIND, url, text, len, why, sizeof why);
    }
    json_object_put(o);
    if (!ok)
        ggfs_log(GGFS_LOG_WARNING, "gguf-fs: %s: an offline mount will not find it: %s\n", what, why);
}

/* Fills reply from the record's JSON; NULL, or what is wrong. */
static const char *fill(json_object *o, ggfs_api_reply *reply)
{
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
    void *data;
    size_t len;
    const ggfs_cache_record_status st = ggfs_cache_record_get(cache_dir, GGFS_HF_KEPT_KIND, url, &data, &len, why, cap);
    if (st != GGFS_CACHE_RECORD_FOUND)
        return st;
    json_tokener *tok = json_tokener_new();
    json_object *o = NULL;
    const char *problem = "out of memory";
    size_t at = 0;
    if (tok) {
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = len <= INT32_MAX ? json_tokener_parse_ex(tok, data, (int)len) : NULL;
        at = json_tokener_get_parse_end(tok);
        problem = !o ? "not JSON" : at != len ? "bytes after the JSON" : fill(o, reply);
        json_tokener_free(tok);
    }
    json_object_put(o);
    free(data);
    if (!problem)
        return GGFS_CACHE_RECORD_FOUND;
    ggfs_cache_record_blame(GGFS_HF_KEPT_KIND, url, at, problem, why, cap);
    free(reply->body);
    memset(reply, 0, sizeof *reply);
    return GGFS_CACHE_RECORD_BAD;
}
