/*
 * ggml-ref: writes the conformance fixtures with the real ggml.
 *
 *   ggml-ref LIBGGML_BASE.so make-fixtures OUTDIR
 *   ggml-ref LIBGGML_BASE.so dump-metadata FILE.gguf   (the .expected text, to stdout)
 *   ggml-ref LIBGGML_BASE.so dump-tensors FILE.gguf    (the .tensors text, to stdout)
 *   ggml-ref LIBGGML_BASE.so make-model OUT.gguf [--blocks N] [--embd N] [--ff N]
 *            [--vocab N] [--merges N] [--name TEXT] [--extra-tensors N]
 *            [--types TYPE,...]
 *                          (a llama-shaped Q4_K_M model; see "make-model" below)
 *   ggml-ref LIBGGML_BASE.so edit-copy IN.gguf OUT.gguf [EDIT...]
 *                          (IN with its keys edited, written by ggml; see
 *                          "edit-copy" below)
 *
 * libggml-base.so is loaded with dlopen(); nothing here links against ggml or
 * includes its headers, so the few prototypes and structs used are declared
 * below from ggml's include/ggml.h and include/gguf.h. Every .gguf is written
 * by ggml's own gguf writer, read back with gguf_init_from_file(), and the
 * expected files are made from what ggml's reader reports. The output is the
 * same bytes on every run (fixed seeds, no clocks, no addresses).
 *
 * Files in OUTDIR:
 *
 *   type-<name>.gguf   one per ggml tensor type (f32 ... q2_0), with tensors of
 *                      several shapes: "vec" 1-D, "mat" 2-D, "cube" 3-D,
 *                      "rows3" 2-D with 3 rows, "hyper" 4-D; quantized types
 *                      also "random_bytes" (arbitrary block bytes) and
 *                      "special_bytes" (bytes that make NaN, inf, -0 and
 *                      subnormal scales likely); f16, bf16, i8, i16 also
 *                      "all_bits" (every bit pattern of the element).
 *   aligned64.gguf     general.alignment = 64 and tensors whose sizes are not
 *                      multiples of 64.
 *   metadata.gguf      one key per value type with edge values, hostile
 *                      strings, arrays of every element type (empty ones too)
 *                      and a tokenizer-sized string array. No tensors.
 *
 *   X.ref              for every tensor of X.gguf in file order, the reference
 *                      float32 of the whole tensor, little-endian, concatenated.
 *                      Reference = ggml's type_traits to_float; for f32 the
 *                      stored bits; for i8..i64 and f64 a C cast to float; for
 *                      q8_1 and q8_K (no to_float in ggml) d * q per element,
 *                      d converted from f16 (q8_1) or read as f32 (q8_K).
 *
 *   X.tensors          what gguf_get_* reports about X.gguf: header lines
 *                        #version\t<u32>          #alignment\t<n>
 *                        #kv_count\t<n>           #tensor_count\t<n>
 *                        #data_offset\t<n>
 *                      then one line per tensor:
 *                        <name>\t<type_id>\t<ne0> <ne1> <ne2> <ne3>\t<absolute offset>\t<bytes>
 *                      where absolute offset = gguf_get_data_offset +
 *                      gguf_get_tensor_offset and unused ne are 1.
 *
 *   X.expected         every key of X.gguf as gguf_get_* reads it, in file
 *                      order, one line per key:
 *                        <key-hex>\t<type>\t<value>
 *                      key-hex: the key's bytes as lowercase hex.
 *                      type: u8 i8 u16 i16 u32 i32 f32 bool str u64 i64 f64,
 *                        or arr[<elemtype>] with one of those names.
 *                      value: integers in decimal; f32 as %08x and f64 as
 *                        %016llx of their IEEE bits; bool 0 or 1; a string as
 *                        the lowercase hex of its bytes (empty for ""); an
 *                        array as <count>: then its elements rendered the same
 *                        way, separated by ',' (so an empty array is "0:").
 *                      Example: 746573742e7538\tarr[u8]\t3:0,1,255
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <fcntl.h>
#include <unistd.h>

/* ==== ggml declarations (include/ggml.h, include/gguf.h) ==== */

struct ggml_context;
struct ggml_tensor;
struct gguf_context;

struct ggml_init_params {
    size_t mem_size;   // bytes
    void *mem_buffer;  // NULL: ggml allocates
    bool no_alloc;     // no memory for tensor data
};

struct gguf_init_params {
    bool no_alloc;
    struct ggml_context **ctx;
};

struct ggml_type_traits {
    const char *type_name;
    int64_t blck_size;            // elements per block
    int64_t blck_size_interleave;
    size_t type_size;             // bytes per block
    bool is_quantized;
    void (*to_float)(const void *x, float *y, int64_t k);
    void (*from_float_ref)(const float *x, void *y, int64_t k);
};

enum {
    GGUF_TYPE_UINT8 = 0, GGUF_TYPE_INT8 = 1, GGUF_TYPE_UINT16 = 2, GGUF_TYPE_INT16 = 3,
    GGUF_TYPE_UINT32 = 4, GGUF_TYPE_INT32 = 5, GGUF_TYPE_FLOAT32 = 6, GGUF_TYPE_BOOL = 7,
    GGUF_TYPE_STRING = 8, GGUF_TYPE_ARRAY = 9, GGUF_TYPE_UINT64 = 10, GGUF_TYPE_INT64 = 11,
    GGUF_TYPE_FLOAT64 = 12, GGUF_TYPE_COUNT
};

enum {
    T_F32 = 0, T_F16 = 1, T_Q4_0 = 2, T_Q4_1 = 3, T_Q5_0 = 6, T_Q5_1 = 7, T_Q8_0 = 8,
    T_Q8_1 = 9, T_Q2_K = 10, T_Q3_K = 11, T_Q4_K = 12, T_Q5_K = 13, T_Q6_K = 14,
    T_Q8_K = 15, T_IQ2_XXS = 16, T_IQ2_XS = 17, T_IQ3_XXS = 18, T_IQ1_S = 19,
    T_IQ4_NL = 20, T_IQ3_S = 21, T_IQ2_S = 22, T_IQ4_XS = 23, T_I8 = 24, T_I16 = 25,
    T_I32 = 26, T_I64 = 27, T_F64 = 28, T_IQ1_M = 29, T_BF16 = 30, T_TQ1_0 = 34,
    T_TQ2_0 = 35, T_MXFP4 = 39, T_NVFP4 = 40, T_Q1_0 = 41, T_Q2_0 = 42
};

/* Every type id ggml has, with the name ggml gives it. */
static const struct { int id; const char *name; } all_types[] = {
    {T_F32, "f32"}, {T_F16, "f16"}, {T_BF16, "bf16"}, {T_F64, "f64"},
    {T_I8, "i8"}, {T_I16, "i16"}, {T_I32, "i32"}, {T_I64, "i64"},
    {T_Q4_0, "q4_0"}, {T_Q4_1, "q4_1"}, {T_Q5_0, "q5_0"}, {T_Q5_1, "q5_1"},
    {T_Q8_0, "q8_0"}, {T_Q8_1, "q8_1"}, {T_Q2_K, "q2_K"}, {T_Q3_K, "q3_K"},
    {T_Q4_K, "q4_K"}, {T_Q5_K, "q5_K"}, {T_Q6_K, "q6_K"}, {T_Q8_K, "q8_K"},
    {T_IQ1_S, "iq1_s"}, {T_IQ1_M, "iq1_m"}, {T_IQ2_XXS, "iq2_xxs"}, {T_IQ2_XS, "iq2_xs"},
    {T_IQ2_S, "iq2_s"}, {T_IQ3_XXS, "iq3_xxs"}, {T_IQ3_S, "iq3_s"}, {T_IQ4_NL, "iq4_nl"},
    {T_IQ4_XS, "iq4_xs"}, {T_TQ1_0, "tq1_0"}, {T_TQ2_0, "tq2_0"}, {T_MXFP4, "mxfp4"},
    {T_NVFP4, "nvfp4"}, {T_Q1_0, "q1_0"}, {T_Q2_0, "q2_0"},
};
#define N_TYPES (sizeof all_types / sizeof all_types[0])

/* The entry points used, resolved by name from the library. */
static struct {
    struct ggml_context *(*ggml_init)(struct ggml_init_params params);
    void (*ggml_free)(struct ggml_context *ctx);
    size_t (*ggml_tensor_overhead)(void);
    struct ggml_tensor *(*ggml_new_tensor)(struct ggml_context *ctx, int type, int n_dims,
                                           const int64_t *ne);
    struct ggml_tensor *(*ggml_set_name)(struct ggml_tensor *t, const char *name);
    const struct ggml_type_traits *(*ggml_get_type_traits)(int type);
    size_t (*ggml_row_size)(int type, int64_t ne);
    void (*ggml_quantize_init)(int type);
    bool (*ggml_quantize_requires_imatrix)(int type);
    size_t (*ggml_quantize_chunk)(int type, const float *src, void *dst, int64_t start,
                                  int64_t nrows, int64_t n_per_row, const float *imatrix);
    float (*ggml_fp16_to_fp32)(uint16_t h);

    struct gguf_context *(*gguf_init_empty)(void);
    struct gguf_context *(*gguf_init_from_file)(const char *fname, struct gguf_init_params params);
    void (*gguf_free)(struct gguf_context *ctx);
    bool (*gguf_write_to_file)(const struct gguf_context *ctx, const char *fname, bool only_meta);
    uint32_t (*gguf_get_version)(const struct gguf_context *ctx);
    size_t (*gguf_get_alignment)(const struct gguf_context *ctx);
    size_t (*gguf_get_data_offset)(const struct gguf_context *ctx);
    int64_t (*gguf_get_n_kv)(const struct gguf_context *ctx);
    const char *(*gguf_get_key)(const struct gguf_context *ctx, int64_t id);
    int (*gguf_get_kv_type)(const struct gguf_context *ctx, int64_t id);
    int (*gguf_get_arr_type)(const struct gguf_context *ctx, int64_t id);
    uint8_t (*gguf_get_val_u8)(const struct gguf_context *ctx, int64_t id);
    int8_t (*gguf_get_val_i8)(const struct gguf_context *ctx, int64_t id);
    uint16_t (*gguf_get_val_u16)(const struct gguf_context *ctx, int64_t id);
    int16_t (*gguf_get_val_i16)(const struct gguf_context *ctx, int64_t id);
    uint32_t (*gguf_get_val_u32)(const struct gguf_context *ctx, int64_t id);
    int32_t (*gguf_get_val_i32)(const struct gguf_context *ctx, int64_t id);
    float (*gguf_get_val_f32)(const struct gguf_context *ctx, int64_t id);
    uint64_t (*gguf_get_val_u64)(const struct gguf_context *ctx, int64_t id);
    int64_t (*gguf_get_val_i64)(const struct gguf_context *ctx, int64_t id);
    double (*gguf_get_val_f64)(const struct gguf_context *ctx, int64_t id);
    bool (*gguf_get_val_bool)(const struct gguf_context *ctx, int64_t id);
    const char *(*gguf_get_val_str)(const struct gguf_context *ctx, int64_t id);
    size_t (*gguf_get_arr_n)(const struct gguf_context *ctx, int64_t id);
    const void *(*gguf_get_arr_data)(const struct gguf_context *ctx, int64_t id);
    const char *(*gguf_get_arr_str)(const struct gguf_context *ctx, int64_t id, size_t i);
    int64_t (*gguf_get_n_tensors)(const struct gguf_context *ctx);
    size_t (*gguf_get_tensor_offset)(const struct gguf_context *ctx, int64_t id);
    const char *(*gguf_get_tensor_name)(const struct gguf_context *ctx, int64_t id);
    const int64_t *(*gguf_get_tensor_ne)(const struct gguf_context *ctx, int64_t id);
    int (*gguf_get_tensor_type)(const struct gguf_context *ctx, int64_t id);
    size_t (*gguf_get_tensor_size)(const struct gguf_context *ctx, int64_t id);
    void (*gguf_set_val_u8)(struct gguf_context *ctx, const char *key, uint8_t v);
    void (*gguf_set_val_i8)(struct gguf_context *ctx, const char *key, int8_t v);
    void (*gguf_set_val_u16)(struct gguf_context *ctx, const char *key, uint16_t v);
    void (*gguf_set_val_i16)(struct gguf_context *ctx, const char *key, int16_t v);
    void (*gguf_set_val_u32)(struct gguf_context *ctx, const char *key, uint32_t v);
    void (*gguf_set_val_i32)(struct gguf_context *ctx, const char *key, int32_t v);
    void (*gguf_set_val_f32)(struct gguf_context *ctx, const char *key, float v);
    void (*gguf_set_val_u64)(struct gguf_context *ctx, const char *key, uint64_t v);
    void (*gguf_set_val_i64)(struct gguf_context *ctx, const char *key, int64_t v);
    void (*gguf_set_val_f64)(struct gguf_context *ctx, const char *key, double v);
    void (*gguf_set_val_bool)(struct gguf_context *ctx, const char *key, bool v);
    void (*gguf_set_val_str)(struct gguf_context *ctx, const char *key, const char *v);
    void (*gguf_set_arr_data)(struct gguf_context *ctx, const char *key, int type,
                              const void *data, size_t n);
    void (*gguf_set_arr_str)(struct gguf_context *ctx, const char *key, const char **data,
                             size_t n);
    void (*gguf_add_tensor)(struct gguf_context *ctx, const struct ggml_tensor *t);
    int64_t (*gguf_find_key)(const struct gguf_context *ctx, const char *key);
    int64_t (*gguf_remove_key)(struct gguf_context *ctx, const char *key);
    void (*gguf_set_tensor_data)(struct gguf_context *ctx, const char *name, const void *data);
    size_t (*gguf_get_meta_size)(const struct gguf_context *ctx);
} G;

static const char *prog = "ggml-ref";

_Noreturn static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

_Noreturn static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p)
        die("out of memory (%zu bytes)", n);
    return p;
}

