/*
 * The compute buffers offload/ has worked out for one view of a model,
 * kept for the view's life: building llama.cpp's graph for each line
 * costs milliseconds, and each file is rendered twice (its size for the
 * lookup, then its text for the open). Keyed by context, cache type and
 * the first layer on the GPU; bounded (emptied when full). Safe to share
 * between threads.
 */
#ifndef GGFS_MODEL_COMPUTE_MEMO_H
#define GGFS_MODEL_COMPUTE_MEMO_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ggfs_compute_memo ggfs_compute_memo;

/* NULL when out of memory (then nothing is kept). */
ggfs_compute_memo *ggfs_compute_memo_new(void);
void ggfs_compute_memo_free(ggfs_compute_memo *m);

/* The figures kept for the key, if any. */
bool ggfs_compute_memo_get(ggfs_compute_memo *m, uint32_t ctx, int cache, uint32_t i_gpu_start, uint64_t *gpu,
                           uint64_t *host);
void ggfs_compute_memo_put(ggfs_compute_memo *m, uint32_t ctx, int cache, uint32_t i_gpu_start, uint64_t gpu,
                           uint64_t host);

#endif
