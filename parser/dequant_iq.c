/*
 * Dequantizers for ggml's importance-matrix ("iq") types: iq1_s, iq1_m,
 * iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq4_nl and iq4_xs.
 *
 * Most of these do not store per-element values but indices into fixed
 * grids of 4- or 8-element vectors (iq_tables.c), plus packed sign bits and
 * small sub-block scales. Each function mirrors ggml's dequantize_row_<type>
 * arithmetic step for step, with the same float operation order and the
 * same integer-to-float conversion points, so the output is bit-identical
 * to ggml's to_float for any input bytes, including NaN/Inf scales. Every
 * index is masked to its table size by construction, so arbitrary bytes
 * never read outside a table.
 *
 * Blocks are read through structs made only of uint8_t arrays (alignment 1,
 * no padding) and multi-byte fields are assembled from bytes, so blocks may
 * sit at any address and the host byte order does not matter.
 */
#include "dequant.h"

#include <stdint.h>

#include "half.h"
#include "iq_tables.h"

#define QK_K 256   // elements per super-block
#define QK4_NL 32  // elements per iq4_nl block

typedef struct {
    uint8_t d[2];     // f16 super-block scale
    uint8_t qs[64];   // 8 × { 4 grid indices, le32 signs+scale }
} blk_iq2_xxs;
_Static_assert(sizeof(blk_iq2_xxs) == 66, "iq2_xxs block size");

typedef struct {
    uint8_t d[2];
    uint8_t qs[64];     // 32 × le16 { 9-bit grid index, 7-bit signs }
    uint8_t scales[8];  // 2 × 4-bit scale per 32 elements
} blk_iq2_xs;
_Static_assert(sizeof(blk_iq2_xs) == 74, "iq2_xs block size");

typedef struct {
    uint8_t d[2];
    uint8_t qs[32];     // low 8 bits of the 10-bit grid indices
    uint8_t signs[32];  // one full sign byte per 8 elements
    uint8_t qh[8];      // high 2 bits of the grid indices, 4 per byte
    uint8_t scales[8];
} blk_iq2_s;
_Static_assert(sizeof(blk_iq2_s) == 82, "iq2_s block size");

typedef struct {
    uint8_t d[2];
    uint8_t qs[64];   // 8-bit grid indices, 4 elements each
    uint8_t sas[32];  // 8 × le32 { 4 × 7-bit signs, 4-bit scale }
} blk_iq3_xxs;
_Static_assert(sizeof(blk_iq3_xxs) == 98, "iq3_xxs block size");

typedef struct {
    uint8_t d[2];
    uint8_t qs[64];     // low 8 bits of the 9-bit grid indices
    uint8_t qh[8];      // 9th bit of the grid indices, 8 per byte
    uint8_t signs[32];
    uint8_t scales[4];  // 2 × 4-bit scale per byte
} blk_iq3_s;
_Static_assert(sizeof(blk_iq3_s) == 110, "iq3_s block size");

typedef struct {
    uint8_t d[2];
    uint8_t qs[32];  // low 8 bits of the 11-bit grid indices
    uint8_t qh[16];  // 8 × le16 { 4 × 3 high index bits, 3-bit scale, delta sign }
} blk_iq1_s;
_Static_assert(sizeof(blk_iq1_s) == 50, "iq1_s block size");

typedef struct {
    uint8_t qs[32];      // low 8 bits of the 11-bit grid indices
    uint8_t qh[16];      // per 8 elements: 3 high index bits + delta sign
    uint8_t scales[8];   // 4 × le16: 3-bit scales, f16 scale in the top nibbles
} blk_iq1_m;
_Static_assert(sizeof(blk_iq1_m) == 56, "iq1_m block size");

typedef struct {
    uint8_t d[2];
    uint8_t qs[QK4_NL / 2];  // two 4-bit code book indices per byte
} blk_iq4_nl;
_Static_assert(sizeof(blk_iq4_nl) == 18, "iq4_nl block size");

