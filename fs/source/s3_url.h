/*
 * S3 names and the URLs they are fetched at: s3://BUCKET[/KEY] is the
 * object KEY (or the prefix KEY) of BUCKET. A store named by an endpoint
 * (-o endpoint=URL, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL: MinIO, Ceph's
 * RGW, R2, ...) is addressed path-style, ENDPOINT/BUCKET/KEY; AWS itself
 * virtual-hosted, https://BUCKET.s3.REGION.amazonaws.com/KEY, or
 * path-style with -o path_style (and for bucket names with dots, which
 * AWS's certificates do not cover as host names).
 *
 * Paths and queries are written already in SigV4's canonical form (each
 * byte but A-Z a-z 0-9 - _ . ~ as %XX, the query's parameters sorted by
 * name), because the libcurl of Debian 12 signs them as sent.
 */
#ifndef GGFS_SOURCE_S3_URL_H
#define GGFS_SOURCE_S3_URL_H

#include <stdbool.h>
#include <stddef.h>

#define GGFS_S3_SCHEME "s3://"
#define GGFS_S3_BUCKET_MAX 64 // S3's names are 3 to 63 bytes

/* Where a mount's S3 requests go. */
typedef struct ggfs_s3_endpoint {
    char base[512];   // scheme://host[:port][/path], without a final '/'
    bool path_style;  // BASE/BUCKET/KEY, else BUCKET. before the host
} ggfs_s3_endpoint;

/* Splits s3://BUCKET[/KEY] into bucket (at most GGFS_S3_BUCKET_MAX - 1
 * bytes of a-z 0-9 . - _) and *key (a pointer into name, "" when none).
 * False, with why filled, when name is not one. */
bool ggfs_s3_name_split(const char *name, char bucket[GGFS_S3_BUCKET_MAX], const char **key, char *why,
                        size_t why_size);

/* The endpoint: `given` (-o endpoint=URL, or NULL), else AWS_ENDPOINT_URL_S3,
 * else AWS_ENDPOINT_URL (all path-style), else AWS's endpoint of region
 * (virtual-hosted unless path_style). False, with why filled, when the
 * URL is not http:// or https:// or is too long. */
bool ggfs_s3_endpoint_choose(const char *given, const char *region, bool path_style, ggfs_s3_endpoint *ep,
                             char *why, size_t why_size);


/* One parameter of a query. */
typedef struct ggfs_s3_param {
    const char *name, *value; // raw; value NULL: the parameter is left out
} ggfs_s3_param;

/* The URL of key in bucket (key may be ""), with the query of the n
 * params sorted and encoded (none when n is 0): malloc'ed, NULL when out
 * of memory or longer than max bytes. */
char *ggfs_s3_url(const ggfs_s3_endpoint *ep, const char *bucket, const char *key, const ggfs_s3_param *params,
                  size_t n, size_t max);

#endif
