/*
 * A GGUF header as ggml's writer (gguf_write) lays it out, in the version
 * and byte order of the model's first shard:
 *
 *   magic, version               4 + 4 bytes, the first shard's own
 *   tensor_count, kv_count       u64 each (u32 in version 1)
 *   kv_count x key               name, type, value: one run of bytes each
 *   tensor_count x descriptor    name, n_dims, ne[], type (a shard's own
 *                                bytes), then the data's offset from the
 *                                start of the data section (u64)
 *
 * and then, in the file, zeros to the alignment and the data section.
 * merged.c makes a split set's model.gguf with it, edits.c an edited one:
 * the keys change, the tensors' descriptors and data never do.
 */
#ifndef GGFS_MODEL_HEADER_H
#define GGFS_MODEL_HEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"

/* A run of bytes someone else owns. */
typedef struct ggfs_run {
    const uint8_t *bytes;
    uint64_t len;
} ggfs_run;

/* What a header is made of. */
typedef struct ggfs_header_plan {
    const ggp_file *format;      // magic, version and byte order: shard 1's
    const ggfs_run *kvs;         // each key whole, already in that format
    uint64_t n_kv;
    uint64_t n_tensors;
    // Tensor i's descriptor up to its offset field, and where its data
    // starts after the start of the data section.
    void (*tensor)(const void *ctx, uint64_t i, ggfs_run *descriptor, uint64_t *data_at);
    const void *ctx;
} ggfs_header_plan;

/* The header's length (before the padding to the alignment). */
uint64_t ggfs_header_len(const ggfs_header_plan *plan);

/* Writes the header, ggfs_header_len(plan) bytes, to out. */
void ggfs_header_write(const ggfs_header_plan *plan, uint8_t *out);

/* A plan of one file's own tensors at their own offsets, with kvs for
 * keys: the header of that file with its keys replaced. */
void ggfs_header_plan_file(ggfs_header_plan *plan, const ggp_file *file, const ggfs_run *kvs, uint64_t n_kv);

/* A key's bytes (name, type, value) as they lie in the file. */
ggfs_run ggfs_kv_run(const ggp_file *file, const ggp_kv *kv);

/* The bytes of a value after its type field (a scalar's bytes; a string's
 * length and bytes; an array's element type, count and elements). */
ggfs_run ggfs_value_run(const ggp_file *file, const ggp_kv *kv);

/* A tensor's descriptor up to its offset field, as it lies in the file. */
ggfs_run ggfs_descriptor_run(const ggp_file *file, const ggp_tensor *t);

/* The length of a key named name_len bytes whose value after the type
 * field takes value_len bytes, in format's version. */
uint64_t ggfs_kv_encoded_len(const ggp_file *format, uint64_t name_len, uint64_t value_len);

/* Writes that key (name, type, value) to out in format's version and byte
 * order; returns the bytes written. */
uint64_t ggfs_kv_encode(const ggp_file *format, const char *name, uint64_t name_len, ggp_vtype type,
                        const uint8_t *value, uint64_t value_len, uint8_t *out);

static inline uint64_t ggfs_pad_to(uint64_t n, uint64_t alignment)
{
    return (n + alignment - 1) / alignment * alignment;
}

/* Where a file's data section starts: its data offset, which for a file
 * without tensors ggml puts at the end of the descriptors, but no sooner
 * than the padding ggml's writer puts there (the bytes up to it are that
 * padding, not data). */
static inline uint64_t ggfs_data_start(const ggp_file *f)
{
    const uint64_t padded = ggfs_pad_to(ggp_header_end(f), ggp_alignment(f));
    const uint64_t start = padded < ggp_file_size(f) ? padded : ggp_file_size(f);
    return start > ggp_data_offset(f) ? start : ggp_data_offset(f);
}

#endif
