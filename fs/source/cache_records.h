/*
 * Kept records: small named documents kept under a mount's cache
 * directory (-o cache_dir=PATH), written by an online mount and read back
 * by an offline one (-o offline), which sends no request. What a mount
 * learns from a server that the bytes of the disk cache do not say (a
 * URL's size and ETag, a Hub repo's commit and listing pages, an Ollama
 * manifest) is kept here, each under a name its owner chooses.
 *
 *   PATH/gguf-fs-records/KIND-HASH     one record
 *
 * KIND is the owner's short tag ("url", "hf-commit", ...: a-z, 0-9 and
 * '-', at most GGFS_CACHE_RECORD_KIND_MAX bytes); HASH is the FNV-1a 64 of
 * the name, in hex: no name, whatever its bytes, makes a path outside the
 * directory. The file holds the name itself, so two names that hash alike
 * read as missing, never as each other's record. A file:
 *
 *   offset  0  "gguf-fs record 1\n"            17 bytes, the format
 *          17  name length                      u32, little-endian
 *          21  data length                      u32, little-endian
 *          25  FNV-1a 64 of name then data      u64, little-endian
 *          33  the name, then the data
 *
 * A record is written under a temporary name, flushed (fsync) and renamed
 * into place, and the directory flushed: readers in any process (two
 * daemons sharing the directory) see the old record whole or the new one
 * whole, and a crash leaves one of them. The last writer wins. Records
 * are never deleted by gguf-fs.
 */
#ifndef GGFS_SOURCE_CACHE_RECORDS_H
#define GGFS_SOURCE_CACHE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>

#define GGFS_CACHE_RECORD_SUBDIR "gguf-fs-records"
#define GGFS_CACHE_RECORD_KIND_MAX 32
#define GGFS_CACHE_RECORD_NAME_MAX 4096           // bytes of a name
#define GGFS_CACHE_RECORD_DATA_MAX (32u << 20)    // bytes of a record's data

typedef enum ggfs_cache_record_status {
    GGFS_CACHE_RECORD_FOUND = 0, // *data and *len hold the record
    GGFS_CACHE_RECORD_MISSING,   // no record of that name (none kept yet)
    GGFS_CACHE_RECORD_BAD,       // a file is there but is no whole record of
                                 // the name, or cannot be read: why says
                                 // which file (gguf-fs-records/KIND-HASH,
                                 // under cache_dir), at what offset, and what
} ggfs_cache_record_status;

/* Keeps len bytes of data as the record `name` of `kind` under cache_dir
 * (made if missing), replacing any record of that name atomically. False,
 * with why filled (the path and the cause), when it cannot: the kind or
 * the name is not allowed, len is over GGFS_CACHE_RECORD_DATA_MAX, or the
 * file system refuses. Safe from many threads and processes at once. */
bool ggfs_cache_record_put(const char *cache_dir, const char *kind, const char *name, const void *data,
                           size_t len, char *why, size_t why_size);

/* Reads the record `name` of `kind` under cache_dir. On FOUND, *data is
 * the record's bytes (malloc'ed, with a NUL after the last, not counted in
 * *len; free it). Otherwise *data is NULL, and on BAD why is filled. */
ggfs_cache_record_status ggfs_cache_record_get(const char *cache_dir, const char *kind, const char *name,
                                               void **data, size_t *len, char *why, size_t why_size);

/* Fills why as a BAD record's message when its owner finds the data
 * wrong (JSON that does not parse, a field missing): the record's file
 * (gguf-fs-records/KIND-HASH) and the offset in it of byte data_offset
 * of the data, then problem. */
void ggfs_cache_record_blame(const char *kind, const char *name, uint64_t data_offset, const char *problem,
                             char *why, size_t why_size);

#endif
