/*
 * conformance: measures the parser against what the real ggml wrote and read.
 *
 *   conformance [--ref REFDIR] [--version N] [--byte-order little|big] [--scalar] DIR
 *
 * For every X.gguf in DIR (the fixtures of tests/conformance/ggml_ref.c, or
 * variants of them made by scripts/tools/gguf-variant), with the expected
 * files taken from REFDIR (default DIR):
 *
 *   X.tensors   tensor count, kv count, alignment, and per tensor the name,
 *               type id, ne, n_dims, byte size and data offset (absolute; for
 *               variants, whose header differs in size, relative to the data
 *               section) equal what ggml's gguf_get_* reported.
 *   X.ref       ggp_tensor_read_f32 of each whole tensor equals ggml's
 *               to_float bit for bit, and so do a few hundred sub-ranges per
 *               file (fixed seed): single elements, the last element, ranges
 *               starting and ending mid-block, crossing a block boundary,
 *               whole rows, tails. Writes outside [dst, dst + count) are
 *               caught by canaries. Out-of-range requests fail with
 *               GGP_ERR_RANGE. In a big-endian file, types the byte-order
 *               converter does not handle must have no f32 view
 *               (ggp_tensor_f32_unavailable != NULL, GGP_ERR_UNSUPPORTED).
 *   X.expected  the metadata rendered from ggp_kv_at / ggp_value_* /
 *               ggp_array_next in the format documented in ggml_ref.c equals
 *               ggml's dump line for line.
 *
 * --version and --byte-order check the header of every file in DIR.
 * --scalar reads with the scalar dequantizers (ggp_file_set_simd(false)),
 * which are otherwise replaced by the SIMD ones wherever the CPU has them.
 * Prints one summary line; exits 0 when everything matched, 1 otherwise
 * (each mismatch printed with file, object, index, expected and got), 2 on
 * bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ggp.h"

/* A failed check prints where and why and makes the check return 0. */
#define EXPECT(cond, ...)                                                     \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                   \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
            return 0;                                                         \
        }                                                                     \
    } while (0)

#define RANGES_PER_TENSOR 64

typedef struct options {
    const char *dir;
    const char *ref_dir;
    bool variant;         // REFDIR differs: offsets compare relative
    long version;         // 0: not checked
    int byte_order;       // -1: not checked
    bool scalar;          // force the scalar dequantizers
} options;

static struct {
    uint64_t files, tensors, elements, ranges, unavailable, keys;
} stats;

/* ==== Small helpers ==== */

static uint64_t rng_next(uint64_t *s) // splitmix64
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *s, uint64_t n) // [0, n), n > 0
{
    return rng_next(s) % n;
}

static uint64_t seed_of(const char *name)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * UINT64_C(0x100000001b3);
    return h;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static char *path_join(const char *dir, const char *base, const char *ext)
{
    const size_t n = strlen(dir) + strlen(base) + strlen(ext) + 2;
    char *p = malloc(n);
    if (!p) {
        fprintf(stderr, "conformance: out of memory\n");
        exit(1);
    }
    snprintf(p, n, "%s/%s%s", dir, base, ext);
    return p;
}

/* The whole file, malloc()ed with a NUL after it; NULL if it does not exist. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    if (!buf || ferror(f)) {
        fprintf(stderr, "conformance: %s: read failed\n", path);
        exit(1);
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int ggml_n_dims(const int64_t ne[4])
{
    for (int i = 3; i >= 1; i--)
        if (ne[i] > 1)
            return i + 1;
    return 1;
}

/* Types the byte-order converter rewrites, so that a big-endian file has an
 * f32 view of them (SPEC "Input the program accepts"). */
static bool big_endian_convertible(uint32_t type_id)
{
    switch (type_id) {
    case GGP_TYPE_F32: case GGP_TYPE_F16: case GGP_TYPE_BF16: case GGP_TYPE_F64:
    case GGP_TYPE_I8: case GGP_TYPE_I16: case GGP_TYPE_I32: case GGP_TYPE_I64:
    case GGP_TYPE_Q4_0: case GGP_TYPE_Q8_0: case GGP_TYPE_Q4_K: case GGP_TYPE_Q6_K:
    case GGP_TYPE_MXFP4:
        return true;
    default:
        return false;
    }
}

