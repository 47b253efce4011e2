/*
 * The block cache's memory: blocks aligned, apart and writable; a freed
 * block's memory kept for the next block while there are few spares, and
 * handed back to the system (no page resident, zeros when taken again)
 * once there are more.
 */
#define _DEFAULT_SOURCE // mincore
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "source/block_memory.h"
#include "check.h"

#define BLOCK ((size_t)1 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

/* How many of the block's pages are in memory. */
static size_t resident_pages(const uint8_t *block, size_t len)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char vec[BLOCK / 4096];
    if (len / page > sizeof vec || mincore((void *)block, len, vec) != 0)
        return (size_t)-1;
    size_t n = 0;
    for (size_t i = 0; i < len / page; i++)
        n += vec[i] & 1;
    return n;
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != v)
            return false;
    }
    return true;
}

static int test_blocks_are_aligned_apart_and_writable(void)
{
    ggfs_block_memory *m = ggfs_block_memory_new(BLOCK, 4);
    EXPECT(m != NULL);
    enum { N = 9 };
    uint8_t *b[N];
    for (int i = 0; i < N; i++) {
        b[i] = ggfs_block_memory_take(m);
        EXPECT(b[i] != NULL);
        EXPECT_EQ((uintptr_t)b[i] % BLOCK, 0);
        memset(b[i], i + 1, BLOCK);
    }
    // Two blocks share each huge page: the first of a pair starts one.
    EXPECT_EQ((uintptr_t)b[0] % HUGE_PAGE, 0);
    EXPECT(b[1] == b[0] + BLOCK);
    for (int i = 0; i < N; i++) {
        EXPECT(all_bytes(b[i], BLOCK, (uint8_t)(i + 1)));
        for (int j = 0; j < i; j++)
            EXPECT(b[i] + BLOCK <= b[j] || b[j] + BLOCK <= b[i]);
    }
    ggfs_block_memory_free(m);
    return 1;
}

static int test_a_spare_keeps_its_memory_for_the_next_block(void)
{
    ggfs_block_memory *m = ggfs_block_memory_new(BLOCK, 2);
    EXPECT(m != NULL);
    uint8_t *a = ggfs_block_memory_take(m);
    EXPECT(a != NULL);
    memset(a, 0x5a, BLOCK);
    ggfs_block_memory_give(m, a);
    uint8_t *again = ggfs_block_memory_take(m);
    EXPECT(again == a);
    EXPECT(all_bytes(again, BLOCK, 0x5a));
    EXPECT_EQ(resident_pages(again, BLOCK), BLOCK / (size_t)sysconf(_SC_PAGESIZE));
    ggfs_block_memory_free(m);
    return 1;
}

static int test_blocks_past_the_spares_give_their_memory_back(void)
{
    enum { SPARES = 2, N = 6 };
    ggfs_block_memory *m = ggfs_block_memory_new(BLOCK, SPARES);
    EXPECT(m != NULL);
    uint8_t *b[N];
    for (int i = 0; i < N; i++) {
        b[i] = ggfs_block_memory_take(m);
        EXPECT(b[i] != NULL);
        memset(b[i], 0xa5, BLOCK);
    }
    for (int i = 0; i < N; i++)
        ggfs_block_memory_give(m, b[i]);
    // The first SPARES given are kept; the rest hold no memory.
    for (int i = 0; i < N; i++) {
        if (i < SPARES)
            EXPECT(resident_pages(b[i], BLOCK) > 0);
        else
            EXPECT_EQ(resident_pages(b[i], BLOCK), 0);
    }
    // Taken again: the spares first, with their bytes, then the others,
    // zeroed, and no new mapping is made while any is left.
    for (int i = 0; i < N; i++) {
        uint8_t *t = ggfs_block_memory_take(m);
        bool known = false;
        for (int j = 0; j < N; j++)
            known |= t == b[j];
        EXPECT(known);
        EXPECT(all_bytes(t, BLOCK, i < SPARES ? 0xa5 : 0));
    }
    ggfs_block_memory_free(m);
    return 1;
}

static int test_sizes_that_are_not_powers_of_two_are_refused(void)
{
    EXPECT(ggfs_block_memory_new(0, 1) == NULL);
    EXPECT(ggfs_block_memory_new(3 << 19, 1) == NULL);
    // Blocks larger than a huge page are a mapping each.
    ggfs_block_memory *m = ggfs_block_memory_new(4 * HUGE_PAGE, 0);
    EXPECT(m != NULL);
    uint8_t *a = ggfs_block_memory_take(m), *b = ggfs_block_memory_take(m);
    EXPECT(a != NULL && b != NULL && a != b);
    EXPECT_EQ((uintptr_t)a % HUGE_PAGE, 0);
    memset(a, 1, BLOCK);
    a[4 * HUGE_PAGE - 1] = 1;
    EXPECT(resident_pages(a, BLOCK) > 0);
    ggfs_block_memory_give(m, a);
    EXPECT_EQ(resident_pages(a, BLOCK), 0);
    ggfs_block_memory_free(m);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_blocks_are_aligned_apart_and_writable();
    ok &= test_a_spare_keeps_its_memory_for_the_next_block();
    ok &= test_blocks_past_the_spares_give_their_memory_back();
    ok &= test_sizes_that_are_not_powers_of_two_are_refused();
    return ok ? 0 : 1;
}