static void load_ggml(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        die("dlopen %s: %s", path, dlerror());

    /* memcpy, not a cast: ISO C has no object-to-function pointer conversion. */
#define LOAD(fn)                                                          \
    do {                                                                  \
        void *sym = dlsym(h, #fn);                                        \
        if (!sym)                                                         \
            die("%s has no symbol %s", path, #fn);                        \
        memcpy(&G.fn, &sym, sizeof sym);                                  \
    } while (0)

    LOAD(ggml_init); LOAD(ggml_free); LOAD(ggml_tensor_overhead); LOAD(ggml_new_tensor);
    LOAD(ggml_set_name); LOAD(ggml_get_type_traits); LOAD(ggml_row_size);
    LOAD(ggml_quantize_init); LOAD(ggml_quantize_requires_imatrix); LOAD(ggml_quantize_chunk);
    LOAD(ggml_fp16_to_fp32);
    LOAD(gguf_init_empty); LOAD(gguf_init_from_file); LOAD(gguf_free); LOAD(gguf_write_to_file);
    LOAD(gguf_get_version); LOAD(gguf_get_alignment); LOAD(gguf_get_data_offset);
    LOAD(gguf_get_n_kv); LOAD(gguf_get_key); LOAD(gguf_get_kv_type); LOAD(gguf_get_arr_type);
    LOAD(gguf_get_val_u8); LOAD(gguf_get_val_i8); LOAD(gguf_get_val_u16); LOAD(gguf_get_val_i16);
    LOAD(gguf_get_val_u32); LOAD(gguf_get_val_i32); LOAD(gguf_get_val_f32);
    LOAD(gguf_get_val_u64); LOAD(gguf_get_val_i64); LOAD(gguf_get_val_f64);
    LOAD(gguf_get_val_bool); LOAD(gguf_get_val_str);
    LOAD(gguf_get_arr_n); LOAD(gguf_get_arr_data); LOAD(gguf_get_arr_str);
    LOAD(gguf_get_n_tensors); LOAD(gguf_get_tensor_offset); LOAD(gguf_get_tensor_name);
    LOAD(gguf_get_tensor_ne); LOAD(gguf_get_tensor_type); LOAD(gguf_get_tensor_size);
    LOAD(gguf_set_val_u8); LOAD(gguf_set_val_i8); LOAD(gguf_set_val_u16); LOAD(gguf_set_val_i16);
    LOAD(gguf_set_val_u32); LOAD(gguf_set_val_i32); LOAD(gguf_set_val_f32);
    LOAD(gguf_set_val_u64); LOAD(gguf_set_val_i64); LOAD(gguf_set_val_f64);
    LOAD(gguf_set_val_bool); LOAD(gguf_set_val_str); LOAD(gguf_set_arr_data);
    LOAD(gguf_set_arr_str); LOAD(gguf_add_tensor); LOAD(gguf_set_tensor_data);
    LOAD(gguf_get_meta_size); LOAD(gguf_find_key); LOAD(gguf_remove_key);
#undef LOAD
}

/* ==== Deterministic data ==== */

/* splitmix64: a fixed seed gives the same stream everywhere. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static float rng_unit(uint64_t *s) // [0, 1)
{
    return (float)(rng_next(s) >> 40) * 0x1.0p-24f;
}

static float rng_normal(uint64_t *s) // roughly N(0, 1), Irwin-Hall of 4
{
    float sum = rng_unit(s) + rng_unit(s) + rng_unit(s) + rng_unit(s);
    return (sum - 2.0f) * 1.7320508f;
}

static uint64_t seed_of(const char *a, const char *b)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325); // FNV-1a
    for (const char *p = a; *p; p++)
        h = (h ^ (uint8_t)*p) * UINT64_C(0x100000001b3);
    h = (h ^ 0xff) * UINT64_C(0x100000001b3);
    for (const char *p = b; *p; p++)
        h = (h ^ (uint8_t)*p) * UINT64_C(0x100000001b3);
    return h;
}

static const float magnitudes[] = {1e-6f, 1e-4f, 1e-3f, 1e-2f, 0.1f, 1.0f, 10.0f, 100.0f, 1000.0f};
#define N_MAGNITUDES (sizeof magnitudes / sizeof magnitudes[0])

static float rng_magnitude(uint64_t *s)
{
    return magnitudes[rng_next(s) % N_MAGNITUDES];
}

/* Weights for quantization, block by block in one of nine patterns so that
 * every tensor has zero blocks, constant blocks, outliers, one-signed blocks,
 * near-underflow blocks and blocks whose 32-element groups differ in scale. */
static void fill_weights(uint64_t *s, float *x, int64_t n, int64_t block)
{
    if (block < 32)
        block = 32;
    for (int64_t b0 = 0, k = 0; b0 < n; b0 += block, k++) {
        const int64_t len = n - b0 < block ? n - b0 : block;
        float *y = x + b0;
        const float scale = rng_magnitude(s);
        switch (k % 9) {
        case 0:
            for (int64_t i = 0; i < len; i++)
                y[i] = rng_normal(s) * scale;
            break;
        case 1:
            for (int64_t i = 0; i < len; i++)
                y[i] = 0.0f;
            break;
        case 2:
            for (int64_t i = 0; i < len; i++)
                y[i] = scale;
            break;
        case 3:
            for (int64_t i = 0; i < len; i++)
                y[i] = rng_normal(s) * scale * 1e-3f;
            y[rng_next(s) % (uint64_t)len] = (rng_next(s) & 1 ? 8.0f : -8.0f) * scale;
            break;
        case 4:
            for (int64_t i = 0; i < len; i++)
                y[i] = rng_unit(s) * scale;
            break;
        case 5:
            for (int64_t i = 0; i < len; i++)
                y[i] = -rng_unit(s) * scale;
            break;
        case 6:
            for (int64_t i = 0; i < len; i++)
                y[i] = rng_normal(s) * 1e-7f;
            break;
        case 7:
            for (int64_t g = 0; g < len; g += 32) {
                const float gs = rng_magnitude(s);
                for (int64_t i = g; i < len && i < g + 32; i++)
                    y[i] = rng_normal(s) * gs;
            }
            break;
        default:
            for (int64_t i = 0; i < len; i++)
                y[i] = (float)((int)(rng_next(s) % 16) - 8) * scale;
            break;
        }
    }
}

/* Positive importance weights, one per column. */
static void fill_imatrix(float *w, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        w[i] = 0.25f + (float)((i * 37) % 101) / 25.0f;
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static double f64_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint64_t f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

/* Edge values written at the start and end of every plain-type tensor. */
static const uint32_t f32_specials[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, // ±0, ±inf
    0x7fc00000, 0xffc00000, 0x7fc12345, 0xffd00bad, // quiet NaNs, with payloads
    0x7f800001, 0x7fa00000, 0xffbfffff,             // signalling NaNs
    0x00000001, 0x80000001, 0x007fffff, 0x807fffff, // subnormals
    0x00800000, 0x7f7fffff, 0xff7fffff,             // FLT_MIN, ±FLT_MAX
    0x3f800000, 0x3dcccccd, 0x3727c5ac, 0x461c4000, // 1, 0.1, 1e-05, 10000
};
static const uint16_t f16_specials[] = {
    0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7e55, 0x7c01, 0x7dff, 0xfd00,
    0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x3c00, 0x2e66, 0x0100,
};
static const uint16_t bf16_specials[] = {
    0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7fd5, 0x7f81, 0x7fbf, 0xffa0,
    0x0001, 0x8001, 0x007f, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0x3dcd, 0x3727,
};
static const uint64_t f64_specials[] = {
    UINT64_C(0x0000000000000000), UINT64_C(0x8000000000000000), // ±0
    UINT64_C(0x7ff0000000000000), UINT64_C(0xfff0000000000000), // ±inf
    UINT64_C(0x7ff8000000000000), UINT64_C(0xfff8000000000000), // quiet NaNs
    UINT64_C(0x7ff8000000012345), UINT64_C(0x7ffc0000deadbeef), // payloads, low and high
    UINT64_C(0x7ff0000000000001), UINT64_C(0x7ff4000000000000), // signalling NaNs
    UINT64_C(0x0000000000000001), UINT64_C(0x800fffffffffffff), // f64 subnormals -> ±0
    UINT64_C(0x7fefffffffffffff), UINT64_C(0xffefffffffffffff), // ±DBL_MAX -> ±inf
    UINT64_C(0x47efffffe0000000), UINT64_C(0x47efffffefffffff), // FLT_MAX rounding edge
    UINT64_C(0x47efffff00000000),                               // FLT_MAX exactly
    UINT64_C(0x36a0000000000000), UINT64_C(0x36a0000000000001), // 2^-149, a bit above
    UINT64_C(0x3690000000000000), UINT64_C(0x3690000000000001), // 2^-150 ties to 0, above
    UINT64_C(0x3810000000000000), UINT64_C(0x380fffffffffffff), // 2^-126 and just below
    UINT64_C(0x3ff0000010000000), UINT64_C(0x3ff0000030000000), // 1 + half ulp: ties to even
    UINT64_C(0x3fb999999999999a), UINT64_C(0x3ee4f8b588e368f1), // 0.1, 1e-05
};

/* ==== Tensors ==== */

typedef struct tensor_spec {
    char name[32];
    int n_dims;
    int64_t ne[4];
} tensor_spec;

typedef struct tensor_data {
    uint8_t *bytes;
    size_t nbytes;
    float *ref;       // the reference f32, nelem floats
    int64_t nelem;
} tensor_data;

static int64_t spec_nelem(const tensor_spec *sp)
{
    return sp->ne[0] * sp->ne[1] * sp->ne[2] * sp->ne[3];
}

static void spec_set(tensor_spec *sp, const char *name, int n_dims, int64_t ne0, int64_t ne1,
                     int64_t ne2, int64_t ne3)
{
    snprintf(sp->name, sizeof sp->name, "%s", name);
    sp->n_dims = n_dims;
    sp->ne[0] = ne0;
    sp->ne[1] = ne1;
    sp->ne[2] = ne2;
    sp->ne[3] = ne3;
}

static bool is_float_plain(int type)
{
    return type == T_F32 || type == T_F16 || type == T_BF16 || type == T_F64;
}

static bool is_int_plain(int type)
{
    return type == T_I8 || type == T_I16 || type == T_I32 || type == T_I64;
}

/* The shapes of one type's file: ne0 is always a multiple of the block. */
static int type_specs(int type, int64_t blck, tensor_spec *sp)
{
    int n = 0;
    if (blck == 1) {
        spec_set(&sp[n++], "vec", 1, 1001, 1, 1, 1);
        spec_set(&sp[n++], "mat", 2, 64, 8, 1, 1);
        spec_set(&sp[n++], "cube", 3, 16, 3, 4, 1);
        spec_set(&sp[n++], "rows3", 2, 37, 3, 1, 1);
        spec_set(&sp[n++], "hyper", 4, 5, 2, 3, 2);
        if (type == T_F16 || type == T_BF16 || type == T_I16)
            spec_set(&sp[n++], "all_bits", 2, 256, 256, 1, 1);
        else if (type == T_I8)
            spec_set(&sp[n++], "all_bits", 1, 256, 1, 1, 1);
    } else {
        const int64_t k = blck >= 256 ? 5 : blck >= 64 ? 7 : 13;
        spec_set(&sp[n++], "vec", 1, blck * k, 1, 1, 1);
        spec_set(&sp[n++], "mat", 2, blck * 2, 8, 1, 1);
        spec_set(&sp[n++], "cube", 3, blck, 3, 4, 1);
        spec_set(&sp[n++], "rows3", 2, blck * 3, 3, 1, 1);
        spec_set(&sp[n++], "hyper", 4, blck, 2, 3, 2);
        spec_set(&sp[n++], "random_bytes", 2, blck * 4, 2, 1, 1);
        spec_set(&sp[n++], "special_bytes", 2, blck * 8, 2, 1, 1);
    }
    return n;
}

static void put_specials_u16(uint16_t *v, int64_t n, const uint16_t *sp, size_t nsp)
{
    for (size_t i = 0; i < nsp && (int64_t)i < n; i++) {
        v[i] = sp[i];
        v[n - 1 - (int64_t)i] = sp[nsp - 1 - i];
    }
}

/* Plain element types: f32 f16 bf16 f64 i8 i16 i32 i64. */
static void make_plain(int type, const tensor_spec *sp, uint64_t *s, tensor_data *td)
{
    const int64_t n = td->nelem;
    const struct ggml_type_traits *tr = G.ggml_get_type_traits(type);
    const bool all_bits = strcmp(sp->name, "all_bits") == 0;

    switch (type) {
    case T_F32: {
        uint32_t *v = (uint32_t *)td->bytes;
        for (int64_t i = 0; i < n; i++)
            v[i] = rng_next(s) % 4 == 0 ? (uint32_t)rng_next(s)
                                         : f32_bits(rng_normal(s) * rng_magnitude(s));
        const size_t nsp = sizeof f32_specials / sizeof f32_specials[0];
        for (size_t i = 0; i < nsp && (int64_t)i < n; i++) {
            v[i] = f32_specials[i];
            v[n - 1 - (int64_t)i] = f32_specials[nsp - 1 - i];
        }
        memcpy(td->ref, v, (size_t)n * 4); // the stored bits are the reference
        return;
    }
    case T_F16:
    case T_BF16: {
        uint16_t *v = (uint16_t *)td->bytes;
        for (int64_t i = 0; i < n; i++)
            v[i] = all_bits ? (uint16_t)i : (uint16_t)rng_next(s);
        if (!all_bits) {
            if (type == T_F16)
                put_specials_u16(v, n, f16_specials, sizeof f16_specials / sizeof f16_specials[0]);
            else
                put_specials_u16(v, n, bf16_specials, sizeof bf16_specials / sizeof bf16_specials[0]);
        }
        tr->to_float(v, td->ref, n);
        return;
    }
    case T_F64: {
        double *v = (double *)td->bytes;
        for (int64_t i = 0; i < n; i++)
            v[i] = rng_next(s) % 4 == 0 ? f64_from_bits(rng_next(s))
                                         : (double)rng_normal(s) * rng_magnitude(s) / 3.0;
        const size_t nsp = sizeof f64_specials / sizeof f64_specials[0];
        for (size_t i = 0; i < nsp && (int64_t)i < n; i++) {
            v[i] = f64_from_bits(f64_specials[i]);
            v[n - 1 - (int64_t)i] = f64_from_bits(f64_specials[nsp - 1 - i]);
        }
        for (int64_t i = 0; i < n; i++)
            td->ref[i] = (float)v[i];
        return;
    }
    case T_I8: {
        int8_t *v = (int8_t *)td->bytes;
        for (int64_t i = 0; i < n; i++)
            v[i] = all_bits ? (int8_t)(uint8_t)i : (int8_t)(uint8_t)rng_next(s);
        if (!all_bits) {
            v[0] = INT8_MIN; v[1] = INT8_MAX; v[2] = 0; v[3] = -1; v[n - 1] = INT8_MAX;
        }
        for (int64_t i = 0; i < n; i++)
            td->ref[i] = (float)v[i];
        return;
    }
    case T_I16: {
        int16_t *v = (int16_t *)td->bytes;
        for (int64_t i = 0; i < n; i++)
            v[i] = all_bits ? (int16_t)(uint16_t)i : (int16_t)(uint16_t)rng_next(s);
        if (!all_bits) {
            v[0] = INT16_MIN; v[1] = INT16_MAX; v[2] = 0; v[3] = -1; v[n - 1] = INT16_MIN;
        }
        for (int64_t i = 0; i < n; i++)
            td->ref[i] = (float)v[i];
        return;
    }
    case T_I32: {
        int32_t *v = (int32_t *)td->bytes;
        for (int64_t i = 0; i < n; i++) {
            const uint64_t r = rng_next(s);
            v[i] = r % 3 == 0 ? (int32_t)(r >> 32) : (int32_t)(r >> 40) - (1 << 23);
        }
        static const int32_t sp32[] = {INT32_MIN, INT32_MAX, 0, -1, 1, 16777216, 16777217,
                                       -16777217, 2147483520, 2147483584, -2147483583};
        for (size_t i = 0; i < sizeof sp32 / sizeof sp32[0] && (int64_t)i < n; i++)
            v[i] = sp32[i];
        v[n - 1] = INT32_MAX;
        for (int64_t i = 0; i < n; i++)
            td->ref[i] = (float)v[i];
        return;
    }
    case T_I64: {
        int64_t *v = (int64_t *)td->bytes;
        for (int64_t i = 0; i < n; i++) {
            const uint64_t r = rng_next(s);
            v[i] = r % 3 == 0 ? (int64_t)r : (int64_t)(r >> 20) - (INT64_C(1) << 43);
        }
        static const int64_t sp64[] = {INT64_MIN, INT64_MAX, 0, -1, 1,
                                       (INT64_C(1) << 53) + 1, (INT64_C(1) << 24) + 1,
                                       -(INT64_C(1) << 24) - 3, INT64_C(0x7fffff8000000000),
                                       INT64_C(0x7fffffbfffffffff), INT64_MIN + 1};
        for (size_t i = 0; i < sizeof sp64 / sizeof sp64[0] && (int64_t)i < n; i++)
            v[i] = sp64[i];
        v[n - 1] = INT64_MIN;
        for (int64_t i = 0; i < n; i++)
            td->ref[i] = (float)v[i];
        return;
    }
    default:
        die("make_plain: type %d", type);
    }
}

/* q8_K by hand (ggml has neither quantize_chunk nor to_float for it):
 * block { float d; int8 qs[256]; int16 bsums[16] }, 292 bytes, with
 * d = max|x| / 127, qs = round(x / d), bsums = sums of 16-element groups. */
#define Q8K_BLOCK 256
#define Q8K_BYTES (4 + 256 + 32)

static int8_t round_to_int8(float v)
{
    const float r = v >= 0.0f ? v + 0.5f : v - 0.5f;
    if (r >= 127.0f)
        return 127;
    if (r <= -127.0f)
        return -127;
    return (int8_t)(int)r;
}

static void quantize_q8_K(const float *x, uint8_t *dst, int64_t n)
{
    for (int64_t b = 0; b < n / Q8K_BLOCK; b++) {
        const float *xb = x + b * Q8K_BLOCK;
        uint8_t *out = dst + b * Q8K_BYTES;
        float amax = 0.0f;
        for (int i = 0; i < Q8K_BLOCK; i++) {
            const float a = xb[i] < 0.0f ? -xb[i] : xb[i];
            if (a > amax)
                amax = a;
        }
        const float d = amax / 127.0f;
        int8_t qs[Q8K_BLOCK];
        for (int i = 0; i < Q8K_BLOCK; i++)
            qs[i] = d == 0.0f ? 0 : round_to_int8(xb[i] / d);
        memcpy(out, &d, 4);
        memcpy(out + 4, qs, Q8K_BLOCK);
        for (int g = 0; g < 16; g++) {
            int sum = 0;
            for (int i = 0; i < 16; i++)
                sum += qs[g * 16 + i];
            const int16_t s16 = (int16_t)sum;
            memcpy(out + 4 + Q8K_BLOCK + 2 * g, &s16, 2);
        }
    }
}

/* The reference for the two types ggml cannot dequantize: d * q. */
static void ref_q8_1(const uint8_t *src, float *y, int64_t n)
{
    for (int64_t b = 0; b < n / 32; b++) {
        const uint8_t *blk = src + b * 36; // { f16 d; f16 s; int8 qs[32] }
        const float d = G.ggml_fp16_to_fp32(le16(blk));
        for (int i = 0; i < 32; i++)
            y[b * 32 + i] = d * (float)(int8_t)blk[4 + i];
    }
}

static void ref_q8_K(const uint8_t *src, float *y, int64_t n)
{
    for (int64_t b = 0; b < n / Q8K_BLOCK; b++) {
        const uint8_t *blk = src + b * Q8K_BYTES;
        float d;
        memcpy(&d, blk, 4);
        for (int i = 0; i < Q8K_BLOCK; i++)
            y[b * Q8K_BLOCK + i] = d * (float)(int8_t)blk[4 + i];
    }
}

static void make_quantized(int type, const tensor_spec *sp, uint64_t *s, tensor_data *td)
{
    const struct ggml_type_traits *tr = G.ggml_get_type_traits(type);
    const int64_t n = td->nelem;
    const int64_t ne0 = sp->ne[0];
    const int64_t nrows = n / ne0;

    if (strcmp(sp->name, "random_bytes") == 0) {
        for (size_t i = 0; i < td->nbytes; i++)
            td->bytes[i] = (uint8_t)rng_next(s);
    } else if (strcmp(sp->name, "special_bytes") == 0) {
        /* Bytes from a set whose pairs and quadruples are often NaN, ±inf,
         * -0 or subnormal as f16, f32, e8m0 or e4m3, wherever a type keeps
         * its scales: every dequantizer meets special scales. */
        static const uint8_t pick[] = {0x00, 0x01, 0x7c, 0x7e, 0x7f, 0x80, 0xfc, 0xfe, 0xff, 0x3c};
        for (size_t i = 0; i < td->nbytes; i++)
            td->bytes[i] = pick[rng_next(s) % sizeof pick];
    } else {
        float *x = xmalloc((size_t)n * sizeof *x);
        fill_weights(s, x, n, tr->blck_size);
        if (type == T_Q8_1) {
            const size_t row = G.ggml_row_size(type, ne0);
            for (int64_t r = 0; r < nrows; r++)
                tr->from_float_ref(x + r * ne0, td->bytes + (size_t)r * row, ne0);
        } else if (type == T_Q8_K) {
            quantize_q8_K(x, td->bytes, n);
        } else {
            float *imatrix = NULL;
            if (G.ggml_quantize_requires_imatrix(type)) {
                imatrix = xmalloc((size_t)ne0 * sizeof *imatrix);
                fill_imatrix(imatrix, ne0);
            }
            G.ggml_quantize_init(type);
            const size_t got = G.ggml_quantize_chunk(type, x, td->bytes, 0, nrows, ne0, imatrix);
            if (got != td->nbytes)
                die("ggml_quantize_chunk(%s, %s) wrote %zu bytes, expected %zu",
                    tr->type_name, sp->name, got, td->nbytes);
            free(imatrix);
        }
        free(x);
    }

    if (type == T_Q8_1)
        ref_q8_1(td->bytes, td->ref, n);
    else if (type == T_Q8_K)
        ref_q8_K(td->bytes, td->ref, n);
    else if (tr->to_float)
        tr->to_float(td->bytes, td->ref, n);
    else
        die("type %s has no to_float", tr->type_name);
}

static void make_tensor(int type, const tensor_spec *sp, uint64_t seed, tensor_data *td)
{
    const struct ggml_type_traits *tr = G.ggml_get_type_traits(type);
    uint64_t s = seed;
    td->nelem = spec_nelem(sp);
    td->nbytes = (size_t)(td->nelem / tr->blck_size) * tr->type_size;
    td->bytes = xmalloc(td->nbytes);
    td->ref = xmalloc((size_t)td->nelem * sizeof(float));
    if (is_float_plain(type) || is_int_plain(type))
        make_plain(type, sp, &s, td);
    else
        make_quantized(type, sp, &s, td);
}

/* ==== Writing through ggml ==== */

static void write_le_f32(FILE *f, const float *v, int64_t n, const char *path)
{
    for (int64_t i = 0; i < n; i++) {
        const uint32_t u = f32_bits(v[i]);
        const uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
        if (fwrite(b, 1, 4, f) != 4)
            die("%s: write failed: %s", path, strerror(errno));
    }
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        die("%s: %s", path, strerror(errno));
    return f;
}

static void close_out(FILE *f, const char *path)
{
    if (ferror(f) || fclose(f) != 0)
        die("%s: write failed", path);
}

static void put_hex(FILE *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        fprintf(out, "%02x", (unsigned)(uint8_t)s[i]);
}

static const char *vtype_name(int t)
{
    static const char *const names[GGUF_TYPE_COUNT] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64",
    };
    return t >= 0 && t < GGUF_TYPE_COUNT ? names[t] : "?";
}

/* One element of a non-string array, from ggml's raw array data. */
static void put_raw_elem(FILE *out, int t, const uint8_t *p)
{
    switch (t) {
    case GGUF_TYPE_UINT8: fprintf(out, "%u", (unsigned)*p); break;
    case GGUF_TYPE_INT8: fprintf(out, "%d", (int)(int8_t)*p); break;
    case GGUF_TYPE_BOOL: fprintf(out, "%d", *p != 0); break;
    case GGUF_TYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); fprintf(out, "%u", (unsigned)v); break; }
    case GGUF_TYPE_INT16: { int16_t v; memcpy(&v, p, 2); fprintf(out, "%d", (int)v); break; }
    case GGUF_TYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); fprintf(out, "%" PRIu32, v); break; }
    case GGUF_TYPE_INT32: { int32_t v; memcpy(&v, p, 4); fprintf(out, "%" PRId32, v); break; }
    case GGUF_TYPE_FLOAT32: { uint32_t v; memcpy(&v, p, 4); fprintf(out, "%08" PRIx32, v); break; }
    case GGUF_TYPE_UINT64: { uint64_t v; memcpy(&v, p, 8); fprintf(out, "%" PRIu64, v); break; }
    case GGUF_TYPE_INT64: { int64_t v; memcpy(&v, p, 8); fprintf(out, "%" PRId64, v); break; }
    case GGUF_TYPE_FLOAT64: {
        uint64_t v;
        memcpy(&v, p, 8);
        fprintf(out, "%016llx", (unsigned long long)v);
        break;
    }
    default: die("array element type %d", t);
    }
}

