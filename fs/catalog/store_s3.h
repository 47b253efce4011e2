/*
 * An S3 bucket, or a prefix of one, as a catalog's root store
 * (store_s3.c; SPEC "S3 buckets").
 */
#ifndef GGFS_CATALOG_STORE_S3_H
#define GGFS_CATALOG_STORE_S3_H

#include <stdbool.h>
#include <stddef.h>

#include "source/remote_engine.h"

typedef struct ggfs_s3_bucket ggfs_s3_bucket;

/* Whether name is s3://BUCKET[/PREFIX], a folder of models, and not one
 * object: its key is empty or does not end in .gguf. */
bool ggfs_s3_is_collection(const char *name);

/* Lists the top of the bucket or prefix through remote (the mount's first
 * request, so that S3's own error code is had). NULL with why (cap bytes,
 * one line naming the bucket and S3's code) when refused. The catalog
 * frees it (ggfs_store_s3.root_free). */
ggfs_s3_bucket *ggfs_s3_bucket_open(ggfs_remote_engine *remote, const char *name, char *why, size_t cap);

#endif
