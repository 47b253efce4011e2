/*
 * offload/'s memo of compute buffers: what is put is got, by its whole
 * key; when half full it is emptied, and keeps working.
 */
#include <stdio.h>

#include "check.h"
#include "model/compute_memo.h"

static int test_put_then_get(void)
{
    ggfs_compute_memo *m = ggfs_compute_memo_new();
    EXPECT(m);
    uint64_t gpu = 0, host = 0;
    EXPECT(!ggfs_compute_memo_get(m, 4096, 0, 3, &gpu, &host));
    ggfs_compute_memo_put(m, 4096, 0, 3, 111, 222);
    ggfs_compute_memo_put(m, 4096, 1, 3, 333, 444);
    EXPECT(ggfs_compute_memo_get(m, 4096, 0, 3, &gpu, &host));
    EXPECT_EQ(gpu, 111);
    EXPECT_EQ(host, 222);
    EXPECT(ggfs_compute_memo_get(m, 4096, 1, 3, &gpu, &host));
    EXPECT_EQ(gpu, 333);
    // another context, first layer or cache type is another key
    EXPECT(!ggfs_compute_memo_get(m, 512, 0, 3, &gpu, &host));
    EXPECT(!ggfs_compute_memo_get(m, 4096, 0, 4, &gpu, &host));
    EXPECT(!ggfs_compute_memo_get(m, 4096, 2, 3, &gpu, &host));
    // a key put again takes the new figures
    ggfs_compute_memo_put(m, 4096, 0, 3, 5, 6);
    EXPECT(ggfs_compute_memo_get(m, 4096, 0, 3, &gpu, &host));
    EXPECT_EQ(gpu, 5);
    ggfs_compute_memo_free(m);
    return 1;
}

static int test_bounded(void)
{
    ggfs_compute_memo *m = ggfs_compute_memo_new();
    EXPECT(m);
    uint64_t gpu, host;
    // far more keys than it keeps: the latest is always there, the
    // earliest gone
    for (uint32_t i = 0; i < 100000; i++) {
        ggfs_compute_memo_put(m, 1 + i % 1000, (int)(i % 3), i, i, 2 * (uint64_t)i);
        EXPECT(ggfs_compute_memo_get(m, 1 + i % 1000, (int)(i % 3), i, &gpu, &host));
        EXPECT_EQ(host, 2 * (uint64_t)i);
    }
    EXPECT(!ggfs_compute_memo_get(m, 1, 0, 0, &gpu, &host));
    ggfs_compute_memo_free(m);
    // nothing kept, nothing crashes
    ggfs_compute_memo_put(NULL, 1, 0, 0, 1, 1);
    EXPECT(!ggfs_compute_memo_get(NULL, 1, 0, 0, &gpu, &host));
    return 1;
}

int main(void)
{
    int ok = test_put_then_get() & test_bounded();
    puts(ok ? "compute memo: ok" : "compute memo: FAILED");
    return ok ? 0 : 1;
}
