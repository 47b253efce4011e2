/*
 * An s3:// name's bucket, key, endpoint and signer (s3_target.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/s3_target.h"

bool ggfs_s3_target_open(const char *name, const ggfs_remote_options *opts, ggfs_s3_target *t, char *why,
                         size_t why_size)
{
    memset(t, 0, sizeof *t);
    const char *key;
    if (!ggfs_s3_name_split(name, t->bucket, &key, why, why_size))
        return false;
    ggfs_s3_credentials cred;
    if (!ggfs_s3_credentials_load(opts->s3_no_sign, &cred, why, why_size))
        return false;
    if (!ggfs_s3_endpoint_choose(opts->s3_endpoint, cred.region, opts->s3_path_style, &t->endpoint, why,
                                 why_size)) {
        ggfs_s3_credentials_clear(&cred);
        return false;
    }
    t->key = strdup(key);
    t->signer = t->key ? ggfs_s3_signer_new(&cred) : NULL;
    // The signature and the session token are the bucket's endpoint's:
    // a redirect elsewhere, or a target learned from one, gets neither.
    char *bucket_url = t->signer ? ggfs_s3_url(&t->endpoint, t->bucket, "", NULL, 0, 4096) : NULL;
    const bool bound = bucket_url && ggfs_secret_bind(&t->secret, GGFS_SECRET_AWS_SIGNATURE, bucket_url, NULL,
                                                      ggfs_s3_signer_auth(t->signer));
    free(bucket_url);
    if (!bound) {
        ggfs_s3_credentials_clear(&cred);
        ggfs_s3_target_close(t);
        snprintf(why, why_size, t->signer ? "the endpoint names no http(s) origin" : "out of memory");
        return false;
    }
    return true;
}

void ggfs_s3_target_close(ggfs_s3_target *t)
{
    ggfs_s3_signer_free(t->signer);
    free(t->key);
    t->signer = NULL;
    t->key = NULL;
}
