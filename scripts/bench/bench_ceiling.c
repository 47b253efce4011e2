/*
 * bench_ceiling: the smallest FUSE server that can serve a tensor, to
 * measure what FUSE itself costs on this machine. scripts/bench/run
 * compares gguf-fs against it.
 *
 *   bench_ceiling FILE OFFSET SIZE [FUSE options] MOUNTPOINT
 *
 * The mount has one file, "data", of SIZE bytes: bytes OFFSET .. OFFSET +
 * SIZE of FILE, replied straight from one read-only mmap of FILE with
 * fuse_reply_buf (no splice, no per-read allocation); the mapping is
 * populated before mounting, so reads take no page faults. Same low-level API,
 * default options, multi-threaded loop and keep_cache as gguf-fs; nothing
 * else (no xattrs, no write refusals: the kernel mount is read-only).
 */
#define _GNU_SOURCE // MAP_POPULATE
#define FUSE_USE_VERSION 312 // fuse_loop_cfg_*, as fs/meson.build

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_fuse_serve.h"

#define DATA_INO 2
#define TIMEOUT (365.0 * 24 * 3600)

static const char *data_bytes; // FILE's mapping + OFFSET
static uint64_t data_size;     // SIZE
static struct stat model_st;   // owner and times for both inodes

static int fill_stat(fuse_ino_t ino, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = ino;
    st->st_uid = model_st.st_uid;
    st->st_gid = model_st.st_gid;
    st->st_atim = model_st.st_atim;
    st->st_mtim = model_st.st_mtim;
    st->st_ctim = model_st.st_ctim;
    if (ino == FUSE_ROOT_ID) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
    } else if (ino == DATA_INO) {
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = (off_t)data_size;
        st->st_blksize = 4096;
        st->st_blocks = (blkcnt_t)((data_size + 511) / 512);
    } else {
        return -1;
    }
    return 0;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    if (parent != FUSE_ROOT_ID || strcmp(name, "data") != 0) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    fill_stat(DATA_INO, &e.attr);
    e.ino = DATA_INO;
    e.attr_timeout = TIMEOUT;
    e.entry_timeout = TIMEOUT;
    fuse_reply_entry(req, &e);
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

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
    (void)fi;
    static const char *const names[] = {".", "..", "data"};
    static const fuse_ino_t inos[] = {FUSE_ROOT_ID, FUSE_ROOT_ID, DATA_INO};
    if (ino != FUSE_ROOT_ID) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    char buf[512];
    size_t used = 0;
    if (size > sizeof buf)
        size = sizeof buf;
    for (off_t i = off; i < 3; i++) {
        struct stat st;
        fill_stat(inos[i], &st);
        const size_t need = fuse_add_direntry(req, buf + used, size - used, names[i], &st, i + 1);
        if (need > size - used)
            break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    if (ino != DATA_INO) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    if ((fi->flags & O_ACCMODE) != O_RDONLY) {
        fuse_reply_err(req, EROFS);
        return;
    }
    fi->keep_cache = 1;
    fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    (void)ino, (void)fi;
    if (off < 0 || (uint64_t)off >= data_size) {
        fuse_reply_buf(req, NULL, 0);
        return;
    }
    const uint64_t left = data_size - (uint64_t)off;
    fuse_reply_buf(req, data_bytes + off, left < size ? (size_t)left : size);
}

static const struct fuse_lowlevel_ops ops = {
    .lookup = op_lookup,
    .getattr = op_getattr,
    .readdir = op_readdir,
    .open = op_open,
    .read = op_read,
};

static unsigned long long parse_u64(const char *what, const char *s)
{
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end) {
        fprintf(stderr, "bench_ceiling: %s: '%s' is not a number\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char *argv[])
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s FILE OFFSET SIZE [FUSE options] MOUNTPOINT\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    const uint64_t offset = parse_u64("OFFSET", argv[2]);
    data_size = parse_u64("SIZE", argv[3]);

    const int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &model_st) != 0) {
        perror(path);
        return 1;
    }
    if (offset > (uint64_t)model_st.st_size || data_size > (uint64_t)model_st.st_size - offset) {
        fprintf(stderr, "bench_ceiling: %s: %llu bytes at %llu do not fit in %lld\n", path,
                (unsigned long long)data_size, (unsigned long long)offset,
                (long long)model_st.st_size);
        return 1;
    }
    const char *map =
        mmap(NULL, (size_t)model_st.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    close(fd);
    data_bytes = map + offset;

    // argv[0] and the FUSE arguments after SIZE.
    argv[3] = argv[0];
    return bench_fuse_serve(argc - 3, argv + 3, &ops, sizeof ops,
                            "-oro,default_permissions,subtype=bench_ceiling,fsname=ceiling");
}
