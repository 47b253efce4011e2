/*
 * S3's XML (fs/source/s3_error.h, s3_list.h): the input is read as an
 * error body (parsed, then explained with a status taken from its length)
 * and as every page of a ListObjectsV2 listing under a prefix (each page
 * the same bytes: a truncated one pages on until the listing's guard
 * stops it); every name listed must be one plain component (no '/', not
 * empty, '.' or '..', at most 255 bytes) and the strings S3's error fills
 * NUL-terminated.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/s3_error.h"
#include "source/s3_list.h"
#include "util/log.h"
#include "quiet_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const char *name)
{
    const size_t n = strlen(name);
    if (n == 0 || n > 255 || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        abort();
}

typedef struct input {
    const char *xml;
    size_t len;
    unsigned pages;
} input;

/* Every page is the input again. */
static bool serve(void *ctx, const char *url, char **body, size_t *len, char *why, size_t why_size)
{
    (void)url, (void)why, (void)why_size;
    input *in = ctx;
    if (++in->pages > 20000)
        abort(); // the listing's guard let it page on
    *body = malloc(in->len + 1);
    if (!*body)
        return false;
    memcpy(*body, in->xml, in->len);
    (*body)[in->len] = '\0';
    *len = in->len;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ggfs_log_set_sink(quiet);
    const char *xml = (const char *)data;
    ggfs_s3_error e;
    if (ggfs_s3_error_parse(xml, size, &e) &&
        (!memchr(e.code, '\0', sizeof e.code) || !memchr(e.message, '\0', sizeof e.message) ||
         !memchr(e.region, '\0', sizeof e.region)))
        abort();
    char why[256];
    const long statuses[] = {301, 400, 403, 404, 503};
    ggfs_s3_error_explain("bucket", statuses[size % 5], xml, size, size % 2 ? "eu-west-1" : "", why, sizeof why);
    if (!memchr(why, '\0', sizeof why))
        abort();

    ggfs_s3_target t;
    memset(&t, 0, sizeof t);
    strcpy(t.bucket, "bucket");
    t.key = (char *)"models/";
    snprintf(t.endpoint.base, sizeof t.endpoint.base, "http://s3.test");
    t.endpoint.path_style = true;
    ggfs_s3_listing l;
    input in = {xml, size, 0};
    if (ggfs_s3_list_from(serve, &in, &t, 64, 0, &l, why, sizeof why)) {
        if (l.n_objects + l.n_prefixes > 64)
            abort();
        for (size_t i = 0; i < l.n_objects; i++)
            check_name(l.objects[i].name);
        for (size_t i = 0; i < l.n_prefixes; i++)
            check_name(l.prefixes[i]);
        ggfs_s3_listing_free(&l);
    }
    return 0;
}
