/*
 * AVX2 versions of the hot dequantizers, chosen per call when the CPU has
 * AVX2 and F16C (see ggp_file_set_simd). Each computes, element by element,
 * the same IEEE operations as its scalar twin in dequant_plain.c,
 * dequant_legacy.c, dequant_k.c or dequant_iq.c, in the same order: the
 * quant is cut out of its bit fields in integer lanes (any rearrangement
 * there is exact), converted to float (exact: small integers), and then
 * each scalar `*`, `+` or `-` is one _mm256_mul_ps, _mm256_add_ps or
 * _mm256_sub_ps, and each sign flip an xor. There is no FMA (the target is
 * "avx2,f16c", not "fma"), so the results are the scalar results bit for
 * bit; test_simd and the conformance suite check that.
 *
 * NaN payloads need one more rule. When both operands are NaN, x86 returns
 * the first, and compilers reorder the operands of a commutative operation
 * at will. Every multiply here has an operand that cannot be NaN (a quant or
 * a constant), subtraction is not commutative, and the one add that can see
 * two NaNs (q4_1, q5_1) spells out which one it returns.
 *
 * f16 -> f32 goes through F16C's vcvtph2ps, which gives exactly the bits of
 * ggp_f16_to_f32 for all 65536 inputs: signalling NaNs come out quieted in
 * both (the scalar code's multiply quiets them), payloads are kept, and
 * subnormals become normal floats without any dependence on MXCSR.
 *
 * The rest of the library stays baseline x86-64: only the functions here
 * carry the target attribute, and none of them is reached unless the CPU
 * has the features. Blocks are read with unaligned loads, and multi-byte
 * fields are read as little-endian, which x86 is.
 */
#include "dequant.h"

#ifdef GGP_HAVE_AVX2

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "half.h"
#include "iq_tables.h"

/* The scalar code forbids contraction for the same reason; without "fma"
 * in the target there is nothing to contract into anyway. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define AVX2 __attribute__((target("avx2,f16c")))

/* ==== Helpers ==== */

AVX2 static inline float f16_at(const uint8_t *p)
{
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(ggp_le16(p))));
}

AVX2 static inline __m128i load128(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* Eight bytes at p, zero- or sign-extended to eight 32-bit lanes. Widening
 * straight from memory costs one shuffle per 8 elements; the bit fields
 * are then cut out in the 32-bit lanes. */
AVX2 static inline __m256i u8x8_at(const uint8_t *p)
{
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}

AVX2 static inline __m256i i8x8_at(const uint8_t *p)
{
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}

/* Small integers to float: exact. */
AVX2 static inline __m256 ps(__m256i v)
{
    return _mm256_cvtepi32_ps(v);
}

/* The low 8 bytes of v as floats, unsigned or signed. */
AVX2 static inline __m256 u8x8(__m128i v)
{
    return ps(_mm256_cvtepu8_epi32(v));
}

AVX2 static inline __m256 i8x8(__m128i v)
{
    return ps(_mm256_cvtepi8_epi32(v));
}

AVX2 static inline __m256i and32(__m256i v, int mask)
{
    return _mm256_and_si256(v, _mm256_set1_epi32(mask));
}

AVX2 static inline __m256i sub32(__m256i v, int k)
{
    return _mm256_sub_epi32(v, _mm256_set1_epi32(k));
}

/* p + m as the scalar code and ggml compute it: when both are NaN, x86
 * returns the first operand's, p's. Compilers treat vaddps as commutative
 * and may swap the operands (clang 14 does, here), so that case is
 * written out: p is a product, already a quiet NaN if a NaN at all. */
AVX2 static inline __m256 add_first_nan(__m256 p, __m256 m)
{
    return _mm256_blendv_ps(_mm256_add_ps(p, m), p, _mm256_cmp_ps(p, p, _CMP_UNORD_Q));
}

/* Bit (first + lane) of x in each lane, moved to bit 4: the fifth quant
 * bit of q5_0/q5_1. */
AVX2 static inline __m256i bit4_of(uint32_t x, int first)
{
    const __m256i shift = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(first));
    return _mm256_slli_epi32(and32(_mm256_srlv_epi32(_mm256_set1_epi32((int)x), shift), 1), 4);
}

