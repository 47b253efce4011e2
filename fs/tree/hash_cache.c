/*
 * The hashes of each tensor and of the model, computed on first read and
 * kept for the life of the mount (hash_cache.h). One mutex and one
 * condition for all tensors, as for stats: a computation is a pass over a
 * tensor's bytes, long and rare, and waiting is the exception. `hashes`
 * is a cell of util/once.h under that lock.
 *
 * A tensor's digests are published bit by bit (`done`, with release
 * order) after their bytes are written, under the lock, and only by the
 * reader that claimed the bit in `computing`; readers read a digest only
 * after seeing its bit. The `hashes` pass claims, tensor by tensor, the
 * bits nobody has or computes, and computes itself (without publishing)
 * the ones another reader is computing at that moment, so it never waits
 * on a tensor.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tensor_bytes.h"
#include "tree/hash_cache.h"
#include "util/log.h"

/* gguf-hash is run as `llama-gguf-hash --all --uuid model.gguf` in the
 * mount's root: this is the file name on every line. */
#define MODEL_FILE "model.gguf"
#define KIND_WIDTH 8 // printf's %-8s
#define UUID_TEXT 36

/* llama.cpp's UUIDv5 namespace: uuid5(NAMESPACE_URL, "en.wikipedia.org/wiki/Llama.cpp"). */
static const uint8_t uuid_namespace[16] = {0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                           0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5};

/* ==== Lines of `hashes` ==== */

/* The tensor's name as printf's %s prints it: up to its first NUL. */
static ggp_str printed_name(const ggp_tensor *t)
{
    const char *nul = memchr(t->name.ptr, 0, t->name.len);
    return (ggp_str){t->name.ptr, nul ? (size_t)(nul - t->name.ptr) : t->name.len};
}

/* "%-8s  %s  model.gguf[:NAME]\n": the size of such a line. */
static uint64_t line_size(size_t value_len, const ggp_str *name)
{
    return KIND_WIDTH + 2 + value_len + 2 + strlen(MODEL_FILE) + (name ? 1 + name->len : 0) + 1;
}

static char *put(char *p, const void *bytes, size_t len)
{
    memcpy(p, bytes, len);
    return p + len;
}

/* Writes one line at p; returns its end. name NULL: the model's line. */
static char *put_line(char *p, const char *kind, const char *value, size_t value_len, const ggp_str *name)
{
    const size_t kind_len = strlen(kind);
    p = put(p, kind, kind_len);
    memset(p, ' ', KIND_WIDTH - kind_len + 2);
    p += KIND_WIDTH - kind_len + 2;
    p = put(p, value, value_len);
    p = put(p, "  " MODEL_FILE, 2 + strlen(MODEL_FILE));
    if (name) {
        *p++ = ':';
        p = put(p, name->ptr, name->len);
    }
    *p++ = '\n';
    return p;
}

static char *put_digest_line(char *p, ggfs_hash h, const uint8_t *digest, const ggp_str *name)
{
    char hex[2 * GGFS_DIGEST_MAX];
    ggfs_hex(digest, ggfs_hash_size(h), hex);
    return put_line(p, ggfs_hash_name(h), hex, 2 * ggfs_hash_size(h), name);
}

/* Sizes `hashes`: four lines per tensor, four for the model, one UUID. */
static uint64_t text_size(const ggfs_model *m)
{
    uint64_t size = 0;
    for (uint64_t i = 0; i < m->n_tensors; i++) {
        uint32_t shard;
        const ggp_tensor *t = ggfs_model_tensor(m, i, &shard);
        if (!t->type)
            return UINT64_MAX;
        const ggp_str name = printed_name(t);
        for (int h = 0; h < GGFS_N_GGUF_HASHES; h++)
            size += line_size(2 * ggfs_hash_size((ggfs_hash)h), &name);
    }
    for (int h = 0; h < GGFS_N_GGUF_HASHES; h++)
        size += line_size(2 * ggfs_hash_size((ggfs_hash)h), NULL);
    return size + line_size(UUID_TEXT, NULL);
}

/* ==== The cache ==== */

bool ggfs_hash_cache_init(ggfs_hash_cache *c, const ggfs_model *m, const ggfs_cancel *cancel)
{
    memset(c, 0, sizeof *c);
    c->cancel = cancel;
    c->n_tensors = m->n_tensors;
    c->text_size = text_size(m);
    const uint64_t n = m->n_tensors ? m->n_tensors : 1;
    c->tensors = calloc(n, sizeof *c->tensors);
    c->computing = calloc(n, sizeof *c->computing);
    if (!c->tensors || !c->computing) {
        free((void *)c->tensors);
        free(c->computing);
        c->tensors = NULL;
        c->computing = NULL;
        return false;
    }
    atomic_init(&c->module, NULL);
    atomic_init(&c->module_failed, false);
    ggfs_once_group_init(&c->group);
    return true;
}

void ggfs_hash_cache_destroy(ggfs_hash_cache *c)
{
    if (!c->tensors) // never initialised, or its init failed
        return;
    for (uint64_t i = 0; i < c->n_tensors; i++)
        free(atomic_load(&c->tensors[i]));
    free((void *)c->tensors);
    free(c->computing);
    free(ggfs_once_value(&c->text));
    ggfs_once_group_destroy(&c->group);
}

