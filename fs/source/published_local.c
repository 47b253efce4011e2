/*
 * A local file's published digest (published_local.h): a blob's name.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "source/published_local.h"

void ggfs_published_local(const char *path, ggfs_published *out)
{
    memset(out, 0, sizeof *out);
    char *real = realpath(path, NULL);
    if (!real)
        return;
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    if (strncmp(base, "sha256-", 7) == 0)
        base += 7;
    ggfs_published_set_hex(out, GGFS_PUBLISHED_SHA256, base, strlen(base), "blob name");
    free(real);
}
