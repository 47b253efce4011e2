/*
 * Signing S3 requests with AWS Signature Version 4, as a hook of the HTTP
 * engine (http.h's ggfs_http_auth): libcurl's CURLOPT_AWS_SIGV4
 * ("aws:amz:REGION:s3") computes the signature; what the libcurl of
 * Debian 12 (7.88) leaves out is added here: the x-amz-content-sha256
 * header (the hash of the empty body: every request is a GET), and
 * x-amz-security-token for session credentials. Both are x-amz-* headers,
 * which libcurl signs with the others. The query must already be in
 * canonical form (s3_url.h).
 */
#ifndef GGFS_SOURCE_S3_SIGN_H
#define GGFS_SOURCE_S3_SIGN_H

#include "source/http.h"
#include "source/s3_credentials.h"

typedef struct ggfs_s3_signer ggfs_s3_signer;

/* Takes c over (the caller's copy is left cleared). NULL when out of
 * memory. An anonymous c signs nothing. */
ggfs_s3_signer *ggfs_s3_signer_new(ggfs_s3_credentials *c);

/* The hook to put in ggfs_http_range.auth. */
const ggfs_http_auth *ggfs_s3_signer_auth(const ggfs_s3_signer *s);

/* The region requests are signed for. */
const char *ggfs_s3_signer_region(const ggfs_s3_signer *s);

/* Wipes the credentials. NULL: nothing. */
void ggfs_s3_signer_free(ggfs_s3_signer *s);

#endif