/* ==== Plain types ==== */

AVX2 void ggp_dequant_f16_avx2(const void *blocks, float *dst, size_t n)
{
    const uint8_t *p = blocks;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = _mm256_cvtph_ps(load128(p + 2 * i));
        const __m256 b = _mm256_cvtph_ps(load128(p + 2 * i + 16));
        _mm256_storeu_ps(dst + i, a);
        _mm256_storeu_ps(dst + i + 8, b);
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(load128(p + 2 * i)));
    for (; i < n; i++)
        dst[i] = f16_at(p + 2 * i);
}

AVX2 void ggp_dequant_bf16_avx2(const void *blocks, float *dst, size_t n)
{
    const uint8_t *p = blocks;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(p + 2 * i)), 16);
        _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(w));
    }
    for (; i < n; i++)
        dst[i] = ggp_bf16_to_f32(ggp_le16(p + 2 * i));
}

/* ==== Legacy 32-element blocks ==== */

/* In all of them byte j of qs holds element j (low nibble) and element
 * j + 16 (high nibble); j runs over two groups of 8. */

AVX2 void ggp_dequant_q4_0_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 18, dst += 32) {
        const __m256 d = _mm256_set1_ps(f16_at(b));
        for (int j = 0; j < 16; j += 8) {
            const __m256i v = u8x8_at(b + 2 + j);
            _mm256_storeu_ps(dst + j, _mm256_mul_ps(ps(sub32(and32(v, 15), 8)), d));
            _mm256_storeu_ps(dst + j + 16, _mm256_mul_ps(ps(sub32(_mm256_srli_epi32(v, 4), 8)), d));
        }
    }
}

AVX2 void ggp_dequant_q4_1_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 20, dst += 32) {
        const __m256 d = _mm256_set1_ps(f16_at(b));
        const __m256 m = _mm256_set1_ps(f16_at(b + 2));
        for (int j = 0; j < 16; j += 8) {
            const __m256i v = u8x8_at(b + 4 + j);
            const __m256 p0 = _mm256_mul_ps(ps(and32(v, 15)), d);
            const __m256 p1 = _mm256_mul_ps(ps(_mm256_srli_epi32(v, 4)), d);
            _mm256_storeu_ps(dst + j, add_first_nan(p0, m));
            _mm256_storeu_ps(dst + j + 16, add_first_nan(p1, m));
        }
    }
}

AVX2 void ggp_dequant_q5_0_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 22, dst += 32) {
        const __m256 d = _mm256_set1_ps(f16_at(b));
        const uint32_t qh = ggp_le32(b + 2);
        for (int j = 0; j < 16; j += 8) {
            const __m256i v = u8x8_at(b + 6 + j);
            const __m256i x0 = _mm256_or_si256(and32(v, 15), bit4_of(qh, j));
            const __m256i x1 = _mm256_or_si256(_mm256_srli_epi32(v, 4), bit4_of(qh, j + 16));
            _mm256_storeu_ps(dst + j, _mm256_mul_ps(ps(sub32(x0, 16)), d));
            _mm256_storeu_ps(dst + j + 16, _mm256_mul_ps(ps(sub32(x1, 16)), d));
        }
    }
}

AVX2 void ggp_dequant_q5_1_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 24, dst += 32) {
        const __m256 d = _mm256_set1_ps(f16_at(b));
        const __m256 m = _mm256_set1_ps(f16_at(b + 2));
        const uint32_t qh = ggp_le32(b + 4);
        for (int j = 0; j < 16; j += 8) {
            const __m256i v = u8x8_at(b + 8 + j);
            const __m256i x0 = _mm256_or_si256(and32(v, 15), bit4_of(qh, j));
            const __m256i x1 = _mm256_or_si256(_mm256_srli_epi32(v, 4), bit4_of(qh, j + 16));
            _mm256_storeu_ps(dst + j, add_first_nan(_mm256_mul_ps(ps(x0), d), m));
            _mm256_storeu_ps(dst + j + 16, add_first_nan(_mm256_mul_ps(ps(x1), d), m));
        }
    }
}

