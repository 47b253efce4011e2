/*
 * A bounded set of open things, keyed by 64-bit numbers, that closes the
 * least recently used when more than `capacity` are open. A catalog keeps
 * its models here: a folder of thousands of models holds only a few open.
 *
 * Every get returns the thing with a reference, and the holder puts it
 * back when done: a thing in use is never closed under its holder. When
 * every open thing is in use the set grows past its capacity, and shrinks
 * back as they are put. Opening and closing run outside the set's lock,
 * so a slow open holds up only the callers that want the same key (they
 * wait for it rather than open it twice). Safe to use from many threads.
 */
#ifndef GGFS_UTIL_LRU_H
#define GGFS_UTIL_LRU_H

#include <stddef.h>
#include <stdint.h>

typedef struct ggfs_lru ggfs_lru;

typedef struct ggfs_lru_ops {
    /* Opens the thing for key. Returns NULL with *err set (an errno) on
     * failure; failures are not remembered. */
    void *(*open)(void *ctx, uint64_t key, int *err);
    /* Closes what open returned. */
    void (*close)(void *ctx, uint64_t key, void *thing);
} ggfs_lru_ops;

/* A set holding at most capacity (at least 1) unused things open. Returns
 * NULL when out of memory. */
ggfs_lru *ggfs_lru_new(size_t capacity, const ggfs_lru_ops *ops, void *ctx);

/* Closes every thing and frees the set; nothing may be in use. */
void ggfs_lru_free(ggfs_lru *lru);

/* The thing for key, opened if needed, with one reference; NULL with *err
 * set when it could not be opened. */
void *ggfs_lru_get(ggfs_lru *lru, uint64_t key, int *err);

/* Gives back a reference that ggfs_lru_get returned for key. */
void ggfs_lru_put(ggfs_lru *lru, uint64_t key, void *thing);

/* Closes the thing for key as soon as nobody uses it (at once when idle),
 * so that the next get opens it afresh: for a thing that went stale. */
void ggfs_lru_drop(ggfs_lru *lru, uint64_t key);

/* How many things are open (or opening) now, not counting dropped ones
 * still in use. */
size_t ggfs_lru_open_count(ggfs_lru *lru);

#endif
