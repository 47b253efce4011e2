/*
 * What is published for a local file: the digest its store names it by
 * (a blob of a Hugging Face hub cache or of an Ollama store), or a line of
 * a FILE.sha256 or SHA256SUMS beside it (sha256sum's format, sums.h).
 * Looked up when `verify` is computed, so that a mount that never verifies
 * reads nothing more, and a sums file written after the mount is found.
 *
 * The rules, the first that applies:
 *
 *   1. the file or a link on the way to it (each link's directory
 *      resolved) is a blob named by the SHA-256 of its bytes:
 *      .../models--ORG--NAME/blobs/<64 hex>  (datasets--, spaces-- too)
 *      .../blobs/sha256-<64 hex>             (an Ollama store)
 *      where "blob name";
 *   2. DIR/FILE.sha256 beside DIR/FILE, its first line the digest: where
 *      "FILE.sha256" (the file's own name);
 *   3. DIR/SHA256SUMS with a line for FILE (or ./FILE): where "SHA256SUMS".
 *
 * FILE is the path's last component as given, not resolved: a link to a
 * model is checked against what is published beside the link. A sums file
 * that is no regular file (a FIFO, a device) is not opened; of one, at
 * most GGFS_PUBLISHED_SUMS_MAX bytes are read.
 */
#ifndef GGFS_SOURCE_PUBLISHED_LOCAL_H
#define GGFS_SOURCE_PUBLISHED_LOCAL_H

#include "source/published.h"

#define GGFS_PUBLISHED_SUMS_MAX (16u << 20) // bytes of a SHA256SUMS read
#define GGFS_PUBLISHED_SUMS_NAME "SHA256SUMS"
#define GGFS_PUBLISHED_SUFFIX ".sha256"

/* Fills *out for the local file at path (absolute, or relative to the
 * working directory; as the model's source names it, links unresolved):
 * kind GGFS_PUBLISHED_NONE when nothing is published or the lookup failed
 * (a path too long, a sums file unreadable: nothing is logged). */
void ggfs_published_local(const char *path, ggfs_published *out);

#endif