static size_t raw_elem_size(int t)
{
    switch (t) {
    case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
    case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
    case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
    case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
    default: die("array element type %d", t);
    }
}

/* The .expected text of every key, from gguf_get_* (format at the top). */
static void dump_metadata(const struct gguf_context *ctx, FILE *out)
{
    const int64_t n_kv = G.gguf_get_n_kv(ctx);
    for (int64_t i = 0; i < n_kv; i++) {
        const char *key = G.gguf_get_key(ctx, i);
        const int t = G.gguf_get_kv_type(ctx, i);
        put_hex(out, key, strlen(key));
        if (t == GGUF_TYPE_ARRAY) {
            const int et = G.gguf_get_arr_type(ctx, i);
            const size_t n = G.gguf_get_arr_n(ctx, i);
            fprintf(out, "\tarr[%s]\t%zu:", vtype_name(et), n);
            if (et == GGUF_TYPE_STRING) {
                for (size_t j = 0; j < n; j++) {
                    const char *s = G.gguf_get_arr_str(ctx, i, j);
                    if (j)
                        fputc(',', out);
                    put_hex(out, s, strlen(s));
                }
            } else {
                const uint8_t *data = n ? G.gguf_get_arr_data(ctx, i) : NULL;
                const size_t es = raw_elem_size(et);
                for (size_t j = 0; j < n; j++) {
                    if (j)
                        fputc(',', out);
                    put_raw_elem(out, et, data + j * es);
                }
            }
            fputc('\n', out);
            continue;
        }
        fprintf(out, "\t%s\t", vtype_name(t));
        switch (t) {
        case GGUF_TYPE_UINT8: fprintf(out, "%u", (unsigned)G.gguf_get_val_u8(ctx, i)); break;
        case GGUF_TYPE_INT8: fprintf(out, "%d", (int)G.gguf_get_val_i8(ctx, i)); break;
        case GGUF_TYPE_UINT16: fprintf(out, "%u", (unsigned)G.gguf_get_val_u16(ctx, i)); break;
        case GGUF_TYPE_INT16: fprintf(out, "%d", (int)G.gguf_get_val_i16(ctx, i)); break;
        case GGUF_TYPE_UINT32: fprintf(out, "%" PRIu32, G.gguf_get_val_u32(ctx, i)); break;
        case GGUF_TYPE_INT32: fprintf(out, "%" PRId32, G.gguf_get_val_i32(ctx, i)); break;
        case GGUF_TYPE_FLOAT32:
            fprintf(out, "%08" PRIx32, f32_bits(G.gguf_get_val_f32(ctx, i)));
            break;
        case GGUF_TYPE_BOOL: fprintf(out, "%d", G.gguf_get_val_bool(ctx, i) ? 1 : 0); break;
        case GGUF_TYPE_STRING: {
            const char *s = G.gguf_get_val_str(ctx, i);
            put_hex(out, s, strlen(s));
            break;
        }
        case GGUF_TYPE_UINT64: fprintf(out, "%" PRIu64, G.gguf_get_val_u64(ctx, i)); break;
        case GGUF_TYPE_INT64: fprintf(out, "%" PRId64, G.gguf_get_val_i64(ctx, i)); break;
        case GGUF_TYPE_FLOAT64:
            fprintf(out, "%016llx", (unsigned long long)f64_bits(G.gguf_get_val_f64(ctx, i)));
            break;
        default: die("key '%s' has type %d", key, t);
        }
        fputc('\n', out);
    }
}

