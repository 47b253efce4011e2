/*
 * Heap, then mapped, buffers (big_buffer.h).
 */
#define _GNU_SOURCE // mremap
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/big_buffer.h"

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

bool ggfs_big_buffer_resize(ggfs_big_buffer *b, size_t size)
{
    if (!b->mapped && size < GGFS_BIG_BUFFER_PAGE) {
        uint8_t *grown = realloc(b->bytes, size ? size : 1);
        if (!grown)
            return false;
        b->bytes = grown;
        b->size = b->cap = size;
        return true;
    }
    const size_t cap = round_up(size, GGFS_BIG_BUFFER_PAGE);
    if (cap < size)
        return false;
    uint8_t *bytes;
    if (b->mapped) {
        bytes = cap == b->cap ? b->bytes : mremap(b->bytes, b->cap, cap, MREMAP_MAYMOVE);
        if (bytes == MAP_FAILED)
            return false;
    } else {
        bytes = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (bytes == MAP_FAILED)
            return false;
    }
    // Advice only: without it (or without huge pages) the buffer works the same.
    madvise(bytes, cap, MADV_HUGEPAGE);
    if (!b->mapped) {
        if (b->size)
            memcpy(bytes, b->bytes, b->size < size ? b->size : size);
        free(b->bytes);
    }
    b->bytes = bytes;
    b->size = size;
    b->cap = cap;
    b->mapped = true;
    return true;
}

void ggfs_big_buffer_trim(ggfs_big_buffer *b, size_t keep)
{
    if (!b->mapped)
        return;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t cap = round_up(keep ? keep : 1, page);
    if (cap >= b->cap)
        return;
    // Shrinking never moves a mapping: the views into it stay valid.
    if (mremap(b->bytes, b->cap, cap, 0) != MAP_FAILED) {
        b->cap = cap;
        if (b->size > keep)
            b->size = keep;
    }
}

void ggfs_big_buffer_free(ggfs_big_buffer *b)
{
    if (b->mapped)
        munmap(b->bytes, b->cap);
    else
        free(b->bytes);
    *b = (ggfs_big_buffer){0};
}
