/*
 * What is published for a local file (published_local.h): the links on the
 * way to it read one at a time, each in its directory resolved, so that a
 * blob is known by the name its store gave it even when it is itself a
 * link (a hub cache's blob into the store of blobs its repositories
 * share, named by another hash); then the sums files beside it, each
 * opened only once it is known to be a regular file, and read to a bound.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source/published_local.h"
#include "source/sums.h"
#include "util/pread_full.h"
#include "util/text.h"

#define MAX_LINKS 40 // as the kernel's limit on the links of one lookup

/* dir/name into out (dir "/" gives "/name"); false when it does not fit. */
static bool join(char *out, size_t cap, const char *dir, const char *name)
{
    const size_t a = strcmp(dir, "/") == 0 ? 0 : strlen(dir), b = strlen(name);
    if (a + 1 + b >= cap)
        return false;
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
    return true;
}

/* path's directory as given into out: "." for a bare name, "/" for one at
 * the root; false when it does not fit. */
static bool dir_of(char *out, size_t cap, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dir = !slash ? "." : slash == path ? "/" : path;
    const size_t n = !slash || slash == path ? strlen(dir) : (size_t)(slash - path);
    if (n >= cap)
        return false;
    memcpy(out, dir, n);
    out[n] = '\0';
    return true;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* ==== Blobs named by their digest ==== */

/* Whether the directory name [s, s + n) is a hub cache's repository:
 * models--ORG--NAME, or a dataset's or a space's. */
static bool hub_repo(const char *s, size_t n)
{
    static const char *const kinds[] = {"models--", "datasets--", "spaces--"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        const size_t k = strlen(kinds[i]);
        if (n > k && strncmp(s, kinds[i], k) == 0)
            return true;
    }
    return false;
}

/* Whether dir/base (dir absolute and resolved) is a blob named by its
 * SHA-256; if so sets out. */
static bool blob(const char *dir, const char *base, ggfs_published *out)
{
    const char *parent = base_of(dir);
    if (strcmp(parent, "blobs") != 0)
        return false;
    const size_t n = strlen(base);
    // An Ollama store's blobs/sha256-HEX (its first versions wrote sha256:HEX).
    if (n == 7 + GGFS_SUMS_HEX && strncmp(base, "sha256", 6) == 0 && (base[6] == '-' || base[6] == ':') &&
        ggfs_lower_hex_span(base + 7, GGFS_SUMS_HEX) == GGFS_SUMS_HEX)
        return ggfs_published_set_hex(out, GGFS_PUBLISHED_SHA256, base + 7, GGFS_SUMS_HEX, "blob name");
    // A hub cache's models--ORG--NAME/blobs/HEX: the LFS oid, the file's SHA-256
    // (a blob of a file kept in git is named by its 40-hex git hash instead).
    if (n != GGFS_SUMS_HEX || ggfs_lower_hex_span(base, n) != n || parent < dir + 2)
        return false;
    const char *repo_end = parent - 1, *repo = repo_end;
    while (repo > dir && repo[-1] != '/')
        repo--;
    if (!hub_repo(repo, (size_t)(repo_end - repo)))
        return false;
    return ggfs_published_set_hex(out, GGFS_PUBLISHED_SHA256, base, n, "blob name");
}

/* Follows path link by link, asking `blob` of each. */
static bool blob_on_the_way(const char *path, ggfs_published *out)
{
    char cur[PATH_MAX], dir[PATH_MAX], real[PATH_MAX], at[PATH_MAX];
    if (strlen(path) >= sizeof cur)
        return false;
    strcpy(cur, path);
    for (int hop = 0; hop <= MAX_LINKS; hop++) {
        const char *base = base_of(cur);
        if (!base[0] || !dir_of(dir, sizeof dir, cur) || !realpath(dir, real))
            return false;
        if (blob(real, base, out))
            return true;
        struct stat st;
        if (!join(at, sizeof at, real, base) || lstat(at, &st) != 0 || !S_ISLNK(st.st_mode))
            return false;
        const ssize_t n = readlink(at, dir, sizeof dir);
        if (n <= 0 || (size_t)n >= sizeof dir)
            return false;
        dir[n] = '\0';
        if (dir[0] == '/')
            memcpy(cur, dir, (size_t)n + 1);
        else if (!join(cur, sizeof cur, real, dir))
            return false;
    }
    return false;
}

/* ==== Sums files beside it ==== */

/* At most cap bytes of the regular file at path, malloc'ed, into *text
 * (*len bytes); *whole when the file ended within them. False when it is
 * no regular file or cannot be read. */
static bool read_bounded(const char *path, size_t cap, char **text, size_t *len, bool *whole)
{
    struct stat st;
    // A FIFO or a device is never opened (opening some does something);
    // O_NONBLOCK and the fstat: for one renamed in between.
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return false;
    bool ok = false;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0) {
        // One byte more than wanted: whether the file goes on.
        const size_t want = (uint64_t)st.st_size < cap ? (size_t)st.st_size : cap;
        size_t got = 0;
        buf = malloc(want + 1);
        ok = buf && ggfs_pread_full(fd, buf, want + 1, 0, &got) == 0;
        *whole = got <= want;
        *len = got <= want ? got : want;
    }
    close(fd);
    if (!ok) {
        free(buf);
        return false;
    }
    *text = buf;
    return true;
}