typedef struct {
    uint8_t d[2];
    uint8_t scales_h[2];  // le16: high 2 bits of the eight 6-bit scales
    uint8_t scales_l[4];  // low 4 bits of the scales, 2 per byte
    uint8_t qs[QK_K / 2];
} blk_iq4_xs;
_Static_assert(sizeof(blk_iq4_xs) == 136, "iq4_xs block size");

/*
 * Writes eight elements dl * magnitude * ±1, magnitude j being byte j of
 * the packed grid word, in ggml's order: scale times magnitude first, then
 * the sign.
 *
 * ggml's source multiplies by ±1.0f; the reference build of ggml (GCC,
 * x86-64) compiles that into a sign flip (xorps), and the two differ only
 * for NaN, which a real multiply passes through with its sign kept while a
 * flip negates it. Whether a compiler does the rewrite depends on the
 * optimisation level, so the flip is written out here: it is the one
 * outcome that does not depend on how this file is compiled.
 */
static void put8_signed(float *y, float dl, uint64_t grid, unsigned signs)
{
    for (int j = 0; j < 8; ++j) {
        const float v = dl * (float)(uint8_t)(grid >> (8 * j));
        y[j] = (signs & ggp_kmask_iq2xs[j]) ? -v : v;
    }
}

/* iq1 grid bytes are two's-complement -1/0/+1; the delta is added to the
 * grid value before scaling, as in ggml. */
static void put8_iq1(float *y, float dl, uint64_t grid, float delta)
{
    for (int j = 0; j < 8; ++j) {
        const int b = (int)(uint8_t)(grid >> (8 * j));
        const int g = b < 128 ? b : b - 256;
        y[j] = dl * ((float)g + delta);
    }
}

/*
 * iq2_xxs: 256 elements, 66 bytes, 2.0625 bits per weight.
 *
 *   0      2                                                    66
 *   +------+--------------------------------------------------+
 *   | d    | 8 groups of 8 bytes, one per 32 elements          |
 *   +------+--------------------------------------------------+
 *
 *   group: byte 0..3   grid index (iq2xxs_grid, 256 entries) of 8 elements each
 *          byte 4..7   le32 w:
 *                        31     28 27   21 20   14 13    7 6     0
 *                        | scale  | s[3]  | s[2]  | s[1]  | s[0]  |
 *                      s[l]: 7 sign bits of the l-th 8 elements,
 *                            expanded to 8 through ksigns_iq2xs
 *
 *   x = d * (0.5 + scale) * 0.25 * grid[j] * (sign j ? -1 : 1)
 */
void ggp_dequant_iq2_xxs(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq2_xxs *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        const float d = ggp_le_f16(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const uint8_t *q = x[i].qs + 8 * ib;
            const uint32_t w = ggp_le32(q + 4);
            const float db = d * (0.5f + (float)(w >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l) {
                put8_signed(y, db, ggp_iq2xxs_grid[q[l]], ggp_ksigns_iq2xs[(w >> (7 * l)) & 127]);
                y += 8;
            }
        }
    }
}

/*
 * iq2_xs: 256 elements, 74 bytes, 2.3125 bits per weight.
 *
 *   0      2                                66          74
 *   +------+---------------------------------+-----------+
 *   | d    | qs: 32 × le16                   | scales[8] |
 *   +------+---------------------------------+-----------+
 *
 *   qs[k] (8 elements):  15      9 8               0
 *                        | signs7 | grid index (512)|
 *   scales[ib] (32 elements = qs[4ib..4ib+3]):
 *                        low nibble for qs[4ib+0,1], high nibble for qs[4ib+2,3]
 *
 *   x = d * (0.5 + nibble) * 0.25 * grid[j] * (sign j ? -1 : 1)
 */
