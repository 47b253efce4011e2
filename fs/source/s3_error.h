/*
 * S3's errors in its own words: the XML body of a failed request
 * (<Error><Code>...</Code><Message>...</Message>...</Error>), read with
 * libexpat, and the one line the program says about it, naming the bucket
 * and S3's code.
 */
#ifndef GGFS_SOURCE_S3_ERROR_H
#define GGFS_SOURCE_S3_ERROR_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ggfs_s3_error {
    char code[64];      // "NoSuchKey", ...; "" when the body names none
    char message[160];  // S3's sentence, cut to fit
    char region[64];    // <Region>, when S3 names the bucket's region
} ggfs_s3_error;

/* Reads an error body (xml[0, len), not trusted: any bytes). False when
 * it is no well-formed <Error> document; e is then all "". */
bool ggfs_s3_error_parse(const char *xml, size_t len, ggfs_s3_error *e);

/* One line into why: "bucket 'B': STATUS CODE: what it means", from the
 * status, the body (or NULL) and the x-amz-bucket-region header (or "").
 * A 301, or a code naming another region, says which region to set. */
void ggfs_s3_error_explain(const char *bucket, long status, const char *body, size_t len,
                           const char *region_header, char *why, size_t why_size);

#endif
