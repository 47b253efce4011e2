/*
 * Private declarations shared by the parser's files: the file handle's
 * layout, the bounded reader every byte of the file goes through, the type
 * table with its dequantizers, and error helpers.
 */
#ifndef GGP_I_H
#define GGP_I_H

#include <string.h>

#include "ggp.h"
#include "dequant.h"

#define GGP_HOST_BIG_ENDIAN (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

/* ==== The handle ==== */

/* Open-addressing hash of names to indexes; slot value is index + 1. */
typedef struct ggp_name_index {
    uint64_t *slots;
    uint64_t mask;        // capacity - 1, capacity a power of two
} ggp_name_index;

struct ggp_file {
    const uint8_t *base;  // the mapping (or the caller's bytes)
    uint64_t size;        // the file's size
    uint64_t avail;       // bytes of it in memory from base: size, or the
                          // prefix given to ggp_open_prefix
    const uint8_t *data_base; // the whole file, for tensor data, when the
                              // header was given apart (ggp_file_attach_data)
    uint64_t header_end;  // end of the last tensor descriptor
    int fd;               // -1 when the bytes are the caller's
    uint32_t version;
    bool big_endian;
    uint32_t alignment;
    uint64_t data_offset;
    uint64_t n_kv_header; // kv_count as the header states it
    uint64_t n_kv;        // keys, each once: first occurrences
    ggp_kv *kvs;          // n_kv of them, in file order
    ggp_kv_repeat *repeats; // later occurrences of keys, in file order
    uint64_t n_repeats;
    uint64_t repeats_cap;
    ggp_name_index kv_index;
    uint64_t n_tensors;
    ggp_tensor *tensors;
    ggp_name_index tensor_index;
    bool use_simd;        // dequantize with the types' AVX2 functions
};

/* ==== Bounded reader ==== */

/* A cursor over [0, end) of the file; every read checks the bound first.
 * Only [0, avail) is in memory: a read inside the file but past avail
 * fails with GGP_ERR_NEED_MORE, so lengths and counts are always judged
 * against the whole file and bytes are only touched where they are. */
typedef struct ggp_reader {
    const uint8_t *base;
    uint64_t pos;
    uint64_t end;         // the file's size
    uint64_t avail;       // bytes in memory from base, <= end
    bool big_endian;
    uint32_t version;     // 1 reads counts and lengths as u32
    ggp_error *err;
} ggp_reader;

/* Each read fails with GGP_ERR_TRUNCATED naming `what` when the bytes are
 * not in the file, GGP_ERR_NEED_MORE when they are but not in memory, and
 * leaves pos unchanged. */
bool ggp_read_u8(ggp_reader *r, uint8_t *out, const char *what);
bool ggp_read_u32(ggp_reader *r, uint32_t *out, const char *what);
bool ggp_read_u64(ggp_reader *r, uint64_t *out, const char *what);
/* A count or length: u32 in version 1, u64 after. */
bool ggp_read_count(ggp_reader *r, uint64_t *out, const char *what);
/* A length-prefixed string whose bytes must fit in what remains. */
bool ggp_read_str(ggp_reader *r, ggp_str *out, const char *what);
bool ggp_skip(ggp_reader *r, uint64_t n, const char *what);

static inline uint64_t ggp_remaining(const ggp_reader *r)
{
    return r->end - r->pos;
}

/* Checks that the next n bytes, already known to be inside the file, are
 * in memory; fails with GGP_ERR_NEED_MORE otherwise. */
bool ggp_in_memory(ggp_reader *r, uint64_t n);

/* Integer loads in the file's byte order from validated bytes: one
 * unaligned load and at most one byte swap, inlined into the header walk
 * that runs them once per string. */
static inline uint16_t ggp_load16(const uint8_t *p, bool big_endian)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return big_endian == GGP_HOST_BIG_ENDIAN ? v : __builtin_bswap16(v);
}

static inline uint32_t ggp_load32(const uint8_t *p, bool big_endian)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return big_endian == GGP_HOST_BIG_ENDIAN ? v : __builtin_bswap32(v);
}

