/*
 * Views of a model's keys and header (see view.h).
 */
#include <stdlib.h>
#include <string.h>

#include "model/view.h"

static _Atomic uint64_t *new_sizes(uint64_t n)
{
    _Atomic uint64_t *sizes = malloc((n ? n : 1) * sizeof *sizes);
    for (uint64_t i = 0; sizes && i < n; i++)
        atomic_init(&sizes[i], UINT64_MAX);
    return sizes;
}

static void init_text_sizes(ggfs_view *v)
{
    for (int i = 0; i < GGFS_VIEW_SIZE_SLOTS; i++) {
        atomic_init(&v->text_size[i], UINT64_MAX);
        atomic_init(&v->text[i], NULL);
    }
    v->compute = ggfs_compute_memo_new();
}

static void free_texts(ggfs_view *v)
{
    for (int i = 0; i < GGFS_VIEW_SIZE_SLOTS; i++)
        free(atomic_load(&v->text[i]));
    ggfs_compute_memo_free(v->compute);
    v->compute = NULL;
}

bool ggfs_view_init_unedited(ggfs_view *v, const ggp_file *keys, uint64_t keys_file_size)
{
    memset(v, 0, sizeof *v);
    atomic_init(&v->refs, 0);
    v->keys = keys;
    v->keys_file_size = keys_file_size;
    init_text_sizes(v);
    v->kv_size = new_sizes(ggp_kv_count(keys));
    return v->kv_size != NULL;
}

void ggfs_view_destroy_unedited(ggfs_view *v)
{
    free_texts(v);
    free((void *)v->kv_size);
}

static void view_free(ggfs_view *v)
{
    ggp_close(v->own_keys);
    free(v->keys_header);
    free(v->gguf_header);
    free(v->id_of);
    free(v->by_id);
    free(v->changed_at);
    free((void *)v->kv_size);
    free_texts(v);
    free(v);
}

void ggfs_view_ref(ggfs_view *v)
{
    if (v->edited)
        atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);
}

void ggfs_view_put(ggfs_view *v)
{
    if (v && v->edited && atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel) == 1)
        view_free(v);
}

uint64_t ggfs_view_index_of(const ggfs_view *v, uint64_t id)
{
    if (!v->by_id)
        return id < ggp_kv_count(v->keys) ? id : UINT64_MAX;
    uint64_t lo = 0, hi = ggp_kv_count(v->keys);
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (v->by_id[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ggp_kv_count(v->keys) && v->by_id[lo].id == id ? v->by_id[lo].index : UINT64_MAX;
}

uint64_t ggfs_view_find(const ggfs_view *v, const char *name, uint64_t len)
{
    const ggp_kv *kv = ggp_kv_find(v->keys, name, (size_t)len);
    return kv ? (uint64_t)(kv - ggp_kv_at(v->keys, 0)) : UINT64_MAX;
}

/* Whether two values are the same bytes of the same type. */
static bool same_value(const ggp_value *a, const ggp_value *b)
{
    return a->type == b->type && a->elem_type == b->elem_type && a->count == b->count && a->size == b->size &&
           (a->size == 0 || memcmp(a->data, b->data, (size_t)a->size) == 0);
}

bool ggfs_view_follow(ggfs_view *v, const ggfs_view *prev)
{
    const uint64_t n = ggp_kv_count(v->keys);
    v->changed_at = malloc((n ? n : 1) * sizeof *v->changed_at);
    if (!v->changed_at)
        return false;
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t j = ggfs_view_index_of(prev, ggfs_view_id_of(v, i));
        const bool kept = j != UINT64_MAX &&
                          same_value(&ggp_kv_at(v->keys, i)->value, &ggp_kv_at(prev->keys, j)->value);
        v->changed_at[i] = kept ? ggfs_view_changed_at(prev, j) : v->version;
    }
    return true;
}

static int by_id_order(const void *a, const void *b)
{
    const uint64_t x = ((const ggfs_view_id *)a)->id, y = ((const ggfs_view_id *)b)->id;
    return x < y ? -1 : x > y;
}

ggfs_view *ggfs_view_new(uint64_t version, uint8_t *keys_header, uint64_t keys_len, uint64_t keys_file_size,
                         uint8_t *gguf_header, ggfs_gguf_head gguf, uint64_t *id_of, ggp_error *err)
{
    ggfs_view *v = calloc(1, sizeof *v);
    if (!v) {
        free(keys_header);
        free(gguf_header);
        free(id_of);
        *err = (ggp_error){GGP_ERR_NOMEM, 0, "out of memory"};
        return NULL;
    }
    atomic_init(&v->refs, 1);
    v->version = version;
    v->edited = true;
    v->keys_header = keys_header;
    v->gguf_header = gguf_header;
    v->id_of = id_of;
    init_text_sizes(v);
    // The header was built here, but is checked as any file is: a view
    // the parser refuses is never served.
    v->own_keys = ggp_open_prefix(keys_header, (size_t)keys_len, keys_file_size, err);
    if (!v->own_keys) {
        view_free(v);
        return NULL;
    }
    v->keys = v->own_keys;
    v->keys_file_size = keys_file_size;
    v->gguf = gguf;
    if (!gguf_header)
        v->gguf.bytes = keys_header;
    const uint64_t n = ggp_kv_count(v->keys);
    v->kv_size = new_sizes(n);
    v->by_id = malloc((n ? n : 1) * sizeof *v->by_id);
    if (!v->kv_size || !v->by_id) {
        view_free(v);
        *err = (ggp_error){GGP_ERR_NOMEM, 0, "out of memory"};
        return NULL;
    }
    for (uint64_t i = 0; i < n; i++)
        v->by_id[i] = (ggfs_view_id){id_of[i], i};
    qsort(v->by_id, (size_t)n, sizeof *v->by_id, by_id_order);
    return v;
}
