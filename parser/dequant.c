/*
 * Element ranges of a tensor in f32: maps [first, first + count) onto the
 * blocks it touches (in the mapping, or in a copy the caller read), dequantizes whole blocks straight into the caller's
 * buffer and partial ones through a one-block scratch. Big-endian files go
 * through a small buffer where their fields are swapped back first. Each
 * call uses the type's AVX2 dequantizer when the handle allows it (same
 * bits, see dequant_avx2.c), else the scalar one.
 */
#include <string.h>

#include "ggp_i.h"

#ifdef GGP_HAVE_AVX2
#include <cpuid.h>
#endif

#define MAX_BLOCK_ELEMS 256
#define MAX_BLOCK_BYTES 292
#define BE_CHUNK_BYTES 4096

const char *ggp_tensor_f32_unavailable(const ggp_file *f, const ggp_tensor *t)
{
    const ggp_type_desc *d = ggp_type_desc_of(t->type_id);
    if (!d)
        return "unknown type";
    if (!d->dequant)
        return "ik_llama.cpp type, no ggml dequantizer";
    if (f->big_endian && d->be_rule == GGP_BE_NONE)
        return "big-endian layout of this type is not defined";
    return NULL;
}

bool ggp_simd_supported(void)
{
#ifdef GGP_HAVE_AVX2
    // AVX2 and F16C as the compiler runtime found them at start-up (it
    // also checks that the OS saves the ymm registers): a read of what it
    // keeps, where CPUID itself would trap to the hypervisor on every
    // file opened. clang 14's __builtin_cpu_supports has no name for F16C,
    // so its builds ask CPUID.
#if defined(__clang__)
    unsigned eax, ebx, ecx, edx;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) &&
           (ecx & bit_F16C) != 0;
#else
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#endif
#else
    return false;
#endif
}

void ggp_file_set_simd(ggp_file *f, bool enabled)
{
    f->use_simd = enabled && ggp_simd_supported();
}

/* Undoes a big-endian file's swaps on nblocks blocks copied to buf. */
static void swap_to_little(const ggp_type_desc *d, uint8_t *buf, size_t nblocks)
{
    const size_t bytes = d->info.block_bytes;
    for (size_t b = 0; b < nblocks; b++) {
        uint8_t *block = buf + b * bytes;
        if (d->be_rule == GGP_BE_ELEMENTS) {
            for (size_t i = 0, j = bytes - 1; i < j; i++, j--) {
                const uint8_t tmp = block[i];
                block[i] = block[j];
                block[j] = tmp;
            }
        } else if (d->be_rule == GGP_BE_HALVES) {
            for (int h = 0; h < 2 && d->half_at[h] >= 0; h++) {
                uint8_t *p = block + d->half_at[h];
                const uint8_t tmp = p[0];
                p[0] = p[1];
                p[1] = tmp;
            }
        }
    }
}

/* Dequantizes nblocks whole blocks starting at block index `first`. */
static void dequant_blocks(const ggp_file *f, const ggp_type_desc *d, const uint8_t *data,
                           uint64_t first, uint64_t nblocks, float *dst)
{
    const size_t bytes = d->info.block_bytes;
    const uint8_t *src = data + first * bytes;
    ggp_dequant_fn *const dequant = f->use_simd && d->dequant_simd ? d->dequant_simd : d->dequant;
    if (!f->big_endian || d->be_rule == GGP_BE_AS_IS) {
        dequant(src, dst, (size_t)nblocks);
        return;
    }
    uint8_t buf[BE_CHUNK_BYTES];
    const size_t per_chunk = sizeof buf / bytes;
    while (nblocks > 0) {
        const size_t n = nblocks < per_chunk ? (size_t)nblocks : per_chunk;
        memcpy(buf, src, n * bytes);
        swap_to_little(d, buf, n);
        dequant(buf, dst, n);
        src += n * bytes;
        dst += n * d->info.block_elems;
        nblocks -= n;
    }
}

/* Elements [first, first + count) of t from data, which holds the tensor's
 * blocks from block index data_block on. The caller checked the range. */
static void decode_range(const ggp_file *f, const ggp_type_desc *d, const uint8_t *data,
                         uint64_t data_block, uint64_t first, uint64_t count, float *dst)
{
    const uint64_t per_block = d->info.block_elems;
    uint64_t block = first / per_block - data_block;
    const uint64_t skip = first % per_block;
    float scratch[MAX_BLOCK_ELEMS];

    // Leading partial block.
    if (skip != 0 && count > 0) {
        dequant_blocks(f, d, data, block, 1, scratch);
        const uint64_t n = per_block - skip < count ? per_block - skip : count;
        memcpy(dst, scratch + skip, (size_t)n * sizeof(float));
        dst += n, count -= n, block++;
    }
    const uint64_t whole = count / per_block;
    if (whole > 0) {
        dequant_blocks(f, d, data, block, whole, dst);
        dst += whole * per_block, count -= whole * per_block, block += whole;
    }
    if (count > 0) {
        dequant_blocks(f, d, data, block, 1, scratch);
        memcpy(dst, scratch, (size_t)count * sizeof(float));
    }
}

ggp_err ggp_tensor_read_f32(const ggp_file *f, const ggp_tensor *t, uint64_t first,
                            uint64_t count, float *dst)
{
    if (ggp_tensor_f32_unavailable(f, t) || !t->data)
        return GGP_ERR_UNSUPPORTED;
    if (first > t->elements || count > t->elements - first)
        return GGP_ERR_RANGE;
    decode_range(f, ggp_type_desc_of(t->type_id), t->data, 0, first, count, dst);
    return GGP_OK;
}

ggp_err ggp_tensor_f32_span(const ggp_tensor *t, uint64_t first, uint64_t count,
                            uint64_t *byte_offset, uint64_t *byte_len)
{
    if (!t->type)
        return GGP_ERR_UNSUPPORTED;
    if (first > t->elements || count > t->elements - first)
        return GGP_ERR_RANGE;
    const uint64_t per_block = t->type->block_elems;
    const uint64_t first_block = first / per_block;
    // The tensor is whole blocks, so rounding up stays inside it.
    const uint64_t end_block = count == 0 ? first_block : (first + count + per_block - 1) / per_block;
    *byte_offset = first_block * t->type->block_bytes;
    *byte_len = (end_block - first_block) * t->type->block_bytes;
    return GGP_OK;
}

ggp_err ggp_tensor_decode_f32(const ggp_file *f, const ggp_tensor *t, const void *blocks,
                              size_t blocks_len, uint64_t first, uint64_t count, float *dst)
{
    if (ggp_tensor_f32_unavailable(f, t))
        return GGP_ERR_UNSUPPORTED;
    uint64_t offset, len;
    const ggp_err e = ggp_tensor_f32_span(t, first, count, &offset, &len);
    if (e != GGP_OK)
        return e;
    if (blocks_len < len)
        return GGP_ERR_RANGE;
    decode_range(f, ggp_type_desc_of(t->type_id), blocks, first / t->type->block_elems, first,
                 count, dst);
    return GGP_OK;
}

