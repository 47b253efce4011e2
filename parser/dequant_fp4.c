/*
 * The 4-bit float formats mxfp4 (OCP microscaling) and nvfp4 (NVIDIA).
 *
 * Both store E2M1 elements: sign, 2 exponent bits, 1 mantissa bit, with the
 * values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives. Like ggml, this
 * code keeps them DOUBLED as small integers (0, 1, 2, 3, 4, 6, 8, 12) and
 * halves the block scale instead, so that each element is one exact
 * int -> float conversion and one multiply, as in ggml's dequantize_row_*.
 *
 * The scales differ: mxfp4 has one E8M0 byte (a bare power of two) per 32
 * elements; nvfp4 has one UE4M3 byte (a small unsigned float) per 16
 * elements, in 64-element blocks. Both halved scales are exact in float, so
 * they are built from their bits rather than with ldexpf().
 */
#include "dequant.h"

#include <stdint.h>

#include "half.h"

/* The E2M1 code points, doubled: index = the 4-bit code (bit 3 is the
 * sign), value = 2 * E2M1 value. Transcribed from ggml's kvalues_mxfp4
 * (kvalues_fp4 in ggml-common.h); they are a fact of the OCP MX format. */
static const int8_t ggp_kvalues_fp4[16] = {
    0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12,
};

/* Byte arrays only: alignment 1, no padding, any byte position is fine. */
typedef struct {
    uint8_t e;
    uint8_t qs[16];
} ggp_block_mxfp4;
_Static_assert(sizeof(ggp_block_mxfp4) == 17, "mxfp4 block is 17 bytes");

typedef struct {
    uint8_t d[4];
    uint8_t qs[32];
} ggp_block_nvfp4;
_Static_assert(sizeof(ggp_block_nvfp4) == 36, "nvfp4 block is 36 bytes");

/*
 * Half of an E8M0 scale, i.e. 2^(e - 128). e = 0 and 1 land in the float
 * subnormal range and get their bit patterns directly. e = 255, the E8M0
 * NaN, is NOT special-cased, matching ggml_e8m0_to_fp32_half: it gives
 * 2^127.
 */
static float ggp_e8m0_half(uint8_t e)
{
    if (e < 2)
        return ggp_f32_from_bits(UINT32_C(0x00200000) << e);
    return ggp_f32_from_bits((uint32_t)(e - 1) << 23);
}

/*
 * Half of a UE4M3 scale, as ggml_ue4m3_to_fp32 computes it:
 *
 *   bit  7    6..3   2..0
 *       [x]  [exp ] [man]      bias 7, no sign: bit 7 is ignored
 *
 *   exp = 0 : man * 2^-9      (subnormal), halved: man * 2^-10
 *   exp > 0 : (1 + man/8) * 2^(exp-7),   halved: (8 + man) * 2^(exp-11)
 *
 * except that the byte 0x7F (the E4M3 NaN) gives 0. Only 0x7F does: 0xFF,
 * having the same low seven bits, decodes as 1.875 * 2^8 / 2 = 240, because
 * ggml ignores bit 7 in the decode but compares the whole byte with 0x7F.
 * All results are exact floats.
 */
static float ggp_ue4m3_half(uint8_t x)
{
    const uint32_t exp = (uint32_t)(x >> 3) & 0x0F;
    const uint32_t man = (uint32_t)x & 0x07;

    if (x == 0x7F)
        return 0.0f;
    if (exp == 0)
        return (float)man * 0x1p-10f;
    /* (1 + man/8) * 2^(exp-8): float exponent field exp - 8 + 127. */
    return ggp_f32_from_bits(((exp + 119) << 23) | (man << 20));
}

/*
 * mxfp4, 17 bytes, 32 elements:
 *
 *   0    1                                    17
 *   +----+------------------------------------+
 *   | e  | qs[16]                             |
 *   |E8M0| byte j = (c[j+16] << 4) | c[j]    |
 *   +----+------------------------------------+
 *
 * c = 4-bit E2M1 code. value = kvalues[c] * 2^(e - 128).
 */
void ggp_dequant_mxfp4(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_mxfp4 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++, dst += 32) {
        const float d = ggp_e8m0_half(b->e);

        for (int j = 0; j < 16; j++) {
            dst[j] = (float)ggp_kvalues_fp4[b->qs[j] & 0x0F] * d;
            dst[j + 16] = (float)ggp_kvalues_fp4[b->qs[j] >> 4] * d;
        }
    }
}

/*
 * nvfp4, 36 bytes, 64 elements in 4 sub-blocks of 16:
 *
 *   0                  4                              36
 *   +----+----+----+----+------------------------------+
 *   | d0 | d1 | d2 | d3 | qs[32]                       |
 *   |    UE4M3 each     | 8 bytes per sub-block        |
 *   +----+----+----+----+------------------------------+
 *
 * Sub-block s uses d_s and qs[8s..8s+7]; within it, byte j holds element j
 * in its low nibble and element j + 8 in its high nibble.
 * value = kvalues[c] * (UE4M3(d_s) / 2).
 */
void ggp_dequant_nvfp4(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_nvfp4 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        for (int s = 0; s < 4; s++, dst += 16) {
            const float d = ggp_ue4m3_half(b->d[s]);
            const uint8_t *q = b->qs + 8 * s;

            for (int j = 0; j < 8; j++) {
                dst[j] = (float)ggp_kvalues_fp4[q[j] & 0x0F] * d;
                dst[j + 8] = (float)ggp_kvalues_fp4[q[j] >> 4] * d;
            }
        }
    }
}
