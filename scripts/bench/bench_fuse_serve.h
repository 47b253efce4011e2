/*
 * The FUSE session of the bench's minimal servers (bench_ceiling.c,
 * bench_walk_floor.c): mounted read-only, served by the same
 * multi-threaded loop as gguf-fs, unmounted at the end.
 */
#ifndef BENCH_FUSE_SERVE_H
#define BENCH_FUSE_SERVE_H

#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>

/* Serves ops on the mount point named in argv (argv[0], then FUSE options
 * and the mount point), with `options` (a -o list) added. Returns the exit
 * status: 0, 1 on failure, 2 without a mount point. */
static int bench_fuse_serve(int argc, char **argv, const struct fuse_lowlevel_ops *ops,
                            size_t ops_size, const char *options)
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts cmd;
    if (fuse_parse_cmdline(&args, &cmd) != 0 || !cmd.mountpoint) {
        fprintf(stderr, "%s: no mount point\n", argv[0]);
        fuse_opt_free_args(&args);
        return 2;
    }
    int status = 1;
    struct fuse_session *se = NULL;
    if (fuse_opt_add_arg(&args, options) != 0 || !(se = fuse_session_new(&args, ops, ops_size, NULL)))
        goto out;
    if (fuse_set_signal_handlers(se) != 0)
        goto out_session;
    if (fuse_session_mount(se, cmd.mountpoint) != 0)
        goto out_signals;
    fuse_daemonize(cmd.foreground);
    if (cmd.singlethread) {
        status = fuse_session_loop(se);
    } else {
        struct fuse_loop_config *loop = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(loop, cmd.clone_fd);
        fuse_loop_cfg_set_max_threads(loop, cmd.max_threads);
        status = fuse_session_loop_mt(se, loop);
        fuse_loop_cfg_destroy(loop);
    }
    status = status == 0 ? 0 : 1;
    fuse_session_unmount(se);
out_signals:
    fuse_remove_signal_handlers(se);
out_session:
    fuse_session_destroy(se);
out:
    free(cmd.mountpoint);
    fuse_opt_free_args(&args);
    return status;
}

#endif
