/*
 * `verify` (verify.h): one pass over each shard's bytes through the model's
 * own data path (model/tensor_bytes.h), so a remote shard's bytes come
 * through its caches and the mount's connections, then the lines.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tensor_bytes.h"
#include "tree/digest.h"
#include "tree/verify.h"
#include "util/log.h"

void ggfs_verify_init(ggfs_verify *v, const ggfs_model *m, const ggfs_cancel *cancel)
{
    memset(v, 0, sizeof *v);
    ggfs_once_group_init(&v->group);
    v->cancel = cancel;
    atomic_init(&v->done_bytes, 0);
    for (uint32_t k = 0; k < m->n_shards; k++)
        v->total_bytes += m->shards[k].source->size;
}

void ggfs_verify_destroy(ggfs_verify *v)
{
    ggfs_verify_result *r = ggfs_once_value(&v->result);
    if (r) {
        free(r->text);
        free(r->warnings);
        free(r);
    }
    ggfs_once_group_destroy(&v->group);
}

/* What a file's store publishes: recorded by its source, else looked up
 * now by a source that looks when asked (a local file, beside it). */
static ggfs_published published_of(const ggfs_source *src)
{
    ggfs_published p = src->published;
    if (p.kind == GGFS_PUBLISHED_NONE && src->ops->look_up_published)
        src->ops->look_up_published(src, &p);
    return p;
}

typedef struct shard_pass {
    ggfs_digests *digests;
    ggfs_verify *v;
} shard_pass;

static void consume(void *ctx, const uint8_t *bytes, size_t len)
{
    shard_pass *p = ctx;
    ggfs_digests_update(p->digests, bytes, len);
    atomic_fetch_add_explicit(&p->v->done_bytes, len, memory_order_relaxed);
}

/* Digests shard s with hash h into digest. */
static int digest_shard(ggfs_verify *v, const ggfs_digest_module *module, const ggfs_shard *s, ggfs_hash h,
                        uint8_t digest[GGFS_DIGEST_MAX])
{
    shard_pass p = {ggfs_digests_new(module, GGFS_HASH_BIT(h)), v};
    if (!p.digests)
        return ENOMEM;
    uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX];
    int err = ggfs_shard_bytes(s, v->cancel, consume, &p);
    if (!err && !ggfs_digests_final(p.digests, out))
        err = ENOMEM;
    ggfs_digests_free(p.digests);
    if (!err)
        memcpy(digest, out[h], ggfs_hash_size(h));
    return err;
}

typedef enum verdict { VERDICT_OK, VERDICT_UNPUBLISHED, VERDICT_MISMATCH } verdict;

static const char *const verdict_names[] = {"ok", "unpublished", "MISMATCH"};

/* Appends to a text growing in *buf (*len used); false when out of memory. */
static bool append(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static bool append(char **buf, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *grown = n < 0 ? NULL : realloc(*buf, *len + (size_t)n + 1);
    if (!grown)
        return false;
    va_start(ap, fmt);
    vsnprintf(grown + *len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *buf = grown;
    *len += (size_t)n;
    return true;
}

/* Digests shard k and writes its line, and its warning on a mismatch. */
static int verify_shard(ggfs_verify *v, const ggfs_digest_module *module, const ggfs_model *m, uint32_t k,
                        ggfs_verify_result *r, verdict *worst)
{
    const ggfs_shard *s = &m->shards[k];
    const ggfs_published p = published_of(s->source);
    const ggfs_hash h = p.kind == GGFS_PUBLISHED_MD5 ? GGFS_HASH_MD5 : GGFS_HASH_SHA256;
    uint8_t digest[GGFS_DIGEST_MAX];
    const int err = digest_shard(v, module, s, h, digest);
    if (err)
        return err;
    const size_t size = ggfs_hash_size(h);
    char hex[2 * GGFS_DIGEST_MAX + 1], published[2 * GGFS_DIGEST_MAX + 1] = "-";
    ggfs_hex(digest, size, hex);
    hex[2 * size] = '\0';
    verdict line = VERDICT_UNPUBLISHED;
    if (p.kind != GGFS_PUBLISHED_NONE) {
        ggfs_hex(p.digest, size, published);
        published[2 * size] = '\0';
        line = memcmp(p.digest, digest, size) == 0 ? VERDICT_OK : VERDICT_MISMATCH;
    }
    if (line > *worst)
        *worst = line;
    if (!append(&r->text, &r->len, "%s\t%s\t%s\t%s\t%s\n", s->file_name, ggfs_hash_name(h), hex, published,
                verdict_names[line]))
        return ENOMEM;
    if (line != VERDICT_MISMATCH)
        return 0;
    // As `warnings` writes a split set's lines: the file's name first.
    if (!append(&r->warnings, &r->warnings_len, "%s%soffset 0: %s %s of the file is not the %s its store publishes (%s)\n",
                ggfs_model_is_split(m) ? s->file_name : "", ggfs_model_is_split(m) ? ": " : "",
                ggfs_hash_name(h), hex, published, p.where))
        return ENOMEM;
    ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s: verify: %s %s, its store publishes %s (%s)\n", s->source->name,
             ggfs_hash_name(h), hex, published, p.where);
    return 0;
}

static int compute(void *ctx, void **value)
{
    ggfs_verify *v = ((void **)ctx)[0];
    const ggfs_model *m = ((void **)ctx)[1];
    const ggfs_digest_module *module = atomic_load(&v->module);
    char why[640];
    if (!module && !(module = ggfs_digest_module_load(why, sizeof why))) {
        ggfs_log(GGFS_LOG_ERR, "gguf-fs: verify: %s\n", why);
        return EIO;
    }
    atomic_store(&v->module, module);
    ggfs_verify_result *r = calloc(1, sizeof *r);
    if (!r)
        return ENOMEM;
    atomic_store(&v->done_bytes, 0);
    verdict worst = VERDICT_OK;
    int err = append(&r->warnings, &r->warnings_len, "%s", "") ? 0 : ENOMEM;
    for (uint32_t k = 0; k < m->n_shards && !err; k++)
        err = verify_shard(v, module, m, k, r, &worst);
    if (!err && !append(&r->text, &r->len, "verdict: %s\n", verdict_names[worst]))
        err = ENOMEM;
    if (err) {
        free(r->text);
        free(r->warnings);
        free(r);
        return err;
    }
    *value = r;
    return 0;
}

int ggfs_verify_get(ggfs_verify *v, const ggfs_model *m, const ggfs_verify_result **out)
{
    void *job[2] = {v, (void *)m};
    void *value = NULL;
    const int err = ggfs_once_get(&v->group, &v->result, compute, job, &value);
    *out = value;
    return err;
}
