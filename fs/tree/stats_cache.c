/*
 * The stats of each tensor, computed on first read and kept for the life of
 * the mount: a cell per tensor (util/once.h), one lock for all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/tensor_f32.h"
#include "tree/stats_cache.h"

/* Values decoded per step: 64 KiB of floats stay in the L2 cache between
 * the decode and the accumulator's two passes. */
#define CHUNK_VALUES 16384

bool ggfs_stats_cache_init(ggfs_stats_cache *c, uint64_t n_tensors, const ggfs_cancel *cancel)
{
    c->n_tensors = n_tensors;
    c->cancel = cancel;
    c->text = calloc(n_tensors ? n_tensors : 1, sizeof *c->text);
    if (!c->text)
        return false;
    ggfs_once_group_init(&c->group);
    return true;
}

void ggfs_stats_cache_destroy(ggfs_stats_cache *c)
{
    if (!c->text) // never initialised, or its init failed
        return;
    for (uint64_t i = 0; i < c->n_tensors; i++)
        free(ggfs_once_value(&c->text[i]));
    free(c->text);
    ggfs_once_group_destroy(&c->group);
}

static void accumulate(void *stats, const float *values, size_t n)
{
    ggp_stats_add(stats, values, n);
}

int ggfs_stats_compute(const ggfs_model *m, uint64_t index, const ggfs_cancel *cancel, ggp_stats *s)
{
    ggp_stats_init(s);
    return ggfs_model_tensor_f32_pass(m, index, CHUNK_VALUES, cancel, accumulate, s);
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

typedef struct stats_job {
    const ggfs_model *m;
    uint64_t index;
    const ggfs_cancel *cancel;
} stats_job;

/* Computes and renders the text of the job's tensor; allocates it. */
static int compute_text(void *ctx, void **text)
{
    const stats_job *job = ctx;
    uint32_t shard;
    const ggp_tensor *t = ggfs_model_tensor(job->m, job->index, &shard);
    ggp_stats s;
    const int err = ggfs_stats_compute(job->m, job->index, job->cancel, &s);
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
    stats_job job = {m, index, c->cancel};
    void *value;
    const int err = ggfs_once_get(&c->group, &c->text[index], compute_text, &job, &value);
    *text = value;
    return err;
}
