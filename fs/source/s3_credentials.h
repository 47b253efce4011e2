/*
 * The credentials and region S3 requests are signed with, found in the
 * order AWS's own tools look: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN; else the AWS_PROFILE (else "default") section of the
 * shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 * ~/.aws/credentials). The region: AWS_REGION, AWS_DEFAULT_REGION, the
 * profile's `region` in the config file (AWS_CONFIG_FILE, else
 * ~/.aws/config; sections [default] and [profile NAME]), else us-east-1.
 *
 * The secret and the token are never printed: messages name where the
 * credentials came from, not what they are.
 */
#ifndef GGFS_SOURCE_S3_CREDENTIALS_H
#define GGFS_SOURCE_S3_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>

#define GGFS_S3_DEFAULT_REGION "us-east-1"

typedef struct ggfs_s3_credentials {
    bool anonymous;       // -o no_sign_request: requests go unsigned
    char access[128];     // the access key id
    char secret[128];     // the secret access key
    char *token;          // the session token (malloc'ed), or NULL
    char region[64];
    char from[160];       // where the key came from, for messages
} ggfs_s3_credentials;

/* Fills c. With no_sign, only the region. False, with why filled (naming
 * the variables and files looked at, never a secret), when no credentials
 * are found or a file holds half of a pair. Release with
 * ggfs_s3_credentials_clear. */
bool ggfs_s3_credentials_load(bool no_sign, ggfs_s3_credentials *c, char *why, size_t why_size);

/* Wipes the secret and the token, and frees the token. */
void ggfs_s3_credentials_clear(ggfs_s3_credentials *c);

#endif
