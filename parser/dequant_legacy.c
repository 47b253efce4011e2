/*
 * The legacy 32-element block formats: q4_0, q4_1, q5_0, q5_1, q8_0, q8_1.
 *
 * Each block carries one f16 scale d (and, for the _1 variants, a second
 * f16) followed by packed integers. The "_0" formats are symmetric
 * (value = d * (q - offset)), the "_1" formats affine (value = d * q + m).
 *
 * Results must equal ggml's dequantize_row_* bit for bit, so every value is
 * computed with ggml's operand types and association: an int quant converted
 * to float times the f32 scale, and for the affine formats the product
 * rounded to float before m is added. All quants are small integers, so the
 * int -> float conversion itself is exact; only the multiply and the add
 * round.
 */
#include "dequant.h"

#include <stdint.h>

#include "half.h"

/* A fused multiply-add would round once where ggml rounds twice. gcc in ISO C
 * mode never contracts; clang does within one expression unless told not
 * to. The products below are also kept in their own statements. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define GGP_QK_LEGACY 32

/* All on-disk layouts are byte arrays only, so the structs have alignment 1,
 * no padding, and can overlay any byte position in a mapped file. */
typedef struct {
    uint8_t d[2];
    uint8_t qs[GGP_QK_LEGACY / 2];
} ggp_block_q4_0;
_Static_assert(sizeof(ggp_block_q4_0) == 18, "q4_0 block is 18 bytes");

typedef struct {
    uint8_t d[2];
    uint8_t m[2];
    uint8_t qs[GGP_QK_LEGACY / 2];
} ggp_block_q4_1;
_Static_assert(sizeof(ggp_block_q4_1) == 20, "q4_1 block is 20 bytes");

typedef struct {
    uint8_t d[2];
    uint8_t qh[4];
    uint8_t qs[GGP_QK_LEGACY / 2];
} ggp_block_q5_0;
_Static_assert(sizeof(ggp_block_q5_0) == 22, "q5_0 block is 22 bytes");

typedef struct {
    uint8_t d[2];
    uint8_t m[2];
    uint8_t qh[4];
    uint8_t qs[GGP_QK_LEGACY / 2];
} ggp_block_q5_1;
_Static_assert(sizeof(ggp_block_q5_1) == 24, "q5_1 block is 24 bytes");

typedef struct {
    uint8_t d[2];
    uint8_t qs[GGP_QK_LEGACY];
} ggp_block_q8_0;
_Static_assert(sizeof(ggp_block_q8_0) == 34, "q8_0 block is 34 bytes");

typedef struct {
    uint8_t d[2];
    uint8_t s[2];
    uint8_t qs[GGP_QK_LEGACY];
} ggp_block_q8_1;
_Static_assert(sizeof(ggp_block_q8_1) == 36, "q8_1 block is 36 bytes");

/* Two's-complement reinterpretation of a byte without an implementation-
 * defined conversion. */
static int ggp_i8(uint8_t b)
{
    return b < 0x80 ? (int)b : (int)b - 256;
}

/*
 * q4_0, 18 bytes:
 *
 *   0      2                                  18
 *   +------+----------------------------------+
 *   | d    | qs[16]                           |
 *   | f16  | byte j = (q[j+16] << 4) | q[j]   |
 *   +------+----------------------------------+
 *
 * Low nibbles are elements 0..15, high nibbles elements 16..31.
 * value = (q - 8) * d, q in 0..15.
 */
void ggp_dequant_q4_0(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q4_0 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++, dst += GGP_QK_LEGACY) {
        const float d = ggp_le_f16(b->d);

        for (int j = 0; j < GGP_QK_LEGACY / 2; j++) {
            const int x0 = (b->qs[j] & 0x0F) - 8;
            const int x1 = (b->qs[j] >> 4) - 8;

            dst[j] = (float)x0 * d;
            dst[j + GGP_QK_LEGACY / 2] = (float)x1 * d;
        }
    }
}

/*
 * q4_1, 20 bytes:
 *
 *   0      2      4                           20
 *   +------+------+---------------------------+
 *   | d    | m    | qs[16]                    |
 *   | f16  | f16  | nibbles as in q4_0        |
 *   +------+------+---------------------------+
 *
 * value = q * d + m, q in 0..15; the product is rounded before the add.
 */
