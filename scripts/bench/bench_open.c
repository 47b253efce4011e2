/*
 * bench_open: how long the parser takes to open and validate a model, and
 * how long the daemon's whole open takes (the source mapped, the set of
 * shards found and checked, the headers read into memory); best of N runs,
 * in process.
 *
 *   usage: bench_open MODEL.gguf [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ggp.h"
#include "model/model.h"

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
    double best_open = 1e9, best_daemon = 1e9;
    for (int i = 0; i < runs; i++) {
        ggp_error err;
        const double t0 = now_ms();
        ggp_file *f = ggp_open(argv[1], &err);
        const double t1 = now_ms();
        if (!f) {
            fprintf(stderr, "%s: offset %llu: %s\n", argv[1], (unsigned long long)err.offset, err.msg);
            return 1;
        }
        ggp_close(f);
        ggfs_model_error model_err;
        const double t2 = now_ms();
        ggfs_model *model = ggfs_model_open(argv[1], NULL, &model_err);
        const double t3 = now_ms();
        if (!model) {
            fprintf(stderr, "%s: offset %llu: %s\n", model_err.where,
                    (unsigned long long)model_err.error.offset, model_err.error.msg);
            return 1;
        }
        ggfs_model_close(model);
        best_open = t1 - t0 < best_open ? t1 - t0 : best_open;
        best_daemon = t3 - t2 < best_daemon ? t3 - t2 : best_daemon;
    }
    printf("%s: parser open %.2f ms, daemon open (mapped, set checked, header read) %.2f ms (best of %d)\n", argv[1], best_open,
           best_daemon, runs);
    return 0;
}
