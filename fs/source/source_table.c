/*
 * The table of source kinds (source_table.h): a name with a URL scheme
 * goes to the source of that scheme; anything else is a local path.
 */
#include <stdio.h>
#include <string.h>

#include "source/hf_name.h"
#include "source/remote_engine.h"
#include "source/source.h"
#include "source/source_table.h"

typedef struct source_kind {
    const char *prefix;  // "scheme://"
    ggfs_source *(*open)(const char *name, ggfs_remote_engine *remote, ggp_error *err);
    size_t (*name_end)(const char *name);
} source_kind;

/* A URL's path ends before its query or fragment. */
static size_t url_name_end(const char *name)
{
    return strcspn(name, "?#");
}

/* An S3 key may hold '?' and '#': the name is all path. */
static size_t s3_name_end(const char *name)
{
    return strlen(name);
}

static const source_kind kinds[] = {
    {"http://", ggfs_remote_engine_open, url_name_end},
    {"https://", ggfs_remote_engine_open, url_name_end},
    {"hf://", ggfs_remote_engine_open, ggfs_hf_name_end},
    {"s3://", ggfs_remote_engine_open, s3_name_end},
    {NULL, NULL, NULL},
};

static const source_kind *kind_of(const char *name)
{
    for (const source_kind *k = kinds; k->prefix; k++)
        if (strncmp(name, k->prefix, strlen(k->prefix)) == 0)
            return k;
    return NULL;
}

bool ggfs_source_is_remote(const char *name)
{
    return kind_of(name) != NULL;
}

size_t ggfs_source_name_end(const char *name)
{
    const source_kind *k = kind_of(name);
    return k ? k->name_end(name) : strlen(name);
}

ggfs_source *ggfs_source_open(const char *name, ggfs_remote_engine *remote, ggp_error *err)
{
    const source_kind *k = kind_of(name);
    if (k) {
        if (!remote) {
            *err = (ggp_error){GGP_ERR_IO, 0, "cannot open: remote sources are not set up"};
            return NULL;
        }
        return k->open(name, remote, err);
    }
    if (strstr(name, "://")) {
        *err = (ggp_error){GGP_ERR_IO, 0, ""};
        snprintf(err->msg, sizeof err->msg, "cannot open: unknown URL scheme");
        return NULL;
    }
    return ggfs_source_file_open(name, err);
}
