/*
 * What is published for a local file: the digest its store names it by
 * (a blob of a Hugging Face hub cache or of an Ollama store), or a line of
 * a SHA256SUMS or FILE.sha256 beside it. Looked up when `verify` is
 * computed, so that a mount that never verifies reads nothing more.
 */
#ifndef GGFS_SOURCE_PUBLISHED_LOCAL_H
#define GGFS_SOURCE_PUBLISHED_LOCAL_H

#include "source/published.h"

/* Fills *out for the local file at path (as its source names it); kind
 * GGFS_PUBLISHED_NONE when nothing is published. */
void ggfs_published_local(const char *path, ggfs_published *out);

#endif
