/*
 * Building a GGUF header from runs of bytes (see header.h).
 */
#include <string.h>

#include "model/header.h"

/* A count or length field: u32 in version 1, u64 after. */
static uint64_t count_width(const ggp_file *f)
{
    return ggp_version(f) == 1 ? 4 : 8;
}

typedef struct writer {
    uint8_t *out;
    bool big_endian;
} writer;

static void put_bytes(writer *w, const void *bytes, uint64_t n)
{
    if (n)
        memcpy(w->out, bytes, n);
    w->out += n;
}

static void put_uint(writer *w, uint64_t v, uint64_t width)
{
    for (uint64_t i = 0; i < width; i++) {
        const uint64_t shift = 8 * (w->big_endian ? width - 1 - i : i);
        *w->out++ = (uint8_t)(v >> shift);
    }
}

uint64_t ggfs_header_len(const ggfs_header_plan *plan)
{
    uint64_t len = 4 + 4 + 2 * count_width(plan->format);
    for (uint64_t i = 0; i < plan->n_kv; i++)
        len += plan->kvs[i].len;
    for (uint64_t i = 0; i < plan->n_tensors; i++) {
        ggfs_run d;
        uint64_t at;
        plan->tensor(plan->ctx, i, &d, &at);
        len += d.len + 8;
    }
    return len;
}

void ggfs_header_write(const ggfs_header_plan *plan, uint8_t *out)
{
    const ggp_file *f = plan->format;
    writer w = {out, ggp_byte_order_of(f) == GGP_BIG};
    put_bytes(&w, ggp_file_bytes(f), 8); // magic and version, as shard 1 stores them
    put_uint(&w, plan->n_tensors, count_width(f));
    put_uint(&w, plan->n_kv, count_width(f));
    for (uint64_t i = 0; i < plan->n_kv; i++)
        put_bytes(&w, plan->kvs[i].bytes, plan->kvs[i].len);
    for (uint64_t i = 0; i < plan->n_tensors; i++) {
        ggfs_run d;
        uint64_t at;
        plan->tensor(plan->ctx, i, &d, &at);
        put_bytes(&w, d.bytes, d.len);
        put_uint(&w, at, 8);
    }
}

static void file_tensor(const void *ctx, uint64_t i, ggfs_run *descriptor, uint64_t *data_at)
{
    const ggp_file *f = ctx;
    const ggp_tensor *t = ggp_tensor_at(f, i);
    *descriptor = ggfs_descriptor_run(f, t);
    *data_at = t->offset - ggp_data_offset(f);
}

void ggfs_header_plan_file(ggfs_header_plan *plan, const ggp_file *file, const ggfs_run *kvs, uint64_t n_kv)
{
    *plan = (ggfs_header_plan){file, kvs, n_kv, ggp_tensor_count(file), file_tensor, file};
}

ggfs_run ggfs_kv_run(const ggp_file *file, const ggp_kv *kv)
{
    const uint64_t end = kv->value.offset + kv->value.size;
    return (ggfs_run){ggp_file_bytes(file) + kv->offset, end - kv->offset};
}

ggfs_run ggfs_value_run(const ggp_file *file, const ggp_kv *kv)
{
    const uint64_t start = kv->offset + count_width(file) + kv->key.len + 4;
    const uint64_t end = kv->value.offset + kv->value.size;
    return (ggfs_run){ggp_file_bytes(file) + start, end - start};
}

ggfs_run ggfs_descriptor_run(const ggp_file *file, const ggp_tensor *t)
{
    return (ggfs_run){ggp_file_bytes(file) + t->info_offset, t->data_field_offset - t->info_offset};
}

uint64_t ggfs_kv_encoded_len(const ggp_file *format, uint64_t name_len, uint64_t value_len)
{
    return count_width(format) + name_len + 4 + value_len;
}

uint64_t ggfs_kv_encode(const ggp_file *format, const char *name, uint64_t name_len, ggp_vtype type,
                        const uint8_t *value, uint64_t value_len, uint8_t *out)
{
    writer w = {out, ggp_byte_order_of(format) == GGP_BIG};
    put_uint(&w, name_len, count_width(format));
    put_bytes(&w, name, name_len);
    put_uint(&w, (uint64_t)type, 4);
    put_bytes(&w, value, value_len);
    return (uint64_t)(w.out - out);
}