void ggp_dequant_q4_1(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q4_1 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++, dst += GGP_QK_LEGACY) {
        const float d = ggp_le_f16(b->d);
        const float m = ggp_le_f16(b->m);

        for (int j = 0; j < GGP_QK_LEGACY / 2; j++) {
            const float p0 = (float)(b->qs[j] & 0x0F) * d;
            const float p1 = (float)(b->qs[j] >> 4) * d;

            dst[j] = p0 + m;
            dst[j + GGP_QK_LEGACY / 2] = p1 + m;
        }
    }
}

/*
 * q5_0, 22 bytes:
 *
 *   0      2               6                  22
 *   +------+---------------+------------------+
 *   | d    | qh, u32 LE    | qs[16]           |
 *   | f16  | bit e = bit 4 | nibbles as in    |
 *   |      | of element e  | q4_0             |
 *   +------+---------------+------------------+
 *
 * q = nibble | (qh bit e) << 4, in 0..31; value = (q - 16) * d.
 */
void ggp_dequant_q5_0(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q5_0 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++, dst += GGP_QK_LEGACY) {
        const float d = ggp_le_f16(b->d);
        const uint32_t qh = ggp_le32(b->qh);

        for (int j = 0; j < GGP_QK_LEGACY / 2; j++) {
            const int h0 = (int)((qh >> j) & 1u) << 4;
            const int h1 = (int)((qh >> (j + 16)) & 1u) << 4;
            const int x0 = ((b->qs[j] & 0x0F) | h0) - 16;
            const int x1 = ((b->qs[j] >> 4) | h1) - 16;

            dst[j] = (float)x0 * d;
            dst[j + GGP_QK_LEGACY / 2] = (float)x1 * d;
        }
    }
}

/*
 * q5_1, 24 bytes:
 *
 *   0      2      4               8           24
 *   +------+------+---------------+-----------+
 *   | d    | m    | qh, u32 LE    | qs[16]    |
 *   | f16  | f16  | as in q5_0    |           |
 *   +------+------+---------------+-----------+
 *
 * value = q * d + m, q in 0..31; the product is rounded before the add.
 */
void ggp_dequant_q5_1(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q5_1 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++, dst += GGP_QK_LEGACY) {
        const float d = ggp_le_f16(b->d);
        const float m = ggp_le_f16(b->m);
        const uint32_t qh = ggp_le32(b->qh);

        for (int j = 0; j < GGP_QK_LEGACY / 2; j++) {
            const int h0 = (int)((qh >> j) & 1u) << 4;
            const int h1 = (int)((qh >> (j + 16)) & 1u) << 4;
            const float p0 = (float)((b->qs[j] & 0x0F) | h0) * d;
            const float p1 = (float)((b->qs[j] >> 4) | h1) * d;

            dst[j] = p0 + m;
            dst[j + GGP_QK_LEGACY / 2] = p1 + m;
        }
    }
}

/*
 * q8_0, 34 bytes:
 *
 *   0      2                                  34
 *   +------+----------------------------------+
 *   | d    | qs[32], int8 two's complement    |
 *   | f16  |                                  |
 *   +------+----------------------------------+
 *
 * value = qs[e] * d.
 */
void ggp_dequant_q8_0(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q8_0 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++, dst += GGP_QK_LEGACY) {
        const float d = ggp_le_f16(b->d);

        for (int j = 0; j < GGP_QK_LEGACY; j++)
            dst[j] = (float)ggp_i8(b->qs[j]) * d;
    }
}

/*
 * q8_1, 36 bytes:
 *
 *   0      2      4                           36
 *   +------+------+---------------------------+
 *   | d    | s    | qs[32], int8              |
 *   | f16  | f16  |                           |
 *   +------+------+---------------------------+
 *
 * s caches d * sum(qs) for dot products and plays no part in the values.
 * value = qs[e] * d. ggml has no to_float for q8_1; this is the format's
 * definition, computed the way q8_0's is.
 */
void ggp_dequant_q8_1(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q8_1 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++, dst += GGP_QK_LEGACY) {
        const float d = ggp_le_f16(b->d);

        for (int j = 0; j < GGP_QK_LEGACY; j++)
            dst[j] = (float)ggp_i8(b->qs[j]) * d;
    }
}
