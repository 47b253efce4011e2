/*
 * What one remote file's requests have done, for the `remote` file: bytes
 * received, requests in flight, failed attempts, the last error, and the
 * rates. Counters move without a lock as bytes arrive; the rest is under a
 * small lock taken once per request.
 *
 * The current rate is an average over about the last second, the average
 * rate is the bytes over the time some request was in flight (time with
 * nothing asked for does not count). Rates are in MB/s of 10^6 bytes, as
 * curl reports them.
 */
#ifndef GGFS_SOURCE_TRANSFER_STATS_H
#define GGFS_SOURCE_TRANSFER_STATS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define GGFS_TRANSFER_ERROR_MAX 256

typedef struct ggfs_transfer_stats {
    _Atomic uint64_t received;  // body bytes (handed to http.h's requests)
    pthread_mutex_t lock;       // guards what follows
    unsigned in_flight;
    uint64_t failures;
    int64_t busy_since;         // when in_flight last left 0 (ggfs_now_ns)
    int64_t busy_ns;            // time in flight before that
    int64_t rate_at;            // the current rate's last sample
    uint64_t rate_bytes;        // received then
    double rate;                // bytes per second
    char last_error[GGFS_TRANSFER_ERROR_MAX];
} ggfs_transfer_stats;

typedef struct ggfs_transfer_snapshot {
    uint64_t received, failures;
    unsigned in_flight;
    double mb_per_s_now, mb_per_s_average;
    char last_error[GGFS_TRANSFER_ERROR_MAX]; // "" when none
} ggfs_transfer_snapshot;

void ggfs_transfer_stats_init(ggfs_transfer_stats *st);
void ggfs_transfer_stats_destroy(ggfs_transfer_stats *st);

/* A request starts; ggfs_transfer_end follows it, with the attempts that
 * failed on the way and the error of the last one that did (or NULL). */
void ggfs_transfer_begin(ggfs_transfer_stats *st);
void ggfs_transfer_end(ggfs_transfer_stats *st, unsigned failures, const char *error);

void ggfs_transfer_snapshot_of(ggfs_transfer_stats *st, ggfs_transfer_snapshot *out);

#endif
