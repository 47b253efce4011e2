/*
 * The low-bit formats q1_0 (1 bit per weight, 128-element blocks) and q2_0
 * (2 bits per weight, 64-element blocks), each with one leading f16 scale d.
 *
 * Both pack elements LSB first: element j sits in byte j / (8 / bits) at
 * bit offset (j % (8 / bits)) * bits, unlike the split-nibble layout of the
 * legacy formats.
 *
 * Results must equal ggml's dequantize_row_q1_0 / q2_0 bit for bit. q1_0
 * does no arithmetic at all beyond negation: each element is d or -d (so a
 * NaN d comes out with both signs). q2_0 converts the small integer q - 1 to
 * float and multiplies by d.
 */
#include "dequant.h"

#include <stdint.h>

#include "half.h"

/* Byte arrays only: alignment 1, no padding, any byte position is fine. */
typedef struct {
    uint8_t d[2];
    uint8_t qs[16];
} ggp_block_q1_0;
_Static_assert(sizeof(ggp_block_q1_0) == 18, "q1_0 block is 18 bytes");

typedef struct {
    uint8_t d[2];
    uint8_t qs[16];
} ggp_block_q2_0;
_Static_assert(sizeof(ggp_block_q2_0) == 18, "q2_0 block is 18 bytes");

/*
 * q1_0, 18 bytes, 128 elements:
 *
 *   0      2                                  18
 *   +------+----------------------------------+
 *   | d    | qs[16], bit j%8 of byte j/8      |
 *   | f16  | is element j                     |
 *   +------+----------------------------------+
 *
 * value = bit ? d : -d.
 */
void ggp_dequant_q1_0(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q1_0 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);
        const float neg_d = -d;

        for (int j = 0; j < 128; j++)
            *dst++ = ((b->qs[j / 8] >> (j % 8)) & 1) ? d : neg_d;
    }
}

/*
 * q2_0, 18 bytes, 64 elements:
 *
 *   0      2                                  18
 *   +------+----------------------------------+
 *   | d    | qs[16], bits 2(j%4)..2(j%4)+1    |
 *   | f16  | of byte j/4 are element j        |
 *   +------+----------------------------------+
 *
 * q = 00, 01, 10, 11 -> -1, 0, +1, +2; value = (q - 1) * d.
 */
void ggp_dequant_q2_0(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_q2_0 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);

        for (int j = 0; j < 64; j++) {
            const int q = (b->qs[j / 4] >> (2 * (j % 4))) & 3;
            *dst++ = (float)(q - 1) * d;
        }
    }
}
