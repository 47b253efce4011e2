/*
 * The tensor type table: ggml's enum ggml_type with its names, block
 * geometry, the dequantizers of each type (scalar, and AVX2 where there is
 * one) and how a big-endian file stores it. Ids ggml removed are holes; ids
 * past the table are looked up among ik_llama.cpp's (types_ik.c), and are
 * unknown types when they are not there either.
 */
#include "ggp_i.h"

/* The AVX2 twin of dequantizer fn, in builds that have them. */
#ifdef GGP_HAVE_AVX2
#define SIMD(fn) fn##_avx2
#else
#define SIMD(fn) NULL
#endif
#define NO_SIMD(fn) NULL

#define INFO(nm, elems, bytes) {nm, elems, bytes, 0, GGP_ORIGIN_GGML}
#define PLAIN(id, nm, bytes, fn, simd) \
    [id] = {INFO(nm, 1, bytes), fn, simd(fn), GGP_BE_ELEMENTS, {-1, -1}}
#define QUANT(id, nm, elems, bytes, fn, simd) \
    [id] = {INFO(nm, elems, bytes), fn, simd(fn), GGP_BE_NONE, {-1, -1}}
#define QUANT_BE(id, nm, elems, bytes, fn, simd, h0, h1) \
    [id] = {INFO(nm, elems, bytes), fn, simd(fn), GGP_BE_HALVES, {h0, h1}}

static const ggp_type_desc type_table[GGP_TYPE_COUNT] = {
    PLAIN(GGP_TYPE_F32, "f32", 4, ggp_dequant_f32, NO_SIMD),
    PLAIN(GGP_TYPE_F16, "f16", 2, ggp_dequant_f16, SIMD),
    PLAIN(GGP_TYPE_BF16, "bf16", 2, ggp_dequant_bf16, SIMD),
    PLAIN(GGP_TYPE_F64, "f64", 8, ggp_dequant_f64, NO_SIMD),
    PLAIN(GGP_TYPE_I8, "i8", 1, ggp_dequant_i8, NO_SIMD),
    PLAIN(GGP_TYPE_I16, "i16", 2, ggp_dequant_i16, NO_SIMD),
    PLAIN(GGP_TYPE_I32, "i32", 4, ggp_dequant_i32, NO_SIMD),
    PLAIN(GGP_TYPE_I64, "i64", 8, ggp_dequant_i64, NO_SIMD),
    // The f16 scale d leads the block.
    QUANT_BE(GGP_TYPE_Q4_0, "q4_0", 32, 18, ggp_dequant_q4_0, SIMD, 0, -1),
    QUANT(GGP_TYPE_Q4_1, "q4_1", 32, 20, ggp_dequant_q4_1, SIMD),
    QUANT(GGP_TYPE_Q5_0, "q5_0", 32, 22, ggp_dequant_q5_0, SIMD),
    QUANT(GGP_TYPE_Q5_1, "q5_1", 32, 24, ggp_dequant_q5_1, SIMD),
    QUANT_BE(GGP_TYPE_Q8_0, "q8_0", 32, 34, ggp_dequant_q8_0, SIMD, 0, -1),
    QUANT(GGP_TYPE_Q8_1, "q8_1", 32, 36, ggp_dequant_q8_1, SIMD),
    QUANT(GGP_TYPE_Q2_K, "q2_K", 256, 84, ggp_dequant_q2_K, SIMD),
    QUANT(GGP_TYPE_Q3_K, "q3_K", 256, 110, ggp_dequant_q3_K, SIMD),
    // d and dmin lead the block.
    QUANT_BE(GGP_TYPE_Q4_K, "q4_K", 256, 144, ggp_dequant_q4_K, SIMD, 0, 2),
    QUANT(GGP_TYPE_Q5_K, "q5_K", 256, 176, ggp_dequant_q5_K, SIMD),
    // d ends the block, after ql[128], qh[64] and scales[16].
    QUANT_BE(GGP_TYPE_Q6_K, "q6_K", 256, 210, ggp_dequant_q6_K, SIMD, 208, -1),
    QUANT(GGP_TYPE_Q8_K, "q8_K", 256, 292, ggp_dequant_q8_K, SIMD),
    QUANT(GGP_TYPE_IQ2_XXS, "iq2_xxs", 256, 66, ggp_dequant_iq2_xxs, SIMD),
    QUANT(GGP_TYPE_IQ2_XS, "iq2_xs", 256, 74, ggp_dequant_iq2_xs, SIMD),
    QUANT(GGP_TYPE_IQ3_XXS, "iq3_xxs", 256, 98, ggp_dequant_iq3_xxs, SIMD),
    QUANT(GGP_TYPE_IQ1_S, "iq1_s", 256, 50, ggp_dequant_iq1_s, NO_SIMD),
    QUANT(GGP_TYPE_IQ4_NL, "iq4_nl", 32, 18, ggp_dequant_iq4_nl, SIMD),
    QUANT(GGP_TYPE_IQ3_S, "iq3_s", 256, 110, ggp_dequant_iq3_s, SIMD),
    QUANT(GGP_TYPE_IQ2_S, "iq2_s", 256, 82, ggp_dequant_iq2_s, SIMD),
    QUANT(GGP_TYPE_IQ4_XS, "iq4_xs", 256, 136, ggp_dequant_iq4_xs, SIMD),
    QUANT(GGP_TYPE_IQ1_M, "iq1_m", 256, 56, ggp_dequant_iq1_m, NO_SIMD),
    QUANT(GGP_TYPE_TQ1_0, "tq1_0", 256, 54, ggp_dequant_tq1_0, NO_SIMD),
    QUANT(GGP_TYPE_TQ2_0, "tq2_0", 256, 66, ggp_dequant_tq2_0, NO_SIMD),
    // mxfp4 has only byte fields (an E8M0 scale and nibbles).
    [GGP_TYPE_MXFP4] = {INFO("mxfp4", 32, 17), ggp_dequant_mxfp4, NULL, GGP_BE_AS_IS, {-1, -1}},
    QUANT(GGP_TYPE_NVFP4, "nvfp4", 64, 36, ggp_dequant_nvfp4, NO_SIMD),
    QUANT(GGP_TYPE_Q1_0, "q1_0", 128, 18, ggp_dequant_q1_0, NO_SIMD),
    QUANT(GGP_TYPE_Q2_0, "q2_0", 64, 18, ggp_dequant_q2_0, NO_SIMD),
};

bool ggp_type_is_removed(uint32_t type_id)
{
    // Q4_2, Q4_3, then the interleaved Q4_0_4_4..Q4_0_8_8 and IQ4_NL_4_4..8_8.
    return type_id == 4 || type_id == 5 || (type_id >= 31 && type_id <= 33) ||
           (type_id >= 36 && type_id <= 38);
}

const ggp_type_desc *ggp_type_desc_of(uint32_t type_id)
{
    // ggml's own ids win: ik_llama.cpp's are consulted only for ids ggml
    // never assigned.
    if (type_id < GGP_TYPE_COUNT)
        return type_table[type_id].info.name ? &type_table[type_id] : NULL;
    return ggp_type_desc_ik(type_id);
}

const ggp_type_info *ggp_type_lookup(uint32_t type_id)
{
    const ggp_type_desc *d = ggp_type_desc_of(type_id);
    return d ? &d->info : NULL;
}
