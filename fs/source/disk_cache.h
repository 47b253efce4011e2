/*
 * The on-disk cache of remote files (-o cache_dir=PATH): blocks kept as
 * files so that a later mount, or another daemon at the same time, reads
 * them instead of fetching them again.
 *
 *   PATH/gguf-fs-blocks/KEY/key       the URL, validator and size KEY is for
 *   PATH/gguf-fs-blocks/KEY/BLOCK     one block (hex index), whole or not at all
 *
 * KEY is a hash of the URL, the ETag (or Last-Modified) and the size, so a
 * changed file never reads an old one's blocks; the `key` file guards
 * against a collision. Every file is written under a temporary name and
 * renamed into place, so readers (in any process) see whole files or none.
 * Nothing is ever deleted: the cache grows until the user clears it.
 */
#ifndef GGFS_SOURCE_DISK_CACHE_H
#define GGFS_SOURCE_DISK_CACHE_H

// The most blocks of one file the cache keeps track of: its bitmap of
// present blocks is at most 2 MiB. A larger file (16 TiB in 1 MiB blocks)
// is read without the disk cache.
#define GGFS_DISK_CACHE_BLOCKS_MAX (UINT64_C(1) << 24)

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ggfs_disk_cache ggfs_disk_cache;

/* The cache of one file; NULL (with why filled) when the directory cannot
 * be made or belongs to another file. */
ggfs_disk_cache *ggfs_disk_cache_open(const char *root, const char *url, const char *validator,
                                      uint64_t size, size_t block_size, char *why, size_t why_size);
void ggfs_disk_cache_close(ggfs_disk_cache *cache);

/* Copies [off, off + len) of block `index` into dst; false when the block
 * is not there (or is not whole). */
bool ggfs_disk_cache_read(ggfs_disk_cache *cache, uint64_t index, void *dst, size_t off, size_t len);

/* Maps block `index` read-only, whole (its length in *len), for a reply
 * to gather its bytes straight from the kernel's page cache: no copy into
 * memory of the daemon's, and none of that memory to clear first. NULL
 * when the block is not there (or not whole). The files are never
 * rewritten in place; one cut short under the daemon makes the reply
 * that reads it fail (the kernel's copy faults), not the daemon. */
const uint8_t *ggfs_disk_cache_map(ggfs_disk_cache *cache, uint64_t index, size_t *len);

/* Unmaps what ggfs_disk_cache_map gave. */
void ggfs_disk_cache_unmap(const uint8_t *map_from_map, size_t len);

/* Asks the kernel to read block `index` into its page cache in the
 * background (read-ahead of blocks on disk). Nothing when it is not there. */
void ggfs_disk_cache_advise(ggfs_disk_cache *cache, uint64_t index);

/* Whether block `index` is there. */
bool ggfs_disk_cache_has(ggfs_disk_cache *cache, uint64_t index);

/* Bytes of the file known to be there: found at open, or written or seen
 * since. */
uint64_t ggfs_disk_cache_bytes(ggfs_disk_cache *cache);

/* Stores block `index` (len bytes: the block size, or what remains of the
 * file); failures are silent, the block is fetched again next time. */
void ggfs_disk_cache_write(ggfs_disk_cache *cache, uint64_t index, const void *data, size_t len);

#endif