/* The .tensors text (format at the top). */
static void dump_tensors(const struct gguf_context *ctx, FILE *out)
{
    const int64_t n = G.gguf_get_n_tensors(ctx);
    const size_t data_offset = G.gguf_get_data_offset(ctx);
    fprintf(out, "#version\t%" PRIu32 "\n", G.gguf_get_version(ctx));
    fprintf(out, "#alignment\t%zu\n", G.gguf_get_alignment(ctx));
    fprintf(out, "#kv_count\t%" PRId64 "\n", G.gguf_get_n_kv(ctx));
    fprintf(out, "#tensor_count\t%" PRId64 "\n", n);
    fprintf(out, "#data_offset\t%zu\n", data_offset);
    for (int64_t i = 0; i < n; i++) {
        const int64_t *ne = G.gguf_get_tensor_ne(ctx, i);
        fprintf(out, "%s\t%d\t%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\t%zu\t%zu\n",
                G.gguf_get_tensor_name(ctx, i), G.gguf_get_tensor_type(ctx, i),
                ne[0], ne[1], ne[2], ne[3],
                data_offset + G.gguf_get_tensor_offset(ctx, i), G.gguf_get_tensor_size(ctx, i));
    }
}

static struct gguf_context *read_back(const char *path)
{
    const struct gguf_init_params params = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *ctx = G.gguf_init_from_file(path, params);
    if (!ctx)
        die("%s: ggml cannot read back the file it wrote", path);
    return ctx;
}

static char *path_join(const char *dir, const char *base, const char *ext)
{
    const size_t n = strlen(dir) + strlen(base) + strlen(ext) + 2;
    char *p = xmalloc(n);
    snprintf(p, n, "%s/%s%s", dir, base, ext);
    return p;
}

static void write_text(const char *dir, const char *base, const char *ext,
                       const struct gguf_context *ctx,
                       void (*dump)(const struct gguf_context *, FILE *))
{
    char *path = path_join(dir, base, ext);
    FILE *f = open_out(path);
    dump(ctx, f);
    close_out(f, path);
    free(path);
}

/* Writes base.gguf with the tensors, through ggml's writer, then reads it
 * back with ggml and checks that each tensor's bytes are where ggml says;
 * writes base.ref, base.tensors and base.expected. ctx is consumed. */
static void write_fixture(struct gguf_context *ctx, const char *dir, const char *base, int n,
                          const int *types, const tensor_spec *specs, const tensor_data *data)
{
    const struct ggml_init_params ip = {
        .mem_size = (size_t)(n + 1) * G.ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context *gctx = G.ggml_init(ip);
    if (!gctx)
        die("ggml_init failed");
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *t = G.ggml_new_tensor(gctx, types[i], specs[i].n_dims, specs[i].ne);
        if (!t)
            die("ggml_new_tensor failed for %s", specs[i].name);
        G.ggml_set_name(t, specs[i].name);
        G.gguf_add_tensor(ctx, t);
        G.gguf_set_tensor_data(ctx, specs[i].name, data[i].bytes);
    }

    char *path = path_join(dir, base, ".gguf");
    if (!G.gguf_write_to_file(ctx, path, false))
        die("%s: gguf_write_to_file failed", path);
    G.gguf_free(ctx);
    G.ggml_free(gctx);

    struct gguf_context *rd = read_back(path);
    if (G.gguf_get_n_tensors(rd) != n)
        die("%s: ggml reads %" PRId64 " tensors, wrote %d", path, G.gguf_get_n_tensors(rd), n);
    FILE *f = fopen(path, "rb");
    if (!f)
        die("%s: %s", path, strerror(errno));
    for (int i = 0; i < n; i++) {
        const int64_t *ne = G.gguf_get_tensor_ne(rd, i);
        if (strcmp(G.gguf_get_tensor_name(rd, i), specs[i].name) != 0 ||
            G.gguf_get_tensor_type(rd, i) != types[i] ||
            G.gguf_get_tensor_size(rd, i) != data[i].nbytes ||
            memcmp(ne, specs[i].ne, sizeof specs[i].ne) != 0)
            die("%s: tensor %d reads back differently", path, i);
        const size_t off = G.gguf_get_data_offset(rd) + G.gguf_get_tensor_offset(rd, i);
        uint8_t *buf = xmalloc(data[i].nbytes);
        if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fread(buf, 1, data[i].nbytes, f) != data[i].nbytes ||
            memcmp(buf, data[i].bytes, data[i].nbytes) != 0)
            die("%s: tensor '%s' data at %zu is not what was written", path, specs[i].name, off);
        free(buf);
    }
    fclose(f);
    free(path);

    path = path_join(dir, base, ".ref");
    f = open_out(path);
    for (int i = 0; i < n; i++)
        write_le_f32(f, data[i].ref, data[i].nelem, path);
    close_out(f, path);
    free(path);

    write_text(dir, base, ".tensors", rd, dump_tensors);
    write_text(dir, base, ".expected", rd, dump_metadata);
    G.gguf_free(rd);
}

static void free_data(tensor_data *data, int n)
{
    for (int i = 0; i < n; i++) {
        free(data[i].bytes);
        free(data[i].ref);
    }
}

#define MAX_SPECS 8

static void make_type_file(const char *dir, int type, const char *name)
{
    const struct ggml_type_traits *tr = G.ggml_get_type_traits(type);
    if (!tr || !tr->type_name || strcmp(tr->type_name, name) != 0 || tr->blck_size <= 0 ||
        tr->type_size == 0)
        die("this ggml has no type %d '%s' (it says '%s')", type, name,
            tr && tr->type_name ? tr->type_name : "(null)");

    tensor_spec specs[MAX_SPECS];
    tensor_data data[MAX_SPECS];
    int types[MAX_SPECS];
    const int n = type_specs(type, tr->blck_size, specs);
    for (int i = 0; i < n; i++) {
        types[i] = type;
        make_tensor(type, &specs[i], seed_of(name, specs[i].name), &data[i]);
    }

    struct gguf_context *ctx = G.gguf_init_empty();
    G.gguf_set_val_str(ctx, "general.architecture", "conformance");
    G.gguf_set_val_str(ctx, "conformance.type", name);
    G.gguf_set_val_u32(ctx, "conformance.type_id", (uint32_t)type);

    char base[64];
    snprintf(base, sizeof base, "type-%s", name);
    write_fixture(ctx, dir, base, n, types, specs, data);
    free_data(data, n);
}

/* ggml's writer pads with gguf_context.alignment, which only the reader
 * sets from general.alignment (gguf_set_val_u32 records the key but leaves
 * the writer at 32). So the key is written into a header-only file first,
 * and the context ggml reads back from it, aligned to 64, takes the tensors. */
static void make_aligned_file(const char *dir)
{
    char *path = path_join(dir, "aligned64", ".gguf");
    struct gguf_context *ctx = G.gguf_init_empty();
    G.gguf_set_val_str(ctx, "general.architecture", "conformance");
    G.gguf_set_val_u32(ctx, "general.alignment", 64);
    G.gguf_set_val_str(ctx, "general.name", "alignment 64");
    if (!G.gguf_write_to_file(ctx, path, true))
        die("%s: gguf_write_to_file failed", path);
    G.gguf_free(ctx);
    ctx = read_back(path);
    if (G.gguf_get_alignment(ctx) != 64)
        die("%s: ggml reads alignment %zu", path, G.gguf_get_alignment(ctx));
    free(path);

    tensor_spec specs[4];
    tensor_data data[4];
    const int types[4] = {T_F16, T_Q4_0, T_F32, T_Q6_K};
    spec_set(&specs[0], "odd.f16", 2, 37, 3, 1, 1);      // 222 bytes
    spec_set(&specs[1], "blk.0/q4%0", 2, 96, 3, 1, 1);  // 162 bytes
    spec_set(&specs[2], "tiny", 1, 3, 1, 1, 1);         // 12 bytes
    spec_set(&specs[3], "k", 2, 256, 3, 1, 1);          // 630 bytes
    for (int i = 0; i < 4; i++)
        make_tensor(types[i], &specs[i], seed_of("aligned64", specs[i].name), &data[i]);
    write_fixture(ctx, dir, "aligned64", 4, types, specs, data);
    free_data(data, 4);
}

/* ==== metadata.gguf ==== */

/* Tokenizer-like strings: byte tokens, raw control and invalid UTF-8 bytes,
 * multi-byte UTF-8, whitespace, escapes, the empty string. Never a NUL:
 * ggml's setters take C strings. */
static char *make_token(uint64_t *s, int i)
{
    static const char *const words[] = {"the", "and", "ing", "tion", "er", "llama", "gguf",
                                        "a", "of", "to", "in", "is", "on", "\xe2\x96\x81"};
    static const char *const utf8[] = {"\xc3\xa9", "\xc3\xb6", "\xe6\x97\xa5", "\xe6\x9c\xac",
                                       "\xe8\xaa\x9e", "\xd0\xb6", "\xf0\x9f\xa6\x99",
                                       "\xf0\x9f\x98\x80", "\xe2\x80\x94", "\xef\xbf\xbd"};
    static const char *const odd[] = {"\\", "\\n", "\n", "\r\n", "\t", " ", "  ", "\"", "'",
                                      ",", "\x7f", "\x1b[0m", "%s", "%25", "/", ".", ".."};
    char buf[64];
    size_t len = 0;
    if (i < 256) {
        len = (size_t)snprintf(buf, sizeof buf, "<0x%02X>", i);
    } else if (i == 300) {
        len = 0; // the empty token
    } else {
        switch (rng_next(s) % 8) {
        case 0:
            len = (size_t)snprintf(buf, sizeof buf, "\xe2\x96\x81%s%s", words[rng_next(s) % 14],
                                   words[rng_next(s) % 13]);
            break;
        case 1:
            len = (size_t)snprintf(buf, sizeof buf, "%s", words[rng_next(s) % 14]);
            break;
        case 2: { // raw bytes 0x01..0xff: control bytes, lone continuation bytes...
            const int k = 1 + (int)(rng_next(s) % 3);
            for (int j = 0; j < k; j++)
                buf[len++] = (char)(1 + rng_next(s) % 255);
            break;
        }
        case 3:
            len = (size_t)snprintf(buf, sizeof buf, "%s%s", utf8[rng_next(s) % 10],
                                   utf8[rng_next(s) % 10]);
            break;
        case 4:
            len = (size_t)snprintf(buf, sizeof buf, "%s", odd[rng_next(s) % 17]);
            break;
        case 5:
            len = (size_t)snprintf(buf, sizeof buf, "%s%s%s", words[rng_next(s) % 14],
                                   odd[rng_next(s) % 17], utf8[rng_next(s) % 10]);
            break;
        case 6:
            len = (size_t)snprintf(buf, sizeof buf, "[tok%d]", i);
            break;
        default:
            len = (size_t)snprintf(buf, sizeof buf, "%s%s", words[rng_next(s) % 13],
                                   words[rng_next(s) % 13]);
            break;
        }
    }
    char *t = xmalloc(len + 1);
    memcpy(t, buf, len);
    t[len] = '\0';
    return t;
}

#define N_TOKENS 5000
#define N_MERGES 2000

static void set_f32_bits(struct gguf_context *ctx, const char *key, uint32_t bits)
{
    G.gguf_set_val_f32(ctx, key, f32_from_bits(bits));
}

static void set_f64_bits(struct gguf_context *ctx, const char *key, uint64_t bits)
{
    G.gguf_set_val_f64(ctx, key, f64_from_bits(bits));
}