/* ==== Header and tensor info (X.tensors) ==== */

typedef struct expected_header {
    uint64_t version, alignment, kv_count, tensor_count, data_offset;
} expected_header;

static int check_header_fields(const char *file, const ggp_file *gf, const options *opt)
{
    if (opt->version)
        EXPECT(ggp_version(gf) == (uint32_t)opt->version, "%s: version %" PRIu32 ", expected %ld",
               file, ggp_version(gf), opt->version);
    if (opt->byte_order >= 0)
        EXPECT((int)ggp_byte_order_of(gf) == opt->byte_order, "%s: byte order %s, expected %s", file,
               ggp_byte_order_of(gf) == GGP_BIG ? "big" : "little",
               opt->byte_order == GGP_BIG ? "big" : "little");
    return 1;
}

static int check_tensor_info(const char *file, const ggp_file *gf, const char *text,
                             const options *opt, const char *type_name)
{
    expected_header h = {0};
    uint64_t index = 0;
    const char *line = text;
    int lineno = 0;

    while (*line) {
        const char *eol = strchr(line, '\n');
        EXPECT(eol, "%s.tensors: line %d has no newline", file, lineno + 1);
        lineno++;
        char buf[512];
        const size_t len = (size_t)(eol - line);
        EXPECT(len < sizeof buf, "%s.tensors: line %d too long", file, lineno);
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = eol + 1;

        if (buf[0] == '#') {
            char field[32];
            uint64_t value;
            EXPECT(sscanf(buf, "#%31[a-z_]\t%" SCNu64, field, &value) == 2,
                   "%s.tensors: line %d: bad header line", file, lineno);
            if (strcmp(field, "version") == 0) h.version = value;
            else if (strcmp(field, "alignment") == 0) h.alignment = value;
            else if (strcmp(field, "kv_count") == 0) h.kv_count = value;
            else if (strcmp(field, "tensor_count") == 0) h.tensor_count = value;
            else if (strcmp(field, "data_offset") == 0) h.data_offset = value;
            if (strcmp(field, "data_offset") == 0) {
                // the header is complete: compare it
                if (!opt->variant)
                    EXPECT(ggp_version(gf) == h.version, "%s: version %" PRIu32 ", ggml %" PRIu64,
                           file, ggp_version(gf), h.version);
                EXPECT(ggp_alignment(gf) == h.alignment, "%s: alignment %" PRIu32 ", ggml %" PRIu64,
                       file, ggp_alignment(gf), h.alignment);
                EXPECT(ggp_kv_count(gf) == h.kv_count, "%s: kv_count %" PRIu64 ", ggml %" PRIu64,
                       file, ggp_kv_count(gf), h.kv_count);
                EXPECT(ggp_tensor_count(gf) == h.tensor_count,
                       "%s: tensor_count %" PRIu64 ", ggml %" PRIu64, file, ggp_tensor_count(gf),
                       h.tensor_count);
                // ggml leaves data_offset unpadded when there are no tensors
                if (!opt->variant && h.tensor_count > 0)
                    EXPECT(ggp_data_offset(gf) == h.data_offset,
                           "%s: data_offset %" PRIu64 ", ggml %" PRIu64, file,
                           ggp_data_offset(gf), h.data_offset);
                if (h.tensor_count > 0)
                    EXPECT(ggp_data_offset(gf) % ggp_alignment(gf) == 0,
                           "%s: data_offset %" PRIu64 " not aligned to %" PRIu32, file,
                           ggp_data_offset(gf), ggp_alignment(gf));
            }
            continue;
        }

        char name[128];
        uint32_t type_id;
        int64_t ne[4];
        uint64_t abs_offset, bytes;
        EXPECT(sscanf(buf, "%127[^\t]\t%" SCNu32 "\t%" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
                           "\t%" SCNu64 "\t%" SCNu64,
                      name, &type_id, &ne[0], &ne[1], &ne[2], &ne[3], &abs_offset, &bytes) == 8,
               "%s.tensors: line %d: bad tensor line", file, lineno);
        EXPECT(index < ggp_tensor_count(gf), "%s: ggml has more tensors than %" PRIu64, file,
               ggp_tensor_count(gf));
        const ggp_tensor *t = ggp_tensor_at(gf, index);
        EXPECT(t, "%s: ggp_tensor_at(%" PRIu64 ") is NULL", file, index);
        EXPECT(t->name.len == strlen(name) && memcmp(t->name.ptr, name, t->name.len) == 0,
               "%s: tensor %" PRIu64 " is named '%.*s', ggml '%s'", file, index,
               (int)t->name.len, t->name.ptr, name);
        EXPECT(ggp_tensor_find(gf, name, strlen(name)) == t, "%s: ggp_tensor_find('%s') is not tensor %"
               PRIu64, file, name, index);
        EXPECT(t->type_id == type_id, "%s: tensor '%s' type %" PRIu32 ", ggml %" PRIu32, file, name,
               t->type_id, type_id);
        const ggp_type_info *ti = ggp_type_lookup(type_id);
        EXPECT(t->type && ti && strcmp(t->type->name, ti->name) == 0 &&
               t->type->block_elems == ti->block_elems && t->type->block_bytes == ti->block_bytes,
               "%s: tensor '%s': type %" PRIu32 " has no description, or two", file, name, type_id);
        if (type_name)
            EXPECT(strcmp(t->type->name, type_name) == 0, "%s: type %" PRIu32 " is called '%s', ggml '%s'",
                   file, type_id, t->type->name, type_name);
        for (int d = 0; d < 4; d++)
            EXPECT(t->ne[d] == ne[d], "%s: tensor '%s' ne[%d] = %" PRId64 ", ggml %" PRId64, file,
                   name, d, t->ne[d], ne[d]);
        EXPECT(t->n_dims == (uint32_t)ggml_n_dims(ne), "%s: tensor '%s' n_dims %" PRIu32
               ", ggml wrote %d", file, name, t->n_dims, ggml_n_dims(ne));
        EXPECT(t->elements == (uint64_t)(ne[0] * ne[1] * ne[2] * ne[3]),
               "%s: tensor '%s' has %" PRIu64 " elements", file, name, t->elements);
        EXPECT(t->bytes == bytes, "%s: tensor '%s' bytes %" PRIu64 ", ggml %" PRIu64, file, name,
               t->bytes, bytes);
        EXPECT(t->bytes == t->elements / t->type->block_elems * t->type->block_bytes,
               "%s: tensor '%s' bytes %" PRIu64 " disagree with its type", file, name, t->bytes);
        if (opt->variant)
            EXPECT(t->offset - ggp_data_offset(gf) == abs_offset - h.data_offset,
                   "%s: tensor '%s' at data + %" PRIu64 ", ggml data + %" PRIu64, file, name,
                   t->offset - ggp_data_offset(gf), abs_offset - h.data_offset);
        else
            EXPECT(t->offset == abs_offset, "%s: tensor '%s' offset %" PRIu64 ", ggml %" PRIu64, file,
                   name, t->offset, abs_offset);
        EXPECT(t->data == ggp_file_bytes(gf) + t->offset, "%s: tensor '%s' data pointer is not at its"
               " offset", file, name);
        EXPECT(t->offset + t->bytes <= ggp_file_size(gf), "%s: tensor '%s' ends past the file", file,
               name);
        index++;
    }
    EXPECT(index == ggp_tensor_count(gf), "%s: ggml lists %" PRIu64 " tensors, we have %" PRIu64,
           file, index, ggp_tensor_count(gf));
    return 1;
}

