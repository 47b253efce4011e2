/*
 * A source of bytes: what a model's shard is read from. A source knows
 * nothing of GGUF; it reads [off, off + len) of something (a local file, a
 * URL), says whether that something is still what was opened, and gives the
 * owner, mode and times the tree shows.
 *
 * Adding a kind of source (S3, say) is one file implementing
 * ggfs_source_ops and one row in the table of source_table.c, which
 * opens the source a name denotes (source_table.h).
 */
#ifndef GGFS_SOURCE_SOURCE_H
#define GGFS_SOURCE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "ggp.h"
#include "source/published.h"

typedef struct ggfs_source ggfs_source;
struct ggfs_source_status;

/* What the remote sources of a mount share (source/remote.h). */
typedef struct ggfs_remote ggfs_remote;

/* The same as the program holds it: the module that has the remote
 * engine, loaded for the mount, and what it set up (source/remote_engine.h). */
typedef struct ggfs_remote_engine ggfs_remote_engine;

typedef struct ggfs_source_ops {
    /* Reads exactly len bytes at off into buf. `end` (at least off + len)
     * is where the reader's file ends among the source's bytes (a tensor's
     * last byte + 1, say): a source that reads ahead of sequential readers
     * does not pass it. Returns 0, or an errno: EIO when the source
     * changed, was cut short or kept failing (the source logs why, once per
     * cause). Safe to call from many threads. */
    int (*read)(ggfs_source *src, void *buf, size_t len, uint64_t off, uint64_t end);
    /* Whether the source still holds the bytes it held when opened. Cheap
     * enough to ask before every data read. */
    bool (*unchanged)(ggfs_source *src);
    /* Marks the source changed (a read found it cut short), logging why once. */
    void (*mark_changed)(ggfs_source *src, const char *why);
    void (*close)(ggfs_source *src);
    /* Optional, for sources that keep bytes in memory (a remote source's
     * blocks): fills iov (at most max entries) with [off, off + len) in
     * place, held until `unlend(src, *token)`, so that a reply gathers
     * them without a copy; bytes it does not hold are read into buf
     * instead (iov then points there, *token is NULL). end, and the
     * return value (0 or an errno), as for read. */
    int (*lend)(ggfs_source *src, void *buf, size_t len, uint64_t off, uint64_t end, struct iovec *iov,
                int max, int *n, void **token);
    /* Optional, with lend: lends [off, off + len) only when all of it is in
     * memory now, else returns EWOULDBLOCK having fetched and waited for
     * nothing, so that the thread that took the request may reply itself. */
    int (*lend_ready)(ggfs_source *src, size_t len, uint64_t off, uint64_t end, struct iovec *iov,
                      int max, int *n, void **token);
    void (*unlend)(ggfs_source *src, void *token);
    /* Optional: the model is open, and reads from now on are its users'
     * (a remote source starts following sequential readers only then, so
     * that the header's fetch brings nothing more). */
    void (*opened)(ggfs_source *src);
    /* Optional, for sources with caches (remote ones): brings [off, off +
     * len) into them in one try, skipping what they hold, on the calling
     * thread, which holds a connection of the mount's (fetcher.h).
     * Returns 0, or an errno (EIO: the server failed; the source logs
     * nothing). */
    int (*prefetch)(ggfs_source *src, uint64_t off, uint64_t len);
    /* Optional, with prefetch and lend: lends [off, off + len) as lend
     * does when all of it is in memory, fetching nothing and leaving
     * read-ahead as it was; the blocks lent are the first to leave memory
     * once unlent. Returns 0, or EAGAIN when some of it is not in memory
     * or it spans more than max blocks. */
    int (*lend_held)(ggfs_source *src, size_t len, uint64_t off, struct iovec *iov, int max, int *n,
                     void **token);
    /* Optional, with prefetch: what the source has done, for the `remote`
     * file (remote_status.h). */
    void (*status)(ggfs_source *src, struct ggfs_source_status *out);
    /* Optional, for sources whose store is asked only when `verify` wants
     * it (a local file: its blob name, a FILE.sha256 or SHA256SUMS beside
     * it, source/published_local.h): what is published for the bytes,
     * looked up now; kind GGFS_PUBLISHED_NONE when nothing is. */
    void (*look_up_published)(const ggfs_source *src, ggfs_published *out);
} ggfs_source_ops;

struct ggfs_source {
    const ggfs_source_ops *ops;
    const char *name;      // as the user named it (path or URL), for messages
    uint64_t size;         // bytes, fixed at open
    const uint8_t *map;    // all `size` bytes mapped read-only, or NULL when
                           // the bytes are only reachable through read()
    struct stat st;        // owner, group, mode and times for the tree
    ggfs_published published; // what its store publishes of its bytes: set by
                           // the source's open or, before the model is
                           // shared, by the store that listed it; zero: nothing
};

/* Opens a local file. */
ggfs_source *ggfs_source_file_open(const char *path, ggp_error *err);

static inline int ggfs_source_read(ggfs_source *s, void *buf, size_t len, uint64_t off, uint64_t end)
{
    return s->ops->read(s, buf, len, off, end);
}

static inline bool ggfs_source_unchanged(ggfs_source *s)
{
    return s->ops->unchanged(s);
}

static inline void ggfs_source_close(ggfs_source *s)
{
    if (s)
        s->ops->close(s);
}

#endif