static void make_metadata_file(const char *dir)
{
    struct gguf_context *ctx = G.gguf_init_empty();

    G.gguf_set_val_str(ctx, "general.architecture", "llama");
    G.gguf_set_val_str(ctx, "general.name", "conformance metadata");

    G.gguf_set_val_u8(ctx, "test.u8.min", 0);
    G.gguf_set_val_u8(ctx, "test.u8.max", UINT8_MAX);
    G.gguf_set_val_i8(ctx, "test.i8.min", INT8_MIN);
    G.gguf_set_val_i8(ctx, "test.i8.max", INT8_MAX);
    G.gguf_set_val_i8(ctx, "test.i8.minus_one", -1);
    G.gguf_set_val_u16(ctx, "test.u16.min", 0);
    G.gguf_set_val_u16(ctx, "test.u16.max", UINT16_MAX);
    G.gguf_set_val_i16(ctx, "test.i16.min", INT16_MIN);
    G.gguf_set_val_i16(ctx, "test.i16.max", INT16_MAX);
    G.gguf_set_val_u32(ctx, "test.u32.min", 0);
    G.gguf_set_val_u32(ctx, "test.u32.max", UINT32_MAX);
    G.gguf_set_val_i32(ctx, "test.i32.min", INT32_MIN);
    G.gguf_set_val_i32(ctx, "test.i32.max", INT32_MAX);
    G.gguf_set_val_u64(ctx, "test.u64.min", 0);
    G.gguf_set_val_u64(ctx, "test.u64.max", UINT64_MAX);
    G.gguf_set_val_i64(ctx, "test.i64.min", INT64_MIN);
    G.gguf_set_val_i64(ctx, "test.i64.max", INT64_MAX);
    G.gguf_set_val_bool(ctx, "test.bool.true", true);
    G.gguf_set_val_bool(ctx, "test.bool.false", false);

    static const struct { const char *key; uint32_t bits; } f32s[] = {
        {"test.f32.0.1", 0x3dcccccd}, {"test.f32.1e-05", 0x3727c5ac},
        {"test.f32.10000", 0x461c4000}, {"test.f32.one", 0x3f800000},
        {"test.f32.pi", 0x40490fdb}, {"test.f32.2_24", 0x4b800000},
        {"test.f32.zero", 0x00000000}, {"test.f32.neg_zero", 0x80000000},
        {"test.f32.inf", 0x7f800000}, {"test.f32.neg_inf", 0xff800000},
        {"test.f32.nan", 0x7fc00000}, {"test.f32.neg_nan", 0xffc00000},
        {"test.f32.nan_payload", 0x7fc12345}, {"test.f32.snan", 0x7f800001},
        {"test.f32.denorm_min", 0x00000001}, {"test.f32.denorm_max", 0x007fffff},
        {"test.f32.neg_denorm", 0x80000010}, {"test.f32.flt_min", 0x00800000},
        {"test.f32.flt_max", 0x7f7fffff}, {"test.f32.neg_flt_max", 0xff7fffff},
    };
    for (size_t i = 0; i < sizeof f32s / sizeof f32s[0]; i++)
        set_f32_bits(ctx, f32s[i].key, f32s[i].bits);

    static const struct { const char *key; uint64_t bits; } f64s[] = {
        {"test.f64.0.1", UINT64_C(0x3fb999999999999a)},
        {"test.f64.1e-05", UINT64_C(0x3ee4f8b588e368f1)},
        {"test.f64.10000", UINT64_C(0x40c3880000000000)},
        {"test.f64.one_third", UINT64_C(0x3fd5555555555555)},
        {"test.f64.zero", UINT64_C(0)}, {"test.f64.neg_zero", UINT64_C(0x8000000000000000)},
        {"test.f64.inf", UINT64_C(0x7ff0000000000000)},
        {"test.f64.neg_inf", UINT64_C(0xfff0000000000000)},
        {"test.f64.nan", UINT64_C(0x7ff8000000000000)},
        {"test.f64.neg_nan", UINT64_C(0xfff8000000000000)},
        {"test.f64.nan_payload", UINT64_C(0x7ff8000000012345)},
        {"test.f64.snan", UINT64_C(0x7ff0000000000001)},
        {"test.f64.denorm_min", UINT64_C(0x0000000000000001)},
        {"test.f64.denorm_max", UINT64_C(0x000fffffffffffff)},
        {"test.f64.dbl_min", UINT64_C(0x0010000000000000)},
        {"test.f64.dbl_max", UINT64_C(0x7fefffffffffffff)},
        {"test.f64.1e300", UINT64_C(0x7e37e43c8800759c)},
    };
    for (size_t i = 0; i < sizeof f64s / sizeof f64s[0]; i++)
        set_f64_bits(ctx, f64s[i].key, f64s[i].bits);

    static const struct { const char *key; const char *val; } strs[] = {
        {"test.str.empty", ""},
        {"test.str.ascii", "hello world"},
        {"test.str.newlines", "line one\nline two\n\nline four"},
        {"test.str.only_newline", "\n"},
        {"test.str.tabs", "a\tb\t\tc\t"},
        {"test.str.backslashes", "C:\\path\\to\\file \\n is not a newline \\\\"},
        {"test.str.cr", "dos\r\nline\rcr"},
        {"test.str.control", "\x01\x02\x03\x07\x08\x0b\x0c\x1b[31mred\x1b[0m\x1f"},
        {"test.str.del", "before\x7f" "after"},
        {"test.str.invalid_utf8", "\xff\xfe lone \x80 cont, \xc3\x28 bad 2nd, \xc0\xaf overlong,"
                                  " \xed\xa0\x80 surrogate, \xf8\x88\x80\x80\x80 5-byte, \xe2\x82"},
        {"test.str.truncated_utf8_end", "ends in \xe2\x82"},
        {"test.str.utf8", "h\xc3\xa9llo w\xc3\xb6rld \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac"
                          "\xe8\xaa\x9e \xf0\x9f\xa6\x99 \xd0\xb6"},
        {"test.str.bom", "\xef\xbb\xbf" "bom"},
        {"test.str.quotes", "\"quoted\" 'single' `back`"},
        {"test.str.percent", "%s %d %n %% %25"},
        {"test.str.spaces", "  leading and trailing  "},
        {"tokenizer.chat_template", "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\n"
                                    "{% endfor %}"},
        {"test.\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87", "utf-8 key"},
        {"test/slash%percent", "key with / and %"},
        {".", "key is a dot"},
        {"..", "key is two dots"},
        {"test key with spaces\tand tab", "odd key"},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        G.gguf_set_val_str(ctx, strs[i].key, strs[i].val);

    {
        char longkey[301];
        memset(longkey, 'k', 300);
        memcpy(longkey, "test.long_key.", 14);
        longkey[300] = '\0';
        G.gguf_set_val_str(ctx, longkey, "a 300-byte key");
        char *longval = xmalloc(20001);
        for (int i = 0; i < 20000; i++)
            longval[i] = (char)('a' + i % 26);
        G.gguf_set_val_str(ctx, "test.str.long", longval);
        free(longval);
    }

    /* Arrays of every element type, then the same types empty. */
    static const uint8_t a_u8[] = {0, 1, 127, 128, 255};
    static const int8_t a_i8[] = {INT8_MIN, -1, 0, 1, INT8_MAX};
    static const uint16_t a_u16[] = {0, 1, 255, 256, 32768, UINT16_MAX};
    static const int16_t a_i16[] = {INT16_MIN, -256, -1, 0, 1, INT16_MAX};
    static const uint32_t a_u32[] = {0, 1, 65536, 2147483648u, UINT32_MAX};
    static const int32_t a_i32[] = {INT32_MIN, -65536, -1, 0, 1, INT32_MAX};
    static const uint64_t a_u64[] = {0, 1, UINT64_C(4294967296), UINT64_C(9223372036854775808),
                                     UINT64_MAX};
    static const int64_t a_i64[] = {INT64_MIN, -INT64_C(4294967296), -1, 0, 1, INT64_MAX};
    static const bool a_bool[] = {true, false, false, true, true};
    float a_f32[sizeof f32s / sizeof f32s[0]];
    for (size_t i = 0; i < sizeof f32s / sizeof f32s[0]; i++)
        a_f32[i] = f32_from_bits(f32s[i].bits);
    double a_f64[sizeof f64s / sizeof f64s[0]];
    for (size_t i = 0; i < sizeof f64s / sizeof f64s[0]; i++)
        a_f64[i] = f64_from_bits(f64s[i].bits);
    const char *a_str[sizeof strs / sizeof strs[0]];
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        a_str[i] = strs[i].val;

#define ARR(key, type, a) G.gguf_set_arr_data(ctx, key, type, a, sizeof a / sizeof a[0])
    ARR("test.arr.u8", GGUF_TYPE_UINT8, a_u8);
    ARR("test.arr.i8", GGUF_TYPE_INT8, a_i8);
    ARR("test.arr.u16", GGUF_TYPE_UINT16, a_u16);
    ARR("test.arr.i16", GGUF_TYPE_INT16, a_i16);
    ARR("test.arr.u32", GGUF_TYPE_UINT32, a_u32);
    ARR("test.arr.i32", GGUF_TYPE_INT32, a_i32);
    ARR("test.arr.f32", GGUF_TYPE_FLOAT32, a_f32);
    ARR("test.arr.bool", GGUF_TYPE_BOOL, a_bool);
    ARR("test.arr.u64", GGUF_TYPE_UINT64, a_u64);
    ARR("test.arr.i64", GGUF_TYPE_INT64, a_i64);
    ARR("test.arr.f64", GGUF_TYPE_FLOAT64, a_f64);
#undef ARR
    G.gguf_set_arr_str(ctx, "test.arr.str", a_str, sizeof a_str / sizeof a_str[0]);
    {
        const char *one_empty[] = {""};
        G.gguf_set_arr_str(ctx, "test.arr.str_one_empty", one_empty, 1);
    }

    static const int scalar_types[] = {
        GGUF_TYPE_UINT8, GGUF_TYPE_INT8, GGUF_TYPE_UINT16, GGUF_TYPE_INT16, GGUF_TYPE_UINT32,
        GGUF_TYPE_INT32, GGUF_TYPE_FLOAT32, GGUF_TYPE_BOOL, GGUF_TYPE_UINT64, GGUF_TYPE_INT64,
        GGUF_TYPE_FLOAT64,
    };
    for (size_t i = 0; i < sizeof scalar_types / sizeof scalar_types[0]; i++) {
        char key[64];
        snprintf(key, sizeof key, "test.arr_empty.%s", vtype_name(scalar_types[i]));
        G.gguf_set_arr_data(ctx, key, scalar_types[i], NULL, 0);
    }
    G.gguf_set_arr_str(ctx, "test.arr_empty.str", NULL, 0);

    /* A tokenizer: tokens, scores, types and merges. */
    {
        uint64_t s = seed_of("metadata", "tokens");
        char **tokens = xmalloc(N_TOKENS * sizeof *tokens);
        float *scores = xmalloc(N_TOKENS * sizeof *scores);
        int32_t *ttypes = xmalloc(N_TOKENS * sizeof *ttypes);
        for (int i = 0; i < N_TOKENS; i++) {
            tokens[i] = make_token(&s, i);
            scores[i] = i < 256 ? 0.0f : -(float)i * 0.25f + rng_normal(&s) * 1e-3f;
            ttypes[i] = i < 256 ? 6 : (int32_t)(1 + rng_next(&s) % 5);
        }
        G.gguf_set_val_str(ctx, "tokenizer.ggml.model", "llama");
        G.gguf_set_arr_str(ctx, "tokenizer.ggml.tokens", (const char **)tokens, N_TOKENS);
        G.gguf_set_arr_data(ctx, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, N_TOKENS);
        G.gguf_set_arr_data(ctx, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, ttypes, N_TOKENS);
        for (int i = 0; i < N_TOKENS; i++)
            free(tokens[i]);

        char **merges = xmalloc(N_MERGES * sizeof *merges);
        for (int i = 0; i < N_MERGES; i++) {
            char *a = make_token(&s, 256 + i);
            char *b = make_token(&s, 257 + i);
            const size_t n = strlen(a) + strlen(b) + 2;
            merges[i] = xmalloc(n);
            snprintf(merges[i], n, "%s %s", a, b);
            free(a);
            free(b);
        }
        G.gguf_set_arr_str(ctx, "tokenizer.ggml.merges", (const char **)merges, N_MERGES);
        for (int i = 0; i < N_MERGES; i++)
            free(merges[i]);
        free(tokens);
        free(scores);
        free(ttypes);
        free(merges);
        G.gguf_set_val_u32(ctx, "tokenizer.ggml.bos_token_id", 1);
        G.gguf_set_val_u32(ctx, "tokenizer.ggml.eos_token_id", 2);
    }

    write_fixture(ctx, dir, "metadata", 0, NULL, NULL, NULL);
}

/* ==== make-model: a llama-shaped Q4_K_M model ==== */

/* The file llama.cpp's converter and llama-quantize make of a llama with
 * file type 15 (MOSTLY_Q4_K_M): the converter's keys in its order, a
 * byte-level BPE tokenizer (gpt2 / llama-bpe) with llama-3's special tokens,
 * and the tensors, in this order:
 *
 *   token_embd.weight            q4_K  [embd, vocab]
 *   output_norm.weight           f32   [embd]
 *   output.weight                q6_K  [embd, vocab]
 *   blk.N.attn_norm.weight       f32   [embd]
 *   blk.N.attn_q.weight          q4_K  [embd, embd]
 *   blk.N.attn_k.weight          q4_K  [embd, embd/4]   GQA: head_count_kv = head_count/4
 *   blk.N.attn_v.weight          q6_K  [embd, embd/4]
 *   blk.N.attn_output.weight     q4_K  [embd, embd]
 *   blk.N.ffn_norm.weight        f32   [embd]
 *   blk.N.ffn_gate.weight        q4_K  [embd, ff]
 *   blk.N.ffn_up.weight          q4_K  [embd, ff]
 *   blk.N.ffn_down.weight        q6_K  [ff, embd]
 *   typed.TYPE.weight            TYPE  [embd, ff]     only with --types, one per TYPE
 *   extra.NNNNN.weight           f16   [32]           only with --extra-tensors
 *
 * Weights are pseudo-random (a fixed seed per tensor name, so the same
 * options give the same bytes), norms near 1.0, quantized by
 * ggml_quantize_chunk. embd and ff are row lengths (ne0) of q4_K/q6_K
 * tensors, so multiples of 256, the block; heads are 64 wide, so head_count
 * is embd/64 and head_count_kv embd/256. --types takes ggml type names
 * (q8_0,f16,iq2_xs: any type ggml_quantize_chunk makes) and adds a weight
 * of each, made like the others; a type that needs an importance matrix
 * (iq2_xs, ...) gets fill_imatrix's. The benchmark uses them to time types
 * the Q4_K_M mix does not have.
 *
 * The data is streamed: ggml writes the header, metadata and tensor infos
 * (gguf_write_to_file with only_meta, which ends padded to the alignment, so
 * the data section starts at gguf_get_meta_size), then each tensor is made a
 * chunk of rows at a time and appended at data_offset +
 * gguf_get_tensor_offset, zero-padded to the alignment after every tensor as
 * ggml's own writer pads. Memory stays at a few MB plus the metadata, whatever
 * the size of the tensors (22 MB peak RSS for the 600 MB model below).
 * The file is then read back with gguf_init_from_file, and the bytes at
 * each tensor's offset as ggml reads it are hashed against what was written.
 *
 * Large quantized tensors repeat rows: the first MODEL_UNIQUE_ELEMS elements
 * (at least MODEL_MIN_UNIQUE_ROWS rows) are generated and quantized, and the
 * rest of the tensor cycles through those rows. Generating and quantizing
 * with the reference q4_K/q6_K quantizers costs about 14 s per 100M elements
 * on one core, so quantizing every row of the 600 MB benchmark model
 * (--blocks 8 --embd 2048 --ff 5632 --vocab 128000 --merges 64000, ~900M
 * elements) took 2.5 minutes here; repeating, it takes 7 s. Every block is
 * still a genuine ggml block, and the default sample (no tensor over 512K
 * elements) has no repeated rows. */

typedef struct model_opts {
    int64_t blocks;
    int64_t embd;
    int64_t ff;
    int64_t vocab;
    int64_t merges;
    int64_t extra;      // extra.NNNNN.weight tensors
    const char *name;   // general.name
    int types[N_TYPES]; // typed.TYPE.weight tensors
    int n_types;
} model_opts;

enum { MT_WEIGHT, MT_NORM, MT_EXTRA };

typedef struct model_tensor {
    char name[40];
    int type;
    int kind;           // MT_*
    int n_dims;
    int64_t ne[4];      // unused dimensions are 1
    size_t nbytes;
    uint64_t hash;      // fnv1a of the bytes written
} model_tensor;

#define MODEL_CHUNK_ELEMS  ((int64_t)1 << 20)  // floats made and quantized at a time
#define MODEL_UNIQUE_ELEMS ((int64_t)1 << 19)  // quantized per tensor, then repeated
#define MODEL_MIN_UNIQUE_ROWS 64
#define MODEL_HEAD_DIM     64
#define MODEL_CONTEXT      8192
#define MODEL_FILE_TYPE    15                  // LLAMA_FTYPE_MOSTLY_Q4_K_M
#define MODEL_EXTRA_NE     32

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h;
}

