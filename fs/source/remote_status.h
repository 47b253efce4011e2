/*
 * The `remote` file at the root of a URL mount: one block per shard, in
 * shard order, blocks separated by an empty line, each line `key: value`:
 *
 *   shard: 1 of 1
 *   url: https://host/path/model.gguf
 *   size: 1650000000                 bytes of the file
 *   in_memory: 268435456             bytes in the memory cache now
 *   on_disk: 0                       bytes in the disk cache (0 without one)
 *   fetched: 1703936000              body bytes received since mount
 *   in_flight: 16                    requests under way
 *   mb_per_s_now: 721.4              over about the last second (10^6 B/s)
 *   mb_per_s_average: 688.0          fetched over the time requests ran
 *   retries: 1                       requests that failed (and were made again)
 *   last_error: none                 or the last failure's cause
 *
 * and, once `verify` started, a last block `verify: N of M bytes` (the
 * bytes digested of all the shards'). `watch cat MNT/remote` follows a
 * prefetch or a verify. The text is made afresh on
 * every open.
 */
#ifndef GGFS_SOURCE_REMOTE_STATUS_H
#define GGFS_SOURCE_REMOTE_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "source/source.h"
#include "source/transfer_stats.h"

typedef struct ggfs_source_status {
    const char *url;                 // as the user named it
    uint64_t size, in_memory, on_disk;
    ggfs_transfer_snapshot transfers;
} ggfs_source_status;

/* The text for sources (n of them, in shard order; those without a
 * status op are left out) into a fresh malloc'd buffer; NULL when out of
 * memory. */
char *ggfs_remote_status_text(ggfs_source *const *sources, size_t n, size_t *len);

#endif
