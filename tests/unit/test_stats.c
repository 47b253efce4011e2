/*
 * The stats accumulator: counts, min, max and abs_max exact; mean and std
 * against a long double two-pass reference, in every chunking, with the
 * AVX2 and the scalar passes; and the fixed-width text.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"

/* Relative accuracy asked of mean and std against the long double reference:
 * a hundred times tighter than the 1e-9 promised against numpy. */
#define REL_TOL 1e-11

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static double rng_uniform(void)
{
    return (double)(rng_next() >> 11) * 0x1p-53;
}

static double rng_normal(void)
{
    const double u = rng_uniform() + 0x1p-60, v = rng_uniform();
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

typedef struct reference {
    uint64_t finite, zeros, nans, infs;
    float min, max, abs_max;
    long double mean, std, mean_abs;
} reference;

static reference reference_of(const float *x, size_t n)
{
    reference r = {0, 0, 0, 0, INFINITY, -INFINITY, 0, 0, 0, 0};
    long double sum = 0, sum_abs = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) {
            r.nans++;
        } else if (isinf(x[i])) {
            r.infs++;
        } else {
            r.finite++;
            r.zeros += x[i] == 0;
            r.min = fminf(r.min, x[i]);
            r.max = fmaxf(r.max, x[i]);
            r.abs_max = fmaxf(r.abs_max, fabsf(x[i]));
            sum += x[i];
            sum_abs += fabsl((long double)x[i]);
        }
    }
    r.mean = sum / r.finite;
    r.mean_abs = sum_abs / r.finite;
    long double m2 = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(x[i]))
            m2 += ((long double)x[i] - r.mean) * ((long double)x[i] - r.mean);
    }
    r.std = sqrtl(m2 / r.finite);
    return r;
}

/* Feeds x in chunks of `chunk` values (0: random sizes up to 20000). */
static void accumulate(ggp_stats *s, const float *x, size_t n, size_t chunk, bool simd)
{
    ggp_stats_init(s);
    ggp_stats_set_simd(s, simd);
    for (size_t i = 0; i < n;) {
        size_t k = chunk ? chunk : 1 + rng_next() % 20000;
        if (k > n - i)
            k = n - i;
        ggp_stats_add(s, x + i, k);
        i += k;
    }
}

static int matches(const ggp_stats *s, const reference *r, size_t n, const char *what)
{
    EXPECT_EQ(s->count, n);
    EXPECT_EQ(s->finite, r->finite);
    EXPECT_EQ(s->zeros, r->zeros);
    EXPECT_EQ(s->nans, r->nans);
    EXPECT_EQ(s->infs, r->infs);
    if (r->finite == 0) {
        EXPECT(isnan(ggp_stats_mean(s)) && isnan(ggp_stats_std(s)));
        return 1;
    }
    EXPECT(s->min == r->min && s->max == r->max && s->abs_max == r->abs_max);
    // The mean's error is relative to the magnitudes summed, not to the mean
    // itself, which may cancel to almost nothing.
    const double mean_err = fabsl(ggp_stats_mean(s) - r->mean) / (r->mean_abs ? r->mean_abs : 1);
    const double std_err = fabsl(ggp_stats_std(s) - r->std) / (r->std ? r->std : 1);
    if (mean_err > REL_TOL || std_err > REL_TOL)
        fprintf(stderr, "%s: mean %.17g (reference %.17Lg), std %.17g (reference %.17Lg)\n", what,
                ggp_stats_mean(s), r->mean, ggp_stats_std(s), r->std);
    EXPECT(mean_err <= REL_TOL);
    EXPECT(std_err <= REL_TOL);
    return 1;
}

typedef float generator(size_t i);

static float gen_normal(size_t i) { (void)i; return (float)rng_normal(); }
static float gen_offset(size_t i) { (void)i; return (float)(1e4 + 1e-3 * rng_normal()); }
static float gen_huge(size_t i) { (void)i; return (float)(3e38 * (2 * rng_uniform() - 1)); }
static float gen_tiny(size_t i) { (void)i; return (float)(1e-44 * rng_uniform()); }
static float gen_constant(size_t i) { (void)i; return 0.1f; }
static float gen_mixed(size_t i)
{
    switch (rng_next() % 64) {
    case 0: return NAN;
    case 1: return -NAN;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return 0.0f;
    case 5: return -0.0f;
    default: return (float)(i % 7) - 3.0f + (float)rng_normal();
    }
}
static float gen_all_nan(size_t i) { return i % 2 ? NAN : INFINITY; }

