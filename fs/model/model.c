/*
 * Opening a model: its file, or every shard of its split set, each
 * validated by the parser, then the set checked as a whole (SPEC "Split
 * models"): every shard present, split.no matching each shard's name,
 * one split.count, the tensor total as split.tensors.count says, no tensor
 * name in two shards.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/split_name.h"
#include "source/source_table.h"

/* ==== Errors ==== */

static void refuse(ggfs_model_error *err, const char *where, ggp_err code, uint64_t offset,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void refuse(ggfs_model_error *err, const char *where, ggp_err code, uint64_t offset,
                   const char *fmt, ...)
{
    snprintf(err->where, sizeof err->where, "%s", where);
    err->error.code = code;
    err->error.offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->error.msg, sizeof err->error.msg, fmt, ap);
    va_end(ap);
}

static const char *last_component(const char *name)
{
    const char *slash = strrchr(name, '/');
    return slash ? slash + 1 : name;
}

/* ==== Keys ==== */

bool ggfs_model_key_int(const ggp_file *file, const char *key, int64_t *value, uint64_t *offset)
{
    const ggp_kv *kv = ggp_kv_find(file, key, strlen(key));
    if (!kv)
        return false;
    *offset = kv->value.offset;
    switch (kv->value.type) {
    case GGP_V_U8:
    case GGP_V_U16:
    case GGP_V_U32:
    case GGP_V_U64: {
        const uint64_t u = ggp_value_u64(file, &kv->value);
        *value = u > INT64_MAX ? INT64_MAX : (int64_t)u;
        return true;
    }
    case GGP_V_I8:
    case GGP_V_I16:
    case GGP_V_I32:
    case GGP_V_I64:
        *value = ggp_value_i64(file, &kv->value);
        return true;
    default:
        return false;
    }
}

/* ==== Shards ==== */

/* Where the part of a name that follows the split-set pattern ends: a
 * URL's query or an hf:// name's @REVISION come after it. */
static size_t pattern_end(const char *name)
{
    return ggfs_source_name_end(name);
}


/* The first read of a local file's header: the whole header of most
 * models (a small vocabulary), without copying their tensor data. The
 * second, for a large vocabulary: two huge pages (util/big_buffer.h). */
#define LOCAL_HEADER_FIRST (UINT64_C(64) << 10)
#define LOCAL_HEADER_SECOND (2 * (uint64_t)GGFS_BIG_BUFFER_PAGE)

/* How many of a source's first bytes to hold next, when the parser asked
 * for `asked` and `have` are held. A remote source's rounds stop at the
 * first multiple of GGFS_MODEL_HEADER_STEP at or past what was asked, so no
 * more than the header plus one step is ever fetched. A local file's go
 * from the first 64 KiB straight to 4 MiB, then double: a large
 * vocabulary's header (3.7 MB for 128,000 tokens) is parsed twice, and
 * read into memory a huge page at a time; what was read past it is given
 * back once parsed. */
static uint64_t header_want(const ggfs_source *src, uint64_t asked, uint64_t have)
{
    uint64_t want;
    if (!src->map) {
        const uint64_t step = GGFS_MODEL_HEADER_STEP;
        want = have == 0 ? step : (asked + step - 1) / step * step;
    } else if (have == 0) {
        want = LOCAL_HEADER_FIRST;
    } else {
        want = asked > 2 * have ? asked : 2 * have;
        if (want < LOCAL_HEADER_SECOND)
            want = LOCAL_HEADER_SECOND;
    }
    return want < src->size ? want : src->size;
}

/* Parses a shard's header from its first bytes, read into memory the shard
 * owns in growing rounds: the handle's views then outlive any change to
 * the file, and a remote file is fetched no further than its header. A
 * mapped file then lends its mapping for the tensor data. */
