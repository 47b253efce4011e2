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

/* The published object of a record, or NULL when nothing was published
 * (or out of memory: the record is then kept without it). */
static json_object *published_object(const ggfs_published *p)
{
    const size_t n = ggfs_published_digest_size(p->kind);
    if (!n && !p->size)
        return NULL;
    char hex[2 * sizeof p->digest + 1];
    for (size_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", p->digest[i]);
    hex[2 * n] = '\0';
    json_object *o = json_object_new_object();
    if (o) {
        json_object_object_add(o, "kind", n ? json_object_new_string(ggfs_published_kind_name(p->kind)) : NULL);
        json_object_object_add(o, "digest", n ? json_object_new_string(hex) : NULL);
        json_object_object_add(o, "where", n ? json_object_new_string(p->where) : NULL);
        json_object_object_add(o, "size", json_object_new_uint64(p->size));
    }
    return o;
}

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
        json_object *published = published_object(&r->published);
        if (published)
            json_object_object_add(o, "published", published);
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

/* The byte count field key of o: an integer, 0 to 2^62 (past that no
 * file is real, and block arithmetic would overflow); false otherwise. */
static bool size_field(json_object *o, const char *key, uint64_t *out)
{
    json_object *v;
    if (!int_field(o, key, &v))
        return false;
    const int64_t bytes = json_object_get_int64(v);
    if (bytes < 0 || bytes > INT64_C(1) << 62)
        return false;
    *out = (uint64_t)bytes;
    return true;
}

/* The record's published object, when it has one, into *p: NULL, or
 * what is wrong with it. */
static const char *fill_published(json_object *o, ggfs_published *p)
{
    json_object *v, *kind, *digest, *where;
    memset(p, 0, sizeof *p);
    if (!json_object_object_get_ex(o, "published", &v) || !v)
        return NULL;
    if (!json_object_is_type(v, json_type_object) || !size_field(v, "size", &p->size))
        return "published: no size";
    if (!json_object_object_get_ex(v, "kind", &kind) || !kind)
        return NULL; // a size alone
    const char *k = json_object_is_type(kind, json_type_string) ? json_object_get_string(kind) : "";
    const ggfs_published_kind kinds[] = {GGFS_PUBLISHED_SHA256, GGFS_PUBLISHED_MD5};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(k, ggfs_published_kind_name(kinds[i])) != 0)
            continue;
        if (!json_object_object_get_ex(v, "digest", &digest) || !json_object_is_type(digest, json_type_string) ||
            !json_object_object_get_ex(v, "where", &where) || !json_object_is_type(where, json_type_string))
            return "published: no digest or where";
        const char *w = json_object_get_string(where);
        for (size_t j = 0; w[j]; j++)
            if ((unsigned char)w[j] < 0x20 || w[j] == 0x7f)
                return "published: where is not one line of text";
        const uint64_t size = p->size;
        if (!ggfs_published_set_hex(p, kinds[i], json_object_get_string(digest),
                                    (size_t)json_object_get_string_len(digest), json_object_get_string(where)))
            return "published: the digest is not hex of its kind's length";
        p->size = size;
        return NULL;
    }
    return "published: no kind sha256 or md5";
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
    if (!size_field(o, "size", &out->size))
        return "size out of range";
    if (!string_field(o, "etag", true, &out->etag) || !string_field(o, "last_modified", true, &out->last_modified) ||
        (!out->etag && !out->last_modified))
        return "no etag or last_modified";
    if (!int_field(o, "mtime", &mtime))
        return "no mtime";
    out->mtime = json_object_get_int64(mtime);
    return fill_published(o, &out->published);
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