/* q8_0 and q8_1 differ only in where qs starts. */
AVX2 static inline void q8_blocks(const uint8_t *b, size_t stride, float *dst, size_t nblocks)
{
    for (size_t i = 0; i < nblocks; i++, b += stride, dst += 32) {
        const __m256 d = _mm256_set1_ps(f16_at(b));
        const uint8_t *qs = b + stride - 32;
        _mm256_storeu_ps(dst + 0, _mm256_mul_ps(ps(i8x8_at(qs + 0)), d));
        _mm256_storeu_ps(dst + 8, _mm256_mul_ps(ps(i8x8_at(qs + 8)), d));
        _mm256_storeu_ps(dst + 16, _mm256_mul_ps(ps(i8x8_at(qs + 16)), d));
        _mm256_storeu_ps(dst + 24, _mm256_mul_ps(ps(i8x8_at(qs + 24)), d));
    }
}

AVX2 void ggp_dequant_q8_0_avx2(const void *blocks, float *dst, size_t nblocks)
{
    q8_blocks(blocks, 34, dst, nblocks);
}

AVX2 void ggp_dequant_q8_1_avx2(const void *blocks, float *dst, size_t nblocks)
{
    q8_blocks(blocks, 36, dst, nblocks);
}

/* ==== K-quants ==== */

/* Elements 128h + 32k + 8j + lane of q2_K (k = 0..3) from the quant bytes
 * v (qs[32h + 8j + lane]); dl and ml point at the factors of sub-block
 * 8h + j/2, and sub-block 8h + 2k + j/2 is 2k further. */
AVX2 static inline void q2_K_8x4(float *y, __m256i v, const float *dl, const float *ml)
{
    _mm256_storeu_ps(y + 0, _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(dl[0]), ps(and32(v, 3))),
                                          _mm256_set1_ps(ml[0])));
    _mm256_storeu_ps(y + 32, _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(dl[2]),
                                                         ps(and32(_mm256_srli_epi32(v, 2), 3))),
                                           _mm256_set1_ps(ml[2])));
    _mm256_storeu_ps(y + 64, _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(dl[4]),
                                                         ps(and32(_mm256_srli_epi32(v, 4), 3))),
                                           _mm256_set1_ps(ml[4])));
    _mm256_storeu_ps(y + 96, _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(dl[6]),
                                                         ps(_mm256_srli_epi32(v, 6))),
                                           _mm256_set1_ps(ml[6])));
}

AVX2 void ggp_dequant_q2_K_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 84, dst += 256) {
        const __m256 d = _mm256_set1_ps(f16_at(b + 80));
        const __m256 dmin = _mm256_set1_ps(f16_at(b + 82));
        const __m128i s = load128(b);
        const __m128i sc = _mm_and_si128(s, _mm_set1_epi8(0x0F));
        const __m128i mn = _mm_and_si128(_mm_srli_epi16(s, 4), _mm_set1_epi8(0x0F));
        float dl[16], ml[16];
        _mm256_storeu_ps(dl, _mm256_mul_ps(d, u8x8(sc)));
        _mm256_storeu_ps(dl + 8, _mm256_mul_ps(d, u8x8(_mm_unpackhi_epi64(sc, sc))));
        _mm256_storeu_ps(ml, _mm256_mul_ps(dmin, u8x8(mn)));
        _mm256_storeu_ps(ml + 8, _mm256_mul_ps(dmin, u8x8(_mm_unpackhi_epi64(mn, mn))));

        for (int h = 0; h < 2; h++)
            for (int j = 0; j < 4; j++)
                q2_K_8x4(dst + 128 * h + 8 * j, u8x8_at(b + 16 + 32 * h + 8 * j),
                         dl + 8 * h + j / 2, ml + 8 * h + j / 2);
    }
}