void ggp_dequant_iq2_xs(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq2_xs *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        const float d = ggp_le_f16(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const unsigned sc = x[i].scales[ib];
            const float db[2] = {
                d * (0.5f + (float)(sc & 0xf)) * 0.25f,
                d * (0.5f + (float)(sc >> 4)) * 0.25f,
            };
            for (int l = 0; l < 4; ++l) {
                const unsigned q = ggp_le16(x[i].qs + 2 * (4 * ib + l));
                put8_signed(y, db[l / 2], ggp_iq2xs_grid[q & 511], ggp_ksigns_iq2xs[q >> 9]);
                y += 8;
            }
        }
    }
}

/*
 * iq2_s: 256 elements, 82 bytes, 2.5625 bits per weight.
 *
 *   0      2          34          66       74          82
 *   +------+----------+-----------+--------+-----------+
 *   | d    | qs[32]   | signs[32] | qh[8]  | scales[8] |
 *   +------+----------+-----------+--------+-----------+
 *
 *   8 elements k (k = 4*ib + l): grid index (iq2s_grid, 1024 entries)
 *       = qs[k] | ((qh[ib] >> 2l) & 3) << 8
 *     sign byte signs[k], all 8 bits stored (no parity trick)
 *   scales[ib]: low nibble for l = 0,1, high nibble for l = 2,3
 *
 *   x = d * (0.5 + nibble) * 0.25 * grid[j] * (sign j ? -1 : 1)
 */
void ggp_dequant_iq2_s(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq2_s *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        const float d = ggp_le_f16(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const unsigned sc = x[i].scales[ib];
            const float db[2] = {
                d * (0.5f + (float)(sc & 0xf)) * 0.25f,
                d * (0.5f + (float)(sc >> 4)) * 0.25f,
            };
            const unsigned qh = x[i].qh[ib];
            for (int l = 0; l < 4; ++l) {
                const int k = 4 * ib + l;
                const unsigned idx = x[i].qs[k] | ((qh << (8 - 2 * l)) & 0x300);
                put8_signed(y, db[l / 2], ggp_iq2s_grid[idx], x[i].signs[k]);
                y += 8;
            }
        }
    }
}

/*
 * iq3_xxs: 256 elements, 98 bytes, 3.0625 bits per weight.
 *
 *   0      2                   66                          98
 *   +------+-------------------+---------------------------+
 *   | d    | qs[64]            | 8 × le32 signs and scale  |
 *   +------+-------------------+---------------------------+
 *
 *   qs[8ib + m]: index into iq3xxs_grid (256 entries) of 4 elements
 *   le32 w for 32 elements ib:
 *       31     28 27   21 20   14 13    7 6     0
 *       | scale  | s[3]  | s[2]  | s[1]  | s[0]  |
 *     s[l] covers 8 elements (grids qs[8ib+2l], qs[8ib+2l+1]),
 *     expanded to 8 sign bits through ksigns_iq2xs
 *
 *   x = d * (0.5 + scale) * 0.5 * grid[j] * (sign j ? -1 : 1)
 */
void ggp_dequant_iq3_xxs(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq3_xxs *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        const float d = ggp_le_f16(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const uint8_t *q = x[i].qs + 8 * ib;
            const uint32_t w = ggp_le32(x[i].sas + 4 * ib);
            const float db = d * (0.5f + (float)(w >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l) {
                // Two 4-element grid entries, in element order, as one 8-byte word.
                const uint64_t grid = ggp_iq3xxs_grid[q[2 * l]] |
                                      (uint64_t)ggp_iq3xxs_grid[q[2 * l + 1]] << 32;
                put8_signed(y, db, grid, ggp_ksigns_iq2xs[(w >> (7 * l)) & 127]);
                y += 8;
            }
        }
    }
}

