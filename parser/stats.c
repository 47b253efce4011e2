/*
 * tensors/NAME/stats: an accumulator fed the tensor's f32 values in chunks,
 * and its fixed-width text.
 *
 * Values are taken in blocks of GGP_STATS_BLOCK (16 KiB, so the second pass
 * reads the block from L1): pass 1 counts zeros, NaNs and infinities and
 * finds min, max, abs_max and the float64 sum of the finite values; pass 2
 * sums d and d² for d = x - block mean (the corrected two-pass variance,
 * which is exact up to rounding even when the block mean is off). Blocks
 * are merged with Chan et al.'s formula, and the block sums are added with
 * Neumaier's compensation, so mean and std stay within a few ulps of a
 * float64 two-pass result over the whole tensor, however large.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ggp_i.h"

/* ==== Scalar passes ==== */

void ggp_stats_scan(const float *x, size_t n, ggp_stats_block *b)
{
    uint32_t zeros = 0, nans = 0, infs = 0;
    float lo = INFINITY, hi = -INFINITY, amax = 0;
    double sum[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        const uint32_t mag = bits & 0x7fffffffu;
        if (mag >= 0x7f800000u) { // all exponent bits set: inf or NaN
            nans += mag > 0x7f800000u;
            infs += mag == 0x7f800000u;
            continue;
        }
        const float v = x[i];
        zeros += mag == 0;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        const float a = fabsf(v);
        amax = a > amax ? a : amax;
        sum[i & 3] += v;
    }
    *b = (ggp_stats_block){zeros, nans, infs, lo, hi, amax, (sum[0] + sum[1]) + (sum[2] + sum[3])};
}

void ggp_stats_deviations(const float *x, size_t n, double mean, bool all_finite, double *sum_d,
                          double *sum_d2)
{
    double s1[2] = {0, 0}, s2[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        if (!all_finite && !isfinite(x[i]))
            continue;
        const double d = (double)x[i] - mean;
        s1[i & 1] += d;
        s2[i & 1] += d * d;
    }
    *sum_d = s1[0] + s1[1];
    *sum_d2 = s2[0] + s2[1];
}

/* ==== Accumulator ==== */

void ggp_stats_init(ggp_stats *s)
{
    *s = (ggp_stats){0};
    s->min = INFINITY;
    s->max = -INFINITY;
    ggp_stats_set_simd(s, true);
}

void ggp_stats_set_simd(ggp_stats *s, bool enabled)
{
    s->use_simd = enabled && ggp_simd_supported();
}

/* sum += x, keeping the rounding error of each addition in err. */
static void add_compensated(double *sum, double *err, double x)
{
    const double t = *sum + x;
    if (fabs(*sum) >= fabs(x))
        *err += (*sum - t) + x;
    else
        *err += (x - t) + *sum;
    *sum = t;
}

static void scan(const ggp_stats *s, const float *x, size_t n, ggp_stats_block *b)
{
#ifdef GGP_HAVE_AVX2
    if (s->use_simd) {
        ggp_stats_scan_avx2(x, n, b);
        return;
    }
#endif
    (void)s;
    ggp_stats_scan(x, n, b);
}

static void deviations(const ggp_stats *s, const float *x, size_t n, double mean, bool all_finite,
                       double *sum_d, double *sum_d2)
{
#ifdef GGP_HAVE_AVX2
    if (s->use_simd) {
        ggp_stats_deviations_avx2(x, n, mean, all_finite, sum_d, sum_d2);
        return;
    }
#endif
    (void)s;
    ggp_stats_deviations(x, n, mean, all_finite, sum_d, sum_d2);
}

