/*
 * The tensor types of ik_llama.cpp, the most used fork of llama.cpp, past
 * ggml's own table: its names, block geometry and per-row metadata, so that
 * their tensors are validated and their raw bytes served. There is no
 * dequantizer for them (ggml has none to match), so f32 is absent.
 *
 * The ids, names and sizes are facts of that format, read from
 * ik_llama.cpp's ggml/include/ggml.h (enum ggml_type), ggml/src/ggml-common.h
 * (sizeof of each block) and ggml/src/ggml.c (type_traits: blck_size,
 * type_size, row_meta_size). A row of ne0 elements takes
 *
 *   row_meta_bytes + ne0 / block_elems * block_bytes
 *
 * bytes (ggml_row_size there), and a tensor ne1 * ne2 * ne3 rows.
 *
 * Where ik_llama.cpp gives an id that ggml also assigned (31..33, 36, 39,
 * 41), ggml's meaning wins and the id is not here: 39 and 41 are the same
 * formats in both (mxfp4, and ggml's q1_0 = ik's q1_0_g128); 31..33 and 36
 * are ids ggml withdrew, refused as ggml refuses them. ik_llama.cpp's own ids
 * start at 97, far past ggml's table; should ggml ever reach them, its table
 * is consulted first (types.c).
 */
#include "ggp_i.h"

typedef struct ik_type {
    uint32_t id;
    ggp_type_desc desc;
} ik_type;

#define IK(id_, nm, elems, bytes, meta) \
    {id_, {{nm, elems, bytes, meta, GGP_ORIGIN_IK_LLAMA}, NULL, NULL, GGP_BE_NONE, {-1, -1}}}

/* Sorted by id, for the binary search below. */
static const ik_type ik_types[] = {
    // Row-interleaved copies of ggml's q8 blocks, used for activations.
    IK(97, "q8_0_x4", 32, 34, 0),
    IK(98, "q8_1_x4", 32, 36, 0),
    IK(99, "q8_2_x4", 32, 36, 0),
    IK(133, "q6_0", 32, 26, 0),
    // BitNet / TriLM ternary types, a per-row scale first.
    IK(134, "iq1_bn", 64, 13, 2),
    IK(135, "iq2_bn", 64, 16, 4),
    IK(136, "q8_K64", 64, 68, 0),
    IK(137, "iq2_k", 256, 76, 0),
    IK(138, "iq3_k", 256, 110, 0),
    IK(139, "iq4_k", 256, 144, 0),
    IK(140, "iq5_k", 256, 176, 0),
    IK(141, "iq6_k", 256, 212, 0),
    // 142 and 143 (iq2_tn, iq1_tn) were withdrawn by ik_llama.cpp.
    IK(144, "iq4_ks", 256, 136, 4),
    IK(145, "iq2_ks", 256, 70, 2),
    IK(146, "iq4_kss", 256, 128, 4),
    IK(147, "q8_K16", 64, 64, 20),
    IK(148, "q8_K32", 256, 296, 0),
    IK(149, "q8_KR8", 256, 296, 0),
    IK(150, "q8_K128", 128, 140, 0),
    IK(151, "q8_KV", 32, 32, 8),
    IK(152, "iq5_ks", 256, 168, 4),
    // Trellis types.
    IK(153, "iq2_kt", 256, 68, 4),
    IK(154, "iq3_kt", 256, 100, 4),
    IK(155, "iq4_kt", 256, 128, 4),
    IK(156, "iq3_ks", 256, 102, 2),
    IK(157, "iq2_kl", 256, 86, 2),
    IK(158, "iq1_kt", 256, 56, 4),
    // Repacked (row-interleaved) variants of the types above and of ggml's.
    IK(202, "q4_0_r8", 32, 18, 0),
    IK(206, "q5_0_r4", 32, 22, 0),
    IK(208, "q8_0_r8", 32, 34, 0),
    IK(210, "q2_k_r4", 256, 84, 0),
    IK(211, "q3_k_r4", 256, 110, 0),
    IK(212, "q4_k_r4", 256, 144, 0),
    IK(213, "q5_k_r4", 256, 176, 0),
    IK(214, "q6_k_r4", 256, 210, 0),
    IK(216, "iq2_xxs_r4", 256, 66, 0),
    IK(217, "iq2_xs_r4", 256, 74, 0),
    IK(218, "iq3_xxs_r4", 256, 98, 0),
    IK(219, "iq1_s_r4", 32, 6, 2),
    IK(220, "iq4_nl_r4", 32, 18, 0),
    IK(221, "iq3_s_r4", 256, 110, 0),
    IK(222, "iq2_s_r4", 256, 82, 0),
    IK(223, "iq4_xs_r8", 256, 136, 0),
    IK(229, "iq1_m_r4", 32, 7, 2),
    IK(230, "bf16_r16", 1, 2, 0),
    IK(233, "q6_0_r4", 32, 26, 0),
    IK(335, "iq2_bn_r4", 64, 16, 4),
    IK(337, "iq2_k_r4", 256, 76, 0),
    IK(338, "iq3_k_r4", 256, 110, 0),
    IK(339, "iq4_k_r4", 256, 144, 0),
    IK(340, "iq5_k_r4", 256, 176, 0),
    IK(344, "iq4_ks_r4", 256, 136, 4),
    IK(352, "iq5_ks_r4", 256, 168, 4),
    IK(353, "mxfp4_r8", 32, 17, 0),
    IK(397, "q8_k_r16", 256, 258, 0),
    IK(398, "q8_KV_r8", 32, 32, 4),
    IK(399, "q8_k_r8", 256, 258, 0),
};

const ggp_type_desc *ggp_type_desc_ik(uint32_t type_id)
{
    size_t lo = 0, hi = sizeof ik_types / sizeof ik_types[0];
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (ik_types[mid].id == type_id)
            return &ik_types[mid].desc;
        if (ik_types[mid].id < type_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