static ggp_file *open_header(ggfs_shard *shard, ggp_error *e)
{
    ggfs_source *src = shard->source;
    const uint64_t size = src->size;
    uint64_t have = 0, want = header_want(src, 0, 0);
    for (;;) {
        if (want > SIZE_MAX) {
            *e = (ggp_error){GGP_ERR_NOMEM, 0, "header too large for memory"};
            return NULL;
        }
        if (!ggfs_big_buffer_resize(&shard->header, (size_t)want)) {
            snprintf(e->msg, sizeof e->msg, "no memory for %llu header bytes", (unsigned long long)want);
            e->code = GGP_ERR_NOMEM;
            e->offset = 0;
            return NULL;
        }
        uint8_t *grown = shard->header.bytes;
        const int r = ggfs_source_read(src, grown + have, (size_t)(want - have), have, src->size);
        if (r != 0) {
            *e = (ggp_error){GGP_ERR_IO, 0, ""};
            snprintf(e->msg, sizeof e->msg, "cannot read bytes %llu-%llu of the header: %s",
                     (unsigned long long)have, (unsigned long long)want - 1, strerror(r));
            return NULL;
        }
        have = want;
        ggp_file *f = ggp_open_prefix(grown, (size_t)have, size, e);
        if (f && src->map) {
            // Tensor data comes from the mapping: the index's views end
            // with the header, and what was read past it goes back.
            ggp_file_attach_data(f, src->map);
            ggfs_big_buffer_trim(&shard->header, (size_t)ggp_header_end(f));
        }
        if (f || e->code != GGP_ERR_NEED_MORE)
            return f;
        // The parser never asks past the file, and always for more.
        want = header_want(src, e->offset, have);
        if (want <= have) {
            *e = (ggp_error){GGP_ERR_IO, 0, "the parser asked for bytes already given"};
            return NULL;
        }
    }
}

/* Opens one shard: its source, then the parser over its header. */
static bool shard_open(ggfs_shard *shard, const char *name, ggfs_remote_engine *remote, ggfs_model_error *err)
{
    ggp_error e = {GGP_OK, 0, ""};
    shard->source = ggfs_source_open(name, remote, &e);
    if (!shard->source) {
        refuse(err, name, e.code, e.offset, "%s", e.msg);
        return false;
    }
    // A URL's query or an hf:// name's @REVISION is not part of the name.
    const char *source_name = shard->source->name;
    const char *file = last_component(source_name);
    const size_t end = pattern_end(source_name);
    shard->file_name = strndup(file, end > (size_t)(file - source_name) ? end - (size_t)(file - source_name) : 0);
    if (!shard->file_name) {
        refuse(err, name, GGP_ERR_NOMEM, 0, "out of memory");
        return false;
    }
    // An empty file has nothing to read; the parser refuses it for what it is.
    shard->file = shard->source->size > 0 ? open_header(shard, &e) : ggp_open_mem("", 0, &e);
    if (!shard->file) {
        refuse(err, name, e.code, e.offset, "%s", e.msg);
        return false;
    }
    return true;
}

static void shard_close(ggfs_shard *shard)
{
    ggp_close(shard->file);
    ggfs_big_buffer_free(&shard->header);
    free((char *)shard->file_name);
    ggfs_source_close(shard->source);
}

/* ==== The set ==== */

/* Shard k's split.no and split.count are those of a set of n. */
static bool check_shard_keys(const ggfs_model *m, uint32_t k, uint32_t n, ggfs_model_error *err)
{
    const ggfs_shard *s = &m->shards[k];
    const char *where = s->source->name;
    int64_t no, count;
    uint64_t no_at, count_at;
    if (!ggfs_model_key_int(s->file, "split.count", &count, &count_at))
        return refuse(err, where, GGP_ERR_KEY, 0, "shard %u of a set of %u has no integer split.count",
                      k + 1, n), false;
    if (count != n)
        return refuse(err, where, GGP_ERR_KEY, count_at, "split.count is %lld, but shard 1 says %u",
                      (long long)count, n), false;
    if (!ggfs_model_key_int(s->file, "split.no", &no, &no_at))
        return refuse(err, where, GGP_ERR_KEY, 0, "shard %u of a set of %u has no integer split.no",
                      k + 1, n), false;
    if (no == (int64_t)k)
        return true;
    for (uint32_t j = 0; j < n; j++) {
        int64_t other;
        uint64_t other_at;
        if (j != k && m->shards[j].file &&
            ggfs_model_key_int(m->shards[j].file, "split.no", &other, &other_at) && other == no)
            return refuse(err, where, GGP_ERR_KEY, no_at, "split.no is %lld, the same as in %s",
                          (long long)no, m->shards[j].file_name), false;
    }
    return refuse(err, where, GGP_ERR_KEY, no_at,
                  "split.no is %lld, but the file name makes it shard %u (split.no %u)", (long long)no,
                  k + 1, k), false;
}