/* Elements 128h + 32k + 8j + lane of q3_K (k = 0..3): low bits from v
 * (qs[32h + 8j + lane]), high bit k of hm (hmask[8j + lane] >> 4h); dl
 * points at the factor of sub-block 8h + j/2. */
AVX2 static inline void q3_K_8x4(float *y, __m256i v, __m256i hm, const float *dl)
{
    // q = low 2 bits - (high bit ? 0 : 4) = (low | high << 2) - 4
    const __m256i q0 = sub32(_mm256_or_si256(and32(v, 3), and32(_mm256_slli_epi32(hm, 2), 4)), 4);
    const __m256i q1 = sub32(_mm256_or_si256(and32(_mm256_srli_epi32(v, 2), 3),
                                             and32(_mm256_slli_epi32(hm, 1), 4)), 4);
    const __m256i q2 = sub32(_mm256_or_si256(and32(_mm256_srli_epi32(v, 4), 3), and32(hm, 4)), 4);
    const __m256i q3 = sub32(_mm256_or_si256(_mm256_srli_epi32(v, 6),
                                             and32(_mm256_srli_epi32(hm, 1), 4)), 4);
    _mm256_storeu_ps(y + 0, _mm256_mul_ps(_mm256_set1_ps(dl[0]), ps(q0)));
    _mm256_storeu_ps(y + 32, _mm256_mul_ps(_mm256_set1_ps(dl[2]), ps(q1)));
    _mm256_storeu_ps(y + 64, _mm256_mul_ps(_mm256_set1_ps(dl[4]), ps(q2)));
    _mm256_storeu_ps(y + 96, _mm256_mul_ps(_mm256_set1_ps(dl[6]), ps(q3)));
}

AVX2 void ggp_dequant_q3_K_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 110, dst += 256) {
        const __m256 d = _mm256_set1_ps(f16_at(b + 108));
        // The 16 6-bit scales (see dequant_k.c), unpacked as ggml's AVX2
        // code does, then unbiased.
        uint32_t aux[4], u[3];
        memcpy(u, b + 96, 12);
        aux[0] = (u[0] & 0x0f0f0f0f) | ((u[2] << 4) & 0x30303030);
        aux[1] = (u[1] & 0x0f0f0f0f) | ((u[2] << 2) & 0x30303030);
        aux[2] = ((u[0] >> 4) & 0x0f0f0f0f) | ((u[2] >> 0) & 0x30303030);
        aux[3] = ((u[1] >> 4) & 0x0f0f0f0f) | ((u[2] >> 2) & 0x30303030);
        const __m128i sc = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)aux),
                                        _mm_set1_epi8(32));
        float dl[16];
        _mm256_storeu_ps(dl, _mm256_mul_ps(d, i8x8(sc)));
        _mm256_storeu_ps(dl + 8, _mm256_mul_ps(d, i8x8(_mm_unpackhi_epi64(sc, sc))));

        for (int j = 0; j < 4; j++) {
            const __m256i hm = u8x8_at(b + 8 * j);
            q3_K_8x4(dst + 8 * j, u8x8_at(b + 32 + 8 * j), hm, dl + j / 2);
            q3_K_8x4(dst + 128 + 8 * j, u8x8_at(b + 64 + 8 * j), _mm256_srli_epi32(hm, 4),
                     dl + 8 + j / 2);
        }
    }
}

/* The 8 scales then the 8 mins of q4_K/q5_K, one byte each, from the 12
 * packed bytes (the kmask unpacking of ggml's AVX2 dot products; see
 * ggp_k4_scale_min in dequant_k.c for the layout), times d and dmin. */