/* ==== Tensor data (X.ref) ==== */

/* Reads [first, first + count) of t into a canaried buffer and compares it
 * with ref (the reference of the whole tensor). */
static int check_range(const char *file, const ggp_file *gf, const ggp_tensor *t,
                       const float *ref, uint64_t first, uint64_t count, float *buf)
{
    const uint32_t canary = 0x7fbadbadu; // a signalling NaN no dequantizer produces
    memcpy(&buf[0], &canary, 4);
    memcpy(&buf[count + 1], &canary, 4);
    memcpy(&buf[count + 2], &canary, 4);
    const ggp_err e = ggp_tensor_read_f32(gf, t, first, count, buf + 1);
    EXPECT(e == GGP_OK, "%s: tensor '%.*s' [%" PRIu64 ", +%" PRIu64 "): ggp_tensor_read_f32 failed: %s",
           file, (int)t->name.len, t->name.ptr, first, count, ggp_strerror(e));
    EXPECT(memcmp(&buf[0], &canary, 4) == 0 && memcmp(&buf[count + 1], &canary, 4) == 0 &&
           memcmp(&buf[count + 2], &canary, 4) == 0,
           "%s: tensor '%.*s' [%" PRIu64 ", +%" PRIu64 "): wrote outside the destination", file,
           (int)t->name.len, t->name.ptr, first, count);
    if (memcmp(buf + 1, ref + first, count * sizeof(float)) == 0)
        return 1;
    uint64_t bad = 0, first_bad = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (f32_bits(buf[1 + i]) != f32_bits(ref[first + i])) {
            if (bad++ == 0)
                first_bad = i;
        }
    }
    EXPECT(bad == 0, "%s: tensor '%.*s' (%s) [%" PRIu64 ", +%" PRIu64 "): element %" PRIu64
           " expected %08" PRIx32 " (%g) got %08" PRIx32 " (%g); %" PRIu64 " of %" PRIu64
           " elements differ",
           file, (int)t->name.len, t->name.ptr, t->type->name, first, count, first + first_bad,
           f32_bits(ref[first + first_bad]), (double)ref[first + first_bad],
           f32_bits(buf[1 + first_bad]), (double)buf[1 + first_bad], bad, count);
    return 1;
}