/* "FILE.sha256" for where, its start cut when it does not fit. */
static void single_where(const char *base, char *where, size_t cap)
{
    const size_t n = strlen(base), suffix = strlen(GGFS_PUBLISHED_SUFFIX);
    if (n + suffix < cap) {
        snprintf(where, cap, "%s%s", base, GGFS_PUBLISHED_SUFFIX);
        return;
    }
    const size_t keep = cap - 1 - 3 - suffix; // after "..."
    snprintf(where, cap, "...%s%s", base + n - keep, GGFS_PUBLISHED_SUFFIX);
}

/* PATH.sha256's first line. */
static bool single(const char *path, ggfs_published *out)
{
    char name[PATH_MAX], hex[GGFS_SUMS_HEX], where[GGFS_PUBLISHED_WHERE_MAX];
    char *text;
    size_t len;
    bool whole;
    if (strlen(path) + strlen(GGFS_PUBLISHED_SUFFIX) >= sizeof name)
        return false;
    snprintf(name, sizeof name, "%s%s", path, GGFS_PUBLISHED_SUFFIX);
    // The digits and the byte after them: whether they end there.
    if (!read_bounded(name, GGFS_SUMS_HEX + 2, &text, &len, &whole))
        return false;
    const bool found = ggfs_sums_single(text, len, hex);
    free(text);
    if (!found)
        return false;
    single_where(base_of(path), where, sizeof where);
    return ggfs_published_set_hex(out, GGFS_PUBLISHED_SHA256, hex, GGFS_SUMS_HEX, where);
}

/* DIR/SHA256SUMS's line for FILE. */
static bool sums(const char *path, ggfs_published *out)
{
    char dir[PATH_MAX], name[PATH_MAX], hex[GGFS_SUMS_HEX];
    char *text;
    size_t len;
    bool whole;
    if (!dir_of(dir, sizeof dir, path) || !join(name, sizeof name, dir, GGFS_PUBLISHED_SUMS_NAME) ||
        !read_bounded(name, GGFS_PUBLISHED_SUMS_MAX, &text, &len, &whole))
        return false;
    const char *base = base_of(path);
    const bool found = ggfs_sums_find(text, len, whole, base, strlen(base), hex);
    free(text);
    return found && ggfs_published_set_hex(out, GGFS_PUBLISHED_SHA256, hex, GGFS_SUMS_HEX,
                                           GGFS_PUBLISHED_SUMS_NAME);
}

void ggfs_published_local(const char *path, ggfs_published *out)
{
    memset(out, 0, sizeof *out);
    if (!path[0] || !base_of(path)[0])
        return;
    if (!blob_on_the_way(path, out) && !single(path, out))
        sums(path, out);
}