/* No tensor name in two shards. Each name is looked up in the shards
 * before its own: time in proportion to tensors times shards. */
static bool check_unique_tensors(const ggfs_model *m, ggfs_model_error *err)
{
    for (uint32_t k = 1; k < m->n_shards; k++) {
        const ggp_file *f = m->shards[k].file;
        for (uint64_t i = 0; i < ggp_tensor_count(f); i++) {
            const ggp_tensor *t = ggp_tensor_at(f, i);
            for (uint32_t j = 0; j < k; j++) {
                if (ggp_tensor_find(m->shards[j].file, t->name.ptr, t->name.len)) {
                    refuse(err, m->shards[k].source->name, GGP_ERR_TENSOR, t->info_offset,
                           "tensor '%.*s' is also in %s", (int)(t->name.len > 64 ? 64 : t->name.len),
                           t->name.ptr, m->shards[j].file_name);
                    return false;
                }
            }
        }
    }
    return true;
}

/* Shard k of n's name, made from name's pattern part and keeping its tail.
 * malloc'ed; NULL when out of memory. */
static char *shard_name(const char *name, size_t prefix_len, uint32_t k, uint32_t n)
{
    char *made = ggfs_split_name_make(name, prefix_len, k, n);
    const char *tail = name + pattern_end(name);
    char *full = made ? malloc(strlen(made) + strlen(tail) + 1) : NULL;
    if (full)
        strcat(strcpy(full, made), tail);
    free(made);
    return full;
}

/* Opens the shards of a set of n beside shard `given`, already open at its
 * place. */
static bool open_set(ggfs_model *m, const char *name, ggfs_remote_engine *remote, uint32_t given, uint32_t n,
                     size_t prefix_len, uint64_t count_at, ggfs_model_error *err)
{
    for (uint32_t k = 0; k < n; k++) {
        if (k == given)
            continue;
        char *path = shard_name(name, prefix_len, k + 1, n);
        if (!path)
            return refuse(err, name, GGP_ERR_NOMEM, 0, "out of memory"), false;
        ggfs_model_error e;
        const bool ok = shard_open(&m->shards[k], path, remote, &e);
        if (!ok && e.error.code == GGP_ERR_IO && !m->shards[k].file) {
            // Missing or unreadable: said from the shard that counts the set.
            refuse(err, name, GGP_ERR_IO, count_at, "split.count is %u, but shard %u, %s, cannot be read: %s",
                   n, k + 1, last_component(path), e.error.msg);
            free(path);
            return false;
        }
        free(path);
        if (!ok) {
            *err = e;
            return false;
        }
    }
    return true;
}

/* The set, once its shards are open and its tensors numbered. */
static bool check_set(const ggfs_model *m, ggfs_model_error *err)
{
    const uint32_t n = m->n_shards;
    for (uint32_t k = 0; k < n; k++) {
        if (!check_shard_keys(m, k, n, err))
            return false;
    }
    int64_t total;
    uint64_t total_at;
    for (uint32_t k = 0; k < n; k++) {
        const ggfs_shard *s = &m->shards[k];
        if (!ggfs_model_key_int(s->file, "split.tensors.count", &total, &total_at))
            return refuse(err, s->source->name, GGP_ERR_KEY, 0, "shard %u has no integer split.tensors.count",
                          k + 1), false;
        if (total < 0 || (uint64_t)total != m->n_tensors)
            return refuse(err, s->source->name, GGP_ERR_KEY, total_at,
                          "split.tensors.count is %lld, but the %u shards hold %llu tensors",
                          (long long)total, n, (unsigned long long)m->n_tensors), false;
    }
    return check_unique_tensors(m, err);
}

