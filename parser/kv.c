/*
 * Metadata values: validating them in place, reading scalars in the file's
 * byte order, and walking arrays (arrays of arrays included) without
 * recursion, so hostile nesting cannot exhaust the stack.
 */
#include <string.h>

#include "ggp_i.h"

static const char *const vtype_names[GGP_V_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64",
};

const char *ggp_vtype_name(ggp_vtype type)
{
    return (unsigned)type < GGP_V_COUNT ? vtype_names[type] : "?";
}

uint32_t ggp_vtype_size(ggp_vtype type)
{
    switch (type) {
    case GGP_V_U8: case GGP_V_I8: case GGP_V_BOOL: return 1;
    case GGP_V_U16: case GGP_V_I16: return 2;
    case GGP_V_U32: case GGP_V_I32: case GGP_V_F32: return 4;
    case GGP_V_U64: case GGP_V_I64: case GGP_V_F64: return 8;
    default: return 0;
    }
}

/* The fewest bytes one element of the type can take, for early bounds. */
static uint64_t min_elem_size(ggp_vtype type, uint32_t version)
{
    const uint64_t count_size = version == 1 ? 4 : 8;
    if (type == GGP_V_STRING)
        return count_size;
    if (type == GGP_V_ARRAY)
        return 4 + count_size;
    return ggp_vtype_size(type);
}

/* A key's name for an error message, quoted only when there is one: most
 * values are read without an error to report. */
typedef struct quote_buf {
    char text[GGP_QUOTE_SIZE];
} quote_buf;

static const char *quoted(ggp_str key, quote_buf *q)
{
    return ggp_quote_name(key, q->text, sizeof q->text);
}

static bool check_bools(ggp_reader *r, uint64_t n, ggp_str key)
{
    const uint8_t *p = r->base + r->pos;
    for (uint64_t i = 0; i < n; i++) {
        if (p[i] > 1)
            return ggp_fail(r->err, GGP_ERR_BOOL, r->pos + i,
                            "key '%s': bool is %u, not 0 or 1", quoted(key, &(quote_buf){{0}}), p[i]);
    }
    return true;
}

static bool read_elem_type(ggp_reader *r, ggp_vtype *out, ggp_str key)
{
    const uint64_t at = r->pos;
    uint32_t t;
    if (!ggp_read_u32(r, &t, "array element type"))
        return false;
    if (t >= GGP_V_COUNT)
        return ggp_fail(r->err, GGP_ERR_VALUE_TYPE, at,
                        "key '%s': array element type %u is not a GGUF type (0..12)", quoted(key, &(quote_buf){{0}}), t);
    *out = (ggp_vtype)t;
    return true;
}

static bool check_fits(ggp_reader *r, ggp_vtype type, uint64_t count, uint64_t at, ggp_str key)
{
    const uint64_t min = min_elem_size(type, r->version);
    if (count <= ggp_remaining(r) / min)
        return true;
    return ggp_fail(r->err, GGP_ERR_TRUNCATED, at,
                    "key '%s': array of %llu %s needs at least %llu bytes per element, only %llu remain",
                    quoted(key, &(quote_buf){{0}}), (unsigned long long)count, ggp_vtype_name(type),
                    (unsigned long long)min, (unsigned long long)ggp_remaining(r));
}

bool ggp_array_skip(ggp_reader *r, ggp_vtype elem_type, uint64_t count, uint64_t count_offset,
                    ggp_str key)
{
    struct frame {
        ggp_vtype type;
        uint64_t left;
    } stack[GGP_MAX_ARRAY_DEPTH];
    int depth = 0;

    if (!check_fits(r, elem_type, count, count_offset, key))
        return false;
    stack[depth++] = (struct frame){elem_type, count};
    while (depth > 0) {
        struct frame *f = &stack[depth - 1];
        if (f->left == 0) {
            depth--;
            continue;
        }
        const uint32_t size = ggp_vtype_size(f->type);
        if (size != 0) {
            // check_fits already bounded left * size by the bytes remaining.
            if (!ggp_in_memory(r, f->left * size))
                return false;
            if (f->type == GGP_V_BOOL && !check_bools(r, f->left, key))
                return false;
            r->pos += f->left * size;
            f->left = 0;
            continue;
        }
        if (f->type == GGP_V_STRING) {
            // Vocabularies and merge lists are hundreds of thousands of
            // strings: walk their lengths in a tight loop over the bytes in
            // memory, and let ggp_read_str handle (and describe) any string
            // that does not fit in them.
            const uint64_t width = r->version == 1 ? 4 : 8;
            for (; f->left > 0; f->left--) {
                const uint64_t left = r->avail - r->pos;
                const uint64_t len = left < width ? 0
                                     : width == 8 ? ggp_load64(r->base + r->pos, r->big_endian)
                                                  : ggp_load32(r->base + r->pos, r->big_endian);
                if (left < width || len > left - width) {
                    ggp_str s;
                    if (!ggp_read_str(r, &s, "array string"))
                        return false;
                    continue;
                }
                r->pos += width + len;
            }
            continue;
        }
        f->left--;
        const uint64_t at = r->pos;
        ggp_vtype inner = GGP_V_U8; // read_elem_type sets it; gcc -O3 cannot tell
        uint64_t n;
        if (!read_elem_type(r, &inner, key) || !ggp_read_count(r, &n, "array count"))
            return false;
        if (depth == GGP_MAX_ARRAY_DEPTH)
            return ggp_fail(r->err, GGP_ERR_NESTING, at,
                            "key '%s': arrays nested deeper than %d", quoted(key, &(quote_buf){{0}}), GGP_MAX_ARRAY_DEPTH);
        if (!check_fits(r, inner, n, at + 4, key))
            return false;
        stack[depth++] = (struct frame){inner, n};
    }
    return true;
}