static int test_against_reference(void)
{
    static const struct {
        const char *name;
        generator *gen;
    } cases[] = {
        {"normal", gen_normal}, {"offset", gen_offset}, {"huge", gen_huge},
        {"tiny", gen_tiny}, {"constant", gen_constant}, {"mixed", gen_mixed},
        {"non-finite", gen_all_nan},
    };
    const size_t n = 1000003;
    float *x = malloc(n * sizeof *x);
    EXPECT(x != NULL);
    int ok = 1;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (size_t i = 0; i < n; i++)
            x[i] = cases[c].gen(i);
        const reference r = reference_of(x, n);
        static const size_t chunks[] = {0, 1, 4096, 65536, 1000003};
        for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
            // One-value chunks are slow; a prefix shows the same.
            const size_t len = chunks[k] == 1 ? 100003 : n;
            const reference rk = len == n ? r : reference_of(x, len);
            for (int simd = 0; simd < 2; simd++) {
                ggp_stats s;
                accumulate(&s, x, len, chunks[k], simd);
                char what[64];
                snprintf(what, sizeof what, "%s, chunk %zu, %s", cases[c].name, chunks[k],
                         simd ? "simd" : "scalar");
                ok &= matches(&s, &rk, len, what);
            }
        }
    }
    free(x);
    return ok;
}

static int test_counts_and_extremes(void)
{
    const float x[] = {1, 2, 3, 4, NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -7.5f, 1e-45f};
    for (int simd = 0; simd < 2; simd++) {
        ggp_stats s;
        accumulate(&s, x, sizeof x / sizeof x[0], 3, simd);
        EXPECT_EQ(s.count, 11);
        EXPECT_EQ(s.finite, 8);
        EXPECT_EQ(s.zeros, 2);
        EXPECT_EQ(s.nans, 1);
        EXPECT_EQ(s.infs, 2);
        EXPECT(s.min == -7.5f && s.max == 4 && s.abs_max == 7.5f);
        EXPECT(fabs(ggp_stats_mean(&s) - (2.5 + 1e-45) / 8) < 1e-15);
    }
    return 1;
}

/* ==== Text ==== */

typedef struct text {
    ggp_sink sink;
    char buf[1024];
    size_t len;
} text;

static void append(ggp_sink *sink, const char *bytes, size_t len)
{
    text *t = (text *)sink;
    memcpy(t->buf + t->len, bytes, len);
    t->len += len;
    t->buf[t->len] = '\0';
}

static int renders_as(const float *x, size_t n, uint64_t elements, const char *want)
{
    ggp_stats s;
    ggp_stats_init(&s);
    ggp_stats_add(&s, x, n);
    text t = {{append}, "", 0};
    ggp_stats_render(&s, elements, &t.sink);
    EXPECT_STR(t.buf, want);
    EXPECT_EQ(t.len, ggp_stats_text_size(elements));
    return 1;
}

static int test_text(void)
{
    const float x[] = {1.5f, -2.25f, 0, NAN, 0.1f, INFINITY, 0, 0, 0, 0, 0, 0};
    EXPECT(renders_as(x, 12, 12,
                      "min: -2.25000000e+00\n"
                      "max: +1.50000000e+00\n"
                      "mean: -6.4999999850988394e-02\n"
                      "std: +8.5324381043707187e-01\n"
                      "abs_max: +2.25000000e+00\n"
                      "zeros: 7 \n"
                      "nans: 1 \n"
                      "infs: 1 \n"));
    const float none[] = {NAN, -INFINITY};
    EXPECT(renders_as(none, 2, 2,
                      "min: nan            \n"
                      "max: nan            \n"
                      "mean: nan                    \n"
                      "std: nan                    \n"
                      "abs_max: nan            \n"
                      "zeros: 0\n"
                      "nans: 1\n"
                      "infs: 1\n"));
    // The size depends on the element count only.
    EXPECT_EQ(ggp_stats_text_size(9) + 3, ggp_stats_text_size(10));
    EXPECT_EQ(ggp_stats_text_size(1) + 3 * 18, ggp_stats_text_size(INT64_MAX));
    // Extremes of float keep the width.
    const float extremes[] = {3.4028235e38f, -3.4028235e38f, 1e-45f, -1e-45f};
    ggp_stats s;
    ggp_stats_init(&s);
    ggp_stats_add(&s, extremes, 4);
    ggp_counting_sink c;
    ggp_counting_sink_init(&c);
    ggp_stats_render(&s, 4, &c.sink);
    EXPECT_EQ(c.total, ggp_stats_text_size(4));
    return 1;
}

int main(void)
{
    int ok = test_counts_and_extremes();
    ok &= test_text();
    ok &= test_against_reference();
    printf("stats: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