static inline uint64_t ggp_load64(const uint8_t *p, bool big_endian)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return big_endian == GGP_HOST_BIG_ENDIAN ? v : __builtin_bswap64(v);
}

/* ==== Values ==== */

/* Byte size of a fixed-size value type, 0 for string and array. */
uint32_t ggp_vtype_size(ggp_vtype type);

/* Reads a value whose type id (read at type_offset) is type: validates
 * it and fills out with a view of it; errors name the key. */
bool ggp_read_value(ggp_reader *r, uint64_t type_offset, uint32_t type, ggp_value *out, ggp_str key);

/* Validates the elements of an array (nested arrays included, without
 * recursion) starting at r->pos, and leaves r->pos after them. count_offset
 * is where the count was read, for errors. */
bool ggp_array_skip(ggp_reader *r, ggp_vtype elem_type, uint64_t count, uint64_t count_offset,
                    ggp_str key);

/* ==== Types ==== */

/* How a big-endian file stores a type (gguf_convert_endian.py's rules). */
typedef enum ggp_be_rule {
    GGP_BE_NONE,          // no f32 view from a big-endian file
    GGP_BE_ELEMENTS,      // every element byte-swapped (plain types)
    GGP_BE_HALVES,        // the f16 fields at half_at[] swapped
    GGP_BE_AS_IS,         // stored unchanged
} ggp_be_rule;

typedef struct ggp_type_desc {
    ggp_type_info info;
    ggp_dequant_fn *dequant;
    ggp_dequant_fn *dequant_simd; // same results from AVX2 code, or NULL
    ggp_be_rule be_rule;
    int16_t half_at[2];   // GGP_BE_HALVES: byte offsets in the block, -1 unused
} ggp_type_desc;

const ggp_type_desc *ggp_type_desc_of(uint32_t type_id);

/* An ik_llama.cpp type id past ggml's table (types_ik.c), or NULL. Its
 * descriptor has no dequantizer. */
const ggp_type_desc *ggp_type_desc_ik(uint32_t type_id);

/* True when this build has SIMD dequantizers and the CPU can run them. */
bool ggp_simd_supported(void);

/* ==== Statistics ==== */

/* What one pass over a block of at most GGP_STATS_BLOCK values finds. */
#define GGP_STATS_BLOCK 4096
typedef struct ggp_stats_block {
    uint32_t zeros, nans, infs;
    float min, max, abs_max; // over the finite values; +inf, -inf, 0 if none
    double sum;              // of the finite values
} ggp_stats_block;

/* Pass 1 over n <= GGP_STATS_BLOCK values. */
void ggp_stats_scan(const float *x, size_t n, ggp_stats_block *b);
/* Pass 2: the sums of d and d * d, d = x - mean, over the finite values
 * (all_finite says there is no other kind, which is faster). */
void ggp_stats_deviations(const float *x, size_t n, double mean, bool all_finite, double *sum_d,
                          double *sum_d2);

#ifdef GGP_HAVE_AVX2
void ggp_stats_scan_avx2(const float *x, size_t n, ggp_stats_block *b);
void ggp_stats_deviations_avx2(const float *x, size_t n, double mean, bool all_finite,
                               double *sum_d, double *sum_d2);
#endif

/* ==== Errors ==== */

/* The warnings lines about the tokenizer that key kv (a first
 * occurrence) gives, if any (tokenizer.c): a special token id outside the
 * vocabulary, a BPE vocabulary without its pre-tokenizer. */
void ggp_tokenizer_warnings(const ggp_file *file, const ggp_kv *kv, ggp_sink *sink);

/* Fills err and returns false, so failures read `return ggp_fail(...)`. */
bool ggp_fail(ggp_error *err, ggp_err code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));


/* UTF-8: the length of the valid sequence at p (at most n bytes), or 0. */
size_t ggp_utf8_seq_len(const uint8_t *p, size_t n);

/* FNV-1a, for the name indexes. */
uint64_t ggp_hash_bytes(const void *bytes, uint64_t len);

#endif
