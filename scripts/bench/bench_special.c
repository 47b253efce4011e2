/*
 * bench_special: how long tokenizer/special takes to render over a large
 * vocabulary: a model of TOKENS tokens and KEYS tokenizer.ggml.*_token_id
 * keys (ids descending over the whole vocabulary), built in memory and
 * rendered in process; best of RUNS, in seconds, then the text's bytes.
 *
 *   usage: bench_special [TOKENS [KEYS [RUNS]]]   (1000000 20000 5)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggp.h"

typedef struct counter {
    ggp_sink sink;
    uint64_t bytes;
} counter;

static void count(ggp_sink *sink, const char *bytes, size_t len)
{
    (void)bytes;
    ((counter *)sink)->bytes += len;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put(unsigned char **p, const void *bytes, size_t n)
{
    memcpy(*p, bytes, n);
    *p += n;
}

static void put_str(unsigned char **p, const char *s)
{
    const uint64_t n = strlen(s);
    put(p, &n, 8);
    put(p, s, n);
}

int main(int argc, char **argv)
{
    const uint64_t tokens = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    const uint64_t keys = argc > 2 ? strtoull(argv[2], NULL, 10) : 20000;
    const int runs = argc > 3 ? atoi(argv[3]) : 5;
    if (tokens == 0 || tokens > UINT32_MAX - 1 || keys > 10000000) {
        fprintf(stderr, "usage: %s [TOKENS [KEYS [RUNS]]]\n", argv[0]);
        return 2;
    }
    unsigned char *b = malloc(64 + tokens * 32 + keys * 80), *p = b;
    if (!b)
        return 1;
    const uint32_t version = 3, u32 = 4, str = 8, arr = 9;
    const uint64_t n_tensors = 0, n_kv = 1 + keys;
    put(&p, "GGUF", 4);
    put(&p, &version, 4);
    put(&p, &n_tensors, 8);
    put(&p, &n_kv, 8);
    put_str(&p, "tokenizer.ggml.tokens");
    put(&p, &arr, 4);
    put(&p, &str, 4);
    put(&p, &tokens, 8);
    for (uint64_t i = 0; i < tokens; i++) {
        char t[24];
        snprintf(t, sizeof t, "t%" PRIu64, i);
        put_str(&p, t);
    }
    for (uint64_t i = 0; i < keys; i++) {
        char k[64];
        snprintf(k, sizeof k, "tokenizer.ggml.k%" PRIu64 "_token_id", i);
        const uint32_t id = (uint32_t)(tokens - 1 - i * (tokens / (keys ? keys : 1)) % tokens);
        put_str(&p, k);
        put(&p, &u32, 4);
        put(&p, &id, 4);
    }
    ggp_error err;
    ggp_file *f = ggp_open_mem(b, (size_t)(p - b), &err);
    if (!f) {
        fprintf(stderr, "offset %" PRIu64 ": %s\n", err.offset, err.msg);
        return 1;
    }
    double best = 1e9;
    counter c = {{count}, 0};
    for (int r = 0; r < runs; r++) {
        c.bytes = 0;
        const double t0 = now_s();
        if (!ggp_render_special_tokens(f, &c.sink))
            return 1;
        const double t = now_s() - t0;
        best = t < best ? t : best;
    }
    printf("%.4f %" PRIu64 "\n", best, c.bytes);
    ggp_close(f);
    free(b);
    return 0;
}
