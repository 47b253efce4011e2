/*
 * bench_walk_floor: the smallest FUSE server that answers a walk over a
 * folder of models, to measure what FUSE itself costs per model on this
 * machine. scripts/bench/catalog compares gguf-fs against it.
 *
 *   bench_walk_floor [--no-open] N [FUSE options] MOUNTPOINT
 *
 * The mount has N directories m00000.gguf ..., each holding
 * metadata/general.architecture, whose text is "llama\n": the part of a
 * catalog that `cat * /metadata/general.architecture` walks, with every
 * answer computed from the inode number (no model behind it). Same
 * low-level API, multi-threaded loop, one-second entry and attribute
 * timeouts, listings with attributes (readdirplus) and keep_cache as a
 * gguf-fs catalog; nothing else. With --no-open, opens answer ENOSYS,
 * after which the kernel sends no more opens or releases: what a server
 * without per-open state could save (-s: what one thread could).
 */
#define FUSE_USE_VERSION 312 // fuse_loop_cfg_*, as fs/meson.build

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_fuse_serve.h"

#define TIMEOUT 1.0 // as a catalog's
#define PER_MODEL 3 // its directory, metadata/, general.architecture
#define TEXT "llama\n"

/* Model i's inodes are 2 + 3i (its directory), 3 + 3i (metadata), 4 + 3i
 * (general.architecture). */
typedef enum { ROOT, MODEL, METADATA, ARCH } node;

static unsigned long models; // N, set once in main before the loop
static bool no_open;         // --no-open, set once in main before the loop

static node node_of(fuse_ino_t ino)
{
    return ino == FUSE_ROOT_ID ? ROOT : (node)((ino - 2) % PER_MODEL + MODEL);
}

static int fill_stat(fuse_ino_t ino, struct stat *st)
{
    memset(st, 0, sizeof *st);
    if (ino != FUSE_ROOT_ID && (ino < 2 || (ino - 2) / PER_MODEL >= models))
        return -1;
    st->st_ino = ino;
    if (node_of(ino) == ARCH) {
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = sizeof TEXT - 1;
    } else {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
    }
    return 0;
}

static void reply_entry(fuse_req_t req, fuse_ino_t ino)
{
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    fill_stat(ino, &e.attr);
    e.ino = ino;
    e.attr_timeout = TIMEOUT;
    e.entry_timeout = TIMEOUT;
    fuse_reply_entry(req, &e);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    unsigned long i;
    char tail;
    const node n = node_of(parent);
    if (n == ROOT && sscanf(name, "m%5lu.gguf%c", &i, &tail) == 1 && i < models)
        reply_entry(req, 2 + PER_MODEL * i);
    else if (n == MODEL && strcmp(name, "metadata") == 0)
        reply_entry(req, parent + 1);
    else if (n == METADATA && strcmp(name, "general.architecture") == 0)
        reply_entry(req, parent + 1);
    else
        fuse_reply_err(req, ENOENT);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    struct stat st;
    if (fill_stat(ino, &st) != 0)
        fuse_reply_err(req, ENOENT);
    else
        fuse_reply_attr(req, &st, TIMEOUT);
}

/* The root's listing, with each model directory's attributes and inode,
 * as a catalog's readdirplus gives them. */
static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                           struct fuse_file_info *fi)
{
    (void)fi;
    if (node_of(ino) != ROOT) {
        fuse_reply_err(req, ENOTSUP); // the walk lists only the root
        return;
    }
    char *buf = malloc(size);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    size_t used = 0;
    for (off_t k = off; k < (off_t)models; k++) {
        char name[32];
        struct fuse_entry_param e;
        memset(&e, 0, sizeof e);
        snprintf(name, sizeof name, "m%05lu.gguf", (unsigned long)k);
        e.ino = 2 + PER_MODEL * (fuse_ino_t)k;
        fill_stat(e.ino, &e.attr);
        e.attr_timeout = TIMEOUT;
        e.entry_timeout = TIMEOUT;
        const size_t need = fuse_add_direntry_plus(req, buf + used, size - used, name, &e, k + 1);
        if (need > size - used)
            break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

/* Listings always carry attributes, as in a catalog. */
static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    (void)userdata;
    conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    if (node_of(ino) != ARCH) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    if (no_open) {
        fuse_reply_err(req, ENOSYS);
        return;
    }
    fi->keep_cache = 1;
    fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    (void)ino, (void)fi;
    const size_t len = sizeof TEXT - 1;
    if (off < 0 || (size_t)off >= len)
        fuse_reply_buf(req, NULL, 0);
    else
        fuse_reply_buf(req, &TEXT[off], len - (size_t)off < size ? len - (size_t)off : size);
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .readdirplus = op_readdirplus,
    .open = op_open,
    .read = op_read,
};

int main(int argc, char *argv[])
{
    if (argc > 1 && strcmp(argv[1], "--no-open") == 0) {
        no_open = true;
        argv[1] = argv[0];
        argc--, argv++;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s [--no-open] N [FUSE options] MOUNTPOINT\n", argv[0]);
        return 2;
    }
    char *end;
    models = strtoul(argv[1], &end, 10);
    if (*end || models == 0 || models > 100000) {
        fprintf(stderr, "bench_walk_floor: N: '%s' is not a number from 1 to 100000\n", argv[1]);
        return 2;
    }
    argv[1] = argv[0];
    return bench_fuse_serve(argc - 1, argv + 1, &ops, sizeof ops,
                            "-oro,default_permissions,subtype=bench_walk_floor,fsname=floor");
}