/* Reads one value of the given type at r->pos into out. */
static bool read_value(ggp_reader *r, ggp_vtype type, ggp_value *out, ggp_str key)
{
    memset(out, 0, sizeof *out);
    out->type = type;
    const uint32_t size = ggp_vtype_size(type);
    if (size != 0) {
        if (size > ggp_remaining(r))
            return ggp_fail(r->err, GGP_ERR_TRUNCATED, r->pos,
                            "key '%s': %s value needs %u bytes, only %llu remain", quoted(key, &(quote_buf){{0}}),
                            ggp_vtype_name(type), size, (unsigned long long)ggp_remaining(r));
        if (!ggp_in_memory(r, size))
            return false;
        if (type == GGP_V_BOOL && !check_bools(r, 1, key))
            return false;
        out->offset = r->pos;
        out->data = r->base + r->pos;
        out->size = size;
        r->pos += size;
        return true;
    }
    if (type == GGP_V_STRING) {
        ggp_str s;
        if (!ggp_read_str(r, &s, "string value"))
            return false;
        out->data = (const uint8_t *)s.ptr;
        out->offset = r->pos - s.len;
        out->size = s.len;
        out->count = s.len;
        return true;
    }
    if (!read_elem_type(r, &out->elem_type, key))
        return false;
    const uint64_t count_offset = r->pos;
    if (!ggp_read_count(r, &out->count, "array count"))
        return false;
    out->offset = r->pos;
    out->data = r->base + r->pos;
    if (!ggp_array_skip(r, out->elem_type, out->count, count_offset, key))
        return false;
    out->size = r->pos - out->offset;
    return true;
}

bool ggp_read_value(ggp_reader *r, uint64_t type_offset, uint32_t type, ggp_value *out, ggp_str key)
{
    if (type >= GGP_V_COUNT)
        return ggp_fail(r->err, GGP_ERR_VALUE_TYPE, type_offset,
                        "key '%s': value type %u is not a GGUF type (0..12)", quoted(key, &(quote_buf){{0}}), type);
    return read_value(r, (ggp_vtype)type, out, key);
}

/* ==== Accessors ==== */

uint64_t ggp_value_u64(const ggp_file *file, const ggp_value *v)
{
    switch (v->type) {
    case GGP_V_U8: case GGP_V_BOOL: return v->data[0];
    case GGP_V_U16: return ggp_load16(v->data, file->big_endian);
    case GGP_V_U32: return ggp_load32(v->data, file->big_endian);
    case GGP_V_U64: return ggp_load64(v->data, file->big_endian);
    default: return 0;
    }
}

int64_t ggp_value_i64(const ggp_file *file, const ggp_value *v)
{
    switch (v->type) {
    case GGP_V_I8: return (int8_t)v->data[0];
    case GGP_V_I16: return (int16_t)ggp_load16(v->data, file->big_endian);
    case GGP_V_I32: return (int32_t)ggp_load32(v->data, file->big_endian);
    case GGP_V_I64: return (int64_t)ggp_load64(v->data, file->big_endian);
    default: return 0;
    }
}

double ggp_value_f64(const ggp_file *file, const ggp_value *v)
{
    if (v->type == GGP_V_F32) {
        const uint32_t bits = ggp_load32(v->data, file->big_endian);
        float f;
        memcpy(&f, &bits, sizeof f);
        return f;
    }
    if (v->type == GGP_V_F64) {
        const uint64_t bits = ggp_load64(v->data, file->big_endian);
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    return 0;
}

ggp_str ggp_value_str(const ggp_file *file, const ggp_value *v)
{
    (void)file;
    if (v->type != GGP_V_STRING)
        return (ggp_str){"", 0};
    return (ggp_str){(const char *)v->data, v->size};
}

/* ==== Array iteration ==== */

void ggp_array_iter_init(ggp_array_iter *it, const ggp_file *file, const ggp_value *array)
{
    it->file = file;
    it->array = *array;
    it->index = 0;
    it->next = array->data;
}

bool ggp_array_next(ggp_array_iter *it, ggp_value *elem)
{
    if (it->array.type != GGP_V_ARRAY || it->index >= it->array.count)
        return false;
    const ggp_file *f = it->file;
    ggp_reader r = {
        .base = f->base,
        .pos = (uint64_t)(it->next - f->base),
        .end = f->size,
        .avail = f->avail,
        .big_endian = f->big_endian,
        .version = f->version,
        .err = NULL,
    };
    // The file was validated at open, so this read cannot fail; the check
    // only keeps a broken invariant from walking off the mapping.
    if (!read_value(&r, it->array.elem_type, elem, (ggp_str){"array element", 13}))
        return false;
    it->next = f->base + r.pos;
    it->index++;
    return true;
}