/* The hashes' module, loaded on the mount's first hash (two readers may
 * both load it: the loader finds it loaded); NULL when it cannot be. */
static const ggfs_digest_module *module_of(ggfs_hash_cache *c)
{
    const ggfs_digest_module *module = atomic_load(&c->module);
    if (module)
        return module;
    char why[640];
    module = ggfs_digest_module_load(why, sizeof why);
    if (module)
        atomic_store(&c->module, module);
    else if (!atomic_exchange(&c->module_failed, true))
        ggfs_log(GGFS_LOG_ERR, "gguf-fs: hashes: %s; reads of hashes fail with EIO\n", why);
    return module;
}

/* Tensor i's digests, allocated on first use. Called under the lock. */
static ggfs_tensor_digests *slot_of(ggfs_hash_cache *c, uint64_t i)
{
    ggfs_tensor_digests *slot = atomic_load(&c->tensors[i]);
    if (!slot) {
        slot = calloc(1, sizeof *slot);
        if (slot)
            atomic_store(&c->tensors[i], slot);
    }
    return slot;
}

/* Publishes the digests of the bits `claimed` (out[h] for each), when the
 * computation succeeded, and gives the claim back. */
static void publish(ggfs_hash_cache *c, uint64_t i, unsigned claimed, bool ok,
                    uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX])
{
    pthread_mutex_lock(&c->group.lock);
    if (ok && claimed) {
        ggfs_tensor_digests *slot = atomic_load(&c->tensors[i]);
        for (int h = 0; h < GGFS_N_GGUF_HASHES; h++) {
            if (claimed & GGFS_HASH_BIT(h))
                memcpy(slot->digest[h], out[h], ggfs_hash_size((ggfs_hash)h));
        }
        atomic_fetch_or_explicit(&slot->done, claimed, memory_order_release);
    }
    c->computing[i] &= (uint8_t)~claimed;
    pthread_cond_broadcast(&c->group.finished);
    pthread_mutex_unlock(&c->group.lock);
}

static void consume_one(void *ctx, const uint8_t *bytes, size_t len)
{
    ggfs_digests_update(ctx, bytes, len);
}

/* Hashes tensor i's bytes with the hashes of mask into out. */
static int hash_tensor(ggfs_hash_cache *c, const ggfs_model *m, uint64_t i, unsigned mask,
                       uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX])
{
    const ggfs_digest_module *module = module_of(c);
    if (!module)
        return EIO;
    ggfs_digests *d = ggfs_digests_new(module, mask);
    if (!d)
        return ENOMEM;
    // A pass cut off by a fault left the states half-updated: not ended.
    int err = ggfs_model_tensor_bytes(m, i, c->cancel, consume_one, d);
    if (!err && !ggfs_digests_final(d, out))
        err = ENOMEM;
    ggfs_digests_free(d);
    return err;
}

static void write_file_text(const ggfs_tensor_digests *slot, ggfs_hash h, char *text)
{
    ggfs_hex(slot->digest[h], ggfs_hash_size(h), text);
    text[2 * ggfs_hash_size(h)] = '\n';
}

int ggfs_hash_file(ggfs_hash_cache *c, const ggfs_model *m, uint64_t index, ggfs_hash h, char *text)
{
    const unsigned bit = GGFS_HASH_BIT(h);
    ggfs_tensor_digests *slot = atomic_load(&c->tensors[index]);
    if (slot && (atomic_load_explicit(&slot->done, memory_order_acquire) & bit)) {
        write_file_text(slot, h, text);
        return 0;
    }
    pthread_mutex_lock(&c->group.lock);
    while (c->computing[index] & bit)
        pthread_cond_wait(&c->group.finished, &c->group.lock);
    slot = slot_of(c, index);
    if (!slot) {
        pthread_mutex_unlock(&c->group.lock);
        return ENOMEM;
    }
    if (atomic_load_explicit(&slot->done, memory_order_acquire) & bit) {
        pthread_mutex_unlock(&c->group.lock);
        write_file_text(slot, h, text);
        return 0;
    }
    c->computing[index] |= (uint8_t)bit;
    pthread_mutex_unlock(&c->group.lock);

    uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX];
    const int err = hash_tensor(c, m, index, bit, out);
    publish(c, index, bit, err == 0, out);
    if (!err)
        write_file_text(slot, h, text);
    return err;
}

/* ==== `hashes`: one pass over every tensor in file order ==== */

typedef struct model_pass {
    const ggfs_digest_module *module;
    ggfs_digests *model;  // the model's four hashes
    ggfs_digests *uuid;   // SHA-1 of the namespace, then of the bytes
    ggfs_digests *tensor; // the tensor's hashes not known yet; NULL when none
} model_pass;

static void consume_all(void *ctx, const uint8_t *bytes, size_t len)
{
    model_pass *p = ctx;
    ggfs_digests_update(p->model, bytes, len);
    ggfs_digests_update(p->uuid, bytes, len);
    if (p->tensor)
        ggfs_digests_update(p->tensor, bytes, len);
}

