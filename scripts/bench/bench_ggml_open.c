/*
 * bench_ggml_open: how long ggml takes to read a GGUF file's header,
 * metadata and tensor infos: gguf_init_from_file with no_alloc = true and
 * no ggml context, in process, best of RUNS opens (each followed by an
 * untimed gguf_free). scripts/bench/run compares mounting gguf-fs against
 * it.
 *
 *   bench_ggml_open LIBGGML_BASE.so MODEL.gguf [RUNS]
 *
 * Prints, on one line: the best time in ms, the median in ms, and the
 * tensor and key counts ggml read.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_timing.h"
#include "ggml_gguf.h"

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s LIBGGML_BASE.so MODEL.gguf [RUNS]\n", argv[0]);
        return 2;
    }
    const int runs = argc == 4 ? atoi(argv[3]) : 10;
    if (runs < 1)
        return 2;
    ggml_gguf api;
    if (!ggml_gguf_load("bench_ggml_open", argv[1], RTLD_NOW | RTLD_LOCAL, &api))
        return 1;

    double *t = malloc((size_t)runs * sizeof *t);
    if (!t)
        return 1;
    int64_t n_tensors = 0, n_kv = 0;
    for (int r = 0; r < runs; r++) {
        const struct gguf_init_params params = {.no_alloc = true, .ctx = NULL};
        const double t0 = bench_now();
        struct gguf_context *ctx = api.init_from_file(argv[2], params);
        t[r] = bench_now() - t0;
        if (!ctx) {
            fprintf(stderr, "bench_ggml_open: ggml cannot read %s\n", argv[2]);
            return 1;
        }
        n_tensors = api.get_n_tensors(ctx);
        n_kv = api.get_n_kv(ctx);
        api.free(ctx);
    }
    bench_sort_times(t, runs);
    printf("%.3f %.3f %lld %lld\n", t[0] * 1e3, t[runs / 2] * 1e3, (long long)n_tensors,
           (long long)n_kv);
    free(t);
    return 0;
}