/* Requests that leave the tensor fail with GGP_ERR_RANGE. */
static int check_out_of_range(const char *file, const ggp_file *gf, const ggp_tensor *t)
{
    float dst[2];
    const uint64_t n = t->elements;
    const struct { uint64_t first, count; } bad[] = {
        {n, 1}, {n - 1, 2}, {0, n + 1}, {UINT64_MAX, 2}, {1, UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const ggp_err e = ggp_tensor_read_f32(gf, t, bad[i].first, bad[i].count, dst);
        EXPECT(e == GGP_ERR_RANGE, "%s: tensor '%.*s' [%" PRIu64 ", +%" PRIu64 ") of %" PRIu64
               " elements: %s, expected GGP_ERR_RANGE", file, (int)t->name.len, t->name.ptr,
               bad[i].first, bad[i].count, n, ggp_strerror(e));
    }
    return 1;
}

/* One random range of a kind chosen by k, inside [0, n). */
static void pick_range(uint64_t *s, int k, uint64_t n, uint64_t blk, uint64_t ne0,
                       uint64_t *first, uint64_t *count)
{
    uint64_t a, c;
    switch (k % 8) {
    case 0: // a single element
        a = rng_below(s, n);
        c = 1;
        break;
    case 1: // the last element, or the last few
        c = 1 + (k % 16 == 1 ? 0 : rng_below(s, n < 3 ? n : 3));
        a = n - c;
        break;
    case 2: // starts and ends mid-block
        a = rng_below(s, n);
        c = 1 + rng_below(s, n - a);
        if (c > 3 * blk + 5)
            c = 1 + rng_below(s, 3 * blk + 5);
        break;
    case 3: // block-aligned start, any length
        a = rng_below(s, n / blk) * blk;
        c = 1 + rng_below(s, n - a);
        break;
    case 4: // a tail
        a = rng_below(s, n);
        c = n - a;
        break;
    case 5: // a head
        a = 0;
        c = 1 + rng_below(s, n < blk + 2 ? n : blk + 2);
        break;
    case 6: // across a block boundary
        if (n / blk >= 2) {
            const uint64_t boundary = (1 + rng_below(s, n / blk - 1)) * blk;
            a = boundary - 1 - rng_below(s, blk);
            c = boundary - a + 1 + rng_below(s, blk);
            if (a + c > n)
                c = n - a;
        } else {
            a = 0;
            c = n;
        }
        break;
    default: // one whole row
        a = rng_below(s, n / ne0) * ne0;
        c = ne0;
        break;
    }
    *first = a;
    *count = c;
}

static int check_tensor_data(const char *file, const ggp_file *gf, const char *ref_bytes,
                             size_t ref_len)
{
    const bool big = ggp_byte_order_of(gf) == GGP_BIG;
    const char *slash = strrchr(file, '/');
    uint64_t seed = seed_of(slash ? slash + 1 : file), pos = 0; // same ranges in every variant
    int ok = 1;

    for (uint64_t i = 0; i < ggp_tensor_count(gf); i++) {
        const ggp_tensor *t = ggp_tensor_at(gf, i);
        const uint64_t n = t->elements;
        EXPECT(pos + n * 4 <= ref_len, "%s.ref: shorter than the tensors (%zu bytes)", file,
               ref_len);
        float *ref = malloc(n * sizeof *ref + 1);
        float *buf = malloc((n + 3) * sizeof *buf);
        EXPECT(ref && buf, "out of memory");
        for (uint64_t j = 0; j < n; j++) { // the .ref is little-endian
            const uint8_t *p = (const uint8_t *)ref_bytes + pos + 4 * j;
            const uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                               (uint32_t)p[3] << 24;
            memcpy(&ref[j], &u, 4);
        }
        pos += n * 4;
        stats.tensors++;

        const char *why = ggp_tensor_f32_unavailable(gf, t);
        if (big && !big_endian_convertible(t->type_id)) {
            const ggp_err e = ggp_tensor_read_f32(gf, t, 0, 1, buf);
            if (!why || e != GGP_ERR_UNSUPPORTED) {
                fprintf(stderr, "%s:%d: %s: tensor '%.*s' (%s) in a big-endian file must have no f32"
                        " view: unavailable=%s, read_f32=%s\n", __FILE__, __LINE__, file,
                        (int)t->name.len, t->name.ptr, t->type->name, why ? why : "NULL",
                        ggp_strerror(e));
                ok = 0;
            }
            stats.unavailable++;
            free(ref);
            free(buf);
            continue;
        }
        if (why) {
            fprintf(stderr, "%s:%d: %s: tensor '%.*s' (%s) has no f32 view: %s\n", __FILE__,
                    __LINE__, file, (int)t->name.len, t->name.ptr, t->type->name, why);
            ok = 0;
            free(ref);
            free(buf);
            continue;
        }

        int tensor_ok = check_range(file, gf, t, ref, 0, n, buf);
        stats.elements += n;
        const uint64_t blk = t->type->block_elems, ne0 = (uint64_t)t->ne[0];
        for (int k = 0; tensor_ok && k < RANGES_PER_TENSOR; k++) {
            uint64_t first, count;
            pick_range(&seed, k, n, blk, ne0, &first, &count);
            tensor_ok = check_range(file, gf, t, ref, first, count, buf);
            stats.ranges++;
        }
        if (tensor_ok) { // empty reads at both ends are not errors
            tensor_ok = ggp_tensor_read_f32(gf, t, 0, 0, buf) == GGP_OK &&
                        ggp_tensor_read_f32(gf, t, n, 0, buf) == GGP_OK;
            if (!tensor_ok)
                fprintf(stderr, "%s:%d: %s: tensor '%.*s': reading 0 elements failed\n", __FILE__,
                        __LINE__, file, (int)t->name.len, t->name.ptr);
        }
        if (tensor_ok)
            tensor_ok = check_out_of_range(file, gf, t);
        ok &= tensor_ok;
        free(ref);
        free(buf);
    }
    EXPECT(pos == ref_len, "%s.ref: %zu bytes, the tensors have %" PRIu64, file, ref_len, pos);
    return ok;
}

/* ==== Metadata (X.expected) ==== */

/* A growable text buffer. */
typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (t->len + n + 1 > cap)
            cap *= 2;
        char *b = realloc(t->buf, cap);
        if (!b) {
            fprintf(stderr, "conformance: out of memory\n");
            exit(1);
        }
        t->buf = b;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static void putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(text *t, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(t, tmp, (size_t)n);
}

static void put_hex(text *t, const char *s, uint64_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (uint64_t i = 0; i < len; i++) {
        const char h[2] = {digits[(uint8_t)s[i] >> 4], digits[(uint8_t)s[i] & 15]};
        put(t, h, 2);
    }
}

static const char *type_name(ggp_vtype t)
{
    static const char *const names[GGP_V_COUNT] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64",
    };
    return (unsigned)t < GGP_V_COUNT ? names[t] : "?";
}

