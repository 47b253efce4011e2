/*
 * Reads of the shards' bytes. raw and model.gguf reply straight from the
 * shards' mappings with one gathered reply, so the only copy is the
 * kernel's; a file cut short under that copy makes the kernel's copy fail
 * (EFAULT to the daemon, EIO to the reader), never a signal. f32 (and the
 * f32 part of f32.npy) is decoded by the model (model/tensor_f32.h) into
 * this thread's scratch. Bytes that cannot be replied from a mapping (a
 * remote shard's) go through the source's read into this thread's scratch;
 * reads of a remote model run on the worker threads of tree->remote_reads,
 * unless their bytes are in memory already.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "model/tensor_f32.h"
#include "tree/deferred.h"
#include "tree/prefetch_trigger.h"
#include "tree/read_data.h"

#define MAX_PIECES 64       // runs gathered into one reply before copying instead
#define ZEROS_LEN 4096
#define LEND_MAX 8          // a source's blocks in one lent reply

static const char zeros[ZEROS_LEN];

/* The run of bytes of node that starts at off; model.gguf's as edited
 * when head is not NULL. */
static bool piece_at(ggfs_tree *tree, const ggfs_gguf_head *head, ggfs_node node, uint64_t off, ggfs_piece *piece)
{
    if (node.kind == GGFS_MODEL_GGUF)
        return ggfs_merged_piece(&tree->model->merged, head, off, piece);
    uint32_t shard;
    const ggp_tensor *t = ggfs_model_tensor(tree->model, node.index, &shard);
    *piece = (ggfs_piece){GGFS_PIECE_SHARD, shard, t->offset + off, NULL, t->bytes - off};
    return true;
}

/* Calls visit for each run of [start, start + len) in order, with where it
 * lands in the read (done) and its length; runs of zeros come at most
 * ZEROS_LEN at a time. Stops at the first non-zero return (an errno). */
static int walk(ggfs_tree *tree, const ggfs_gguf_head *head, ggfs_node node, uint64_t start, uint64_t len,
                int (*visit)(void *ctx, const ggfs_piece *p, uint64_t done, uint64_t run), void *ctx)
{
    for (uint64_t done = 0; done < len;) {
        ggfs_piece p;
        if (!piece_at(tree, head, node, start + done, &p))
            return ENOMEM;
        uint64_t run = p.len < len - done ? p.len : len - done;
        if (p.kind == GGFS_PIECE_ZEROS && run > ZEROS_LEN)
            run = ZEROS_LEN;
        const int err = visit(ctx, &p, done, run);
        if (err)
            return err;
        done += run;
    }
    return 0;
}

/* A read's runs as memory to reply from, before replying. */
typedef struct gather {
    const ggfs_model *model;
    struct iovec iov[MAX_PIECES];
    int n;
    bool mapped;             // every run can be replied from memory
    uint64_t touched;        // bit k: shard k % 64 gave bytes
} gather;

static int gather_run(void *ctx, const ggfs_piece *p, uint64_t done, uint64_t run)
{
    (void)done;
    gather *g = ctx;
    const uint8_t *bytes = NULL;
    switch (p->kind) {
    case GGFS_PIECE_HEADER:
        bytes = p->bytes;
        break;
    case GGFS_PIECE_ZEROS:
        bytes = (const uint8_t *)zeros;
        break;
    case GGFS_PIECE_SHARD: {
        ggfs_source *src = g->model->shards[p->shard].source;
        const uint64_t bit = UINT64_C(1) << (p->shard % 64);
        if (!(g->touched & bit) && !ggfs_source_unchanged(src))
            return EIO;
        g->touched |= bit;
        if (src->map)
            bytes = src->map + p->at;
        else
            g->mapped = false;
        break;
    }
    }
    if (g->mapped && g->n < MAX_PIECES)
        g->iov[g->n++] = (struct iovec){(void *)bytes, (size_t)run};
    else
        g->mapped = false;
    return 0;
}

/* A read's bytes copied through the sources' reads (no mapping is
 * touched, so nothing can fault). */
typedef struct copy {
    const ggfs_model *model;
    char *buf;
} copy;

static int copy_run(void *ctx, const ggfs_piece *p, uint64_t done, uint64_t run)
{
    copy *c = ctx;
    switch (p->kind) {
    case GGFS_PIECE_HEADER:
        memcpy(c->buf + done, p->bytes, (size_t)run);
        return 0;
    case GGFS_PIECE_ZEROS:
        memset(c->buf + done, 0, (size_t)run);
        return 0;
    case GGFS_PIECE_SHARD:
        return ggfs_source_read(c->model->shards[p->shard].source, c->buf + done, (size_t)run, p->at,
                                p->at + p->len);
    }
    return EIO;
}

