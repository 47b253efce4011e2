/*
 * JSON records (record_json.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "source/record_json.h"

bool ggfs_record_json_put(const char *cache_dir, const char *kind, const char *name, json_object *o, char *why,
                          size_t why_size)
{
    size_t len = 0;
    const char *text = o ? json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len) : NULL;
    if (!text) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    return ggfs_cache_record_put(cache_dir, kind, name, text, len, why, why_size);
}

ggfs_cache_record_status ggfs_record_json_get(const char *cache_dir, const char *kind, const char *name,
                                              const char *(*fill)(json_object *o, void *out), void *out, char *why,
                                              size_t why_size)
{
    void *data;
    size_t len;
    const ggfs_cache_record_status st = ggfs_cache_record_get(cache_dir, kind, name, &data, &len, why, why_size);
    if (st != GGFS_CACHE_RECORD_FOUND)
        return st;
    struct json_tokener *tok = json_tokener_new();
    json_object *o = NULL;
    const char *problem = "out of memory";
    size_t at = 0;
    if (tok) {
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        o = len <= INT32_MAX ? json_tokener_parse_ex(tok, data, (int)len) : NULL;
        at = json_tokener_get_parse_end(tok);
        problem = !o ? "not JSON" : at != len ? "bytes after the JSON" : fill(o, out);
        json_tokener_free(tok);
    }
    json_object_put(o);
    free(data);
    if (!problem)
        return GGFS_CACHE_RECORD_FOUND;
    ggfs_cache_record_blame(kind, name, at, problem, why, why_size);
    return GGFS_CACHE_RECORD_BAD;
}