AVX2 static inline void k4_factors(const uint8_t *b, float ds[8], float dm[8])
{
    uint32_t u[4];
    memcpy(u, b + 4, 12);
    u[3] = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
    const uint32_t mins_lo = u[1] & 0x3f3f3f3f;
    u[1] = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
    u[2] = mins_lo;
    u[0] &= 0x3f3f3f3f;
    const __m128i sm = _mm_loadu_si128((const __m128i *)(const void *)u);
    _mm256_storeu_ps(ds, _mm256_mul_ps(_mm256_set1_ps(f16_at(b)), u8x8(sm)));
    _mm256_storeu_ps(dm, _mm256_mul_ps(_mm256_set1_ps(f16_at(b + 2)), u8x8(_mm_unpackhi_epi64(sm, sm))));
}

/* y = (s * q) - m for the 8 lanes of q. */
AVX2 static inline void put8_smul_sub(float *y, float s, __m256i q, float m)
{
    _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(s), ps(q)), _mm256_set1_ps(m)));
}

AVX2 void ggp_dequant_q4_K_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 144, dst += 256) {
        float ds[8], dm[8];
        k4_factors(b, ds, dm);
        // Byte l of the c-th 32 holds element l of sub-blocks 2c and 2c + 1.
        for (int c = 0; c < 4; c++) {
            for (int j = 0; j < 32; j += 8) {
                const __m256i v = u8x8_at(b + 16 + 32 * c + j);
                put8_smul_sub(dst + 64 * c + j, ds[2 * c], and32(v, 15), dm[2 * c]);
                put8_smul_sub(dst + 64 * c + 32 + j, ds[2 * c + 1], _mm256_srli_epi32(v, 4),
                              dm[2 * c + 1]);
            }
        }
    }
}

AVX2 void ggp_dequant_q5_K_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 176, dst += 256) {
        float ds[8], dm[8];
        k4_factors(b, ds, dm);
        for (int j = 0; j < 32; j += 8) {
            // Bit s of qh[l] is bit 4 of element l of sub-block s; shifted
            // down two bits per pair of sub-blocks.
            __m256i h = u8x8_at(b + 16 + j);
            for (int c = 0; c < 4; c++, h = _mm256_srli_epi32(h, 2)) {
                const __m256i v = u8x8_at(b + 48 + 32 * c + j);
                const __m256i lo = _mm256_or_si256(and32(v, 15), and32(_mm256_slli_epi32(h, 4), 16));
                const __m256i hi = _mm256_or_si256(_mm256_srli_epi32(v, 4), and32(_mm256_slli_epi32(h, 3), 16));
                put8_smul_sub(dst + 64 * c + j, ds[2 * c], lo, dm[2 * c]);
                put8_smul_sub(dst + 64 * c + 32 + j, ds[2 * c + 1], hi, dm[2 * c + 1]);
            }
        }
    }
}

/* y = f * q for the 8 lanes of q. */
AVX2 static inline void put8_smul(float *y, float f, __m256i q)
{
    _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_set1_ps(f), ps(q)));
}

AVX2 void ggp_dequant_q6_K_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 210, dst += 256) {
        const __m256 d = _mm256_set1_ps(f16_at(b + 208));
        const __m128i sc = load128(b + 192);
        float f[16];
        _mm256_storeu_ps(f, _mm256_mul_ps(d, i8x8(sc)));
        _mm256_storeu_ps(f + 8, _mm256_mul_ps(d, i8x8(_mm_unpackhi_epi64(sc, sc))));

        for (int h = 0; h < 2; h++) {
            for (int j = 0; j < 32; j += 8) {
                const __m256i a = u8x8_at(b + 64 * h + j);
                const __m256i c = u8x8_at(b + 64 * h + 32 + j);
                const __m256i qh = u8x8_at(b + 128 + 32 * h + j);
                const __m256i q1 = _mm256_or_si256(and32(a, 15), and32(_mm256_slli_epi32(qh, 4), 0x30));
                const __m256i q2 = _mm256_or_si256(and32(c, 15), and32(_mm256_slli_epi32(qh, 2), 0x30));
                const __m256i q3 = _mm256_or_si256(_mm256_srli_epi32(a, 4), and32(qh, 0x30));
                const __m256i q4 = _mm256_or_si256(_mm256_srli_epi32(c, 4),
                                                   and32(_mm256_srli_epi32(qh, 2), 0x30));
                // f = d * scale, scales[8h + 2k] for l < 16, 8h + 2k + 1 after.
                const float *fh = f + 8 * h + j / 16;
                float *y = dst + 128 * h + j;
                put8_smul(y + 0, fh[0], sub32(q1, 32));
                put8_smul(y + 32, fh[2], sub32(q2, 32));
                put8_smul(y + 64, fh[4], sub32(q3, 32));
                put8_smul(y + 96, fh[6], sub32(q4, 32));
            }
        }
    }
}

