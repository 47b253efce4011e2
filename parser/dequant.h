/*
 * Block dequantizers, one per ggml type, in ggml's dequantize_row_<type>
 * shape: nblocks consecutive little-endian blocks in, block_elems floats per
 * block out. They read exactly nblocks * block_bytes bytes, write into the
 * caller's buffer and never allocate. Each result equals ggml's to_float for
 * the same bytes, bit for bit.
 */
#ifndef GGP_DEQUANT_H
#define GGP_DEQUANT_H

#include <stddef.h>

typedef void ggp_dequant_fn(const void *blocks, float *dst, size_t nblocks);

/* Plain element types (block of one element). */
ggp_dequant_fn ggp_dequant_f32, ggp_dequant_f16, ggp_dequant_bf16, ggp_dequant_f64;
ggp_dequant_fn ggp_dequant_i8, ggp_dequant_i16, ggp_dequant_i32, ggp_dequant_i64;

/* dequant_legacy.c */
ggp_dequant_fn ggp_dequant_q4_0, ggp_dequant_q4_1, ggp_dequant_q5_0, ggp_dequant_q5_1;
ggp_dequant_fn ggp_dequant_q8_0, ggp_dequant_q8_1;

/* dequant_k.c */
ggp_dequant_fn ggp_dequant_q2_K, ggp_dequant_q3_K, ggp_dequant_q4_K, ggp_dequant_q5_K;
ggp_dequant_fn ggp_dequant_q6_K, ggp_dequant_q8_K;

/* dequant_iq.c */
ggp_dequant_fn ggp_dequant_iq1_s, ggp_dequant_iq1_m, ggp_dequant_iq2_xxs, ggp_dequant_iq2_xs;
ggp_dequant_fn ggp_dequant_iq2_s, ggp_dequant_iq3_xxs, ggp_dequant_iq3_s;
ggp_dequant_fn ggp_dequant_iq4_nl, ggp_dequant_iq4_xs;

/* dequant_ternary.c */
ggp_dequant_fn ggp_dequant_tq1_0, ggp_dequant_tq2_0;

/* dequant_fp4.c */
ggp_dequant_fn ggp_dequant_mxfp4, ggp_dequant_nvfp4;

/* dequant_lowbit.c */
ggp_dequant_fn ggp_dequant_q1_0, ggp_dequant_q2_0;

/* dequant_avx2.c: the same results, bit for bit, from AVX2 + F16C code. Only
 * x86-64 builds with GCC or Clang have them, and only a CPU with both
 * features may call them (ggp_file_set_simd decides). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GGP_HAVE_AVX2 1
ggp_dequant_fn ggp_dequant_f16_avx2, ggp_dequant_bf16_avx2;
ggp_dequant_fn ggp_dequant_q4_0_avx2, ggp_dequant_q4_1_avx2, ggp_dequant_q5_0_avx2;
ggp_dequant_fn ggp_dequant_q5_1_avx2, ggp_dequant_q8_0_avx2, ggp_dequant_q8_1_avx2;
ggp_dequant_fn ggp_dequant_q2_K_avx2, ggp_dequant_q3_K_avx2, ggp_dequant_q4_K_avx2;
ggp_dequant_fn ggp_dequant_q5_K_avx2, ggp_dequant_q6_K_avx2, ggp_dequant_q8_K_avx2;
ggp_dequant_fn ggp_dequant_iq2_xxs_avx2, ggp_dequant_iq2_xs_avx2, ggp_dequant_iq2_s_avx2;
ggp_dequant_fn ggp_dequant_iq3_xxs_avx2, ggp_dequant_iq3_s_avx2;
ggp_dequant_fn ggp_dequant_iq4_nl_avx2, ggp_dequant_iq4_xs_avx2;
#endif

#endif
