/*
 * The table of source kinds: which source a name denotes (a URL scheme,
 * else a local path), and where the file part of a name ends. The table
 * alone knows the schemes.
 */
#ifndef GGFS_SOURCE_SOURCE_TABLE_H
#define GGFS_SOURCE_SOURCE_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "ggp.h"
#include "source/source.h"

/* Opens the source `name` names: a URL by its scheme (remote sources are
 * opened with `remote`, which is NULL when the mount has none), else a
 * local path. On failure returns NULL and fills err (code GGP_ERR_IO, msg
 * without the name, which the caller prints). */
ggfs_source *ggfs_source_open(const char *name, ggfs_remote_engine *remote, ggp_error *err);

/* Whether name has the URL scheme of a remote source (http://, https://,
 * hf://), which ggfs_source_open opens only with a ggfs_remote_engine. */
bool ggfs_source_is_remote(const char *name);

/* Where the file part of a name ends: before a URL's query or fragment,
 * before an hf:// name's @REVISION, else at its end. Split-set names are
 * matched on name[0, end). */
size_t ggfs_source_name_end(const char *name);

#endif
