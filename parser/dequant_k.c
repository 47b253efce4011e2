/*
 * The K-quant super-block formats: q2_K, q3_K, q4_K, q5_K, q6_K, q8_K.
 *
 * A super-block holds 256 elements split into 16 or 8 sub-blocks. Each
 * sub-block has a small integer scale (and for q2_K/q4_K/q5_K a min), which
 * the super-block's f16 d (and dmin) turn into float factors.
 *
 * Results must equal ggml's dequantize_row_* bit for bit. ggml first forms
 * the sub-block factor in float (d * scale, dmin * min) and only then
 * multiplies by the quant and subtracts the min term, each step rounded to
 * float; q6_K is (d * scale) * q. The code below keeps exactly that order.
 * Every integer involved is small, so int -> float conversions are exact.
 */
#include "dequant.h"

#include <stdint.h>

#include "half.h"

/* A fused multiply-subtract would round once where ggml rounds twice. gcc in
 * ISO C mode never contracts; clang does within one expression unless told
 * not to. The products below are also kept in their own statements. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define GGP_QK_K 256

/* Byte arrays only: alignment 1, no padding, any byte position is fine. */
typedef struct {
    uint8_t scales[16];
    uint8_t qs[64];
    uint8_t d[2];
    uint8_t dmin[2];
} ggp_block_q2_K;
_Static_assert(sizeof(ggp_block_q2_K) == 84, "q2_K block is 84 bytes");

typedef struct {
    uint8_t hmask[32];
    uint8_t qs[64];
    uint8_t scales[12];
    uint8_t d[2];
} ggp_block_q3_K;
_Static_assert(sizeof(ggp_block_q3_K) == 110, "q3_K block is 110 bytes");

typedef struct {
    uint8_t d[2];
    uint8_t dmin[2];
    uint8_t scales[12];
    uint8_t qs[128];
} ggp_block_q4_K;
_Static_assert(sizeof(ggp_block_q4_K) == 144, "q4_K block is 144 bytes");

typedef struct {
    uint8_t d[2];
    uint8_t dmin[2];
    uint8_t scales[12];
    uint8_t qh[32];
    uint8_t qs[128];
} ggp_block_q5_K;
_Static_assert(sizeof(ggp_block_q5_K) == 176, "q5_K block is 176 bytes");

typedef struct {
    uint8_t ql[128];
    uint8_t qh[64];
    uint8_t scales[16];
    uint8_t d[2];
} ggp_block_q6_K;
_Static_assert(sizeof(ggp_block_q6_K) == 210, "q6_K block is 210 bytes");

typedef struct {
    uint8_t d[4];
    uint8_t qs[256];
    uint8_t bsums[32];
} ggp_block_q8_K;
_Static_assert(sizeof(ggp_block_q8_K) == 292, "q8_K block is 292 bytes");

/* Two's-complement reinterpretation of a byte without an implementation-
 * defined conversion. */
static int ggp_i8(uint8_t b)
{
    return b < 0x80 ? (int)b : (int)b - 256;
}

/*
 * q2_K, 84 bytes, 16 sub-blocks of 16:
 *
 *   0           16              80     82     84
 *   +-----------+---------------+------+------+
 *   | scales[16]| qs[64]        | d    | dmin |
 *   | lo4 = sc  | 2-bit quants  | f16  | f16  |
 *   | hi4 = mn  |               |      |      |
 *   +-----------+---------------+------+------+
 *
 * Elements come in two halves of 128, each using 32 qs bytes. Within half h,
 * element 128h + 32k + l (k 0..3, l 0..31) is bits 2k..2k+1 of
 * qs[32h + l]; its sub-block is 8h + 2k + (l >= 16).
 * value = (d * sc) * q - (dmin * mn).
 */
void ggp_dequant_q2_K(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q2_K *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);
        const float dmin = ggp_le_f16(b->dmin);

        for (int h = 0; h < 2; h++) {
            const uint8_t *q = b->qs + 32 * h;

            for (int k = 0; k < 4; k++) {
                const int shift = 2 * k;

                for (int half = 0; half < 2; half++) {
                    const uint8_t sc = b->scales[8 * h + 2 * k + half];
                    const float dl = d * (float)(sc & 0x0F);
                    const float ml = dmin * (float)(sc >> 4);

                    for (int l = 0; l < 16; l++) {
                        const float p = dl * (float)((q[16 * half + l] >> shift) & 3);
                        *dst++ = p - ml;
                    }
                }
            }
        }
    }
}

