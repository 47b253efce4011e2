/*
 * Building small file trees for the catalog's unit tests: a fresh
 * directory under $TMPDIR, files with given bytes, symlinks, FIFOs, checks
 * run as a user that is not root, and removal of the whole tree
 * afterwards.
 */
#ifndef GGFS_TMPTREE_H
#define GGFS_TMPTREE_H

#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The start of a GGUF v3 header: enough for a magic check. */
static const char tmptree_gguf_magic[8] = {'G', 'G', 'U', 'F', 3, 0, 0, 0};

/* Makes a fresh directory; returns its malloc'ed path, or NULL. */
static inline char *tmptree_new(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/ggfs-test-XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(tmpl))
        return NULL;
    return strdup(tmpl);
}

/* root/rel into out: false when it does not fit. Copied by hand, not with
 * snprintf: gcc's -Wformat-truncation (at -O0 with the sanitizers) cannot
 * see that a truncated snprintf is checked. */
static inline bool tmptree_path(char *out, size_t cap, const char *root, const char *rel)
{
    const size_t a = strlen(root), b = strlen(rel);
    if (a >= cap || b >= cap - a - 1)
        return false;
    memcpy(out, root, a);
    out[a] = '/';
    memcpy(out + a + 1, rel, b + 1);
    return true;
}

/* mkdir -p root/rel */
static inline bool tmptree_dir(const char *root, const char *rel)
{
    char p[4096];
    if (!tmptree_path(p, sizeof p, root, rel))
        return false;
    for (char *s = p + strlen(root) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && access(p, F_OK) != 0)
                return false;
            *s = '/';
        }
    }
    return mkdir(p, 0755) == 0 || access(p, F_OK) == 0;
}

/* Writes len bytes to root/rel, making its directories. */
static inline bool tmptree_file(const char *root, const char *rel, const void *bytes, size_t len)
{
    char p[4096];
    if (!tmptree_path(p, sizeof p, root, rel))
        return false;
    char *slash = strrchr(p, '/');
    if (slash > p + strlen(root)) {
        *slash = '\0';
        if (!tmptree_dir(root, p + strlen(root) + 1))
            return false;
        *slash = '/';
    }
    FILE *fp = fopen(p, "wb");
    if (!fp)
        return false;
    const bool ok = fwrite(bytes, 1, len, fp) == len;
    return fclose(fp) == 0 && ok;
}

static inline bool tmptree_text(const char *root, const char *rel, const char *text)
{
    return tmptree_file(root, rel, text, strlen(text));
}

static inline bool tmptree_gguf(const char *root, const char *rel)
{
    return tmptree_file(root, rel, tmptree_gguf_magic, sizeof tmptree_gguf_magic);
}

/* root/rel becomes a symlink holding target, verbatim. */
static inline bool tmptree_link(const char *root, const char *rel, const char *target)
{
    char p[4096];
    return tmptree_path(p, sizeof p, root, rel) && symlink(target, p) == 0;
}

static inline bool tmptree_fifo(const char *root, const char *rel)
{
    char p[4096];
    return tmptree_path(p, sizeof p, root, rel) && mkfifo(p, 0644) == 0;
}

static inline bool tmptree_chmod(const char *root, const char *rel, mode_t mode)
{
    char p[4096];
    return tmptree_path(p, sizeof p, root, rel) && chmod(p, mode) == 0;
}

/* Runs check (a test function: 1 when it passed) in a child process as a
 * user that is not root, nobody when run as root (root reads anything),
 * so that files of mode 0 are unreadable; the tree must be traversable by
 * others. Returns 1 when the check passed there. */
static inline int tmptree_as_nobody(int (*check)(void))
{
    const pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) {
            fprintf(stderr, "tmptree: cannot become nobody\n");
            _exit(2);
        }
        _exit(check() ? 0 : 1);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "tmptree: the check as nobody ended with status %d\n", status);
        return 0;
    }
    return 1;
}

/* The number of entries of dir but . and .., or -1 when it cannot be read. */
static inline int tmptree_count(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static inline int tmptree_remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(p);
    return 0;
}

/* Removes the tree (a test that made a directory unreadable opens it up
 * again first) and frees root. */
static inline void tmptree_free(char *root)
{
    if (!root)
        return;
    nftw(root, tmptree_remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(root);
}

#endif
