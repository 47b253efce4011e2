/*
 * A small GGUF writer for the model layer's unit tests: a header laid out
 * by hand, field by field, in any version (1: 32-bit counts, lengths and
 * dimensions) and byte order, then padding and tensor data, in a growing
 * buffer the test writes to a file (tmptree.h) or opens from memory.
 * Independent of fs/model/header.c, which the tests check against it.
 */
#ifndef GGFS_TEST_GGUF_WRITER_H
#define GGFS_TEST_GGUF_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct gguf_writer {
    uint8_t *b;
    size_t n, cap;
    uint32_t version;
    bool big;               // big-endian numbers
} gguf_writer;

enum { GW_U8 = 0, GW_U16 = 2, GW_U32 = 4, GW_I32 = 5, GW_F32 = 6, GW_BOOL = 7, GW_STR = 8, GW_ARR = 9, GW_U64 = 10 };
enum { GW_TENSOR_F32 = 0, GW_TENSOR_F16 = 1 };

static inline void gw_bytes(gguf_writer *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->n + n)
            cap *= 2;
        uint8_t *grown = realloc(w->b, cap);
        if (!grown)
            abort();
        w->b = grown;
        w->cap = cap;
    }
    if (n)
        memcpy(w->b + w->n, p, n);
    w->n += n;
}

static inline void gw_uint(gguf_writer *w, uint64_t v, unsigned width)
{
    for (unsigned i = 0; i < width; i++) {
        const uint8_t byte = (uint8_t)(v >> (8 * (w->big ? width - 1 - i : i)));
        gw_bytes(w, &byte, 1);
    }
}

/* A count or length field: u32 in version 1, u64 after. */
static inline void gw_count(gguf_writer *w, uint64_t v)
{
    gw_uint(w, v, w->version == 1 ? 4 : 8);
}

static inline void gw_str(gguf_writer *w, const char *s)
{
    gw_count(w, strlen(s));
    gw_bytes(w, s, strlen(s));
}

static inline void gw_begin(gguf_writer *w, uint32_t version, bool big, uint64_t n_tensors, uint64_t n_kv)
{
    *w = (gguf_writer){NULL, 0, 0, version, big};
    gw_bytes(w, "GGUF", 4);
    gw_uint(w, version, 4);
    gw_count(w, n_tensors);
    gw_count(w, n_kv);
}

static inline void gw_key(gguf_writer *w, const char *name, uint32_t type)
{
    gw_str(w, name);
    gw_uint(w, type, 4);
}

static inline void gw_kv_str(gguf_writer *w, const char *name, const char *value)
{
    gw_key(w, name, GW_STR);
    gw_str(w, value);
}

static inline void gw_kv_u32(gguf_writer *w, const char *name, uint32_t value)
{
    gw_key(w, name, GW_U32);
    gw_uint(w, value, 4);
}

/* An integer key of any type, width bytes wide. */
static inline void gw_kv_int(gguf_writer *w, const char *name, uint32_t type, uint64_t value, unsigned width)
{
    gw_key(w, name, type);
    gw_uint(w, value, width);
}

static inline void gw_kv_u64(gguf_writer *w, const char *name, uint64_t value)
{
    gw_key(w, name, GW_U64);
    gw_uint(w, value, 8);
}

static inline void gw_kv_f32_bits(gguf_writer *w, const char *name, uint32_t bits)
{
    gw_key(w, name, GW_F32);
    gw_uint(w, bits, 4);
}

/* An array of n u32 values. */
static inline void gw_kv_u32s(gguf_writer *w, const char *name, const uint32_t *v, uint64_t n)
{
    gw_key(w, name, GW_ARR);
    gw_uint(w, GW_U32, 4);
    gw_count(w, n);
    for (uint64_t i = 0; i < n; i++)
        gw_uint(w, v[i], 4);
}

/* A tensor's descriptor; offset is from the start of the data section. */
static inline void gw_tensor(gguf_writer *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type,
                             uint64_t offset)
{
    gw_str(w, name);
    gw_uint(w, n_dims, 4);
    for (uint32_t i = 0; i < n_dims; i++)
        gw_count(w, ne[i]);
    gw_uint(w, type, 4);
    gw_uint(w, offset, 8);
}

static inline void gw_pad(gguf_writer *w, size_t alignment)
{
    static const uint8_t zero = 0;
    while (w->n % alignment)
        gw_bytes(w, &zero, 1);
}

static inline void gw_free(gguf_writer *w)
{
    free(w->b);
    *w = (gguf_writer){0};
}

#endif