/*
 * iq3_s: 256 elements, 110 bytes, 3.4375 bits per weight.
 *
 *   0      2          66       74          106         110
 *   +------+----------+--------+-----------+-----------+
 *   | d    | qs[64]   | qh[8]  | signs[32] | scales[4] |
 *   +------+----------+--------+-----------+-----------+
 *
 *   32 elements ib, 4 elements m = 0..7 within it: grid index
 *   (iq3s_grid, 512 entries) = qs[8ib + m] | ((qh[ib] >> m) & 1) << 8
 *   signs[4ib + l]: full sign byte of elements 8l..8l+7 of the 32
 *   scales[ib/2]: low nibble for even ib, high nibble for odd ib
 *
 *   x = d * (1 + 2 * nibble) * grid[j] * (sign j ? -1 : 1)
 */
void ggp_dequant_iq3_s(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq3_s *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        const float d = ggp_le_f16(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const unsigned sc = x[i].scales[ib / 2];
            const unsigned nib = (ib % 2) ? sc >> 4 : sc & 0xf;
            const float db = d * (float)(1 + 2 * (int)nib);
            const uint8_t *q = x[i].qs + 8 * ib;
            const unsigned qh = x[i].qh[ib];
            for (int l = 0; l < 4; ++l) {
                const unsigned i1 = q[2 * l] | ((qh << (8 - 2 * l)) & 256);
                const unsigned i2 = q[2 * l + 1] | ((qh << (7 - 2 * l)) & 256);
                const uint64_t grid = ggp_iq3s_grid[i1] | (uint64_t)ggp_iq3s_grid[i2] << 32;
                put8_signed(y, db, grid, x[i].signs[4 * ib + l]);
                y += 8;
            }
        }
    }
}

/*
 * iq1_s: 256 elements, 50 bytes, 1.5625 bits per weight.
 *
 *   0      2                   34                          50
 *   +------+-------------------+---------------------------+
 *   | d    | qs[32]            | qh: 8 × le16              |
 *   +------+-------------------+---------------------------+
 *
 *   qh[ib] (32 elements):
 *       15  14   12 11    9 8     6 5     3 2     0
 *       | ds | scale | h[3]  | h[2]  | h[1]  | h[0]  |
 *   8 elements l: grid index (iq1s_grid, 2048 entries) = qs[4ib+l] | h[l] << 8
 *   delta = ds ? -0.125 : +0.125
 *
 *   x = d * (2 * scale + 1) * (grid[j] + delta),  grid[j] in {-1, 0, 1}
 */
void ggp_dequant_iq1_s(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq1_s *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        const float d = ggp_le_f16(x[i].d);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const unsigned qh = ggp_le16(x[i].qh + 2 * ib);
            const float dl = d * (float)(2 * (int)((qh >> 12) & 7) + 1);
            const float delta = (qh & 0x8000) ? -GGP_IQ1S_DELTA : GGP_IQ1S_DELTA;
            for (int l = 0; l < 4; ++l) {
                const unsigned idx = x[i].qs[4 * ib + l] | ((qh >> (3 * l)) & 7) << 8;
                put8_iq1(y, dl, ggp_iq1s_grid[idx], delta);
                y += 8;
            }
        }
    }
}

/*
 * iq1_m: 256 elements, 56 bytes, 1.75 bits per weight. No separate scale
 * field: the f16 super-block scale is spread over the top nibbles of the
 * four 16-bit scale words.
 *
 *   0                   32                  48                  56
 *   +-------------------+-------------------+-------------------+
 *   | qs[32]            | qh[16]            | sc: 4 × le16      |
 *   +-------------------+-------------------+-------------------+
 *
 *   sc[k]:  15     12 11      9 8       6 5       3 2       0
 *           | dnib[k] | s[4k+3] | s[4k+2] | s[4k+1] | s[4k]   |
 *     f16 d = dnib[0] | dnib[1] << 4 | dnib[2] << 8 | dnib[3] << 12
 *     s[2ib] scales the first 16 of the 32 elements ib, s[2ib+1] the rest
 *   8-element groups g = 0..3 of the 32 elements ib; qh[2ib + g/2] holds
 *   two groups, even g in the low nibble, odd g in the high nibble:
 *       7    6     4 3    2     0
 *       | ds  | hi  | ds  | hi  |
 *     grid index (iq1s_grid, 2048 entries) = qs[4ib+g] | hi << 8
 *     delta = ds ? -0.125 : +0.125
 *
 *   x = d * (2 * s + 1) * (grid[j] + delta),  grid[j] in {-1, 0, 1}
 */