/* The value's raw bits in host order, from its bytes in the file's order. */
static uint64_t raw_bits(const ggp_file *gf, const ggp_value *v, unsigned size)
{
    uint64_t u = 0;
    for (unsigned i = 0; i < size; i++) {
        const unsigned shift = ggp_byte_order_of(gf) == GGP_BIG ? 8 * (size - 1 - i) : 8 * i;
        u |= (uint64_t)v->data[i] << shift;
    }
    return u;
}

/* Renders one value. f32/f64 bits come from the value's bytes (the f64
 * accessor cannot carry a signalling f32 NaN), and the accessor must agree. */
static int render_value(const ggp_file *gf, const ggp_value *v, text *out, int depth)
{
    switch (v->type) {
    case GGP_V_U8: case GGP_V_U16: case GGP_V_U32: case GGP_V_U64:
        putf(out, "%" PRIu64, ggp_value_u64(gf, v));
        return 1;
    case GGP_V_I8: case GGP_V_I16: case GGP_V_I32: case GGP_V_I64:
        putf(out, "%" PRId64, ggp_value_i64(gf, v));
        return 1;
    case GGP_V_BOOL:
        putf(out, "%" PRIu64, ggp_value_u64(gf, v));
        return 1;
    case GGP_V_F32: {
        const uint32_t bits = (uint32_t)raw_bits(gf, v, 4);
        float f;
        memcpy(&f, &bits, 4);
        const double d = ggp_value_f64(gf, v);
        EXPECT(f != f ? d != d : f32_bits((float)d) == bits,
               "ggp_value_f64 of f32 %08" PRIx32 " is %g", bits, d);
        putf(out, "%08" PRIx32, bits);
        return 1;
    }
    case GGP_V_F64: {
        const uint64_t bits = raw_bits(gf, v, 8);
        const double d = ggp_value_f64(gf, v);
        uint64_t got;
        memcpy(&got, &d, 8);
        EXPECT(got == bits || (d != d && (bits & UINT64_C(0x7ff0000000000000)) ==
                                             UINT64_C(0x7ff0000000000000)),
               "ggp_value_f64 of f64 %016" PRIx64 " is %016" PRIx64, bits, got);
        putf(out, "%016" PRIx64, bits);
        return 1;
    }
    case GGP_V_STRING: {
        const ggp_str s = ggp_value_str(gf, v);
        put_hex(out, s.ptr, s.len);
        return 1;
    }
    case GGP_V_ARRAY: {
        ggp_array_iter it;
        ggp_value elem;
        uint64_t n = 0;
        if (depth > 0)
            put(out, "[", 1);
        putf(out, "%" PRIu64 ":", v->count);
        ggp_array_iter_init(&it, gf, v);
        while (ggp_array_next(&it, &elem)) {
            EXPECT(elem.type == v->elem_type, "array element %" PRIu64 " has type %s, the array %s",
                   n, type_name(elem.type), type_name(v->elem_type));
            if (n++)
                put(out, ",", 1);
            if (!render_value(gf, &elem, out, depth + 1))
                return 0;
        }
        EXPECT(n == v->count, "array of %" PRIu64 " elements iterates %" PRIu64, v->count, n);
        if (depth > 0)
            put(out, "]", 1);
        return 1;
    }
    default:
        EXPECT(0, "value type %d", (int)v->type);
    }
    return 0;
}

