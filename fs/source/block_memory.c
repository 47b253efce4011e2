/*
 * Block memory: mappings of 2 MiB (or of one block, when blocks are
 * larger), aligned to 2 MiB and advised MADV_HUGEPAGE, cut into blocks.
 * Freed blocks go on a list of spares whose memory is kept (the next block
 * takes one without a fault), or, past `spares` of them, on a list of
 * blocks whose memory went back to the system with MADV_DONTNEED. Mappings
 * are unmapped only when the whole is freed, so the address space is that
 * of the most blocks ever held at once, and the memory that of the blocks
 * held now plus the spares.
 */
#define _DEFAULT_SOURCE // MAP_ANONYMOUS, MADV_HUGEPAGE
#include <stdlib.h>
#include <sys/mman.h>

#include "source/block_memory.h"

#define HUGE_PAGE ((size_t)2 << 20)

struct ggfs_block_memory {
    size_t block_size;
    size_t chunk_size;       // one mapping: a multiple of HUGE_PAGE
    size_t per_chunk;        // blocks in a mapping
    unsigned spares;
    uint8_t **warm;          // freed blocks with their memory (at most spares)
    size_t n_warm;
    uint8_t **cold;          // blocks without memory behind them
    size_t n_cold, cap_cold;
    uint8_t **chunks;        // every mapping
    size_t n_chunks, cap_chunks;
};

ggfs_block_memory *ggfs_block_memory_new(size_t block_size, unsigned spares)
{
    if (block_size == 0 || (block_size & (block_size - 1)) != 0)
        return NULL;
    ggfs_block_memory *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->block_size = block_size;
    m->chunk_size = block_size > HUGE_PAGE ? block_size : HUGE_PAGE;
    m->per_chunk = m->chunk_size / block_size;
    m->spares = spares;
    m->warm = calloc(spares ? spares : 1, sizeof *m->warm);
    if (!m->warm) {
        free(m);
        return NULL;
    }
    return m;
}

void ggfs_block_memory_free(ggfs_block_memory *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_chunks; i++)
        munmap(m->chunks[i], m->chunk_size);
    free(m->chunks);
    free(m->cold);
    free(m->warm);
    free(m);
}

/* A new mapping, aligned to HUGE_PAGE: its blocks after the first go on
 * the cold list (nothing has touched them), the first is returned. */
static uint8_t *new_chunk(ggfs_block_memory *m)
{
    if (m->n_chunks == m->cap_chunks) {
        const size_t cap = m->cap_chunks ? 2 * m->cap_chunks : 16;
        uint8_t **chunks = realloc(m->chunks, cap * sizeof *chunks);
        if (!chunks)
            return NULL;
        m->chunks = chunks;
        m->cap_chunks = cap;
    }
    // Every block may end up cold at once.
    const size_t blocks = (m->n_chunks + 1) * m->per_chunk;
    if (blocks > m->cap_cold) {
        const size_t cap = 2 * blocks;
        uint8_t **cold = realloc(m->cold, cap * sizeof *cold);
        if (!cold)
            return NULL;
        m->cold = cold;
        m->cap_cold = cap;
    }
    // Map a huge page more than needed, then cut the unaligned ends off.
    const size_t span = m->chunk_size + HUGE_PAGE;
    uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uint8_t *chunk = (uint8_t *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (chunk > raw)
        munmap(raw, (size_t)(chunk - raw));
    const size_t tail = (size_t)(raw + span - (chunk + m->chunk_size));
    if (tail > 0)
        munmap(chunk + m->chunk_size, tail);
    // Without transparent huge pages this fails, and blocks get 4 KiB pages.
    (void)madvise(chunk, m->chunk_size, MADV_HUGEPAGE);
    m->chunks[m->n_chunks++] = chunk;
    for (size_t i = m->per_chunk; i-- > 1;)
        m->cold[m->n_cold++] = chunk + i * m->block_size;
    return chunk;
}

uint8_t *ggfs_block_memory_take(ggfs_block_memory *m)
{
    if (m->n_warm > 0)
        return m->warm[--m->n_warm];
    if (m->n_cold > 0)
        return m->cold[--m->n_cold];
    return new_chunk(m);
}

void ggfs_block_memory_give(ggfs_block_memory *m, uint8_t *block)
{
    if (m->n_warm < m->spares) {
        m->warm[m->n_warm++] = block;
        return;
    }
    (void)madvise(block, m->block_size, MADV_DONTNEED);
    m->cold[m->n_cold++] = block;
}