void ggp_dequant_iq1_m(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq1_m *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        unsigned sc[4];
        for (int k = 0; k < 4; ++k) {
            sc[k] = ggp_le16(x[i].scales + 2 * k);
        }
        const uint16_t dbits = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                          ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = ggp_f16_to_f32(dbits);

        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const unsigned s = sc[ib / 2] >> (6 * (ib % 2));
            const float dl[2] = {
                d * (float)(2 * (int)(s & 7) + 1),
                d * (float)(2 * (int)((s >> 3) & 7) + 1),
            };
            for (int g = 0; g < 4; ++g) {
                // Groups 0,1 read the low nibble of qh[2ib], 2,3 of qh[2ib+1].
                const unsigned h = x[i].qh[2 * ib + g / 2] >> (4 * (g % 2));
                const unsigned idx = x[i].qs[4 * ib + g] | (h & 7) << 8;
                const float delta = (h & 8) ? -GGP_IQ1M_DELTA : GGP_IQ1M_DELTA;
                put8_iq1(y, dl[g / 2], ggp_iq1s_grid[idx], delta);
                y += 8;
            }
        }
    }
}

/*
 * iq4_nl: 32 elements, 18 bytes, 4.5 bits per weight.
 *
 *   0      2                                   18
 *   +------+-----------------------------------+
 *   | d    | qs[16]                            |
 *   +------+-----------------------------------+
 *
 *   qs[j]: low nibble -> element j, high nibble -> element j + 16
 *   x = d * kvalues_iq4nl[nibble]
 */
void ggp_dequant_iq4_nl(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq4_nl *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        const float d = ggp_le_f16(x[i].d);
        for (int j = 0; j < QK4_NL / 2; ++j) {
            const unsigned q = x[i].qs[j];
            y[j] = d * (float)ggp_kvalues_iq4nl[q & 0xf];
            y[j + QK4_NL / 2] = d * (float)ggp_kvalues_iq4nl[q >> 4];
        }
        y += QK4_NL;
    }
}

/*
 * iq4_xs: 256 elements, 136 bytes, 4.25 bits per weight.
 *
 *   0      2          4             8                          136
 *   +------+----------+-------------+--------------------------+
 *   | d    | scales_h | scales_l[4] | qs[128]                  |
 *   +------+----------+-------------+--------------------------+
 *
 *   6-bit scale of the 32 elements ib:
 *       ls = (scales_l[ib/2] >> 4*(ib%2)) & 0xf | ((le16 scales_h >> 2ib) & 3) << 4
 *   qs[16ib + j]: low nibble -> element j, high nibble -> element j + 16
 *
 *   x = d * (ls - 32) * kvalues_iq4nl[nibble]
 */
void ggp_dequant_iq4_xs(const void *blocks, float *dst, size_t nblocks)
{
    const blk_iq4_xs *x = blocks;
    float *y = dst;

    for (size_t i = 0; i < nblocks; ++i) {
        const float d = ggp_le_f16(x[i].d);
        const unsigned sh = ggp_le16(x[i].scales_h);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const unsigned ls = ((x[i].scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) |
                                ((sh >> (2 * ib)) & 3) << 4;
            const float dl = d * (float)((int)ls - 32);
            const uint8_t *q = x[i].qs + 16 * ib;
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * (float)ggp_kvalues_iq4nl[q[j] & 0xf];
                y[j + 16] = dl * (float)ggp_kvalues_iq4nl[q[j] >> 4];
            }
            y += 32;
        }
    }
}