static int render_metadata(const char *file, const ggp_file *gf, text *out)
{
    for (uint64_t i = 0; i < ggp_kv_count(gf); i++) {
        const ggp_kv *kv = ggp_kv_at(gf, i);
        EXPECT(kv, "%s: ggp_kv_at(%" PRIu64 ") is NULL", file, i);
        EXPECT(ggp_kv_find(gf, kv->key.ptr, kv->key.len) == kv,
               "%s: ggp_kv_find('%.*s') is not key %" PRIu64, file, (int)kv->key.len, kv->key.ptr, i);
        put_hex(out, kv->key.ptr, kv->key.len);
        if (kv->value.type == GGP_V_ARRAY)
            putf(out, "\tarr[%s]\t", type_name(kv->value.elem_type));
        else
            putf(out, "\t%s\t", type_name(kv->value.type));
        EXPECT(render_value(gf, &kv->value, out, 0), "%s: key '%.*s' (above)", file,
               (int)kv->key.len, kv->key.ptr);
        put(out, "\n", 1);
        stats.keys++;
    }
    return 1;
}

static int check_metadata(const char *file, const ggp_file *gf, const char *expected)
{
    text got = {0};
    int ok = render_metadata(file, gf, &got);
    const char *e = expected, *g = got.buf ? got.buf : "";
    for (int lineno = 1; ok && (*e || *g); lineno++) {
        const char *ee = strchr(e, '\n'), *ge = strchr(g, '\n');
        const size_t el = ee ? (size_t)(ee - e) : strlen(e);
        const size_t gl = ge ? (size_t)(ge - g) : strlen(g);
        if (el != gl || memcmp(e, g, el) != 0) {
            size_t col = 0;
            while (col < el && col < gl && e[col] == g[col])
                col++;
            const size_t from = col > 40 ? col - 40 : 0;
            fprintf(stderr, "%s:%d: %s: metadata line %d differs at column %zu\n"
                    "  expected: %.*s%s\n  got:      %.*s%s\n", __FILE__, __LINE__, file, lineno,
                    col + 1, (int)((el - from) > 160 ? 160 : el - from), e + from,
                    el - from > 160 ? "..." : "", (int)((gl - from) > 160 ? 160 : gl - from),
                    g + from, gl - from > 160 ? "..." : "");
            ok = 0;
        }
        e += el + (ee ? 1 : 0);
        g += gl + (ge ? 1 : 0);
    }
    free(got.buf);
    return ok;
}

