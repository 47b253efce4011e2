/*
 * A URL mount's record (url_record.h), written and read as JSON
 * (record_json.h).
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/record_json.h"
#include "source/url_record.h"

bool ggfs_url_record_put(const char *cache_dir, const char *name, const ggfs_url_record *r, char *why,
                         size_t why_size)
{
    json_object *o = json_object_new_object();
    if (o) {
        json_object_object_add(o, "url", json_object_new_string(r->url));
        json_object_object_add(o, "size", json_object_new_uint64(r->size));
        json_object_object_add(o, "etag", r->etag ? json_object_new_string(r->etag) : NULL);
        json_object_object_add(o, "last_modified",
                               r->last_modified ? json_object_new_string(r->last_modified) : NULL);
        json_object_object_add(o, "mtime", json_object_new_int64(r->mtime));
    }
    const bool ok = ggfs_record_json_put(cache_dir, GGFS_URL_RECORD_KIND, name, o, why, why_size);
    json_object_put(o);
    return ok;
}

/* The string field `key` of o, copied into *out; NULL stays NULL when
 * null_ok. False when it is missing or of another type. */
static bool string_field(json_object *o, const char *key, bool null_ok, char **out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return false;
    if (!v)
        return null_ok;
    if (!json_object_is_type(v, json_type_string))
        return false;
    *out = strdup(json_object_get_string(v));
    return *out != NULL;
}

static bool int_field(json_object *o, const char *key, json_object **out)
{
    return json_object_object_get_ex(o, key, out) && json_object_is_type(*out, json_type_int);
}

/* Fills *out (a ggfs_url_record) from the record's JSON; NULL, or the
 * first field that is wrong (what was filled freed). */
static const char *fill_fields(json_object *o, ggfs_url_record *out)
{
    json_object *size, *mtime;
    if (!json_object_is_type(o, json_type_object))
        return "not a JSON object";
    if (!string_field(o, "url", false, &out->url) || !out->url[0])
        return "no url";
    if (!int_field(o, "size", &size))
        return "no size";
    // Past 2^62 bytes no file is real, and block arithmetic would overflow.
    const int64_t bytes = json_object_get_int64(size);
    if (bytes < 0 || bytes > INT64_C(1) << 62)
        return "size out of range";
    out->size = (uint64_t)bytes;
    if (!string_field(o, "etag", true, &out->etag) || !string_field(o, "last_modified", true, &out->last_modified) ||
        (!out->etag && !out->last_modified))
        return "no etag or last_modified";
    if (!int_field(o, "mtime", &mtime))
        return "no mtime";
    out->mtime = json_object_get_int64(mtime);
    return NULL;
}

static const char *fill(json_object *o, void *out)
{
    const char *problem = fill_fields(o, out);
    if (problem)
        ggfs_url_record_destroy(out);
    return problem;
}

ggfs_cache_record_status ggfs_url_record_get(const char *cache_dir, const char *name, ggfs_url_record *out,
                                             char *why, size_t why_size)
{
    *out = (ggfs_url_record){0};
    return ggfs_record_json_get(cache_dir, GGFS_URL_RECORD_KIND, name, fill, out, why, why_size);
}

void ggfs_url_record_destroy(ggfs_url_record *r)
{
    free(r->url);
    free(r->etag);
    free(r->last_modified);
    *r = (ggfs_url_record){0};
}
