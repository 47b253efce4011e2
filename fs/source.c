/*
 * Choosing the kind of source a name denotes. A name with a URL scheme
 * goes to the source of that scheme; anything else is a local path.
 */
#include <stdio.h>
#include <string.h>

#include "remote.h"
#include "source.h"

typedef struct source_kind {
    const char *prefix;  // "scheme://"
    ggfs_source *(*open)(const char *name, ggfs_remote *remote, ggp_error *err);
} source_kind;

static const source_kind kinds[] = {
    {"http://", ggfs_source_http_open},
    {"https://", ggfs_source_http_open},
    {"hf://", ggfs_source_http_open},
    {NULL, NULL},
};

ggfs_source *ggfs_source_open(const char *name, ggfs_remote *remote, ggp_error *err)
{
    for (const source_kind *k = kinds; k->prefix; k++) {
        if (strncmp(name, k->prefix, strlen(k->prefix)) != 0)
            continue;
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
