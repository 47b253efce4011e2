/*
 * The layout and header of model.gguf for a split set (see merged.h).
 */
#include <stdlib.h>
#include <string.h>

#include "model/merged.h"

static uint64_t pad_to(uint64_t n, uint64_t alignment)
{
    return (n + alignment - 1) / alignment * alignment;
}

static bool is_split_key(const ggp_kv *kv)
{
    return kv->key.len >= 6 && memcmp(kv->key.ptr, "split.", 6) == 0;
}

/* A count or length field: u32 in version 1, u64 after. */
static uint64_t count_width(const ggp_file *f)
{
    return ggp_version(f) == 1 ? 4 : 8;
}

/* The bytes of a key and its value as they lie in the file. */
static uint64_t kv_extent(const ggp_kv *kv)
{
    return kv->value.offset + kv->value.size - kv->offset;
}

/* The bytes of a tensor's descriptor before its offset field. */
static uint64_t descriptor_extent(const ggp_tensor *t)
{
    return t->data_field_offset - t->info_offset;
}

static bool is_split(const ggfs_merged *m)
{
    return m->n_shards > 1;
}

/* The merged model's keys: shard 1's. */
static const ggp_file *keys_of(const ggfs_merged *m)
{
    return m->shards[0].file;
}

static const ggp_tensor *tensor_of(const ggfs_merged *m, uint64_t index, uint32_t *shard)
{
    return ggfs_shards_tensor(m->shards, m->n_shards, m->n_tensors, index, shard);
}

bool ggfs_merged_init(ggfs_merged *m, const ggfs_shard *shards, uint32_t n_shards, uint64_t n_tensors)
{
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
    atomic_init(&m->header, NULL);
    m->shards = shards;
    m->n_shards = n_shards;
    m->n_tensors = n_tensors;
    m->available = true;
    if (!is_split(m)) {
        m->size = shards[0].source->size;
        return true;
    }
    const ggp_file *keys = keys_of(m);
    const uint64_t alignment = ggp_alignment(keys);
    uint64_t len = 4 + 4 + 2 * count_width(keys);
    for (uint64_t i = 0; i < ggp_kv_count(keys); i++) {
        const ggp_kv *kv = ggp_kv_at(keys, i);
        if (!is_split_key(kv))
            len += kv_extent(kv);
    }
    m->data_at = malloc((m->n_tensors ? m->n_tensors : 1) * sizeof *m->data_at);
    if (!m->data_at)
        return false;
    for (uint64_t i = 0; i < m->n_tensors; i++) {
        uint32_t shard;
        const ggp_tensor *t = tensor_of(m, i, &shard);
        len += descriptor_extent(t) + 8;
        if (!t->type)
            m->available = false; // its data has no known size to lay out
    }
    m->header_len = len;
    m->data_offset = pad_to(len, alignment);
    uint64_t at = m->data_offset;
    for (uint64_t i = 0; i < m->n_tensors && m->available; i++) {
        uint32_t shard;
        const ggp_tensor *t = tensor_of(m, i, &shard);
        m->data_at[i] = at;
        at += pad_to(t->bytes, alignment);
    }
    m->size = m->available ? at : 0;
    return true;
}

void ggfs_merged_destroy(ggfs_merged *m)
{
    free(m->data_at);
    free(atomic_load(&m->header));
    pthread_mutex_destroy(&m->lock);
}

/* ==== The header ==== */

typedef struct writer {
    uint8_t *out;
    bool big_endian;
} writer;

static void put_bytes(writer *w, const void *bytes, uint64_t n)
{
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

static uint8_t *build_header(const ggfs_merged *m)
{
    const ggp_file *keys = keys_of(m);
    const uint8_t *bytes = ggp_file_bytes(keys);
    uint8_t *header = malloc(m->header_len);
    if (!header)
        return NULL;
    writer w = {header, ggp_byte_order_of(keys) == GGP_BIG};
    uint64_t n_kv = 0;
    for (uint64_t i = 0; i < ggp_kv_count(keys); i++)
        n_kv += !is_split_key(ggp_kv_at(keys, i));
    put_bytes(&w, bytes, 8); // magic and version, as shard 1 stores them
    put_uint(&w, m->n_tensors, count_width(keys));
    put_uint(&w, n_kv, count_width(keys));
    for (uint64_t i = 0; i < ggp_kv_count(keys); i++) {
        const ggp_kv *kv = ggp_kv_at(keys, i);
        if (!is_split_key(kv))
            put_bytes(&w, bytes + kv->offset, kv_extent(kv));
    }
    for (uint64_t i = 0; i < m->n_tensors; i++) {
        uint32_t shard;
        const ggp_tensor *t = tensor_of(m, i, &shard);
        put_bytes(&w, ggp_file_bytes(m->shards[shard].file) + t->info_offset, descriptor_extent(t));
        put_uint(&w, m->data_at[i] - m->data_offset, 8);
    }
    return header;
}

const uint8_t *ggfs_merged_header(ggfs_merged *m)
{
    uint8_t *header = atomic_load(&m->header);
    if (header)
        return header;
    pthread_mutex_lock(&m->lock);
    header = atomic_load(&m->header);
    if (!header) {
        header = build_header(m);
        atomic_store(&m->header, header);
    }
    pthread_mutex_unlock(&m->lock);
    return header;
}

/* ==== Pieces ==== */

bool ggfs_merged_piece(ggfs_merged *m, uint64_t off, ggfs_piece *piece)
{
    if (!is_split(m)) {
        *piece = (ggfs_piece){GGFS_PIECE_SHARD, 0, off, m->size - off};
        return true;
    }
    if (off < m->header_len) {
        if (!ggfs_merged_header(m))
            return false;
        *piece = (ggfs_piece){GGFS_PIECE_HEADER, 0, off, m->header_len - off};
        return true;
    }
    // The last tensor whose data starts at or before off.
    uint64_t lo = 0, hi = m->n_tensors;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (m->data_at[mid] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) {
        *piece = (ggfs_piece){GGFS_PIECE_ZEROS, 0, 0, m->data_offset - off};
        return true;
    }
    const uint64_t i = lo - 1;
    uint32_t shard;
    const ggp_tensor *t = tensor_of(m, i, &shard);
    const uint64_t into = off - m->data_at[i];
    if (into < t->bytes) {
        *piece = (ggfs_piece){GGFS_PIECE_SHARD, shard, t->offset + into, t->bytes - into};
        return true;
    }
    const uint64_t end = i + 1 < m->n_tensors ? m->data_at[i + 1] : m->size;
    *piece = (ggfs_piece){GGFS_PIECE_ZEROS, 0, 0, end - off};
    return true;
}