AVX2 void ggp_dequant_q8_K_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 292) {
        const __m256 d = _mm256_set1_ps(ggp_f32_from_bits(ggp_le32(b)));
        for (int j = 0; j < 256; j += 8, dst += 8)
            _mm256_storeu_ps(dst, _mm256_mul_ps(d, ps(i8x8_at(b + 4 + j))));
    }
}

/* ==== iq types ==== */

/* Eight elements (dl * grid byte j) with the sign flipped where bit j of
 * signs is set: the scalar put8_signed, sign flip and all. */
AVX2 static inline void put8_signed(float *y, __m256 dl, uint64_t grid, unsigned signs)
{
    const __m256 v = _mm256_mul_ps(dl, u8x8(_mm_cvtsi64_si128((long long)grid)));
    // Bit j of signs moved to bit 31 of lane j.
    const __m256i s = _mm256_sllv_epi32(_mm256_set1_epi32((int)signs),
                                        _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24));
    const __m256i flip = _mm256_and_si256(s, _mm256_set1_epi32((int)0x80000000u));
    _mm256_storeu_ps(y, _mm256_xor_ps(v, _mm256_castsi256_ps(flip)));
}

AVX2 void ggp_dequant_iq2_xxs_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 66) {
        const float d = f16_at(b);
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = b + 2 + 8 * ib;
            const uint32_t w = ggp_le32(q + 4);
            const __m256 db = _mm256_set1_ps(d * (0.5f + (float)(w >> 28)) * 0.25f);
            for (int l = 0; l < 4; l++, dst += 8)
                put8_signed(dst, db, ggp_iq2xxs_grid[q[l]], ggp_ksigns_iq2xs[(w >> (7 * l)) & 127]);
        }
    }
}

AVX2 void ggp_dequant_iq2_xs_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 74) {
        const float d = f16_at(b);
        for (int ib = 0; ib < 8; ib++) {
            const unsigned sc = b[66 + ib];
            const __m256 db[2] = {
                _mm256_set1_ps(d * (0.5f + (float)(sc & 0xf)) * 0.25f),
                _mm256_set1_ps(d * (0.5f + (float)(sc >> 4)) * 0.25f),
            };
            for (int l = 0; l < 4; l++, dst += 8) {
                const unsigned q = ggp_le16(b + 2 + 2 * (4 * ib + l));
                put8_signed(dst, db[l / 2], ggp_iq2xs_grid[q & 511], ggp_ksigns_iq2xs[q >> 9]);
            }
        }
    }
}

AVX2 void ggp_dequant_iq2_s_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 82) {
        const float d = f16_at(b);
        const uint8_t *qs = b + 2, *signs = b + 34, *qhs = b + 66, *scales = b + 74;
        for (int ib = 0; ib < 8; ib++) {
            const unsigned sc = scales[ib];
            const __m256 db[2] = {
                _mm256_set1_ps(d * (0.5f + (float)(sc & 0xf)) * 0.25f),
                _mm256_set1_ps(d * (0.5f + (float)(sc >> 4)) * 0.25f),
            };
            const unsigned qh = qhs[ib];
            for (int l = 0; l < 4; l++, dst += 8) {
                const int k = 4 * ib + l;
                const unsigned idx = qs[k] | ((qh << (8 - 2 * l)) & 0x300);
                put8_signed(dst, db[l / 2], ggp_iq2s_grid[idx], signs[k]);
            }
        }
    }
}