/*
 * The sixteen 6-bit q3_K scales, packed into 12 bytes:
 *
 *   bytes 0..7 : low nibble  = bits 0..3 of scale j      (j = 0..7)
 *                high nibble = bits 0..3 of scale j + 8
 *   bytes 8..11: byte 8 + r holds bits 4..5 of scales r, r + 4, r + 8,
 *                r + 12 in its bit pairs 0-1, 2-3, 4-5, 6-7
 *
 * The stored value is biased by 32.
 */
static int ggp_q3_K_scale(const uint8_t *s, int j)
{
    const int lo = (s[j % 8] >> (4 * (j / 8))) & 0x0F;
    const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;

    return (lo | (hi << 4)) - 32;
}

/*
 * q3_K, 110 bytes, 16 sub-blocks of 16:
 *
 *   0          32            96           108    110
 *   +----------+-------------+------------+------+
 *   | hmask[32]| qs[64]      | scales[12] | d    |
 *   | high bit | low 2 bits  | 16 x 6 bit | f16  |
 *   +----------+-------------+------------+------+
 *
 * Element 128h + 32k + l (h 0..1, k 0..3, l 0..31): low bits are bits
 * 2k..2k+1 of qs[32h + l]; the high bit is bit 4h + k of hmask[l], and a
 * CLEAR high bit subtracts 4, giving q in -4..3. Sub-block 8h + 2k + (l >= 16).
 * value = (d * (scale - 32)) * q.
 */
void ggp_dequant_q3_K(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q3_K *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);

        for (int h = 0; h < 2; h++) {
            const uint8_t *q = b->qs + 32 * h;

            for (int k = 0; k < 4; k++) {
                const int shift = 2 * k;
                const uint8_t mbit = (uint8_t)(1u << (4 * h + k));

                for (int half = 0; half < 2; half++) {
                    const float dl = d * (float)ggp_q3_K_scale(b->scales, 8 * h + 2 * k + half);

                    for (int l = 16 * half; l < 16 * half + 16; l++) {
                        const int lo = (q[l] >> shift) & 3;
                        const int qv = lo - ((b->hmask[l] & mbit) ? 0 : 4);
                        *dst++ = dl * (float)qv;
                    }
                }
            }
        }
    }
}

/*
 * The eight 6-bit scales and eight 6-bit mins of q4_K and q5_K, in 12 bytes:
 *
 *   j = 0..3: scale = s[j] & 63,        min = s[j + 4] & 63
 *   j = 4..7: scale = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4
 *             min   = (s[j + 4] >> 4) | (s[j]     >> 6) << 4
 */
static void ggp_k4_scale_min(const uint8_t *s, int j, int *sc, int *mn)
{
    if (j < 4) {
        *sc = s[j] & 63;
        *mn = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
        *mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/*
 * q4_K, 144 bytes, 8 sub-blocks of 32:
 *
 *   0      2      4            16                     144
 *   +------+------+------------+----------------------+
 *   | d    | dmin | scales[12] | qs[128]              |
 *   | f16  | f16  | 8 sc, 8 mn | 4-bit quants         |
 *   +------+------+------------+----------------------+
 *
 * Each 32 bytes of qs hold two sub-blocks: low nibbles are sub-block 2c,
 * high nibbles sub-block 2c + 1 (c 0..3), byte l giving element l of each.
 * value = (d * sc) * q - (dmin * mn).
 */
void ggp_dequant_q4_K(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q4_K *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);
        const float dmin = ggp_le_f16(b->dmin);

        for (int c = 0; c < 4; c++) {
            const uint8_t *q = b->qs + 32 * c;
            int sc, mn;

            ggp_k4_scale_min(b->scales, 2 * c, &sc, &mn);
            const float d1 = d * (float)sc;
            const float m1 = dmin * (float)mn;
            ggp_k4_scale_min(b->scales, 2 * c + 1, &sc, &mn);
            const float d2 = d * (float)sc;
            const float m2 = dmin * (float)mn;

            for (int l = 0; l < 32; l++) {
                const float p = d1 * (float)(q[l] & 0x0F);
                *dst++ = p - m1;
            }
            for (int l = 0; l < 32; l++) {
                const float p = d2 * (float)(q[l] >> 4);
                *dst++ = p - m2;
            }
        }
    }
}

