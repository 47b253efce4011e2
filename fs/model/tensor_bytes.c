/*
 * A tensor's bytes, chunk by chunk, from the mapping or through the
 * source (tensor_bytes.h). Before each chunk of the mapping is hashed its
 * pages are mapped in one call (MADV_POPULATE_READ), which costs less than
 * taking their faults one by one; on a file cut short that call fails
 * and the pass's first touch of a missing page raises SIGBUS, which the
 * guard turns into EIO.
 */
#define _GNU_SOURCE // madvise, MADV_POPULATE_READ

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/guard.h"
#include "model/tensor_bytes.h"
#include "model/tensor_shard.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 // Linux 5.14; older kernels say EINVAL, and the pass faults as usual
#endif

/* The remote path reads this much per request to the source: its
 * read-ahead follows the sequential reader beyond it. */
#define READ_CHUNK ((size_t)4 << 20)

typedef struct mapped_pass {
    const uint8_t *bytes;
    uint64_t len;
    const ggfs_cancel *cancel;
    ggfs_bytes_consumer consume;
    void *ctx;
    bool cancelled; // out: the pass stopped when asked to
} mapped_pass;

static void populate(const uint8_t *bytes, size_t len)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t start = (uintptr_t)bytes & ~(page - 1);
    madvise((void *)start, (uintptr_t)bytes + len - start, MADV_POPULATE_READ);
}

static void pass_mapped(void *arg)
{
    mapped_pass *p = arg;
    for (uint64_t done = 0; done < p->len;) {
        if (ggfs_cancel_asked(p->cancel)) {
            p->cancelled = true;
            return;
        }
        const size_t n = p->len - done < GGFS_TENSOR_CHUNK ? (size_t)(p->len - done) : GGFS_TENSOR_CHUNK;
        populate(p->bytes + done, n);
        p->consume(p->ctx, p->bytes + done, n);
        done += n;
    }
}

static int pass_read(ggfs_source *src, uint64_t off, uint64_t len, const ggfs_cancel *cancel,
                     ggfs_bytes_consumer consume, void *ctx)
{
    const size_t cap = len < READ_CHUNK ? (size_t)len : READ_CHUNK;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf)
        return ENOMEM;
    int err = 0;
    for (uint64_t done = 0; done < len && !err;) {
        if (ggfs_cancel_asked(cancel)) {
            err = ECANCELED;
            break;
        }
        const size_t n = len - done < cap ? (size_t)(len - done) : cap;
        err = ggfs_source_read(src, buf, n, off + done, off + len);
        if (!err) {
            consume(ctx, buf, n);
            done += n;
        }
    }
    free(buf);
    return err;
}

/* Passes [off, off + len) of the shard's bytes to consume. */
static int pass_range(const ggfs_shard *s, uint64_t off, uint64_t len, const ggfs_cancel *cancel,
                      ggfs_bytes_consumer consume, void *ctx)
{
    int err = 0;
    if (s->source->map) {
        mapped_pass p = {s->source->map + off, len, cancel, consume, ctx, false};
        if (!ggfs_guarded_run(pass_mapped, &p))
            err = ggfs_shard_cut_short(s);
        else if (p.cancelled)
            err = ECANCELED;
    } else {
        err = pass_read(s->source, off, len, cancel, consume, ctx);
    }
    return ggfs_shard_recheck(s, err);
}

int ggfs_model_tensor_bytes(const ggfs_model *m, uint64_t index, const ggfs_cancel *cancel,
                            ggfs_bytes_consumer consume, void *ctx)
{
    const ggp_tensor *t;
    const ggfs_shard *s = ggfs_tensor_shard(m, index, &t);
    if (!s || !t->type)
        return EIO;
    return pass_range(s, t->offset, t->bytes, cancel, consume, ctx);
}

int ggfs_shard_bytes(const ggfs_shard *s, const ggfs_cancel *cancel, ggfs_bytes_consumer consume, void *ctx)
{
    if (!ggfs_source_unchanged(s->source))
        return EIO;
    return pass_range(s, 0, s->source->size, cancel, consume, ctx);
}
