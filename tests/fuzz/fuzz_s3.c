/*
 * S3's XML (fs/source/s3_error.h, s3_list.h): the input is read as an
 * error body (parsed, then explained with a status taken from its length)
 * and as one page of a ListObjectsV2 listing under a prefix; every name
 * listed must be a plain path under it (no empty, '.' or '..' component,
 * no NUL) and the strings S3's error fills NUL-terminated.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/s3_error.h"
#include "source/s3_list.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_name(const char *name, bool is_prefix)
{
    const size_t n = strlen(name);
    if (n == 0 && is_prefix)
        abort();
    for (const char *c = name; c <= name + n;) {
        const size_t part = strcspn(c, "/");
        if (part == 0 || (part == 1 && c[0] == '.') || (part == 2 && c[0] == '.' && c[1] == '.'))
            abort();
        c += part + 1;
    }
}

/* Log lines (a key left out) are formatted, not written: the fuzzer's
 * output stays its own. */
static void quiet(int level, const char *fmt, va_list ap)
{
    (void)level;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
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
    ggfs_s3_listing l;
    if (ggfs_s3_list_read(&t, t.key, 64, xml, size, &l, why, sizeof why)) {
        if (l.n_objects + l.n_prefixes > 64)
            abort();
        for (size_t i = 0; i < l.n_objects; i++)
            check_name(l.objects[i].name, false);
        for (size_t i = 0; i < l.n_prefixes; i++)
            check_name(l.prefixes[i], true);
        ggfs_s3_listing_free(&l);
    }
    return 0;
}