#define FNV_INIT UINT64_C(0xcbf29ce484222325)

/* ---- tokenizer ---- */

/* llama-3's special tokens, the last ids of the vocabulary. */
static const char *const special_tokens[] = {
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
    "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
};
#define N_SPECIAL ((int64_t)(sizeof special_tokens / sizeof special_tokens[0]))
#define SPECIAL_BOS 0   // <|begin_of_text|>
#define SPECIAL_EOS 9   // <|eot_id|>
#define MAX_TOKEN_BYTES 24
#define TOKEN_TYPE_NORMAL 1
#define TOKEN_TYPE_CONTROL 3

static const char chat_template[] =
    "{{ bos_token }}\n"
    "{% for message in messages %}\n"
    "<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{{ message['content'] | trim }}<|eot_id|>\n"
    "{% endfor %}\n"
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}";

/* GPT-2's byte-level alphabet (bytes_to_unicode), which is also token ids
 * 0..255: the printable bytes '!'..'~', 0xa1..0xac, 0xae..0xff stand for
 * themselves (ids 0..187, in byte order); the other 68 bytes, in byte order,
 * become U+0100.. (ids 188..255), so a space is 'Ġ' U+0120, id 220, and a
 * newline 'Ċ'. tok[id] is the UTF-8 of the code point; id_of[byte] its id. */
static bool byte_is_printable(int b)
{
    return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
}

static void byte_alphabet(char tok[256][3], int id_of[256])
{
    int id = 0, shifted = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int b = 0; b < 256; b++) {
            if (byte_is_printable(b) != (pass == 0))
                continue;
            const int cp = pass == 0 ? b : 256 + shifted++;
            if (cp < 0x80) {
                tok[id][0] = (char)cp;
                tok[id][1] = '\0';
            } else {
                tok[id][0] = (char)(0xc0 | cp >> 6);
                tok[id][1] = (char)(0x80 | (cp & 0x3f));
                tok[id][2] = '\0';
            }
            id_of[b] = id++;
        }
    }
}

/* Open-addressing set of token strings. */
typedef struct token_set {
    int64_t *slot;      // token id, -1: empty
    size_t mask;
    char *const *tokens;
} token_set;

static bool token_set_has(const token_set *ts, const char *str)
{
    for (size_t i = fnv1a(FNV_INIT, str, strlen(str)) & ts->mask;; i = (i + 1) & ts->mask) {
        if (ts->slot[i] < 0)
            return false;
        if (strcmp(ts->tokens[ts->slot[i]], str) == 0)
            return true;
    }
}

static void token_set_add(token_set *ts, int64_t id)
{
    const char *str = ts->tokens[id];
    size_t i = fnv1a(FNV_INIT, str, strlen(str)) & ts->mask;
    while (ts->slot[i] >= 0)
        i = (i + 1) & ts->mask;
    ts->slot[i] = id;
}

/* A piece of text for the vocabulary: usually a pronounceable word, often
 * after a space, sometimes capitalized; now and then a run of arbitrary
 * bytes (which byte-level BPE shows as 'Ã©', 'Ċ', ...). Returns its length. */
static size_t vocab_word(uint64_t *s, uint8_t *w, size_t cap)
{
    static const char *const onset[] = {
        "", "", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v",
        "w", "y", "z", "br", "ch", "cl", "cr", "dr", "fl", "fr", "gr", "pl", "pr", "qu", "sh",
        "sl", "sp", "st", "str", "th", "tr", "wh",
    };
    static const char *const vowel[] = {"a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou",
                                        "io", "ai", "ee", "oo", "y"};
    static const char *const coda[] = {"", "", "", "n", "r", "s", "t", "l", "m", "nd", "ng",
                                       "st", "ck", "rt", "nt", "ss", "ll", "ing", "tion", "ed",
                                       "er", "ly", "es"};
#define PICK(a) a[rng_next(s) % (sizeof a / sizeof a[0])]
    size_t n = 0;
    const uint64_t kind = rng_next(s) % 100;
    if (kind < 5) {
        const size_t k = 2 + (size_t)(rng_next(s) % 3);
        while (n < k)
            w[n++] = (uint8_t)rng_next(s);
        return n;
    }
    if (kind < 55)
        w[n++] = ' ';
    const int syllables = 1 + (int)(rng_next(s) % 3 == 0) + (int)(rng_next(s) % 4 == 0);
    for (int k = 0; k < syllables; k++) {
        const char *parts[3] = {PICK(onset), PICK(vowel), PICK(coda)};
        for (int p = 0; p < 3; p++)
            for (const char *c = parts[p]; *c && n < cap; c++)
                w[n++] = (uint8_t)*c;
    }
#undef PICK
    const size_t first = kind < 55 ? 1 : 0;
    if (kind % 10 == 0 && n > first && w[first] >= 'a' && w[first] <= 'z')
        w[first] = (uint8_t)(w[first] - 'a' + 'A');
    return n;
}

/* The vocabulary of a byte-level BPE: ids 0..255 the byte alphabet, then
 * the merged tokens, then the special tokens. Merged tokens are the
 * prefixes of generated words (vocab_word), each new one made by one merge
 * "prefix-minus-its-last-char last-char", so every merge joins two earlier
 * tokens, as BPE's do. All tokens are distinct and at most MAX_TOKEN_BYTES
 * long. The merge list is the first o->merges of them in id order (BPE's
 * rank order). Fills tokens[vocab], ttypes[vocab], merges[o->merges]; every
 * string is allocated with malloc(). */
static void make_vocab(const model_opts *o, char **tokens, int32_t *ttypes, char **merges)
{
    const int64_t vocab = o->vocab, n_merged = vocab - 256 - N_SPECIAL;
    uint64_t s = seed_of("make-model", "vocab");

    token_set ts = {.tokens = tokens};
    size_t cap = 16;
    while (cap < (size_t)vocab * 2)
        cap *= 2;
    ts.slot = xmalloc(cap * sizeof *ts.slot);
    ts.mask = cap - 1;
    for (size_t i = 0; i < cap; i++)
        ts.slot[i] = -1;

    char alphabet[256][3];
    int id_of[256];
    byte_alphabet(alphabet, id_of);
    for (int64_t id = 0; id < 256; id++) {
        tokens[id] = xmalloc(3);
        memcpy(tokens[id], alphabet[id], 3);
        token_set_add(&ts, id);
    }
    for (int64_t k = 0; k < N_SPECIAL; k++) {
        const int64_t id = 256 + n_merged + k;
        tokens[id] = xmalloc(strlen(special_tokens[k]) + 1);
        strcpy(tokens[id], special_tokens[k]);
        token_set_add(&ts, id);
    }

    int64_t id = 256;
    while (id < 256 + n_merged) {
        uint8_t w[48];
        const size_t wn = vocab_word(&s, w, sizeof w);
        char prefix[2 * sizeof w + 1];
        size_t pn = strlen(alphabet[id_of[w[0]]]);
        memcpy(prefix, alphabet[id_of[w[0]]], pn + 1);
        for (size_t i = 1; i < wn && id < 256 + n_merged; i++) {
            const char *c = alphabet[id_of[w[i]]];
            const size_t cn = strlen(c);
            if (pn + cn > MAX_TOKEN_BYTES)
                break;
            const size_t left = pn;
            memcpy(prefix + pn, c, cn + 1);
            pn += cn;
            if (token_set_has(&ts, prefix))
                continue;
            tokens[id] = xmalloc(pn + 1);
            memcpy(tokens[id], prefix, pn + 1);
            token_set_add(&ts, id);
            const int64_t m = id - 256;
            if (m < o->merges) {
                merges[m] = xmalloc(pn + 2);
                memcpy(merges[m], prefix, left);
                merges[m][left] = ' ';
                memcpy(merges[m] + left + 1, c, cn + 1);
            }
            id++;
        }
    }
    for (int64_t i = 0; i < vocab; i++)
        ttypes[i] = i < 256 + n_merged ? TOKEN_TYPE_NORMAL : TOKEN_TYPE_CONTROL;
    free(ts.slot);
}

/* ---- metadata and tensor list ---- */

static void set_model_kv(struct gguf_context *ctx, const model_opts *o)
{
    const uint32_t heads = (uint32_t)(o->embd / MODEL_HEAD_DIM);

    G.gguf_set_val_str(ctx, "general.architecture", "llama");
    G.gguf_set_val_str(ctx, "general.type", "model");
    G.gguf_set_val_str(ctx, "general.name", o->name);
    G.gguf_set_val_u32(ctx, "llama.block_count", (uint32_t)o->blocks);
    G.gguf_set_val_u32(ctx, "llama.context_length", MODEL_CONTEXT);
    G.gguf_set_val_u32(ctx, "llama.embedding_length", (uint32_t)o->embd);
    G.gguf_set_val_u32(ctx, "llama.feed_forward_length", (uint32_t)o->ff);
    G.gguf_set_val_u32(ctx, "llama.attention.head_count", heads);
    G.gguf_set_val_u32(ctx, "llama.attention.head_count_kv", heads / 4);
    G.gguf_set_val_f32(ctx, "llama.rope.freq_base", 500000.0f);
    G.gguf_set_val_f32(ctx, "llama.attention.layer_norm_rms_epsilon", 1e-05f);
    G.gguf_set_val_u32(ctx, "general.file_type", MODEL_FILE_TYPE);
    G.gguf_set_val_u32(ctx, "llama.vocab_size", (uint32_t)o->vocab);
    G.gguf_set_val_u32(ctx, "llama.rope.dimension_count", MODEL_HEAD_DIM);

    const int64_t vocab = o->vocab;
    char **tokens = xmalloc((size_t)vocab * sizeof *tokens);
    int32_t *ttypes = xmalloc((size_t)vocab * sizeof *ttypes);
    char **merges = xmalloc((size_t)(o->merges ? o->merges : 1) * sizeof *merges);
    make_vocab(o, tokens, ttypes, merges);
    G.gguf_set_val_str(ctx, "tokenizer.ggml.model", "gpt2");
    G.gguf_set_val_str(ctx, "tokenizer.ggml.pre", "llama-bpe");
    G.gguf_set_arr_str(ctx, "tokenizer.ggml.tokens", (const char **)tokens, (size_t)vocab);
    G.gguf_set_arr_data(ctx, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, ttypes, (size_t)vocab);
    G.gguf_set_arr_str(ctx, "tokenizer.ggml.merges", (const char **)merges, (size_t)o->merges);
    for (int64_t i = 0; i < vocab; i++)
        free(tokens[i]);
    for (int64_t i = 0; i < o->merges; i++)
        free(merges[i]);
    free(tokens);
    free(ttypes);
    free(merges);

    const int64_t first_special = vocab - N_SPECIAL;
    G.gguf_set_val_u32(ctx, "tokenizer.ggml.bos_token_id", (uint32_t)(first_special + SPECIAL_BOS));
    G.gguf_set_val_u32(ctx, "tokenizer.ggml.eos_token_id", (uint32_t)(first_special + SPECIAL_EOS));
    G.gguf_set_val_str(ctx, "tokenizer.chat_template", chat_template);
    G.gguf_set_val_u32(ctx, "general.quantization_version", 2);
}

