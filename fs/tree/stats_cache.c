/*
 * The stats of each tensor, computed on first read and kept for the life of
 * the mount. One mutex and one condition for all tensors: a computation is
 * long (a pass over the tensor) and rare, waiting is the exception.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/guard.h"
#include "tree/stats_cache.h"

/* Values decoded per step: 64 KiB of floats stay in the L2 cache between
 * the decode and the accumulator's two passes. */
#define CHUNK_VALUES 16384

bool ggfs_stats_cache_init(ggfs_stats_cache *c, uint64_t n_tensors)
{
    c->n_tensors = n_tensors;
    c->text = calloc(n_tensors ? n_tensors : 1, sizeof *c->text);
    c->computing = calloc(n_tensors ? n_tensors : 1, sizeof *c->computing);
    if (!c->text || !c->computing) {
        free((void *)c->text);
        free(c->computing);
        c->text = NULL;
        c->computing = NULL;
        return false;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->finished, NULL);
    return true;
}

void ggfs_stats_cache_destroy(ggfs_stats_cache *c)
{
    if (!c->text) // never initialised, or its init failed
        return;
    for (uint64_t i = 0; i < c->n_tensors; i++)
        free(atomic_load(&c->text[i]));
    free((void *)c->text);
    free(c->computing);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->finished);
}

/* Elements [first, first + n) of t into values: from the mapping under the
 * SIGBUS guard, or, for a shard without a map (a remote one), from the
 * blocks read through the source into *raw (grown as needed, freed by the
 * caller). */
static int decode_chunk(const ggfs_shard *sh, const ggp_tensor *t, uint64_t first, uint64_t n,
                        float *values, uint8_t **raw, size_t *raw_cap)
{
    if (sh->source->map) {
        bool cut_short;
        if (ggfs_guarded_read_f32(sh->file, t, first, n, values, &cut_short) == GGP_OK)
            return 0;
        if (cut_short)
            sh->source->ops->mark_changed(sh->source, "was cut short");
        return EIO;
    }
    uint64_t off, span;
    if (ggp_tensor_f32_span(t, first, n, &off, &span) != GGP_OK)
        return EIO;
    if (span > *raw_cap) {
        uint8_t *grown = realloc(*raw, (size_t)span);
        if (!grown)
            return ENOMEM;
        *raw = grown;
        *raw_cap = (size_t)span;
    }
    const int err = ggfs_source_read(sh->source, *raw, (size_t)span, t->offset + off, t->offset + t->bytes);
    if (err)
        return err;
    return ggp_tensor_decode_f32(sh->file, t, *raw, (size_t)span, first, n, values) == GGP_OK ? 0 : EIO;
}

int ggfs_stats_compute(const ggfs_model *m, uint64_t index, ggp_stats *s)
{
    uint32_t shard;
    const ggp_tensor *t = ggfs_model_tensor(m, index, &shard);
    const ggfs_shard *sh = &m->shards[shard];
    if (!ggfs_source_unchanged(sh->source))
        return EIO;
    float *values = malloc(CHUNK_VALUES * sizeof *values);
    if (!values)
        return ENOMEM;
    ggp_stats_init(s);
    int err = 0;
    uint8_t *raw = NULL;
    size_t raw_cap = 0;
    for (uint64_t first = 0; first < t->elements; first += CHUNK_VALUES) {
        const uint64_t n = t->elements - first < CHUNK_VALUES ? t->elements - first : CHUNK_VALUES;
        err = decode_chunk(sh, t, first, n, values, &raw, &raw_cap);
        if (err)
            break;
        ggp_stats_add(s, values, (size_t)n);
    }
    free(raw);
    free(values);
    // A file rewritten in place during the pass leaves no fault behind:
    // what was read is only trusted if the source is still the same.
    if (!err && !ggfs_source_unchanged(sh->source))
        err = EIO;
    return err;
}

/* Writes the text into a buffer of its exact size. */
typedef struct fixed_sink {
    ggp_sink sink;
    char *buf;
    size_t len;
} fixed_sink;

static void fixed_write(ggp_sink *sink, const char *bytes, size_t len)
{
    fixed_sink *f = (fixed_sink *)sink;
    memcpy(f->buf + f->len, bytes, len);
    f->len += len;
}

/* Computes and renders the text of tensor `index`; allocates it. */
static int compute_text(const ggfs_model *m, uint64_t index, char **text)
{
    uint32_t shard;
    const ggp_tensor *t = ggfs_model_tensor(m, index, &shard);
    ggp_stats s;
    const int err = ggfs_stats_compute(m, index, &s);
    if (err)
        return err;
    const uint64_t size = ggp_stats_text_size(t->elements);
    fixed_sink out = {{fixed_write}, malloc((size_t)size), 0};
    if (!out.buf)
        return ENOMEM;
    ggp_stats_render(&s, t->elements, &out.sink);
    *text = out.buf;
    return 0;
}

int ggfs_stats_get(ggfs_stats_cache *c, const ggfs_model *m, uint64_t index, const char **text)
{
    char *done = atomic_load(&c->text[index]);
    if (done) {
        *text = done;
        return 0;
    }
    pthread_mutex_lock(&c->lock);
    while (c->computing[index])
        pthread_cond_wait(&c->finished, &c->lock);
    done = atomic_load(&c->text[index]);
    if (done) {
        pthread_mutex_unlock(&c->lock);
        *text = done;
        return 0;
    }
    c->computing[index] = 1;
    pthread_mutex_unlock(&c->lock);

    char *computed = NULL;
    const int err = compute_text(m, index, &computed);

    pthread_mutex_lock(&c->lock);
    if (!err)
        atomic_store(&c->text[index], computed);
    c->computing[index] = 0;
    pthread_cond_broadcast(&c->finished);
    pthread_mutex_unlock(&c->lock);
    *text = computed;
    return err;
}