/* Passes tensor i through the model's hashes, and through whichever of
 * its own are not known, claiming for publication those nobody computes;
 * then writes its four lines at *p. */
static int pass_tensor(ggfs_hash_cache *c, const ggfs_model *m, uint64_t i, model_pass *pass, char **p)
{
    pthread_mutex_lock(&c->group.lock);
    ggfs_tensor_digests *slot = slot_of(c, i);
    if (!slot) {
        pthread_mutex_unlock(&c->group.lock);
        return ENOMEM;
    }
    const unsigned known = atomic_load_explicit(&slot->done, memory_order_acquire);
    const unsigned need = GGFS_ALL_HASHES & ~known;
    const unsigned claimed = need & ~(unsigned)c->computing[i];
    c->computing[i] |= (uint8_t)claimed;
    pthread_mutex_unlock(&c->group.lock);

    uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX];
    int err = 0;
    pass->tensor = need ? ggfs_digests_new(pass->module, need) : NULL;
    if (need && !pass->tensor)
        err = ENOMEM;
    if (!err)
        err = ggfs_model_tensor_bytes(m, i, c->cancel, consume_all, pass);
    if (!err && pass->tensor && !ggfs_digests_final(pass->tensor, out))
        err = ENOMEM;
    ggfs_digests_free(pass->tensor);
    pass->tensor = NULL;
    publish(c, i, claimed, err == 0, out);
    if (err)
        return err;

    uint32_t shard;
    const ggp_str name = printed_name(ggfs_model_tensor(m, i, &shard));
    for (int h = 0; h < GGFS_N_GGUF_HASHES; h++) {
        const uint8_t *digest = (need & GGFS_HASH_BIT(h)) ? out[h] : slot->digest[h];
        *p = put_digest_line(*p, (ggfs_hash)h, digest, &name);
    }
    return 0;
}

/* The model's lines: its four hashes and the UUIDv5, formatted as
 * gguf-hash formats it (RFC 9562 §5.5: the SHA-1's first 16 bytes with
 * the version and variant bits set). */
static char *put_model_lines(char *p, uint8_t model[GGFS_N_HASHES][GGFS_DIGEST_MAX], const uint8_t *sha1)
{
    for (int h = 0; h < GGFS_N_GGUF_HASHES; h++)
        p = put_digest_line(p, (ggfs_hash)h, model[h], NULL);
    uint8_t u[16];
    memcpy(u, sha1, sizeof u);
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x50);
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
    // 8-4-4-4-12 hex digits, as gguf-hash's "%02x%02x%02x%02x-%02x%02x-..." prints it.
    char text[UUID_TEXT];
    char *t = text;
    for (int b = 0; b < 16; b++) {
        if (b == 4 || b == 6 || b == 8 || b == 10)
            *t++ = '-';
        ggfs_hex(&u[b], 1, t);
        t += 2;
    }
    return put_line(p, "uuid", text, UUID_TEXT, NULL);
}

typedef struct hashes_job {
    ggfs_hash_cache *c;
    const ggfs_model *m;
} hashes_job;

/* Computes `hashes` into a buffer of its exact size; allocates it. */
static int compute_text(void *ctx, void **text)
{
    ggfs_hash_cache *c = ((hashes_job *)ctx)->c;
    const ggfs_model *m = ((hashes_job *)ctx)->m;
    const ggfs_digest_module *module = module_of(c);
    if (!module)
        return EIO;
    char *buf = malloc(c->text_size ? (size_t)c->text_size : 1);
    model_pass pass = {module, ggfs_digests_new(module, GGFS_ALL_HASHES),
                       ggfs_digests_new(module, GGFS_HASH_BIT(GGFS_HASH_SHA1)), NULL};
    int err = buf && pass.model && pass.uuid ? 0 : ENOMEM;
    if (!err)
        ggfs_digests_update(pass.uuid, uuid_namespace, sizeof uuid_namespace);
    char *p = buf;
    for (uint64_t i = 0; i < m->n_tensors && !err; i++)
        err = pass_tensor(c, m, i, &pass, &p);
    uint8_t model[GGFS_N_HASHES][GGFS_DIGEST_MAX], uuid[GGFS_N_HASHES][GGFS_DIGEST_MAX];
    if (!err && (!ggfs_digests_final(pass.model, model) || !ggfs_digests_final(pass.uuid, uuid)))
        err = ENOMEM;
    if (!err)
        p = put_model_lines(p, model, uuid[GGFS_HASH_SHA1]);
    ggfs_digests_free(pass.model);
    ggfs_digests_free(pass.uuid);
    if (!err && (uint64_t)(p - buf) != c->text_size)
        err = EIO; // cannot be: the size and the lines are made by the same rules
    if (err) {
        free(buf);
        return err;
    }
    *text = buf;
    return 0;
}

int ggfs_hashes_get(ggfs_hash_cache *c, const ggfs_model *m, const char **text)
{
    hashes_job job = {c, m};
    void *value;
    const int err = ggfs_once_get(&c->group, &c->text, compute_text, &job, &value);
    *text = value;
    return err;
}