static void model_tensor_set(model_tensor *t, int kind, int type, int64_t ne0, int64_t ne1,
                             const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void model_tensor_set(model_tensor *t, int kind, int type, int64_t ne0, int64_t ne1,
                             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    const struct ggml_type_traits *tr = G.ggml_get_type_traits(type);
    t->kind = kind;
    t->type = type;
    t->n_dims = ne1 > 0 ? 2 : 1;
    t->ne[0] = ne0;
    t->ne[1] = ne1 > 0 ? ne1 : 1;
    t->ne[2] = 1;
    t->ne[3] = 1;
    t->nbytes = (size_t)(ne0 / tr->blck_size) * tr->type_size * (size_t)t->ne[1];
    t->hash = FNV_INIT;
}

/* The tensors in file order; returns how many (3 + 9 * blocks + n_types + extra). */
static int64_t model_tensors(const model_opts *o, model_tensor *mt)
{
    const int64_t e = o->embd, f = o->ff, v = o->vocab;
    int64_t n = 0;
    model_tensor_set(&mt[n++], MT_WEIGHT, T_Q4_K, e, v, "token_embd.weight");
    model_tensor_set(&mt[n++], MT_NORM, T_F32, e, 0, "output_norm.weight");
    model_tensor_set(&mt[n++], MT_WEIGHT, T_Q6_K, e, v, "output.weight");
    for (int64_t b = 0; b < o->blocks; b++) {
        model_tensor_set(&mt[n++], MT_NORM, T_F32, e, 0, "blk.%" PRId64 ".attn_norm.weight", b);
        model_tensor_set(&mt[n++], MT_WEIGHT, T_Q4_K, e, e, "blk.%" PRId64 ".attn_q.weight", b);
        model_tensor_set(&mt[n++], MT_WEIGHT, T_Q4_K, e, e / 4, "blk.%" PRId64 ".attn_k.weight", b);
        model_tensor_set(&mt[n++], MT_WEIGHT, T_Q6_K, e, e / 4, "blk.%" PRId64 ".attn_v.weight", b);
        model_tensor_set(&mt[n++], MT_WEIGHT, T_Q4_K, e, e, "blk.%" PRId64 ".attn_output.weight",
                         b);
        model_tensor_set(&mt[n++], MT_NORM, T_F32, e, 0, "blk.%" PRId64 ".ffn_norm.weight", b);
        model_tensor_set(&mt[n++], MT_WEIGHT, T_Q4_K, e, f, "blk.%" PRId64 ".ffn_gate.weight", b);
        model_tensor_set(&mt[n++], MT_WEIGHT, T_Q4_K, e, f, "blk.%" PRId64 ".ffn_up.weight", b);
        model_tensor_set(&mt[n++], MT_WEIGHT, T_Q6_K, f, e, "blk.%" PRId64 ".ffn_down.weight", b);
    }
    for (int k = 0; k < o->n_types; k++)
        model_tensor_set(&mt[n++], MT_WEIGHT, o->types[k], e, f, "typed.%s.weight",
                         G.ggml_get_type_traits(o->types[k])->type_name);
    for (int64_t x = 0; x < o->extra; x++)
        model_tensor_set(&mt[n++], MT_EXTRA, T_F16, MODEL_EXTRA_NE, 0,
                         "extra.%05" PRId64 ".weight", x);
    return n;
}

/* ---- tensor data ---- */

/* Roughly N(0, sd^2) from one draw per element: Irwin-Hall of its four
 * 16-bit quarters (cheaper than rng_normal for hundreds of millions). */
static void fill_normal(uint64_t *s, float *x, int64_t n, float mean, float sd)
{
    for (int64_t i = 0; i < n; i++) {
        const uint64_t r = rng_next(s);
        const float sum =
            (float)((r & 0xffff) + (r >> 16 & 0xffff) + (r >> 32 & 0xffff) + (r >> 48));
        x[i] = mean + (sum * 0x1.0p-16f - 2.0f) * 1.7320508f * sd;
    }
}

typedef struct model_out {
    FILE *f;
    const char *path;
    uint64_t pos;       // bytes in the file so far
} model_out;

static void model_write(model_out *out, const void *p, size_t n, uint64_t *hash)
{
    if (n && fwrite(p, 1, n, out->f) != n)
        die("%s: write failed: %s", out->path, strerror(errno));
    out->pos += n;
    if (hash)
        *hash = fnv1a(*hash, p, n);
}

/* Makes one tensor's bytes and appends them. Quantized weights: rows of
 * N(0, sd) with sd between 0.01 and 0.03 per row, quantized by ggml, the
 * first MODEL_UNIQUE_ELEMS elements' worth then repeated. Norms: f32 near 1.
 * Extras: f16 by ggml_quantize_chunk's f32 -> f16. */
static void model_write_tensor(model_out *out, model_tensor *t)
{
    uint64_t s = seed_of("make-model", t->name);
    const int64_t ne0 = t->ne[0], nrows = t->ne[1];

    if (t->kind != MT_WEIGHT) {
        float *x = xmalloc((size_t)ne0 * sizeof *x);
        if (t->kind == MT_NORM) {
            fill_normal(&s, x, ne0, 1.0f, 0.05f);
            uint8_t *le = xmalloc((size_t)ne0 * 4);
            for (int64_t i = 0; i < ne0; i++) {
                const uint32_t u = f32_bits(x[i]);
                const uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16),
                                      (uint8_t)(u >> 24)};
                memcpy(le + 4 * i, b, 4);
            }
            model_write(out, le, t->nbytes, &t->hash);
            free(le);
        } else {
            uint8_t *half = xmalloc(t->nbytes);
            fill_normal(&s, x, ne0, 0.0f, 0.02f);
            if (G.ggml_quantize_chunk(t->type, x, half, 0, 1, ne0, NULL) != t->nbytes)
                die("ggml_quantize_chunk(f16, %s) wrote an unexpected size", t->name);
            model_write(out, half, t->nbytes, &t->hash);
            free(half);
        }
        free(x);
        return;
    }

    const size_t row = G.ggml_row_size(t->type, ne0);
    int64_t distinct = MODEL_UNIQUE_ELEMS / ne0;
    if (distinct < MODEL_MIN_UNIQUE_ROWS)
        distinct = MODEL_MIN_UNIQUE_ROWS;
    if (distinct > nrows)
        distinct = nrows;
    int64_t step = MODEL_CHUNK_ELEMS / ne0;
    if (step < 1)
        step = 1;
    if (step > distinct)
        step = distinct;
    float *x = xmalloc((size_t)(step * ne0) * sizeof *x);
    uint8_t *q = xmalloc((size_t)distinct * row);
    float *imatrix = NULL;
    if (G.ggml_quantize_requires_imatrix(t->type)) {
        imatrix = xmalloc((size_t)ne0 * sizeof *imatrix);
        fill_imatrix(imatrix, ne0);
    }
    for (int64_t r0 = 0; r0 < distinct; r0 += step) {
        const int64_t nr = distinct - r0 < step ? distinct - r0 : step;
        for (int64_t r = 0; r < nr; r++)
            fill_normal(&s, x + r * ne0, ne0, 0.0f, 0.01f + 0.02f * rng_unit(&s));
        const size_t got =
            G.ggml_quantize_chunk(t->type, x, q + (size_t)r0 * row, 0, nr, ne0, imatrix);
        if (got != (size_t)nr * row)
            die("ggml_quantize_chunk(%s) wrote %zu bytes, expected %zu", t->name, got,
                (size_t)nr * row);
    }
    for (int64_t r0 = 0; r0 < nrows; r0 += distinct) {
        const int64_t nr = nrows - r0 < distinct ? nrows - r0 : distinct;
        model_write(out, q, (size_t)nr * row, &t->hash);
    }
    free(x);
    free(q);
    free(imatrix);
}

/* ---- writing and checking the file ---- */

static int64_t kv_index(const struct gguf_context *ctx, const char *key)
{
    const int64_t n = G.gguf_get_n_kv(ctx);
    for (int64_t i = 0; i < n; i++)
        if (strcmp(G.gguf_get_key(ctx, i), key) == 0)
            return i;
    return -1;
}

/* Reads the file back with ggml: the tensor infos must be those written,
 * and the bytes at each tensor's offset must hash to what was written. */
static void verify_model(const char *path, const model_opts *o, const model_tensor *mt, int64_t n,
                         int64_t n_kv, size_t data_offset, uint64_t file_size)
{
    struct gguf_context *rd = read_back(path);
    if (G.gguf_get_n_tensors(rd) != n || G.gguf_get_n_kv(rd) != n_kv ||
        G.gguf_get_data_offset(rd) != data_offset)
        die("%s: ggml reads %" PRId64 " tensors, %" PRId64 " keys, data at %zu; "
            "wrote %" PRId64 ", %" PRId64 ", %zu",
            path, G.gguf_get_n_tensors(rd), G.gguf_get_n_kv(rd), G.gguf_get_data_offset(rd), n,
            n_kv, data_offset);
    const int64_t k_tokens = kv_index(rd, "tokenizer.ggml.tokens");
    const int64_t k_merges = kv_index(rd, "tokenizer.ggml.merges");
    if (k_tokens < 0 || G.gguf_get_arr_n(rd, k_tokens) != (size_t)o->vocab || k_merges < 0 ||
        G.gguf_get_arr_n(rd, k_merges) != (size_t)o->merges)
        die("%s: ggml reads a different tokenizer", path);

    FILE *f = fopen(path, "rb");
    if (!f)
        die("%s: %s", path, strerror(errno));
    const size_t bufsize = (size_t)1 << 20;
    uint8_t *buf = xmalloc(bufsize);
    for (int64_t i = 0; i < n; i++) {
        const model_tensor *t = &mt[i];
        if (strcmp(G.gguf_get_tensor_name(rd, i), t->name) != 0 ||
            G.gguf_get_tensor_type(rd, i) != t->type ||
            G.gguf_get_tensor_size(rd, i) != t->nbytes ||
            memcmp(G.gguf_get_tensor_ne(rd, i), t->ne, sizeof t->ne) != 0)
            die("%s: tensor %" PRId64 " '%s' reads back differently", path, i, t->name);
        const size_t off = data_offset + G.gguf_get_tensor_offset(rd, i);
        if (fseeko(f, (off_t)off, SEEK_SET) != 0)
            die("%s: seek to %zu: %s", path, off, strerror(errno));
        uint64_t h = FNV_INIT;
        for (size_t done = 0; done < t->nbytes;) {
            const size_t want = t->nbytes - done < bufsize ? t->nbytes - done : bufsize;
            if (fread(buf, 1, want, f) != want)
                die("%s: tensor '%s': short read at %zu", path, t->name, off + done);
            h = fnv1a(h, buf, want);
            done += want;
        }
        if (h != t->hash)
            die("%s: tensor '%s' data at %zu is not what was written", path, t->name, off);
    }
    if (fseeko(f, 0, SEEK_END) != 0 || (uint64_t)ftello(f) != file_size)
        die("%s: file size is not %" PRIu64, path, file_size);
    fclose(f);
    free(buf);
    G.gguf_free(rd);
}

static void make_model(const char *path, const model_opts *o)
{
    const int64_t n_cap = 3 + 9 * o->blocks + o->n_types + o->extra;
    model_tensor *mt = xmalloc((size_t)n_cap * sizeof *mt);
    const int64_t n = model_tensors(o, mt);

    struct gguf_context *ctx = G.gguf_init_empty();
    set_model_kv(ctx, o);
    const int64_t n_kv = G.gguf_get_n_kv(ctx);

    /* ggml_tensor headers only (no_alloc): gguf_add_tensor copies the
     * struct, and the data pointer stays unset since only_meta never reads it. */
    const struct ggml_init_params ip = {
        .mem_size = (size_t)(n + 1) * G.ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context *gctx = G.ggml_init(ip);
    if (!gctx)
        die("ggml_init failed");
    for (int64_t i = 0; i < n; i++) {
        struct ggml_tensor *t = G.ggml_new_tensor(gctx, mt[i].type, mt[i].n_dims, mt[i].ne);
        if (!t)
            die("ggml_new_tensor failed for %s", mt[i].name);
        G.ggml_set_name(t, mt[i].name);
        G.gguf_add_tensor(ctx, t);
    }

    if (!G.gguf_write_to_file(ctx, path, true))
        die("%s: gguf_write_to_file failed", path);
    const size_t data_offset = G.gguf_get_meta_size(ctx);
    const size_t align = G.gguf_get_alignment(ctx);

    model_out out = {.f = fopen(path, "r+b"), .path = path};
    if (!out.f)
        die("%s: %s", path, strerror(errno));
    if (fseeko(out.f, 0, SEEK_END) != 0)
        die("%s: %s", path, strerror(errno));
    out.pos = (uint64_t)ftello(out.f);
    if (out.pos != data_offset)
        die("%s: ggml wrote %" PRIu64 " bytes of metadata, gguf_get_meta_size says %zu", path,
            out.pos, data_offset);

    static const uint8_t zeros[256];
    if (align > sizeof zeros)
        die("alignment %zu", align);
    for (int64_t i = 0; i < n; i++) {
        const uint64_t want = data_offset + G.gguf_get_tensor_offset(ctx, i);
        if (out.pos != want)
            die("%s: tensor '%s' would start at %" PRIu64 ", ggml says %" PRIu64, path, mt[i].name,
                out.pos, want);
        model_write_tensor(&out, &mt[i]);
        model_write(&out, zeros, (size_t)((align - out.pos % align) % align), NULL);
    }
    if (ferror(out.f) || fclose(out.f) != 0)
        die("%s: write failed", path);
    G.gguf_free(ctx);
    G.ggml_free(gctx);

    verify_model(path, o, mt, n, n_kv, data_offset, out.pos);
    free(mt);
}

static int64_t parse_count(const char *opt, const char *s, int64_t min, int64_t max)
{
    char *end;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        die("%s: '%s' is not a whole number from %" PRId64 " to %" PRId64, opt, s, min, max);
    return v;
}

/* The ids of a comma-separated list of ggml type names, for --types. */
static void parse_types(const char *opt, const char *list, model_opts *o)
{
    o->n_types = 0;
    for (const char *p = list; *p;) {
        const size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < N_TYPES &&
               (strlen(all_types[i].name) != len || strncmp(all_types[i].name, p, len) != 0))
            i++;
        if (i == N_TYPES)
            die("%s: '%.*s' is not a ggml type name", opt, (int)len, p);
        const int id = all_types[i].id;
        if (is_int_plain(id) || id == T_F64 || id == T_Q8_1 || id == T_Q8_K)
            die("%s: ggml_quantize_chunk cannot make %s", opt, all_types[i].name);
        for (int k = 0; k < o->n_types; k++)
            if (o->types[k] == id)
                die("%s: %s is listed twice", opt, all_types[i].name);
        o->types[o->n_types++] = id;
        p += len;
        if (*p == ',')
            p++;
    }
}

/* Options after make-model OUT.gguf; dies on a bad one. */
static void parse_model_opts(int argc, char **argv, model_opts *o)
{
    *o = (model_opts){.blocks = 2, .embd = 256, .ff = 768, .vocab = 2000, .merges = 1000,
                      .extra = 0, .name = "gguf-fs sample llama"};
    for (int i = 0; i < argc; i++) {
        const char *opt = argv[i];
        if (i + 1 >= argc)
            die("%s needs a value", opt);
        const char *val = argv[++i];
        if (strcmp(opt, "--blocks") == 0)
            o->blocks = parse_count(opt, val, 1, 10000);
        else if (strcmp(opt, "--embd") == 0)
            o->embd = parse_count(opt, val, 256, 65536);
        else if (strcmp(opt, "--ff") == 0)
            o->ff = parse_count(opt, val, 256, 262144);
        else if (strcmp(opt, "--vocab") == 0)
            o->vocab = parse_count(opt, val, 256 + N_SPECIAL, 4194304);
        else if (strcmp(opt, "--merges") == 0)
            o->merges = parse_count(opt, val, 0, 4194304);
        else if (strcmp(opt, "--extra-tensors") == 0) // ggml's gguf_add_tensor and reader
            o->extra = parse_count(opt, val, 0, 100000); // look names up linearly: O(n^2)
        else if (strcmp(opt, "--name") == 0)
            o->name = val;
        else if (strcmp(opt, "--types") == 0)
            parse_types(opt, val, o);
        else
            die("make-model: unknown option %s", opt);
    }
    if (o->embd % 256 != 0 || o->ff % 256 != 0)
        die("--embd and --ff must be multiples of 256 (the q4_K/q6_K block), got %" PRId64
            " and %" PRId64, o->embd, o->ff);
    if (o->merges > o->vocab - 256 - N_SPECIAL)
        die("--merges %" PRId64 " needs --vocab of at least %" PRId64 " (256 bytes + merges + %"
            PRId64 " special tokens)", o->merges, o->merges + 256 + N_SPECIAL, N_SPECIAL);
}

/* ==== edit-copy ==== */

