/*
 * A buffer that may grow to megabytes, filled in bulk and then kept (a
 * model's header: 3.7 MB for a 128,000-token vocabulary). Up to 2 MiB it
 * is ordinary heap memory; past that it is mapped on its own, in 2 MiB
 * multiples, asking the kernel for transparent huge pages, so that filling
 * it takes one page fault per 2 MiB instead of 512 (the faults, each
 * clearing and charging a 4 KiB page, were the larger part of opening such
 * a model). Growing a mapped buffer moves its pages (mremap), never copies
 * them.
 */
#ifndef GGFS_UTIL_BIG_BUFFER_H
#define GGFS_UTIL_BIG_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGFS_BIG_BUFFER_PAGE ((size_t)2 << 20) // a huge page, where buffers start being mapped

typedef struct ggfs_big_buffer {
    uint8_t *bytes; // NULL until the first resize
    size_t size;    // bytes usable, as last asked for
    size_t cap;     // bytes held (a mapped buffer's mapping)
    bool mapped;
} ggfs_big_buffer; // zeroed: empty

/* Makes the buffer hold `size` bytes, keeping its first min(old, new) ones
 * (bytes may move). false, the buffer unchanged, when out of memory. */
bool ggfs_big_buffer_resize(ggfs_big_buffer *b, size_t size);

/* Gives back what lies past the first `keep` bytes, without moving them
 * (a mapped buffer's whole 4 KiB pages past them). */
void ggfs_big_buffer_trim(ggfs_big_buffer *b, size_t keep);

void ggfs_big_buffer_free(ggfs_big_buffer *b);

#endif
