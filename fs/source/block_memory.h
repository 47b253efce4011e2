/*
 * The memory of the block cache's blocks. A block freshly malloc'ed costs
 * a page fault and the zeroing of each 4 KiB page the first time a fetch
 * writes it (glibc maps each megabyte afresh and unmaps it on free); here
 * blocks are carved from 2 MiB-aligned mappings that the kernel is asked to
 * back with huge pages (one fault per 2 MiB), and a freed block's memory is
 * given to the next block.
 *
 * Not thread-safe: the block cache calls it under its lock.
 */
#ifndef GGFS_SOURCE_BLOCK_MEMORY_H
#define GGFS_SOURCE_BLOCK_MEMORY_H

#include <stddef.h>
#include <stdint.h>

typedef struct ggfs_block_memory ggfs_block_memory;

/* block_size must be a power of two. Up to `spares` freed blocks keep
 * their memory for reuse; more than that give it back to the system (their
 * addresses stay reserved, for later blocks). NULL when out of memory. */
ggfs_block_memory *ggfs_block_memory_new(size_t block_size, unsigned spares);

/* Unmaps every block's memory, given back or not. */
void ggfs_block_memory_free(ggfs_block_memory *memory);

/* block_size bytes, or NULL when out of memory. */
uint8_t *ggfs_block_memory_take(ggfs_block_memory *memory);

/* Gives back a block from ggfs_block_memory_take. */
void ggfs_block_memory_give(ggfs_block_memory *memory, uint8_t *block_from_take);

#endif