/*
 * ggml-ref LIB edit-copy IN.gguf OUT.gguf [EDIT...] reads IN with ggml
 * (gguf_init_from_file), edits its keys with gguf_set_* and
 * gguf_remove_key, and writes OUT with gguf_write_to_file, tensor data
 * and all: the edited copy ggml's own writer makes, which gguf-fs's
 * model.gguf of an edited mount must equal. Each EDIT is
 *
 *   del:KEY                 the key is removed
 *   TYPE:KEY=VALUE          the key is set (TYPE u8 ... f64, bool, str;
 *                           integers in decimal, floats as strtod reads
 *                           them, bools true/false, a string as it is)
 *   arr-TYPE:KEY=@FILE      an array, one element per line of FILE
 *
 * A key IN has keeps its place (the keys are set in IN's order into an
 * empty context; gguf_set_* on IN's own would move an edited key to the
 * end); new keys follow, in the order of the edits.
 */

typedef struct edit {
    const char *arg;
    bool del, array;
    int type;
    char key[512];
    const char *value;
} edit;

static int type_named(const char *name, size_t len)
{
    for (int t = 0; t < GGUF_TYPE_COUNT; t++) {
        const char *n = vtype_name(t);
        if (t != GGUF_TYPE_ARRAY && strlen(n) == len && memcmp(n, name, len) == 0)
            return t;
    }
    die("edit-copy: no type '%.*s'", (int)len, name);
}

static edit parse_edit(const char *arg)
{
    edit e = {.arg = arg};
    const char *colon = strchr(arg, ':');
    if (!colon)
        die("edit-copy: '%s' is no edit (del:KEY, TYPE:KEY=VALUE, arr-TYPE:KEY=@FILE)", arg);
    const char *key = colon + 1;
    const char *eq = strchr(key, '=');
    if (strncmp(arg, "del:", 4) == 0) {
        e.del = true;
        eq = key + strlen(key);
    } else {
        if (!eq)
            die("edit-copy: '%s' has no =VALUE", arg);
        e.array = strncmp(arg, "arr-", 4) == 0;
        const char *type = e.array ? arg + 4 : arg;
        e.type = type_named(type, (size_t)(colon - type));
        e.value = eq + 1;
        if (e.array && *e.value++ != '@')
            die("edit-copy: '%s': an array's value is @FILE", arg);
    }
    if ((size_t)(eq - key) >= sizeof e.key)
        die("edit-copy: '%s': key too long", arg);
    memcpy(e.key, key, (size_t)(eq - key));
    return e;
}

static char *read_lines(const char *path, size_t *n_lines, char ***lines)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = xmalloc((size_t)size + 1);
    if (fread(text, 1, (size_t)size, f) != (size_t)size)
        die("%s: short read", path);
    fclose(f);
    size_t n = 0;
    for (long i = 0; i < size; i++)
        n += text[i] == '\n';
    *lines = xmalloc((n + 1) * sizeof **lines);
    char *p = text;
    for (size_t i = 0; i < n; i++) {
        char *nl = strchr(p, '\n');
        *nl = '\0';
        (*lines)[i] = p;
        p = nl + 1;
    }
    *n_lines = n;
    return text;
}

/* One element of type t from text into p. */
static void scan_elem(int t, const char *text, uint8_t *p)
{
    char *end;
    errno = 0;
    switch (t) {
    case GGUF_TYPE_FLOAT32: { float v = strtof(text, &end); memcpy(p, &v, 4); break; }
    case GGUF_TYPE_FLOAT64: { double v = strtod(text, &end); memcpy(p, &v, 8); break; }
    case GGUF_TYPE_BOOL:
        if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0)
            die("edit-copy: '%s' is no bool", text);
        *p = text[0] == 't';
        return;
    case GGUF_TYPE_INT8: case GGUF_TYPE_INT16: case GGUF_TYPE_INT32: case GGUF_TYPE_INT64: {
        const long long v = strtoll(text, &end, 10);
        memcpy(p, &v, raw_elem_size(t)); // little-endian: the low bytes
        break;
    }
    default: {
        const unsigned long long v = strtoull(text, &end, 10);
        memcpy(p, &v, raw_elem_size(t));
    }
    }
    if (*end || errno)
        die("edit-copy: '%s' is no %s", text, vtype_name(t));
}

static void apply_edit(struct gguf_context *ctx, const edit *e)
{
    if (e->type == GGUF_TYPE_STRING && !e->array) {
        G.gguf_set_val_str(ctx, e->key, e->value);
        return;
    }
    if (!e->array) {
        uint8_t v[8] = {0};
        scan_elem(e->type, e->value, v);
        switch (e->type) {
        case GGUF_TYPE_UINT8: G.gguf_set_val_u8(ctx, e->key, v[0]); break;
        case GGUF_TYPE_INT8: G.gguf_set_val_i8(ctx, e->key, (int8_t)v[0]); break;
        case GGUF_TYPE_BOOL: G.gguf_set_val_bool(ctx, e->key, v[0] != 0); break;
        case GGUF_TYPE_UINT16: { uint16_t x; memcpy(&x, v, 2); G.gguf_set_val_u16(ctx, e->key, x); break; }
        case GGUF_TYPE_INT16: { int16_t x; memcpy(&x, v, 2); G.gguf_set_val_i16(ctx, e->key, x); break; }
        case GGUF_TYPE_UINT32: { uint32_t x; memcpy(&x, v, 4); G.gguf_set_val_u32(ctx, e->key, x); break; }
        case GGUF_TYPE_INT32: { int32_t x; memcpy(&x, v, 4); G.gguf_set_val_i32(ctx, e->key, x); break; }
        case GGUF_TYPE_FLOAT32: { float x; memcpy(&x, v, 4); G.gguf_set_val_f32(ctx, e->key, x); break; }
        case GGUF_TYPE_UINT64: { uint64_t x; memcpy(&x, v, 8); G.gguf_set_val_u64(ctx, e->key, x); break; }
        case GGUF_TYPE_INT64: { int64_t x; memcpy(&x, v, 8); G.gguf_set_val_i64(ctx, e->key, x); break; }
        case GGUF_TYPE_FLOAT64: { double x; memcpy(&x, v, 8); G.gguf_set_val_f64(ctx, e->key, x); break; }
        default: die("edit-copy: %s", e->arg);
        }
        return;
    }
    size_t n;
    char **lines;
    char *text = read_lines(e->value, &n, &lines);
    if (e->type == GGUF_TYPE_STRING) {
        G.gguf_set_arr_str(ctx, e->key, (const char **)lines, n);
    } else {
        const size_t es = raw_elem_size(e->type);
        uint8_t *data = xmalloc(n * es);
        for (size_t i = 0; i < n; i++)
            scan_elem(e->type, lines[i], data + i * es);
        G.gguf_set_arr_data(ctx, e->key, e->type, data, n);
        free(data);
    }
    free(lines);
    free(text);
}

/* Puts key i of src into ctx as it is. */
static void copy_key(struct gguf_context *ctx, const struct gguf_context *src, int64_t i)
{
    const char *key = G.gguf_get_key(src, i);
    const int t = G.gguf_get_kv_type(src, i);
    if (t == GGUF_TYPE_ARRAY) {
        const int et = G.gguf_get_arr_type(src, i);
        const size_t n = G.gguf_get_arr_n(src, i);
        if (et == GGUF_TYPE_STRING) {
            const char **strs = xmalloc((n + 1) * sizeof *strs);
            for (size_t j = 0; j < n; j++)
                strs[j] = G.gguf_get_arr_str(src, i, j);
            G.gguf_set_arr_str(ctx, key, strs, n);
            free(strs);
        } else {
            G.gguf_set_arr_data(ctx, key, et, n ? G.gguf_get_arr_data(src, i) : "", n);
        }
        return;
    }
    switch (t) {
    case GGUF_TYPE_UINT8: G.gguf_set_val_u8(ctx, key, G.gguf_get_val_u8(src, i)); break;
    case GGUF_TYPE_INT8: G.gguf_set_val_i8(ctx, key, G.gguf_get_val_i8(src, i)); break;
    case GGUF_TYPE_UINT16: G.gguf_set_val_u16(ctx, key, G.gguf_get_val_u16(src, i)); break;
    case GGUF_TYPE_INT16: G.gguf_set_val_i16(ctx, key, G.gguf_get_val_i16(src, i)); break;
    case GGUF_TYPE_UINT32: G.gguf_set_val_u32(ctx, key, G.gguf_get_val_u32(src, i)); break;
    case GGUF_TYPE_INT32: G.gguf_set_val_i32(ctx, key, G.gguf_get_val_i32(src, i)); break;
    case GGUF_TYPE_FLOAT32: G.gguf_set_val_f32(ctx, key, G.gguf_get_val_f32(src, i)); break;
    case GGUF_TYPE_BOOL: G.gguf_set_val_bool(ctx, key, G.gguf_get_val_bool(src, i)); break;
    case GGUF_TYPE_STRING: G.gguf_set_val_str(ctx, key, G.gguf_get_val_str(src, i)); break;
    case GGUF_TYPE_UINT64: G.gguf_set_val_u64(ctx, key, G.gguf_get_val_u64(src, i)); break;
    case GGUF_TYPE_INT64: G.gguf_set_val_i64(ctx, key, G.gguf_get_val_i64(src, i)); break;
    case GGUF_TYPE_FLOAT64: G.gguf_set_val_f64(ctx, key, G.gguf_get_val_f64(src, i)); break;
    default: die("key '%s' has type %d", key, t);
    }
}

static void edit_copy(const char *in, const char *out, int n_edits, char **args)
{
    edit *edits = xmalloc((size_t)(n_edits ? n_edits : 1) * sizeof *edits);
    for (int k = 0; k < n_edits; k++)
        edits[k] = parse_edit(args[k]);
    struct gguf_context *src = read_back(in);
    // The keys: IN's in order, edited, then the new ones; written alone
    // and read back, so that ggml takes general.alignment from them (as
    // make_aligned_file does).
    struct gguf_context *keys = G.gguf_init_empty();
    bool *used = xmalloc((size_t)(n_edits ? n_edits : 1));
    const int64_t n_kv = G.gguf_get_n_kv(src);
    for (int64_t i = 0; i < n_kv; i++) {
        const char *key = G.gguf_get_key(src, i);
        const edit *e = NULL;
        for (int k = 0; k < n_edits; k++) {
            if (strcmp(edits[k].key, key) == 0) {
                e = &edits[k];
                used[k] = true;
            }
        }
        if (!e)
            copy_key(keys, src, i);
        else if (!e->del)
            apply_edit(keys, e);
    }
    for (int k = 0; k < n_edits; k++) {
        if (used[k])
            continue;
        if (edits[k].del)
            die("edit-copy: %s has no key '%s' to delete", in, edits[k].key);
        apply_edit(keys, &edits[k]);
    }
    // Copied by hand: gcc with UBSan loses sight of xmalloc never
    // returning NULL, and takes a sprintf here for one into NULL.
    const size_t out_len = strlen(out);
    char *meta = xmalloc(out_len + 6);
    memcpy(meta, out, out_len);
    memcpy(meta + out_len, ".keys", 6);
    if (!G.gguf_write_to_file(keys, meta, true))
        die("%s: gguf_write_to_file failed", meta);
    G.gguf_free(keys);
    struct gguf_context *dst = read_back(meta);
    unlink(meta);
    free(meta);
    // The tensors, as IN describes them, their data from a mapping of IN.
    const int fd = open(in, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        die("%s: %s", in, strerror(errno));
    const uint8_t *map = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (map == MAP_FAILED)
        die("%s: mmap: %s", in, strerror(errno));
    const int64_t n_tensors = G.gguf_get_n_tensors(src);
    const struct ggml_init_params ip = {
        .mem_size = (size_t)(n_tensors + 1) * G.ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context *gctx = G.ggml_init(ip);
    if (!gctx)
        die("ggml_init failed");
    const size_t data_offset = G.gguf_get_data_offset(src);
    for (int64_t i = 0; i < n_tensors; i++) {
        const char *name = G.gguf_get_tensor_name(src, i);
        struct ggml_tensor *t = G.ggml_new_tensor(gctx, G.gguf_get_tensor_type(src, i), 4, G.gguf_get_tensor_ne(src, i));
        if (!t)
            die("ggml_new_tensor failed for %s", name);
        G.ggml_set_name(t, name);
        G.gguf_add_tensor(dst, t);
        G.gguf_set_tensor_data(dst, name, map + data_offset + G.gguf_get_tensor_offset(src, i));
    }
    if (!G.gguf_write_to_file(dst, out, false))
        die("%s: gguf_write_to_file failed", out);
    if (map)
        munmap((void *)map, (size_t)st.st_size);
    close(fd);
    G.ggml_free(gctx);
    G.gguf_free(src);
    G.gguf_free(dst);
    free(used);
    free(edits);
}

/* ==== main ==== */

static int usage(void)
{
    fprintf(stderr,
            "usage: %s LIBGGML_BASE.so make-fixtures OUTDIR\n"
            "       %s LIBGGML_BASE.so dump-metadata FILE.gguf\n"
            "       %s LIBGGML_BASE.so dump-tensors FILE.gguf\n"
            "       %s LIBGGML_BASE.so make-model OUT.gguf [--blocks N] [--embd N] [--ff N]\n"
            "           [--vocab N] [--merges N] [--name TEXT] [--extra-tensors N]\n"
            "           [--types TYPE,...]\n"
            "       %s LIBGGML_BASE.so edit-copy IN.gguf OUT.gguf [del:KEY | TYPE:KEY=VALUE |\n"
            "           arr-TYPE:KEY=@FILE]...\n",
            prog, prog, prog, prog, prog);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[2], "edit-copy") == 0) {
        load_ggml(argv[1]);
        edit_copy(argv[3], argv[4], argc - 5, argv + 5);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[2], "make-model") == 0) {
        model_opts o;
        parse_model_opts(argc - 4, argv + 4, &o);
        load_ggml(argv[1]);
        make_model(argv[3], &o);
        return 0;
    }
    if (argc != 4)
        return usage();
    load_ggml(argv[1]);

    if (strcmp(argv[2], "dump-metadata") == 0 || strcmp(argv[2], "dump-tensors") == 0) {
        struct gguf_context *ctx = read_back(argv[3]);
        if (argv[2][5] == 'm')
            dump_metadata(ctx, stdout);
        else
            dump_tensors(ctx, stdout);
        G.gguf_free(ctx);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
    }
    if (strcmp(argv[2], "make-fixtures") != 0)
        return usage();

    const char *dir = argv[3];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        die("%s: %s", dir, strerror(errno));

    for (size_t i = 0; i < N_TYPES; i++)
        make_type_file(dir, all_types[i].id, all_types[i].name);
    make_aligned_file(dir);
    make_metadata_file(dir);
    return 0;
}
