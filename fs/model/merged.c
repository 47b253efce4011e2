/*
 * The layout and header of model.gguf (see merged.h).
 */
#include <stdlib.h>
#include <string.h>

#include "model/merged.h"

bool ggfs_is_split_key(const char *name, uint64_t len)
{
    return len >= 6 && memcmp(name, "split.", 6) == 0;
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

static void merged_tensor(const void *ctx, uint64_t i, ggfs_run *descriptor, uint64_t *data_at)
{
    const ggfs_merged *m = ctx;
    uint32_t shard = 0;
    const ggp_tensor *t = tensor_of(m, i, &shard);
    const ggp_file *f = m->shards[shard].file;
    *descriptor = ggfs_descriptor_run(f, t);
    *data_at = is_split(m) ? m->data_at[i] : t->offset - ggp_data_offset(f);
}

void ggfs_merged_plan(const ggfs_merged *m, const ggfs_run *kvs, uint64_t n_kv, ggfs_header_plan *plan)
{
    *plan = (ggfs_header_plan){keys_of(m), kvs, n_kv, m->n_tensors, merged_tensor, m};
}

/* The kv runs of shard 1 without the split.* keys; malloc'ed. */
static ggfs_run *unsplit_kvs(const ggfs_merged *m, uint64_t *n)
{
    const ggp_file *keys = keys_of(m);
    ggfs_run *runs = malloc((ggp_kv_count(keys) + 1) * sizeof *runs);
    *n = 0;
    for (uint64_t i = 0; runs && i < ggp_kv_count(keys); i++) {
        const ggp_kv *kv = ggp_kv_at(keys, i);
        if (!ggfs_is_split_key(kv->key.ptr, kv->key.len))
            runs[(*n)++] = ggfs_kv_run(keys, kv);
    }
    return runs;
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
    const ggp_file *keys = keys_of(m);
    if (!is_split(m)) {
        m->size = shards[0].source->size;
        m->header_len = ggp_header_end(keys);
        m->data_offset = ggfs_data_start(keys);
        m->data_size = m->size - m->data_offset;
        return true;
    }
    const uint64_t alignment = ggp_alignment(keys);
    m->data_at = malloc((m->n_tensors ? m->n_tensors : 1) * sizeof *m->data_at);
    if (!m->data_at)
        return false;
    uint64_t at = 0;
    for (uint64_t i = 0; i < m->n_tensors; i++) {
        uint32_t shard = 0;
        const ggp_tensor *t = tensor_of(m, i, &shard);
        if (!t->type)
            m->available = false; // its data has no known size to lay out
        m->data_at[i] = at;
        at += ggfs_pad_to(t->bytes, alignment);
    }
    m->data_size = at;
    uint64_t n_kv;
    ggfs_run *kvs = unsplit_kvs(m, &n_kv);
    if (!kvs)
        return false;
    ggfs_header_plan plan;
    ggfs_merged_plan(m, kvs, n_kv, &plan);
    m->header_len = ggfs_header_len(&plan);
    free(kvs);
    m->data_offset = ggfs_pad_to(m->header_len, alignment);
    m->size = m->available ? m->data_offset + m->data_size : 0;
    return true;
}

void ggfs_merged_destroy(ggfs_merged *m)
{
    free(m->data_at);
    free(atomic_load(&m->header));
    pthread_mutex_destroy(&m->lock);
}

/* ==== The header ==== */

static uint8_t *build_header(const ggfs_merged *m)
{
    uint64_t n_kv;
    ggfs_run *kvs = unsplit_kvs(m, &n_kv);
    uint8_t *header = kvs ? malloc(m->header_len) : NULL;
    if (header) {
        ggfs_header_plan plan;
        ggfs_merged_plan(m, kvs, n_kv, &plan);
        ggfs_header_write(&plan, header);
    }
    free(kvs);
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

/* The run at off of a model whose header is `header` (len bytes), whose
 * data section starts at data_offset and which is size bytes long. */
static void data_piece(const ggfs_merged *m, uint64_t data_offset, uint64_t size, uint64_t off, ggfs_piece *piece)
{
    if (off < data_offset) {
        *piece = (ggfs_piece){GGFS_PIECE_ZEROS, 0, 0, NULL, data_offset - off};
        return;
    }
    const uint64_t rel = off - data_offset;
    if (!is_split(m)) {
        // A plain file's data section is its own bytes, to its end.
        const uint64_t at = ggfs_data_start(keys_of(m)) + rel;
        *piece = (ggfs_piece){GGFS_PIECE_SHARD, 0, at, NULL, size - off};
        return;
    }
    // The last tensor whose data starts at or before rel.
    uint64_t lo = 0, hi = m->n_tensors;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (m->data_at[mid] <= rel)
            lo = mid + 1;
        else
            hi = mid;
    }
    const uint64_t i = lo - 1; // the first tensor starts at 0
    uint32_t shard = 0;
    const ggp_tensor *t = tensor_of(m, i, &shard);
    const uint64_t into = rel - m->data_at[i];
    if (into < t->bytes) {
        *piece = (ggfs_piece){GGFS_PIECE_SHARD, shard, t->offset + into, NULL, t->bytes - into};
        return;
    }
    const uint64_t end = i + 1 < m->n_tensors ? data_offset + m->data_at[i + 1] : size;
    *piece = (ggfs_piece){GGFS_PIECE_ZEROS, 0, 0, NULL, end - off};
}

bool ggfs_merged_piece(ggfs_merged *m, const ggfs_gguf_head *edited, uint64_t off, ggfs_piece *piece)
{
    if (edited) {
        if (off < edited->len)
            *piece = (ggfs_piece){GGFS_PIECE_HEADER, 0, 0, edited->bytes + off, edited->len - off};
        else
            data_piece(m, edited->data_offset, edited->size, off, piece);
        return true;
    }
    if (!is_split(m)) {
        *piece = (ggfs_piece){GGFS_PIECE_SHARD, 0, off, NULL, m->size - off};
        return true;
    }
    if (off < m->header_len) {
        const uint8_t *header = ggfs_merged_header(m);
        if (!header)
            return false;
        *piece = (ggfs_piece){GGFS_PIECE_HEADER, 0, 0, header + off, m->header_len - off};
        return true;
    }
    data_piece(m, m->data_offset, m->size, off, piece);
    return true;
}