/*
 * q5_K, 176 bytes, 8 sub-blocks of 32:
 *
 *   0      2      4            16         48                 176
 *   +------+------+------------+----------+------------------+
 *   | d    | dmin | scales[12] | qh[32]   | qs[128]          |
 *   | f16  | f16  | as q4_K    | bit 4    | low 4 bits       |
 *   +------+------+------------+----------+------------------+
 *
 * Low 4 bits as in q4_K; element l of sub-block s takes its bit 4 from
 * bit s of qh[l]. value = (d * sc) * q - (dmin * mn), q in 0..31.
 */
void ggp_dequant_q5_K(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q5_K *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);
        const float dmin = ggp_le_f16(b->dmin);

        for (int c = 0; c < 4; c++) {
            const uint8_t *q = b->qs + 32 * c;
            const uint8_t u1 = (uint8_t)(1u << (2 * c));
            const uint8_t u2 = (uint8_t)(2u << (2 * c));
            int sc, mn;

            ggp_k4_scale_min(b->scales, 2 * c, &sc, &mn);
            const float d1 = d * (float)sc;
            const float m1 = dmin * (float)mn;
            ggp_k4_scale_min(b->scales, 2 * c + 1, &sc, &mn);
            const float d2 = d * (float)sc;
            const float m2 = dmin * (float)mn;

            for (int l = 0; l < 32; l++) {
                const int qv = (q[l] & 0x0F) + ((b->qh[l] & u1) ? 16 : 0);
                const float p = d1 * (float)qv;
                *dst++ = p - m1;
            }
            for (int l = 0; l < 32; l++) {
                const int qv = (q[l] >> 4) + ((b->qh[l] & u2) ? 16 : 0);
                const float p = d2 * (float)qv;
                *dst++ = p - m2;
            }
        }
    }
}

/*
 * q6_K, 210 bytes, 16 sub-blocks of 16:
 *
 *   0                128          192          208    210
 *   +----------------+------------+------------+------+
 *   | ql[128]        | qh[64]     | scales[16] | d    |
 *   | low 4 bits     | high 2 bits| int8       | f16  |
 *   +----------------+------------+------------+------+
 *
 * Two halves of 128 elements, half h using ql[64h..64h+63], qh[32h..32h+31]
 * and scales[8h..8h+7]. For l in 0..31, the four elements 128h + l + 32k
 * (k 0..3) take their low 4 bits from
 *     k=0: ql[l] low    k=1: ql[l+32] low    k=2: ql[l] high    k=3: ql[l+32] high
 * and their high 2 bits from bits 2k..2k+1 of qh[l]; q = 6-bit value - 32.
 * Sub-block 8h + 2k + (l >= 16). value = (d * scale) * q.
 */
void ggp_dequant_q6_K(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q6_K *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);

        for (int h = 0; h < 2; h++, dst += 128) {
            const uint8_t *ql = b->ql + 64 * h;
            const uint8_t *qh = b->qh + 32 * h;
            const uint8_t *sc = b->scales + 8 * h;

            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                const float f1 = d * (float)ggp_i8(sc[is + 0]);
                const float f2 = d * (float)ggp_i8(sc[is + 2]);
                const float f3 = d * (float)ggp_i8(sc[is + 4]);
                const float f4 = d * (float)ggp_i8(sc[is + 6]);

                dst[l + 0] = f1 * (float)q1;
                dst[l + 32] = f2 * (float)q2;
                dst[l + 64] = f3 * (float)q3;
                dst[l + 96] = f4 * (float)q4;
            }
        }
    }
}

/*
 * q8_K, 292 bytes:
 *
 *   0      4                         260                292
 *   +------+-------------------------+------------------+
 *   | d    | qs[256], int8           | bsums[16], i16   |
 *   | f32  |                         | sums of 16 qs    |
 *   +------+-------------------------+------------------+
 *
 * bsums only speed up dot products. value = d * qs[e]. ggml registers no
 * to_float for q8_K; this matches its (unregistered) dequantize_row_q8_K.
 */
void ggp_dequant_q8_K(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q8_K *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_f32_from_bits(ggp_le32(b->d));

        for (int j = 0; j < GGP_QK_K; j++)
            *dst++ = d * (float)ggp_i8(b->qs[j]);
    }
}
