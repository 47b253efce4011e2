/*
 * S3's error bodies (s3_error.h).
 */
#include <expat.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "source/s3_error.h"

typedef struct reading {
    ggfs_s3_error *e;
    int depth;
    bool is_error;       // the root is <Error>
    char *field;         // the field of the element being read, or NULL
    size_t field_size;
} reading;

static void on_start(void *user, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    reading *r = user;
    r->depth++;
    r->field = NULL;
    if (r->depth == 1) {
        r->is_error = strcmp(name, "Error") == 0;
    } else if (r->depth == 2 && r->is_error) {
        if (strcmp(name, "Code") == 0)
            r->field = r->e->code, r->field_size = sizeof r->e->code;
        else if (strcmp(name, "Message") == 0)
            r->field = r->e->message, r->field_size = sizeof r->e->message;
        else if (strcmp(name, "Region") == 0)
            r->field = r->e->region, r->field_size = sizeof r->e->region;
    }
}

static void on_end(void *user, const XML_Char *name)
{
    (void)name;
    reading *r = user;
    r->depth--;
    r->field = NULL;
}

/* Text arrives in pieces: each is appended, cut at the field's size. */
static void on_text(void *user, const XML_Char *s, int len)
{
    reading *r = user;
    if (!r->field || len <= 0)
        return;
    const size_t at = strlen(r->field);
    size_t n = (size_t)len;
    if (n > r->field_size - 1 - at)
        n = r->field_size - 1 - at;
    memcpy(r->field + at, s, n);
    r->field[at + n] = '\0';
}

bool ggfs_s3_error_parse(const char *xml, size_t len, ggfs_s3_error *e)
{
    memset(e, 0, sizeof *e);
    if (!xml || len == 0 || len > (size_t)INT32_MAX)
        return false;
    XML_Parser p = XML_ParserCreate("UTF-8");
    if (!p)
        return false;
    reading r = {.e = e};
    XML_SetUserData(p, &r);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetCharacterDataHandler(p, on_text);
    const bool ok = XML_Parse(p, xml, (int)len, 1) == XML_STATUS_OK && r.is_error;
    XML_ParserFree(p);
    if (!ok)
        memset(e, 0, sizeof *e);
    return ok;
}

/* What each code S3 refuses a mount with means to the user. */
static const struct {
    const char *code;
    const char *meaning;
} meanings[] = {
    {"SignatureDoesNotMatch", "the signature does not match: is the secret key right?"},
    {"InvalidAccessKeyId", "S3 does not know this access key id"},
    {"AccessDenied", "access denied to these credentials"},
    {"InvalidToken", "the session token is not valid"},
    {"ExpiredToken", "the session token has expired"},
    {"NoSuchBucket", "no such bucket"},
    {"NoSuchKey", "no such key"},
    {"RequestTimeTooSkewed", "the clock is off: this machine's time and S3's differ by over 15 minutes"},
    {"SlowDown", "S3 asks to slow down"},
};

void ggfs_s3_error_explain(const char *bucket, long status, const char *body, size_t len,
                           const char *region_header, char *why, size_t why_size)
{
    ggfs_s3_error e;
    ggfs_s3_error_parse(body, len, &e);
    const char *region = region_header && *region_header ? region_header : e.region;
    if (!e.code[0] && status == 301)
        strcpy(e.code, "PermanentRedirect");
    if (region[0] && (status == 301 || strcmp(e.code, "AuthorizationHeaderMalformed") == 0 ||
                      strcmp(e.code, "PermanentRedirect") == 0)) {
        snprintf(why, why_size, "bucket '%s': %ld %s: the bucket is in region %.40s (set AWS_REGION=%.40s)",
                 bucket, status, e.code, region, region);
        return;
    }
    if (!e.code[0]) {
        snprintf(why, why_size, "bucket '%s': HTTP %ld, without S3's error code", bucket, status);
        return;
    }
    const char *meaning = e.message;
    for (size_t i = 0; i < sizeof meanings / sizeof meanings[0]; i++)
        if (strcmp(e.code, meanings[i].code) == 0)
            meaning = meanings[i].meaning;
    snprintf(why, why_size, "bucket '%s': %ld %s: %s", bucket, status, e.code, meaning);
}