static void number_tensors(ggfs_model *m)
{
    m->n_tensors = 0;
    m->total_size = 0;
    for (uint32_t k = 0; k < m->n_shards; k++) {
        m->shards[k].first_tensor = m->n_tensors;
        if (m->shards[k].file)
            m->n_tensors += ggp_tensor_count(m->shards[k].file);
        if (m->shards[k].source)
            m->total_size += m->shards[k].source->size;
    }
}

ggfs_model *ggfs_model_open(const char *name, ggfs_remote_engine *remote, ggfs_model_error *err)
{
    ggfs_model *m = calloc(1, sizeof *m);
    ggfs_shard first = {0};
    if (!m) {
        refuse(err, name, GGP_ERR_NOMEM, 0, "out of memory");
        return NULL;
    }
    if (!shard_open(&first, name, remote, err))
        goto fail_first;
    int64_t count;
    uint64_t count_at;
    uint32_t n = 1, given = 0;
    size_t prefix_len = 0;
    if (ggfs_model_key_int(first.file, "split.count", &count, &count_at) && count > 1) {
        unsigned k, name_n;
        char *pattern = strndup(name, pattern_end(name));
        const bool named = pattern && ggfs_split_name_parse(pattern, &prefix_len, &k, &name_n);
        free(pattern);
        if (!named) {
            refuse(err, name, GGP_ERR_KEY, count_at,
                   "split.count is %lld, but the file name does not end in -KKKKK-of-NNNNN.gguf",
                   (long long)count);
            goto fail_first;
        }
        if (count != (int64_t)name_n) {
            refuse(err, name, GGP_ERR_KEY, count_at, "split.count is %lld, but the file name says %u shards",
                   (long long)count, name_n);
            goto fail_first;
        }
        n = name_n;
        given = k - 1;
    }
    m->shards = calloc(n, sizeof *m->shards);
    if (!m->shards) {
        refuse(err, name, GGP_ERR_NOMEM, 0, "out of memory");
        goto fail_first;
    }
    m->n_shards = n;
    m->shards[given] = first;
    if (n > 1) {
        const bool opened = open_set(m, name, remote, given, n, prefix_len, count_at, err);
        number_tensors(m);
        if (!opened || !check_set(m, err))
            goto fail;
    }
    number_tensors(m);
    if (!ggfs_merged_init(&m->merged, m->shards, m->n_shards, m->n_tensors)) {
        refuse(err, name, GGP_ERR_NOMEM, 0, "out of memory");
        ggfs_merged_destroy(&m->merged);
        goto fail;
    }
    if (!ggfs_view_init_unedited(&m->view, m->shards[0].file, m->shards[0].source->size)) {
        refuse(err, name, GGP_ERR_NOMEM, 0, "out of memory");
        ggfs_view_destroy_unedited(&m->view);
        ggfs_merged_destroy(&m->merged);
        goto fail;
    }
    for (uint32_t k = 0; k < m->n_shards; k++) {
        ggfs_source *src = m->shards[k].source;
        if (src->ops->opened)
            src->ops->opened(src);
    }
    return m;

fail_first:
    shard_close(&first);
    free(m);
    return NULL;
fail:
    for (uint32_t k = 0; k < m->n_shards; k++)
        shard_close(&m->shards[k]);
    free(m->shards);
    free(m);
    return NULL;
}

void ggfs_model_close(ggfs_model *m)
{
    if (!m)
        return;
    ggfs_view_destroy_unedited(&m->view);
    ggfs_merged_destroy(&m->merged);
    for (uint32_t k = 0; k < m->n_shards; k++)
        shard_close(&m->shards[k]);
    free(m->shards);
    free(m);
}

/* ==== Tensors over all shards ==== */

const ggp_tensor *ggfs_model_tensor(const ggfs_model *m, uint64_t index, uint32_t *shard)
{
    return ggfs_shards_tensor(m->shards, m->n_shards, m->n_tensors, index, shard);
}

uint64_t ggfs_model_tensor_find(const ggfs_model *m, const char *name, size_t len)
{
    for (uint32_t k = 0; k < m->n_shards; k++) {
        const ggp_tensor *t = ggp_tensor_find(m->shards[k].file, name, len);
        if (t)
            return m->shards[k].first_tensor + (uint64_t)(t - ggp_tensor_at(m->shards[k].file, 0));
    }
    return UINT64_MAX;
}
