/*
 * The ternary formats tq1_0 and tq2_0: 256 weights in {-1, 0, +1} times one
 * f16 scale d at the END of the block.
 *
 * tq2_0 simply spends 2 bits per weight. tq1_0 packs five trits into one
 * byte as a base-3 fraction: a byte holds round_up(t * 256 / 243) for the
 * 5-digit base-3 number t = t0 t1 t2 t3 t4 (t0 most significant), so
 * multiplying the byte by 3^n (mod 256) shifts digit n to the top of the
 * fraction, and (b * 3) >> 8 reads it out without any division.
 *
 * Results must equal ggml's dequantize_row_tq*_0 bit for bit: each value is
 * the exact small integer (q - 1) converted to float, times d. Arbitrary
 * bytes still decode to a digit 0..2 (tq1_0) or 0..3 (tq2_0, where 3 gives
 * +2), as ggml's do.
 */
#include "dequant.h"

#include <stdint.h>

#include "half.h"

/* Byte arrays only: alignment 1, no padding, any byte position is fine. */
typedef struct {
    uint8_t qs[48];
    uint8_t qh[4];
    uint8_t d[2];
} ggp_block_tq1_0;
_Static_assert(sizeof(ggp_block_tq1_0) == 54, "tq1_0 block is 54 bytes");

typedef struct {
    uint8_t qs[64];
    uint8_t d[2];
} ggp_block_tq2_0;
_Static_assert(sizeof(ggp_block_tq2_0) == 66, "tq2_0 block is 66 bytes");

/* Digit n (0 = most significant) of a packed base-3 byte, in 0..2. The
 * multiply wraps mod 256 on purpose: that drops the digits above n. */
static int ggp_trit(uint8_t byte, int n)
{
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    const uint8_t shifted = (uint8_t)(byte * pow3[n]);

    return (shifted * 3) >> 8;
}

/*
 * tq1_0, 54 bytes:
 *
 *   0                       48        52     54
 *   +-----------------------+---------+------+
 *   | qs[48]                | qh[4]   | d    |
 *   | 5 trits per byte      | 4 trits | f16  |
 *   |                       | per byte|      |
 *   +-----------------------+---------+------+
 *
 * Element order (digit n of a byte, see ggp_trit):
 *     0..159   : for n 0..4, for m 0..31: digit n of qs[m]
 *   160..239   : for n 0..4, for m 0..15: digit n of qs[32 + m]
 *   240..255   : for n 0..3, for m 0..3 : digit n of qh[m]
 * value = (digit - 1) * d.
 */
void ggp_dequant_tq1_0(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_tq1_0 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);

        for (int n = 0; n < 5; n++)
            for (int m = 0; m < 32; m++)
                *dst++ = (float)(ggp_trit(b->qs[m], n) - 1) * d;
        for (int n = 0; n < 5; n++)
            for (int m = 0; m < 16; m++)
                *dst++ = (float)(ggp_trit(b->qs[32 + m], n) - 1) * d;
        for (int n = 0; n < 4; n++)
            for (int m = 0; m < 4; m++)
                *dst++ = (float)(ggp_trit(b->qh[m], n) - 1) * d;
    }
}

/*
 * tq2_0, 66 bytes:
 *
 *   0                                 64     66
 *   +---------------------------------+------+
 *   | qs[64], 2 bits per element      | d    |
 *   |                                 | f16  |
 *   +---------------------------------+------+
 *
 * Two halves of 128: element 128h + 32k + m (k 0..3, m 0..31) is bits
 * 2k..2k+1 of qs[32h + m]. value = (q - 1) * d.
 */
void ggp_dequant_tq2_0(const void *blocks, float *dst, size_t nblocks)
{
    const ggp_block_tq2_0 *b = blocks;

    for (size_t i = 0; i < nblocks; i++, b++) {
        const float d = ggp_le_f16(b->d);

        for (int h = 0; h < 2; h++)
            for (int k = 0; k < 4; k++)
                for (int m = 0; m < 32; m++) {
                    const int q = (b->qs[32 * h + m] >> (2 * k)) & 3;
                    *dst++ = (float)(q - 1) * d;
                }
    }
}
