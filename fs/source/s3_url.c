/*
 * S3 names, endpoints and canonical URLs (s3_url.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/s3_url.h"
#include "util/url_text.h"

#define QUERY_PARAMS_MAX 8

bool ggfs_s3_name_split(const char *name, char bucket[GGFS_S3_BUCKET_MAX], const char **key, char *why,
                        size_t why_size)
{
    if (strncmp(name, GGFS_S3_SCHEME, strlen(GGFS_S3_SCHEME)) != 0) {
        snprintf(why, why_size, "not an s3:// name");
        return false;
    }
    const char *b = name + strlen(GGFS_S3_SCHEME);
    const size_t n = strcspn(b, "/");
    if (n == 0 || n >= GGFS_S3_BUCKET_MAX) {
        snprintf(why, why_size, "the bucket's name must be 1 to %d bytes (s3://BUCKET/KEY)", GGFS_S3_BUCKET_MAX - 1);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ||
              (c >= 'A' && c <= 'Z'))) {
            snprintf(why, why_size, "byte %zu of the bucket's name is not a letter, digit, '.', '-' or '_'",
                     i);
            return false;
        }
    }
    memcpy(bucket, b, n);
    bucket[n] = '\0';
    *key = b[n] == '/' ? b + n + 1 : b + n;
    return true;
}

/* An endpoint from the user: http(s)://..., kept without its final '/'. */
static bool take_endpoint(const char *url, const char *from, ggfs_s3_endpoint *ep, char *why, size_t why_size)
{
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        snprintf(why, why_size, "%s: the endpoint must be an http:// or https:// URL", from);
        return false;
    }
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    if (n >= sizeof ep->base) {
        snprintf(why, why_size, "%s: the endpoint is longer than %zu bytes", from, sizeof ep->base - 1);
        return false;
    }
    memcpy(ep->base, url, n);
    ep->base[n] = '\0';
    ep->path_style = true;
    return true;
}

bool ggfs_s3_endpoint_choose(const char *given, const char *region, bool path_style, ggfs_s3_endpoint *ep,
                             char *why, size_t why_size)
{
    if (given && *given)
        return take_endpoint(given, "-o endpoint", ep, why, why_size);
    const char *env = getenv("AWS_ENDPOINT_URL_S3");
    if (env && *env)
        return take_endpoint(env, "AWS_ENDPOINT_URL_S3", ep, why, why_size);
    env = getenv("AWS_ENDPOINT_URL");
    if (env && *env)
        return take_endpoint(env, "AWS_ENDPOINT_URL", ep, why, why_size);
    snprintf(ep->base, sizeof ep->base, "https://s3.%s.amazonaws.com", region);
    ep->path_style = path_style;
    return true;
}


static int by_name(const void *a, const void *b)
{
    return strcmp(((const ggfs_s3_param *)a)->name, ((const ggfs_s3_param *)b)->name);
}

/* "?a=1&b=2", sorted by name (SigV4 sorts by the encoded name; the
 * program's names are all unreserved bytes, so the order is the same). */
static bool append_query(char *out, size_t cap, const ggfs_s3_param *params, size_t n)
{
    ggfs_s3_param sorted[QUERY_PARAMS_MAX];
    size_t m = 0;
    for (size_t i = 0; i < n && m < QUERY_PARAMS_MAX; i++)
        if (params[i].value)
            sorted[m++] = params[i];
    qsort(sorted, m, sizeof *sorted, by_name);
    for (size_t i = 0; i < m; i++) {
        if (!ggfs_url_append(out, cap, i == 0 ? "?" : "&") ||
            !ggfs_url_append_escaped(out, cap, sorted[i].name, strlen(sorted[i].name), false) ||
            !ggfs_url_append(out, cap, "=") ||
            !ggfs_url_append_escaped(out, cap, sorted[i].value, strlen(sorted[i].value), false))
            return false;
    }
    return true;
}

char *ggfs_s3_url(const ggfs_s3_endpoint *ep, const char *bucket, const char *key, const ggfs_s3_param *params,
                  size_t n, size_t max)
{
    char *out = calloc(1, max);
    if (!out)
        return NULL;
    bool ok;
    if (ep->path_style || strchr(bucket, '.')) {
        ok = ggfs_url_append(out, max, ep->base) && ggfs_url_append(out, max, "/") &&
             ggfs_url_append(out, max, bucket) && ggfs_url_append(out, max, "/");
    } else {
        // https://s3.REGION... becomes https://BUCKET.s3.REGION...
        const char *host = strstr(ep->base, "://") + 3;
        snprintf(out, max, "%.*s%s.%s/", (int)(host - ep->base), ep->base, bucket, host);
        ok = strlen(out) + 1 < max;
    }
    ok = ok && ggfs_url_append_escaped(out, max, key, strlen(key), true) && append_query(out, max, params, n);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}
