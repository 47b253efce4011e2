/*
 * The unquantized element types, one element per "block": floats widened or
 * narrowed to f32, integers converted as a C cast converts them.
 */
#include <string.h>

#include "dequant.h"
#include "half.h"

void ggp_dequant_f32(const void *blocks, float *dst, size_t n)
{
    memcpy(dst, blocks, n * sizeof(float)); // keeps NaN payloads bit for bit
}

void ggp_dequant_f16(const void *blocks, float *dst, size_t n)
{
    const uint8_t *p = blocks;
    for (size_t i = 0; i < n; i++)
        dst[i] = ggp_f16_to_f32(ggp_le16(p + 2 * i));
}

void ggp_dequant_bf16(const void *blocks, float *dst, size_t n)
{
    const uint8_t *p = blocks;
    for (size_t i = 0; i < n; i++)
        dst[i] = ggp_bf16_to_f32(ggp_le16(p + 2 * i));
}

void ggp_dequant_f64(const void *blocks, float *dst, size_t n)
{
    const uint8_t *p = blocks;
    for (size_t i = 0; i < n; i++) {
        double d;
        memcpy(&d, p + 8 * i, sizeof d);
        dst[i] = (float)d;
    }
}

void ggp_dequant_i8(const void *blocks, float *dst, size_t n)
{
    const int8_t *p = blocks;
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)p[i];
}

void ggp_dequant_i16(const void *blocks, float *dst, size_t n)
{
    const uint8_t *p = blocks;
    for (size_t i = 0; i < n; i++) {
        int16_t v;
        memcpy(&v, p + 2 * i, sizeof v);
        dst[i] = (float)v;
    }
}

void ggp_dequant_i32(const void *blocks, float *dst, size_t n)
{
    const uint8_t *p = blocks;
    for (size_t i = 0; i < n; i++) {
        int32_t v;
        memcpy(&v, p + 4 * i, sizeof v);
        dst[i] = (float)v;
    }
}

void ggp_dequant_i64(const void *blocks, float *dst, size_t n)
{
    const uint8_t *p = blocks;
    for (size_t i = 0; i < n; i++) {
        int64_t v;
        memcpy(&v, p + 8 * i, sizeof v);
        dst[i] = (float)v;
    }
}