/* After a reply from the mappings failed (the kernel could not copy: a
 * shard was cut short), the sources it touched say which and log it. */
static void recheck(ggfs_tree *tree, uint64_t touched)
{
    for (uint32_t k = 0; k < tree->model->n_shards; k++) {
        if (touched & (UINT64_C(1) << (k % 64)))
            ggfs_source_unchanged(tree->model->shards[k].source);
    }
}

/* Replies with the bytes a source lent (or with its error), then gives
 * them back: the reply has copied them. */
static void reply_lent(fuse_req_t req, ggfs_source *src, int err, const struct iovec *iov, int n, void *token)
{
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_iov(req, iov, n);
    src->ops->unlend(src, token);
}

/* A read inside one run of one shard whose source lends its memory (a
 * remote source's cached blocks) is replied from there, gathered, without
 * a copy into the scratch. Returns false when the read is not such a one. */
static bool read_lent(fuse_req_t req, ggfs_tree *tree, const ggfs_gguf_head *head, ggfs_node node, uint64_t start,
                      uint64_t len)
{
    ggfs_piece p;
    if (!piece_at(tree, head, node, start, &p) || p.kind != GGFS_PIECE_SHARD || p.len < len)
        return false;
    ggfs_source *src = tree->model->shards[p.shard].source;
    if (!src->ops->lend)
        return false;
    char *buf = ggfs_scratch_get(tree, (size_t)len);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return true;
    }
    struct iovec iov[LEND_MAX];
    int n;
    void *token;
    const int err = src->ops->lend(src, buf, (size_t)len, p.at, p.at + p.len, iov, LEND_MAX, &n, &token);
    reply_lent(req, src, err, iov, n, token);
    return true;
}

/* A read of raw or model.gguf whose bytes a source holds in memory now
 * (a remote source's cached blocks) is replied at once, on the thread that
 * took it: no hand-over to a remote-read thread. Returns false, having
 * replied nothing, when that is not so. */
static bool read_ready(fuse_req_t req, ggfs_tree *tree, const ggfs_gguf_head *head, ggfs_node node, uint64_t start,
                       uint64_t len)
{
    ggfs_piece p;
    if ((node.kind != GGFS_TENSOR_RAW && node.kind != GGFS_MODEL_GGUF) ||
        !piece_at(tree, head, node, start, &p) || p.kind != GGFS_PIECE_SHARD || p.len < len)
        return false;
    ggfs_source *src = tree->model->shards[p.shard].source;
    if (!src->ops->lend_ready)
        return false;
    struct iovec iov[LEND_MAX];
    int n;
    void *token;
    const int err = src->ops->lend_ready(src, (size_t)len, p.at, p.at + p.len, iov, LEND_MAX, &n, &token);
    if (err == EWOULDBLOCK)
        return false;
    reply_lent(req, src, err, iov, n, token);
    return true;
}

static void read_bytes(fuse_req_t req, ggfs_tree *tree, const ggfs_gguf_head *head, ggfs_node node, uint64_t start,
                       uint64_t len)
{
    if (read_lent(req, tree, head, node, start, len))
        return;
    gather g = {.model = tree->model, .n = 0, .mapped = true, .touched = 0};
    int err = walk(tree, head, node, start, len, gather_run, &g);
    if (err) {
        fuse_reply_err(req, err);
        return;
    }
    if (g.mapped) {
        if (fuse_reply_iov(req, g.iov, g.n) == -EFAULT)
            recheck(tree, g.touched);
        return;
    }
    char *buf = ggfs_scratch_get(tree, (size_t)len);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    copy c = {tree->model, buf};
    err = walk(tree, head, node, start, len, copy_run, &c);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_buf(req, buf, (size_t)len);
}

static void *thread_scratch(void *tree, size_t size)
{
    return ggfs_scratch_get(tree, size);
}

/* Decodes bytes [start, start + len) of the tensor's f32 view, from the
 * values of the elements they touch, into this thread's scratch; *bytes
 * points at them. Returns 0, or EIO when the shard changed or was cut
 * short, ENOMEM. */
