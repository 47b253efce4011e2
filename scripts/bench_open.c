/*
 * bench_open: how long the parser takes to open and validate a model, and
 * to pin its header as the daemon does; best of N runs, in process.
 *
 *   usage: bench_open MODEL.gguf [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ggp.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.gguf [RUNS]\n", argv[0]);
        return 2;
    }
    const int runs = argc > 2 ? atoi(argv[2]) : 20;
    double best_open = 1e9, best_pinned = 1e9;
    for (int i = 0; i < runs; i++) {
        ggp_error err;
        const double t0 = now_ms();
        ggp_file *f = ggp_open(argv[1], &err);
        const double t1 = now_ms();
        if (!f) {
            fprintf(stderr, "%s: offset %llu: %s\n", argv[1], (unsigned long long)err.offset, err.msg);
            return 1;
        }
        const bool pinned = ggp_file_pin_header(f, &err);
        const double t2 = now_ms();
        ggp_close(f);
        if (!pinned) {
            fprintf(stderr, "%s: %s\n", argv[1], err.msg);
            return 1;
        }
        best_open = t1 - t0 < best_open ? t1 - t0 : best_open;
        best_pinned = t2 - t0 < best_pinned ? t2 - t0 : best_pinned;
    }
    printf("%s: open %.2f ms, open + pin header %.2f ms (best of %d)\n", argv[1], best_open,
           best_pinned, runs);
    return 0;
}
