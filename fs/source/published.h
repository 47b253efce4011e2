/*
 * What a store publishes about a file's bytes: the digest it names the
 * file by or lists beside it (the Hub's LFS oid, a resolve answer's
 * X-Linked-Etag, a blob's name in a Hugging Face cache or an Ollama store,
 * a registry manifest's digest, S3's x-amz-checksum-sha256 or single-part
 * ETag, a SHA256SUMS line), and its size when the store says it. `verify`
 * compares the bytes with it (tree/verify.h).
 *
 * A remote source records it when its open or its store's listing sees it
 * (source->published); a local file's is looked up beside it when `verify`
 * is computed (published_local.h).
 */
#ifndef GGFS_SOURCE_PUBLISHED_H
#define GGFS_SOURCE_PUBLISHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ggfs_published_kind {
    GGFS_PUBLISHED_NONE,   // the store publishes nothing for it
    GGFS_PUBLISHED_SHA256, // digest[0, 32)
    GGFS_PUBLISHED_MD5,    // digest[0, 16): a single-part S3 ETag
} ggfs_published_kind;

#define GGFS_PUBLISHED_WHERE_MAX 40

typedef struct ggfs_published {
    ggfs_published_kind kind;
    uint8_t digest[32];
    char where[GGFS_PUBLISHED_WHERE_MAX]; // what published it, for messages:
                                          // "lfs.oid", "X-Linked-Etag", "SHA256SUMS", ...
    uint64_t size;                        // bytes the store says the file has; 0: not said
} ggfs_published;

/* The digest's length in bytes: 32, 16, 0 for none. */
size_t ggfs_published_digest_size(ggfs_published_kind kind);

/* "sha256", "md5", "-". */
const char *ggfs_published_kind_name(ggfs_published_kind kind);

/* Sets p's digest of kind from exactly 2 * ggfs_published_digest_size(kind)
 * hex digits (either case) at hex[0, len), and where (cut to fit).
 * Returns false, leaving p as it was, when hex is anything else. */
bool ggfs_published_set_hex(ggfs_published *p, ggfs_published_kind kind, const char *hex, size_t len,
                            const char *where);

/* The same from base64 (RFC 4648, with its padding): S3's checksums. */
bool ggfs_published_set_base64(ggfs_published *p, ggfs_published_kind kind, const char *b64, size_t len,
                               const char *where);

/* The one of a and b (what two opens of the same bytes were told) that
 * says more: a SHA-256 over an MD5 over nothing, a then. (An open that asks
 * for one byte is told no whole object's checksum: S3 sends none with a
 * part of an object.) */
const ggfs_published *ggfs_published_most(const ggfs_published *a, const ggfs_published *b);

/* Whether a file of size bytes has the size p says (p->size 0: it says
 * none). When not: false, with why (cap bytes) "offset 0x0: the file has
 * N bytes, SAID_BY says M" (said_by: what said it, "X-Linked-Size", "the
 * hf repo's listing"). */
bool ggfs_published_size_fits(const ggfs_published *p, uint64_t size, const char *said_by, char *why, size_t cap);

/* Takes what a store's listing or manifest publishes of a file of size
 * bytes (listed) into what its source recorded (*to), before the model it
 * belongs to is shared: listed's digest, when it has one, replaces *to's
 * (the listing names the file the mount is of: a commit's, a manifest's);
 * its size, when it says one, must be the file's. False, with why as
 * ggfs_published_size_fits writes it and *to as it was, when it is not. */
bool ggfs_published_take(ggfs_published *to, uint64_t size, const ggfs_published *listed, const char *said_by,
                         char *why, size_t cap);

#endif
