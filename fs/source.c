/*
 * Choosing the kind of source a name denotes. A name with a URL scheme
 * goes to the source of that scheme; anything else is a local path.
 */
#include <stdio.h>
#include <string.h>

#include "source.h"

typedef struct source_kind {
    const char *prefix;  // "scheme://"
    ggfs_source *(*open)(const char *name, ggp_error *err);
} source_kind;

static const source_kind kinds[] = {
    {NULL, NULL}, // remote schemes are listed here, before the terminator
};

ggfs_source *ggfs_source_open(const char *name, ggp_error *err)
{
    for (const source_kind *k = kinds; k->prefix; k++) {
        if (strncmp(name, k->prefix, strlen(k->prefix)) == 0)
            return k->open(name, err);
    }
    if (strstr(name, "://")) {
        *err = (ggp_error){GGP_ERR_IO, 0, ""};
        snprintf(err->msg, sizeof err->msg, "cannot open: unknown URL scheme");
        return NULL;
    }
    return ggfs_source_file_open(name, err);
}
