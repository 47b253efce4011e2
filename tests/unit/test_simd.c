/*
 * The SIMD dequantizers against the scalar ones. For every type that has a
 * SIMD dequantizer, a GGUF is built in memory holding one tensor of 65536
 * blocks of random bytes, except that the block's f16 fields (scales, mins,
 * or the element itself for f16/bf16) run through all 65536 bit patterns:
 * NaNs with every payload, signalling ones included, infinities, zeros,
 * subnormals. The bytes are opened twice, one handle with SIMD forced off,
 * and the two reads must be identical byte for byte: the whole tensor in
 * chunks of odd sizes, and short ranges that start and end mid-block.
 *
 * Exits 77 (skipped) when the build or the CPU has no SIMD dequantizers.
 */
#undef NDEBUG
#include <assert.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ggp.h"
#include "ggp_i.h"

#define NBLOCKS 65536u     // one block per f16 bit pattern
#define CHUNK_BLOCKS 1021u // odd, so plain types end mid-vector
#define RANGES 400

/* Where a type keeps its floating-point fields, byte offsets in the block
 * (-1: none). Types missing here get random bytes throughout. */
static const struct {
    ggp_type type;
    int16_t f16_at[2];
    int16_t f32_at;
} fields[] = {
    {GGP_TYPE_F16, {0, -1}, -1},      {GGP_TYPE_BF16, {0, -1}, -1},
    {GGP_TYPE_Q4_0, {0, -1}, -1},     {GGP_TYPE_Q4_1, {0, 2}, -1},
    {GGP_TYPE_Q5_0, {0, -1}, -1},     {GGP_TYPE_Q5_1, {0, 2}, -1},
    {GGP_TYPE_Q8_0, {0, -1}, -1},     {GGP_TYPE_Q8_1, {0, 2}, -1},
    {GGP_TYPE_Q2_K, {80, 82}, -1},    {GGP_TYPE_Q3_K, {108, -1}, -1},
    {GGP_TYPE_Q4_K, {0, 2}, -1},      {GGP_TYPE_Q5_K, {0, 2}, -1},
    {GGP_TYPE_Q6_K, {208, -1}, -1},   {GGP_TYPE_Q8_K, {-1, -1}, 0},
    {GGP_TYPE_IQ2_XXS, {0, -1}, -1},  {GGP_TYPE_IQ2_XS, {0, -1}, -1},
    {GGP_TYPE_IQ2_S, {0, -1}, -1},    {GGP_TYPE_IQ3_XXS, {0, -1}, -1},
    {GGP_TYPE_IQ3_S, {0, -1}, -1},    {GGP_TYPE_IQ4_NL, {0, -1}, -1},
    {GGP_TYPE_IQ4_XS, {0, -1}, -1},
};

/* The types the benchmark measures must have SIMD code. */
static const ggp_type required[] = {
    GGP_TYPE_F16, GGP_TYPE_Q8_0, GGP_TYPE_Q4_K, GGP_TYPE_Q6_K, GGP_TYPE_IQ2_XS,
};

static uint64_t rng_next(uint64_t *s) // splitmix64
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint8_t *put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

/* A version 3 GGUF with no keys and one 1-D tensor "t" of NBLOCKS blocks of
 * type, data at offset 64. Returns the malloc()ed bytes; free() them. */
static uint8_t *build_gguf(ggp_type type, const ggp_type_info *ti, size_t *size, uint64_t seed)
{
    const size_t data_at = 64;
    const size_t bytes = (size_t)NBLOCKS * ti->block_bytes;
    uint8_t *g = malloc(data_at + bytes);
    assert(g);
    memset(g, 0, data_at);
    uint8_t *p = g;
    memcpy(p, "GGUF", 4);
    p = put_le(p + 4, 3, 4);
    p = put_le(p, 1, 8); // tensors
    p = put_le(p, 0, 8); // keys
    p = put_le(p, 1, 8);
    *p++ = 't';
    p = put_le(p, 1, 4); // n_dims
    p = put_le(p, (uint64_t)NBLOCKS * ti->block_elems, 8);
    p = put_le(p, (uint64_t)type, 4);
    p = put_le(p, 0, 8); // offset in the data section
    assert((size_t)(p - g) <= data_at);

    uint8_t *data = g + data_at;
    for (size_t i = 0; i < bytes; i += 8) {
        const uint64_t r = rng_next(&seed);
        memcpy(data + i, &r, bytes - i < 8 ? bytes - i : 8);
    }
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        if (fields[f].type != type)
            continue;
        for (uint32_t i = 0; i < NBLOCKS; i++) {
            uint8_t *block = data + (size_t)i * ti->block_bytes;
            // Every pattern in the first field, a permutation of them in the second.
            if (fields[f].f16_at[0] >= 0)
                put_le(block + fields[f].f16_at[0], i, 2);
            if (fields[f].f16_at[1] >= 0)
                put_le(block + fields[f].f16_at[1], (i * 40503u + 12345u) & 0xFFFF, 2);
            // Every sign and exponent, with every NaN class among them.
            if (fields[f].f32_at >= 0)
                put_le(block + fields[f].f32_at, (uint64_t)i << 16 | (rng_next(&seed) & 0xFFFF), 4);
        }
    }
    *size = data_at + bytes;
    return g;
}