static void add_block(ggp_stats *s, const float *x, size_t n)
{
    ggp_stats_block b;
    scan(s, x, n, &b);
    s->count += n;
    s->zeros += b.zeros;
    s->nans += b.nans;
    s->infs += b.infs;
    const uint64_t nf = n - b.nans - b.infs;
    if (nf == 0)
        return;
    const double mean_b = b.sum / (double)nf;
    double sum_d, sum_d2;
    deviations(s, x, n, mean_b, nf == n, &sum_d, &sum_d2);
    double m2_b = sum_d2 - sum_d * sum_d / (double)nf;
    if (m2_b < 0)
        m2_b = 0;
    if (s->finite == 0) {
        s->m2 = m2_b;
    } else {
        const double na = (double)s->finite, nb = (double)nf;
        const double delta = mean_b - (s->sum + s->sum_err) / na;
        s->m2 += m2_b + delta * delta * (na * nb / (na + nb));
    }
    add_compensated(&s->sum, &s->sum_err, b.sum);
    s->finite += nf;
    s->min = b.min < s->min ? b.min : s->min;
    s->max = b.max > s->max ? b.max : s->max;
    s->abs_max = b.abs_max > s->abs_max ? b.abs_max : s->abs_max;
}

void ggp_stats_add(ggp_stats *s, const float *x, size_t n)
{
    while (n > 0) {
        const size_t k = n < GGP_STATS_BLOCK ? n : GGP_STATS_BLOCK;
        add_block(s, x, k);
        x += k;
        n -= k;
    }
}

double ggp_stats_mean(const ggp_stats *s)
{
    return s->finite ? (s->sum + s->sum_err) / (double)s->finite : NAN;
}

double ggp_stats_std(const ggp_stats *s)
{
    return s->finite ? sqrt(s->m2 / (double)s->finite) : NAN;
}

/* ==== Text ==== */

// "+1.23456789e+00": %+.8e of any finite float has a two-digit exponent.
#define F32_WIDTH 15
// "+1.2345678901234567e+00": the mean and std of finite floats lie between
// 1e-99 and 1e99 (or are 0), so their exponent has two digits too.
#define F64_WIDTH 23

static unsigned digits(uint64_t n)
{
    unsigned d = 1;
    while (n >= 10)
        n /= 10, d++;
    return d;
}

/* "key: " then text left-aligned in width columns, then a newline. */
static void put_field(ggp_sink *sink, const char *key, const char *text, unsigned width)
{
    char line[64];
    const int n = snprintf(line, sizeof line, "%s: %-*s\n", key, (int)width, text);
    sink->write(sink, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : 0);
}

/* x in exactly width columns: %+.8e for a float, %+.16e for a double. Should
 * an exponent ever take three digits, one digit of precision makes room. */
static void put_float(ggp_sink *sink, const char *key, double x, bool any, unsigned width)
{
    char text[40] = "nan";
    for (int precision = width - 7; any && precision >= 0; precision--) {
        if (snprintf(text, sizeof text, "%+.*e", precision, x) <= (int)width)
            break;
    }
    put_field(sink, key, text, width);
}

static void put_count(ggp_sink *sink, const char *key, uint64_t n, unsigned width)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)n);
    text[width] = '\0';
    put_field(sink, key, text, width);
}

void ggp_stats_render(const ggp_stats *s, uint64_t elements, ggp_sink *sink)
{
    const bool any = s->finite > 0;
    const unsigned w = digits(elements);
    put_float(sink, "min", s->min, any, F32_WIDTH);
    put_float(sink, "max", s->max, any, F32_WIDTH);
    put_float(sink, "mean", ggp_stats_mean(s), any, F64_WIDTH);
    put_float(sink, "std", ggp_stats_std(s), any, F64_WIDTH);
    put_float(sink, "abs_max", s->abs_max, any, F32_WIDTH);
    put_count(sink, "zeros", s->zeros, w);
    put_count(sink, "nans", s->nans, w);
    put_count(sink, "infs", s->infs, w);
}

uint64_t ggp_stats_text_size(uint64_t elements)
{
    const uint64_t w = digits(elements);
    // "min: " .. "abs_max: " keys with ": " and "\n", then the values.
    return (5 + F32_WIDTH + 1) * 2 + (6 + F64_WIDTH + 1) + (5 + F64_WIDTH + 1) +
           (9 + F32_WIDTH + 1) + (7 + w + 1) + (6 + w + 1) + (6 + w + 1);
}
