/*
 * bench_tofloat: how fast ggml itself dequantizes one tensor, in process,
 * on one thread. scripts/bench/run compares gguf-fs's f32 files against
 * it.
 *
 *   bench_tofloat LIBGGML_BASE.so MODEL.gguf TYPE_ID OFFSET BYTES [RUNS [OUT.f32]]
 *
 * MODEL.gguf is mapped read-only; BYTES bytes at absolute offset OFFSET are
 * the tensor (scripts/bench/run takes both from ggml_ref dump-tensors).
 * Each run is one call of ggml's type_traits to_float over the whole tensor
 * into a buffer that is already faulted in; the model's pages are touched
 * once before the first run. Prints, on one line: the best run's f32 output
 * rate in MB/s (10^6 bytes), the best time in ms and the f32 bytes. With
 * OUT.f32, also writes the floats there (host order), for checking a
 * mount's f32 file against ggml with cmp.
 *
 * libggml-base.so is loaded with dlopen(); the declarations below are from
 * ggml's include/ggml.h, as in tests/conformance/ggml_ref.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ggml_type_traits {
    const char *type_name;
    int64_t blck_size;            // elements per block
    int64_t blck_size_interleave;
    size_t type_size;             // bytes per block
    bool is_quantized;
    void (*to_float)(const void *x, float *y, int64_t k);
    void (*from_float_ref)(const float *x, void *y, int64_t k);
};

static unsigned long long parse_u64(const char *what, const char *s)
{
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end) {
        fprintf(stderr, "bench_tofloat: %s: '%s' is not a number\n", what, s);
        exit(2);
    }
    return v;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 6 || argc > 8) {
        fprintf(stderr,
                "usage: %s LIBGGML_BASE.so MODEL.gguf TYPE_ID OFFSET BYTES [RUNS [OUT.f32]]\n",
                argv[0]);
        return 2;
    }
    const int type = (int)parse_u64("TYPE_ID", argv[3]);
    const uint64_t offset = parse_u64("OFFSET", argv[4]);
    const uint64_t bytes = parse_u64("BYTES", argv[5]);
    const int runs = argc >= 7 ? (int)parse_u64("RUNS", argv[6]) : 5;
    if (runs < 1)
        return 2;

    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "bench_tofloat: dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    const struct ggml_type_traits *(*get_traits)(int);
    void *sym = dlsym(lib, "ggml_get_type_traits");
    if (!sym) {
        fprintf(stderr, "bench_tofloat: %s has no ggml_get_type_traits\n", argv[1]);
        return 1;
    }
    memcpy(&get_traits, &sym, sizeof sym);
    const struct ggml_type_traits *tr = get_traits(type);
    if (!tr || !tr->to_float || tr->blck_size <= 0 || tr->type_size == 0 ||
        bytes % tr->type_size != 0) {
        fprintf(stderr, "bench_tofloat: type %d has no to_float or %llu is not whole blocks\n",
                type, (unsigned long long)bytes);
        return 1;
    }
    const int64_t nelem = (int64_t)(bytes / tr->type_size) * tr->blck_size;

    const int fd = open(argv[2], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[2]);
        return 1;
    }
    if (offset > (uint64_t)st.st_size || bytes > (uint64_t)st.st_size - offset) {
        fprintf(stderr, "bench_tofloat: %s: tensor does not fit in the file\n", argv[2]);
        return 1;
    }
    const uint8_t *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    close(fd);
    const uint8_t *src = map + offset;
    volatile uint8_t sink = 0;
    for (uint64_t i = 0; i < bytes; i += 4096)
        sink ^= src[i];
    (void)sink;

    float *dst = malloc((size_t)nelem * sizeof *dst);
    if (!dst) {
        fprintf(stderr, "bench_tofloat: out of memory\n");
        return 1;
    }
    memset(dst, 0, (size_t)nelem * sizeof *dst);

    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        const double t0 = now();
        tr->to_float(src, dst, nelem);
        const double t = now() - t0;
        if (t < best)
            best = t;
    }
    const double out = (double)nelem * sizeof(float);
    if (argc == 8) {
        FILE *f = fopen(argv[7], "wb");
        if (!f || fwrite(dst, sizeof *dst, (size_t)nelem, f) != (size_t)nelem || fclose(f) != 0) {
            perror(argv[7]);
            return 1;
        }
    }
    printf("%.1f %.3f %.0f\n", out / best / 1e6, best * 1e3, out);
    free(dst);
    return 0;
}
