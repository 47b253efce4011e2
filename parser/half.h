/*
 * Half-precision conversions, computed exactly as ggml computes them so
 * that results (NaN payloads included) match bit for bit.
 */
#ifndef GGP_HALF_H
#define GGP_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t ggp_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float ggp_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ggml_compute_fp16_to_fp32: normals via an exponent rebias and one
 * multiply, subnormals via the magic-bias subtraction. */
static inline float ggp_f16_to_f32(uint16_t h)
{
    const uint32_t w = (uint32_t)h << 16;
    const uint32_t sign = w & UINT32_C(0x80000000);
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = UINT32_C(0xE0) << 23;
    const float exp_scale = 0x1.0p-112f;
    const float normalized = ggp_f32_from_bits((two_w >> 4) + exp_offset) * exp_scale;
    const uint32_t magic_mask = UINT32_C(126) << 23;
    const float denormalized = ggp_f32_from_bits((two_w >> 17) | magic_mask) - 0.5f;
    const uint32_t denormalized_cutoff = UINT32_C(1) << 27;
    const uint32_t bits = sign | (two_w < denormalized_cutoff ? ggp_f32_bits(denormalized)
                                                               : ggp_f32_bits(normalized));
    return ggp_f32_from_bits(bits);
}

static inline float ggp_bf16_to_f32(uint16_t h)
{
    return ggp_f32_from_bits((uint32_t)h << 16);
}

/* Little-endian loads from unaligned block bytes. */
static inline uint16_t ggp_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t ggp_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline float ggp_le_f16(const uint8_t *p)
{
    return ggp_f16_to_f32(ggp_le16(p));
}

#endif