/* ==== Driver ==== */

static int check_file(const options *opt, const char *name)
{
    const size_t nlen = strlen(name);
    char base[256];
    snprintf(base, sizeof base, "%.*s", (int)(nlen - 5), name);
    char *path = path_join(opt->dir, base, ".gguf");
    char *tensors_path = path_join(opt->ref_dir, base, ".tensors");
    char *ref_path = path_join(opt->ref_dir, base, ".ref");
    char *expected_path = path_join(opt->ref_dir, base, ".expected");
    size_t tensors_len = 0, ref_len = 0, expected_len = 0;
    char *tensors_text = slurp(tensors_path, &tensors_len);
    char *ref = slurp(ref_path, &ref_len);
    char *expected = slurp(expected_path, &expected_len);
    const char *type_name = strncmp(base, "type-", 5) == 0 ? base + 5 : NULL;
    int ok = 1;

    ggp_error err;
    memset(&err, 0, sizeof err);
    ggp_file *gf = ggp_open(path, &err);
    if (!gf) {
        fprintf(stderr, "%s:%d: %s: ggp_open failed: offset %" PRIu64 ": %s (%s)\n", __FILE__,
                __LINE__, path, err.offset, err.msg, ggp_strerror(err.code));
        ok = 0;
    } else {
        stats.files++;
        if (opt->scalar)
            ggp_file_set_simd(gf, false);
        ok &= check_header_fields(path, gf, opt);
        if (tensors_text)
            ok &= check_tensor_info(path, gf, tensors_text, opt, type_name);
        if (ref && ok)
            ok &= check_tensor_data(path, gf, ref, ref_len);
        if (expected)
            ok &= check_metadata(path, gf, expected);
        if (!tensors_text && !ref && !expected) {
            fprintf(stderr, "%s: no %s.tensors, .ref or .expected in %s\n", path, base, opt->ref_dir);
            ok = 0;
        }
        ggp_close(gf);
    }
    free(path);
    free(tensors_path);
    free(ref_path);
    free(expected_path);
    free(tensors_text);
    free(ref);
    free(expected);
    return ok;
}

