/*
 * The two passes of the stats accumulator (stats.c) in AVX2, eight floats
 * at a time: the counts, min, max and abs_max are exactly the scalar
 * code's; the float64 sums are added in a different order (more partial
 * sums), so they agree to rounding. Chosen per accumulator when the CPU has
 * AVX2 (ggp_stats_set_simd).
 */
#include "ggp_i.h"

#ifdef GGP_HAVE_AVX2

#include <immintrin.h>
#include <math.h>

#define AVX2 __attribute__((target("avx2")))

AVX2 static inline uint32_t lanes_sum(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return (uint32_t)_mm_cvtsi128_si32(s);
}

AVX2 static inline double lanes_sum_pd(__m256d v)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

AVX2 static inline float lanes_min(__m256 v)
{
    __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

AVX2 static inline float lanes_max(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

AVX2 void ggp_stats_scan_avx2(const float *x, size_t n, ggp_stats_block *b)
{
    const __m256 inf = _mm256_set1_ps(INFINITY), neg_inf = _mm256_set1_ps(-INFINITY);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 zero = _mm256_setzero_ps();
    __m256i zeros = _mm256_setzero_si256(), nans = zeros, infs = zeros;
    __m256 lo = inf, hi = neg_inf, amax = zero;
    __m256d sum[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                      _mm256_setzero_pd()};
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int h = 0; h < 2; h++) {
            const __m256 v = _mm256_loadu_ps(x + i + 8 * h);
            const __m256 a = _mm256_and_ps(v, abs_mask);
            const __m256 finite = _mm256_cmp_ps(a, inf, _CMP_LT_OQ); // false for NaN
            // Each true lane is -1: subtracting the mask counts it.
            nans = _mm256_sub_epi32(nans, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
            infs = _mm256_sub_epi32(infs, _mm256_castps_si256(_mm256_cmp_ps(a, inf, _CMP_EQ_OQ)));
            zeros = _mm256_sub_epi32(zeros, _mm256_castps_si256(_mm256_cmp_ps(v, zero, _CMP_EQ_OQ)));
            // Lanes that are not finite take the identity of each reduction.
            lo = _mm256_min_ps(lo, _mm256_blendv_ps(inf, v, finite));
            hi = _mm256_max_ps(hi, _mm256_blendv_ps(neg_inf, v, finite));
            amax = _mm256_max_ps(amax, _mm256_and_ps(a, finite));
            const __m256 f = _mm256_and_ps(v, finite);
            sum[2 * h] = _mm256_add_pd(sum[2 * h], _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
            sum[2 * h + 1] = _mm256_add_pd(sum[2 * h + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
        }
    }
    ggp_stats_block tail;
    ggp_stats_scan(x + i, n - i, &tail);
    const float vlo = lanes_min(lo), vhi = lanes_max(hi), vamax = lanes_max(amax);
    b->zeros = lanes_sum(zeros) + tail.zeros;
    b->nans = lanes_sum(nans) + tail.nans;
    b->infs = lanes_sum(infs) + tail.infs;
    b->min = tail.min < vlo ? tail.min : vlo;
    b->max = tail.max > vhi ? tail.max : vhi;
    b->abs_max = tail.abs_max > vamax ? tail.abs_max : vamax;
    b->sum = lanes_sum_pd(_mm256_add_pd(_mm256_add_pd(sum[0], sum[1]), _mm256_add_pd(sum[2], sum[3]))) +
             tail.sum;
}

AVX2 void ggp_stats_deviations_avx2(const float *x, size_t n, double mean, bool all_finite,
                                    double *sum_d, double *sum_d2)
{
    const __m256d m = _mm256_set1_pd(mean);
    const __m256 inf = _mm256_set1_ps(INFINITY);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256d s1[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    __m256d s2[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), m);
        __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), m);
        if (!all_finite) {
            // Widen the finite mask to 64-bit lanes and zero the others.
            const __m256 finite = _mm256_cmp_ps(_mm256_and_ps(v, abs_mask), inf, _CMP_LT_OQ);
            const __m128i fm = _mm_castps_si128(_mm256_castps256_ps128(finite));
            const __m128i fh = _mm_castps_si128(_mm256_extractf128_ps(finite, 1));
            d0 = _mm256_and_pd(d0, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(fm)));
            d1 = _mm256_and_pd(d1, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(fh)));
        }
        s1[0] = _mm256_add_pd(s1[0], d0);
        s1[1] = _mm256_add_pd(s1[1], d1);
        s2[0] = _mm256_add_pd(s2[0], _mm256_mul_pd(d0, d0));
        s2[1] = _mm256_add_pd(s2[1], _mm256_mul_pd(d1, d1));
    }
    double t1, t2;
    ggp_stats_deviations(x + i, n - i, mean, all_finite, &t1, &t2);
    *sum_d = lanes_sum_pd(_mm256_add_pd(s1[0], s1[1])) + t1;
    *sum_d2 = lanes_sum_pd(_mm256_add_pd(s2[0], s2[1])) + t2;
}

#endif
