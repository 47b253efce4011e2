/*
 * When a remote model is being loaded whole, its prefetch goes on:
 * -o prefetch_after_mb. A reader that has read that much of model.gguf
 * out of order (llama.cpp loading the model: its tensors in the order it
 * makes them, not the file's, with read() or through an mmap's page
 * faults) lets the held prefetch go; once model.gguf has no opener left
 * the prefetch is held again, and the counts start afresh. A reader in
 * order (`cat`, `cp`) is served by read-ahead, which keeps pace with it;
 * readers of tensors/ and of the header alone (a few MiB) never set it
 * off.
 *
 * Only bytes the kernel asks the daemon for are counted: pages it holds
 * already are not asked for again.
 */
#ifndef GGFS_TREE_PREFETCH_TRIGGER_H
#define GGFS_TREE_PREFETCH_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ggfs_prefetch_trigger ggfs_prefetch_trigger;

/* Calls hold(arg, false, at) once `after` bytes of model.gguf were read
 * while open, with a few jumps among the reads (at: where in model.gguf
 * the read that made it so began), hold(arg, true, 0) when its last opener
 * is gone after that; never two at once, and never after
 * ggfs_prefetch_trigger_off. NULL when out of memory. */
ggfs_prefetch_trigger *ggfs_prefetch_trigger_new(uint64_t after, void (*hold)(void *arg, bool held, uint64_t at),
                                                 void *arg);

/* model.gguf was opened, read for len bytes at off, released. NULL:
 * nothing. */
void ggfs_prefetch_trigger_opened(ggfs_prefetch_trigger *t);
void ggfs_prefetch_trigger_read(ggfs_prefetch_trigger *t, uint64_t off, uint64_t len);
void ggfs_prefetch_trigger_released(ggfs_prefetch_trigger *t);

/* No call of hold under way or after. NULL: nothing. */
void ggfs_prefetch_trigger_off(ggfs_prefetch_trigger *t);

/* After ggfs_prefetch_trigger_off, once nothing calls it. NULL: nothing. */
void ggfs_prefetch_trigger_free(ggfs_prefetch_trigger *t);

#endif
