/*
 * Finding a mount's backing device in /proc/self/mountinfo and setting its
 * read-ahead in sysfs. The mount point cannot be stat'ed for its device
 * here: that would wait on this very daemon, whose loop is not running yet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/kernel_readahead.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* The "major:minor" of the last mount on mountpoint, into dev. */
static bool find_mount_device(const char *mountpoint, char *dev, size_t devsize)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f)
        return false;
    char *line = NULL;
    size_t cap = 0;
    bool found = false;
    while (getline(&line, &cap, f) > 0) {
        // id parent major:minor root mountpoint ...
        char *save = NULL;
        strtok_r(line, " ", &save);
        strtok_r(NULL, " ", &save);
        const char *majmin = strtok_r(NULL, " ", &save);
        strtok_r(NULL, " ", &save);
        char *point = strtok_r(NULL, " ", &save);
        if (!majmin || !point)
            continue;
        unescape_octal(point);
        if (strcmp(point, mountpoint) == 0 && strlen(majmin) < devsize) {
            strcpy(dev, majmin);
            found = true;
        }
    }
    free(line);
    fclose(f);
    if (!found)
        errno = ENOENT;
    return found;
}

bool ggfs_set_mount_readahead(const char *mountpoint, unsigned kb)
{
    char *real = realpath(mountpoint, NULL);
    char dev[32];
    const bool found = real && find_mount_device(real, dev, sizeof dev);
    free(real);
    if (!found)
        return false;
    char path[96];
    snprintf(path, sizeof path, "/sys/class/bdi/%s/read_ahead_kb", dev);
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    const bool ok = fprintf(f, "%u\n", kb) > 0;
    return fclose(f) == 0 && ok;
}
