/*
 * Handing freed heap pages back to the system a little after a burst of
 * frees (a catalog's models closed one after another by its LRU) rather
 * than after each: malloc_trim after every close makes the next model
 * fault the same pages in again. A thread of its own trims once the frees
 * have gone quiet for the delay, or every delay while they go on; it
 * starts on first use, so a daemon that forks after setting up
 * (fuse_daemonize) starts it in the right process.
 */
#ifndef GGFS_UTIL_TRIM_H
#define GGFS_UTIL_TRIM_H

#include <stdint.h>

typedef struct ggfs_trim ggfs_trim;

/* NULL when out of memory. */
ggfs_trim *ggfs_trim_new(int64_t delay_ns);

/* Something was freed: trim within the delay. */
void ggfs_trim_soon(ggfs_trim *trim);

/* Stops the thread (without a last trim) and frees. */
void ggfs_trim_free(ggfs_trim *trim);

#endif