static int same_floats(const char *type, uint64_t first, const float *simd, const float *scalar,
                       uint64_t count)
{
    if (memcmp(simd, scalar, (size_t)count * sizeof(float)) == 0)
        return 1;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t a, b;
        memcpy(&a, &simd[i], 4);
        memcpy(&b, &scalar[i], 4);
        if (a != b) {
            fprintf(stderr, "%s: element %" PRIu64 ": simd %08" PRIx32 ", scalar %08" PRIx32 "\n",
                    type, first + i, a, b);
            break;
        }
    }
    return 0;
}

static int test_type(ggp_type type)
{
    const ggp_type_info *ti = ggp_type_lookup(type);
    size_t size;
    uint8_t *bytes = build_gguf(type, ti, &size, UINT64_C(0x5eed) + type);
    ggp_error err;
    ggp_file *simd = ggp_open_mem(bytes, size, &err);
    ggp_file *scalar = ggp_open_mem(bytes, size, &err);
    EXPECT(simd != NULL && scalar != NULL);
    ggp_file_set_simd(scalar, false);
    EXPECT(simd->use_simd);
    EXPECT(!scalar->use_simd);

    const ggp_tensor *ta = ggp_tensor_at(simd, 0), *tb = ggp_tensor_at(scalar, 0);
    const uint64_t per_block = ti->block_elems, n = ta->elements;
    const uint64_t chunk = CHUNK_BLOCKS * per_block;
    float *a = malloc((size_t)chunk * sizeof *a), *b = malloc((size_t)chunk * sizeof *b);
    EXPECT(a && b);
    int ok = 1;
    for (uint64_t first = 0; ok && first < n; first += chunk) {
        const uint64_t count = n - first < chunk ? n - first : chunk;
        ok &= ggp_tensor_read_f32(simd, ta, first, count, a) == GGP_OK;
        ok &= ggp_tensor_read_f32(scalar, tb, first, count, b) == GGP_OK;
        ok = ok && same_floats(ti->name, first, a, b, count);
    }
    uint64_t seed = type;
    for (int r = 0; ok && r < RANGES; r++) {
        const uint64_t first = rng_next(&seed) % n;
        uint64_t count = 1 + rng_next(&seed) % (3 * per_block + 17);
        if (count > n - first)
            count = n - first;
        ok &= ggp_tensor_read_f32(simd, ta, first, count, a) == GGP_OK;
        ok &= ggp_tensor_read_f32(scalar, tb, first, count, b) == GGP_OK;
        ok = ok && same_floats(ti->name, first, a, b, count);
    }
    free(a);
    free(b);
    ggp_close(simd);
    ggp_close(scalar);
    free(bytes);
    if (!ok)
        fprintf(stderr, "%s: SIMD and scalar reads differ\n", ti->name);
    return ok;
}

static int test_required_types_have_simd(void)
{
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        EXPECT(ggp_type_desc_of(required[i])->dequant_simd != NULL);
    return 1;
}

/* Enabling SIMD again after turning it off brings it back. */
static int test_set_simd_round_trip(void)
{
    size_t size;
    uint8_t *bytes = build_gguf(GGP_TYPE_F16, ggp_type_lookup(GGP_TYPE_F16), &size, 1);
    ggp_error err;
    ggp_file *f = ggp_open_mem(bytes, size, &err);
    EXPECT(f != NULL);
    ggp_file_set_simd(f, false);
    const bool off = f->use_simd;
    ggp_file_set_simd(f, true);
    const bool on = f->use_simd;
    ggp_close(f);
    free(bytes);
    EXPECT(!off && on);
    return 1;
}

int main(void)
{
    if (!ggp_simd_supported()) {
        printf("no SIMD dequantizers in this build or on this CPU: skipped\n");
        return 77;
    }
    int ok = test_required_types_have_simd();
    ok &= test_set_simd_round_trip();
    int tested = 0;
    for (uint32_t id = 0; id < GGP_TYPE_COUNT; id++) {
        const ggp_type_desc *d = ggp_type_desc_of(id);
        if (d && d->dequant_simd) {
            ok &= test_type((ggp_type)id);
            tested++;
        }
    }
    printf("%d types, SIMD and scalar: %s\n", tested, ok ? "identical" : "DIFFERENT");
    return ok ? 0 : 1;
}
