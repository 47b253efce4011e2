/*
 * Where an s3:// name's requests go and how they are signed: its bucket
 * and key, the mount's endpoint (s3_url.h), and a signer holding the
 * credentials found for it (s3_credentials.h, s3_sign.h).
 */
#ifndef GGFS_SOURCE_S3_TARGET_H
#define GGFS_SOURCE_S3_TARGET_H

#include <stdbool.h>
#include <stddef.h>

#include "source/remote.h"
#include "source/s3_sign.h"
#include "source/s3_url.h"
#include "source/secret_origin.h"

typedef struct ggfs_s3_target {
    char bucket[GGFS_S3_BUCKET_MAX];
    char *key;                 // malloc'ed; "" for the whole bucket
    ggfs_s3_endpoint endpoint;
    ggfs_s3_signer *signer;
    ggfs_secret secret;        // the signer, bound to the bucket's origin:
                               // what every request of the bucket carries
} ggfs_s3_target;

/* Fills t for name with the mount's options. False, with why filled in
 * one line (never holding a secret), when the name is no s3:// name, or
 * credentials or the endpoint cannot be had. Release with
 * ggfs_s3_target_close. */
bool ggfs_s3_target_open(const char *name, const ggfs_remote_options *opts, ggfs_s3_target *t, char *why,
                         size_t why_size);

void ggfs_s3_target_close(ggfs_s3_target *t);

#endif