static int decode_f32(ggfs_tree *tree, uint64_t index, uint64_t start, uint64_t len, const char **bytes)
{
    const uint64_t first = start / sizeof(float);
    const uint64_t end = (start + len + sizeof(float) - 1) / sizeof(float);
    float *values;
    const int err = ggfs_model_tensor_f32(tree->model, index, first, end - first, thread_scratch, tree, &values);
    if (!err)
        *bytes = (const char *)values + (start - first * sizeof(float));
    return err;
}

static void read_f32(fuse_req_t req, ggfs_tree *tree, uint64_t index, uint64_t start, uint64_t len)
{
    const char *bytes;
    const int err = decode_f32(tree, index, start, len, &bytes);
    if (err)
        fuse_reply_err(req, err);
    else
        fuse_reply_buf(req, bytes, (size_t)len);
}

/* f32.npy: the NumPy header, then the f32 view; a read across both is one
 * reply of the two pieces. */
static void read_npy(fuse_req_t req, ggfs_tree *tree, uint64_t index, uint64_t start, uint64_t len)
{
    uint32_t shard;
    const ggp_tensor *t = ggfs_model_tensor(tree->model, index, &shard);
    char header[GGP_NPY_HEADER_MAX];
    const uint64_t header_len = ggp_npy_header(t, header);
    struct iovec iov[2];
    int n = 0;
    if (start < header_len) {
        const uint64_t part = header_len - start < len ? header_len - start : len;
        iov[n++] = (struct iovec){header + start, (size_t)part};
        start += part;
        len -= part;
    }
    if (len > 0) {
        const char *bytes;
        const int err = decode_f32(tree, index, start - header_len, len, &bytes);
        if (err) {
            fuse_reply_err(req, err);
            return;
        }
        iov[n++] = (struct iovec){(void *)bytes, (size_t)len};
    }
    fuse_reply_iov(req, iov, n);
}

/* model.gguf as node's version has it: the view is held until the reply
 * has copied its header's bytes. */
static void read_gguf(fuse_req_t req, ggfs_tree *tree, ggfs_node node, uint64_t start, uint64_t len)
{
    ggfs_view *view = ggfs_node_view(tree, node);
    if (!view) {
        fuse_reply_err(req, ESTALE); // a version the kernel had forgotten
        return;
    }
    const ggfs_gguf_head *head = view->edited ? &view->gguf : NULL;
    const uint64_t size = head ? head->size : tree->model->merged.size;
    if (start >= size)
        fuse_reply_buf(req, NULL, 0);
    else
        read_bytes(req, tree, head, ggfs_node_at(GGFS_MODEL_GGUF, 0), start, size - start < len ? size - start : len);
    ggfs_view_put(view);
}

static void serve_read(fuse_req_t req, ggfs_tree *tree, ggfs_node node, uint64_t start, uint64_t len)
{
    switch (node.kind) {
    case GGFS_TENSOR_RAW:
        read_bytes(req, tree, NULL, node, start, len);
        break;
    case GGFS_MODEL_GGUF:
        read_gguf(req, tree, node, start, len);
        break;
    case GGFS_TENSOR_F32:
        read_f32(req, tree, node.index, start, len);
        break;
    case GGFS_TENSOR_NPY:
        read_npy(req, tree, node.index, start, len);
        break;
    default:
        fuse_reply_err(req, EIO);
    }
}

/* ==== Reads of remote models, off the loop's threads ==== */

typedef struct deferred_read {
    ggfs_tree *tree;
    ggfs_node node;
    uint64_t start, len;
} deferred_read;

static void serve_deferred(fuse_req_t req, void *args)
{
    const deferred_read *d = args;
    serve_read(req, d->tree, d->node, d->start, d->len);
}

void ggfs_read_data(fuse_req_t req, ggfs_tree *tree, ggfs_node node, uint64_t start, uint64_t len)
{
    if (node.kind == GGFS_MODEL_GGUF)
        ggfs_prefetch_trigger_read(tree->prefetch_trigger, start, len);
    // A remote read may wait on the network for up to timeout_s: it runs on
    // a thread of its own, and the loop thread goes back to other requests.
    if (tree->remote_reads) {
        // An edited model.gguf is for read_gguf to clamp and serve.
        if ((node.kind != GGFS_MODEL_GGUF || !tree->edits) && read_ready(req, tree, NULL, node, start, len))
            return;
        const deferred_read d = {tree, node, start, len};
        if (ggfs_tree_defer(tree, req, serve_deferred, &d, sizeof d))
            return;
    }
    serve_read(req, tree, node, start, len);
}