static int is_gguf(const struct dirent *d)
{
    const size_t n = strlen(d->d_name);
    return n > 5 && strcmp(d->d_name + n - 5, ".gguf") == 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: conformance [--ref REFDIR] [--version N] [--byte-order little|big] "
                    "[--scalar] DIR\n");
    return 2;
}

int main(int argc, char **argv)
{
    options opt = {.dir = NULL, .ref_dir = NULL, .variant = false, .version = 0, .byte_order = -1,
                   .scalar = false};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ref") == 0 && i + 1 < argc) {
            opt.ref_dir = argv[++i];
        } else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc) {
            opt.version = strtol(argv[++i], NULL, 10);
            if (opt.version < 1 || opt.version > 3)
                return usage();
        } else if (strcmp(argv[i], "--byte-order") == 0 && i + 1 < argc) {
            const char *o = argv[++i];
            if (strcmp(o, "little") == 0)
                opt.byte_order = GGP_LITTLE;
            else if (strcmp(o, "big") == 0)
                opt.byte_order = GGP_BIG;
            else
                return usage();
        } else if (strcmp(argv[i], "--scalar") == 0) {
            opt.scalar = true;
        } else if (argv[i][0] != '-' && !opt.dir) {
            opt.dir = argv[i];
        } else {
            return usage();
        }
    }
    if (!opt.dir)
        return usage();
    if (!opt.ref_dir) {
        opt.ref_dir = opt.dir;
    } else {
        struct stat a, b;
        opt.variant = stat(opt.dir, &a) != 0 || stat(opt.ref_dir, &b) != 0 ||
                      a.st_dev != b.st_dev || a.st_ino != b.st_ino;
    }

    struct dirent **names;
    const int n = scandir(opt.dir, &names, is_gguf, alphasort);
    if (n < 0) {
        fprintf(stderr, "conformance: %s: %s\n", opt.dir, strerror(errno));
        return 1;
    }
    int ok = n > 0;
    if (n == 0)
        fprintf(stderr, "conformance: %s: no .gguf files\n", opt.dir);
    int failed = 0;
    for (int i = 0; i < n; i++) {
        if (!check_file(&opt, names[i]->d_name)) {
            ok = 0;
            failed++;
        }
        free(names[i]);
    }
    free(names);

    printf("conformance: %s%s: %" PRIu64 " files, %" PRIu64 " tensors, %" PRIu64
           " elements, %" PRIu64 " ranges, %" PRIu64 " without f32 view, %" PRIu64 " keys: %s",
           opt.dir, opt.scalar ? " (scalar)" : "", stats.files, stats.tensors, stats.elements,
           stats.ranges, stats.unavailable, stats.keys, ok ? "ok\n" : "");
    if (!ok)
        printf("FAILED (%d of %d files)\n", failed, n);
    return ok ? 0 : 1;
}