AVX2 void ggp_dequant_iq3_xxs_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 98) {
        const float d = f16_at(b);
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t *q = b + 2 + 8 * ib;
            const uint32_t w = ggp_le32(b + 66 + 4 * ib);
            const __m256 db = _mm256_set1_ps(d * (0.5f + (float)(w >> 28)) * 0.5f);
            for (int l = 0; l < 4; l++, dst += 8) {
                const uint64_t grid = ggp_iq3xxs_grid[q[2 * l]] |
                                      (uint64_t)ggp_iq3xxs_grid[q[2 * l + 1]] << 32;
                put8_signed(dst, db, grid, ggp_ksigns_iq2xs[(w >> (7 * l)) & 127]);
            }
        }
    }
}

AVX2 void ggp_dequant_iq3_s_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 110) {
        const float d = f16_at(b);
        const uint8_t *qhs = b + 66, *signs = b + 74, *scales = b + 106;
        for (int ib = 0; ib < 8; ib++) {
            const unsigned sc = scales[ib / 2];
            const unsigned nib = (ib % 2) ? sc >> 4 : sc & 0xf;
            const __m256 db = _mm256_set1_ps(d * (float)(1 + 2 * (int)nib));
            const uint8_t *q = b + 2 + 8 * ib;
            const unsigned qh = qhs[ib];
            for (int l = 0; l < 4; l++, dst += 8) {
                const unsigned i1 = q[2 * l] | ((qh << (8 - 2 * l)) & 256);
                const unsigned i2 = q[2 * l + 1] | ((qh << (7 - 2 * l)) & 256);
                const uint64_t grid = ggp_iq3s_grid[i1] | (uint64_t)ggp_iq3s_grid[i2] << 32;
                put8_signed(dst, db, grid, signs[4 * ib + l]);
            }
        }
    }
}

/* y[e] = s * level[nibble e] for the 32 nibbles of the 16 bytes at qs:
 * low nibbles are elements 0..15, high nibbles 16..31. The levels are
 * looked up with a byte shuffle. */
AVX2 static inline void put32_iq4(float *y, __m256 s, const uint8_t *qs)
{
    const __m128i table = load128((const uint8_t *)ggp_kvalues_iq4nl);
    const __m128i m4 = _mm_set1_epi8(0x0F);
    const __m128i q = load128(qs);
    const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(q, m4));
    const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(q, 4), m4));
    _mm256_storeu_ps(y + 0, _mm256_mul_ps(s, i8x8(lo)));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(s, i8x8(_mm_unpackhi_epi64(lo, lo))));
    _mm256_storeu_ps(y + 16, _mm256_mul_ps(s, i8x8(hi)));
    _mm256_storeu_ps(y + 24, _mm256_mul_ps(s, i8x8(_mm_unpackhi_epi64(hi, hi))));
}

AVX2 void ggp_dequant_iq4_nl_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 18, dst += 32)
        put32_iq4(dst, _mm256_set1_ps(f16_at(b)), b + 2);
}

AVX2 void ggp_dequant_iq4_xs_avx2(const void *blocks, float *dst, size_t nblocks)
{
    const uint8_t *b = blocks;
    for (size_t i = 0; i < nblocks; i++, b += 136) {
        const float d = f16_at(b);
        const unsigned sh = ggp_le16(b + 2);
        for (int ib = 0; ib < 8; ib++, dst += 32) {
            const unsigned ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xf) | ((sh >> (2 * ib)) & 3) << 4;
            put32_iq4(dst, _mm256_set1_ps(d * (float)((int)ls - 32)), b + 8 + 16 * ib);
        }
    }
}

#else

typedef int ggp_no_avx2; // ISO C wants something in a translation unit

#endif
