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
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gguf_context;
struct ggml_context;

struct gguf_init_params {
    bool no_alloc;
    struct ggml_context **ctx;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *load(void *lib, const char *name)
{
    void *sym = dlsym(lib, name);
    if (!sym) {
        fprintf(stderr, "bench_ggml_open: no symbol %s\n", name);
        exit(1);
    }
    return sym;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s LIBGGML_BASE.so MODEL.gguf [RUNS]\n", argv[0]);
        return 2;
    }
    const int runs = argc == 4 ? atoi(argv[3]) : 10;
    if (runs < 1)
        return 2;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "bench_ggml_open: dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    struct gguf_context *(*init_from_file)(const char *, struct gguf_init_params);
    void (*gguf_free)(struct gguf_context *);
    int64_t (*get_n_tensors)(const struct gguf_context *);
    int64_t (*get_n_kv)(const struct gguf_context *);
    void *sym;
    sym = load(lib, "gguf_init_from_file");
    memcpy(&init_from_file, &sym, sizeof sym);
    sym = load(lib, "gguf_free");
    memcpy(&gguf_free, &sym, sizeof sym);
    sym = load(lib, "gguf_get_n_tensors");
    memcpy(&get_n_tensors, &sym, sizeof sym);
    sym = load(lib, "gguf_get_n_kv");
    memcpy(&get_n_kv, &sym, sizeof sym);

    double *t = malloc((size_t)runs * sizeof *t);
    if (!t)
        return 1;
    int64_t n_tensors = 0, n_kv = 0;
    for (int r = 0; r < runs; r++) {
        const struct gguf_init_params params = {.no_alloc = true, .ctx = NULL};
        const double t0 = now();
        struct gguf_context *ctx = init_from_file(argv[2], params);
        t[r] = now() - t0;
        if (!ctx) {
            fprintf(stderr, "bench_ggml_open: ggml cannot read %s\n", argv[2]);
            return 1;
        }
        n_tensors = get_n_tensors(ctx);
        n_kv = get_n_kv(ctx);
        gguf_free(ctx);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    printf("%.3f %.3f %lld %lld\n", t[0] * 1e3, t[runs / 2] * 1e3, (long long)n_tensors,
           (long long)n_kv);
    free(t);
    return 0;
}
