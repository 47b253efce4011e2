/*
 * The stats of each tensor, computed on first read and kept for the life of
 * the mount. One mutex and one condition for all tensors: a computation is
 * long (a pass over the tensor) and rare, waiting is the exception.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/tensor_f32.h"
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

static void accumulate(void *stats, const float *values, size_t n)
{
    ggp_stats_add(stats, values, n);
}

int ggfs_stats_compute(const ggfs_model *m, uint64_t index, ggp_stats *s)
{
    ggp_stats_init(s);
    return ggfs_model_tensor_f32_pass(m, index, CHUNK_VALUES, accumulate, s);
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
