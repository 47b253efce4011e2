/*
 * gguf-fs: mounts a GGUF model (a file, or a split set by any of its
 * shards) as a read-only directory tree, or every model under a folder.
 *
 *   gguf-fs [options] SOURCE MOUNTPOINT
 *
 * The command line is checked first (exit 2, fs/cli.c), then a model is
 * opened and validated before anything is mounted (a bad one is one line on
 * stderr and exit 1; a folder's models are opened as they are looked into),
 * then mounted (exit 3 when that fails). Once this command returns 0 the
 * mount answers requests: it daemonizes only after mounting. Under a
 * service manager the daemon says READY=1 at that point (fs/notify.h).
 */
#define _DEFAULT_SOURCE // vsyslog is not POSIX
#include <errno.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "catalog_ops.h"
#include "cli.h"
#include "guard.h"
#include "notify.h"
#include "ops.h"
#include "readahead.h"
#include "remote.h"
#include "tree.h"
#include "workers.h"

// Reads of a remote model wait on the network on threads of their own; the
// kernel keeps at most a dozen read-aheads in flight per mount, so this
// many leaves room for other files' reads however many are stalled.
#define GGFS_REMOTE_READ_THREADS 32
#define GGFS_REMOTE_READ_QUEUE 1024

static void report_open_error(const ggfs_model_error *err)
{
    const ggp_error *e = &err->error;
    if ((e->code == GGP_ERR_IO && e->offset == 0) || e->code == GGP_ERR_NOMEM)
        fprintf(stderr, "gguf-fs: %s: %s\n", err->where, e->msg);
    else
        fprintf(stderr, "gguf-fs: %s: offset 0x%llx: %s\n", err->where,
                (unsigned long long)e->offset, e->msg);
}

/* Once daemonized, stderr is /dev/null: log lines go to syslog. */
static void log_to_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
    vsyslog((int)level, fmt, ap);
}

/* Tells the service manager, if any, of a state change; a failure is
 * logged, not fatal (the unit's timeout says the rest). */
static void notify(const char *state)
{
    const char *socket_path = getenv("NOTIFY_SOCKET");
    if (!ggfs_notify(socket_path, state))
        fuse_log(FUSE_LOG_ERR, "gguf-fs: cannot send %s to NOTIFY_SOCKET %s: %s\n", state,
                 socket_path, strerror(errno));
}

/* Mounts and serves until unmounted: ops over userdata. Returns the exit
 * status: GGFS_EXIT_MOUNT when mounting fails or the loop ends in an error
 * (the parent of a daemon has returned GGFS_EXIT_MOUNTED by then). */
static int serve(const struct fuse_lowlevel_ops *ops, void *userdata, unsigned readahead_kb,
                 const char *source, struct fuse_args *args, struct fuse_cmdline_opts *cmd)
{
    // The options were tried when the command line was read (cli.c).
    struct fuse_session *se = fuse_session_new(args, ops, sizeof *ops, userdata);
    if (!se)
        return GGFS_EXIT_USAGE;
    int status = GGFS_EXIT_MOUNT;
    // f32 is decoded straight from the model's mapping: a model cut short
    // under it must give EIO, not SIGBUS.
    if (!ggfs_guard_install() || fuse_set_signal_handlers(se) != 0)
        goto out_session;
    if (fuse_session_mount(se, cmd->mountpoint) != 0) {
        fprintf(stderr, "gguf-fs: %s: cannot mount on %s\n", source, cmd->mountpoint);
        goto out_signals;
    }
    if (readahead_kb && !ggfs_set_mount_readahead(cmd->mountpoint, readahead_kb))
        fprintf(stderr, "gguf-fs: %s: cannot set read-ahead to %u KiB: %s (continuing)\n", source,
                readahead_kb, strerror(errno));
    if (!cmd->foreground) {
        openlog("gguf-fs", LOG_PID, LOG_DAEMON);
        fuse_set_log_func(log_to_syslog);
    }
    fuse_daemonize(cmd->foreground);
    // Requests wait in the kernel until the loop takes them: the mount
    // answers from here on.
    notify("READY=1");
    int res;
    if (cmd->singlethread) {
        res = fuse_session_loop(se);
    } else {
        struct fuse_loop_config *loop = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(loop, cmd->clone_fd);
        fuse_loop_cfg_set_max_threads(loop, cmd->max_threads);
        if (cmd->max_idle_threads != UINT_MAX)
            fuse_loop_cfg_set_idle_threads(loop, cmd->max_idle_threads);
        res = fuse_session_loop_mt(se, loop);
        fuse_loop_cfg_destroy(loop);
    }
    notify("STOPPING=1");
    // The loop returns the number of the signal that ended it (SIGTERM from
    // systemctl stop, say): a clean end as much as an unmount is.
    status = res >= 0 ? GGFS_EXIT_MOUNTED : GGFS_EXIT_MOUNT;
    fuse_session_unmount(se);
out_signals:
    fuse_remove_signal_handlers(se);
out_session:
    fuse_session_destroy(se);
    return status;
}

/* Mounts every model under the folder cli->source: nothing is read but
 * the folder's own entry until someone looks. */
static int serve_catalog(ggfs_cli *cli, struct fuse_args *args)
{
    int err;
    ggfs_catalog_mount mount = {
        .catalog = ggfs_catalog_open(cli->source, cli->cmd.mountpoint, cli->max_open, &err),
        .readahead_kb = cli->readahead_kb,
    };
    if (!mount.catalog) {
        fprintf(stderr, "gguf-fs: %s: %s\n", cli->source, strerror(err));
        return GGFS_EXIT_REFUSED;
    }
    const int status = serve(&ggfs_catalog_ops, &mount, mount.readahead_kb, cli->source, args, &cli->cmd);
    ggfs_catalog_close(mount.catalog);
    return status;
}

int main(int argc, char *argv[])
{
    // Reads use buffers of up to a read-ahead window (1 MiB). Left to
    // itself, glibc raises its mmap threshold after the first such free and
    // keeps later ones in each thread's arena for good; a fixed threshold
    // hands them back, so the daemon stays small however many threads ran.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    struct fuse_args args;
    ggfs_cli cli;
    int status = ggfs_cli_parse(argc, argv, &args, &cli);
    if (status >= 0)
        goto out_args;

    status = GGFS_EXIT_REFUSED;
    struct stat st;
    if (stat(cli.source, &st) == 0 && S_ISDIR(st.st_mode)) {
        status = serve_catalog(&cli, &args);
        goto out_args;
    }
    ggfs_remote *remote = NULL;
    ggfs_model *model = NULL;
    if (ggfs_remote_name(cli.source)) {
        const ggfs_remote_options ro = {
            .cache_mb = cli.cache_mb,
            .cache_dir = cli.cache_dir,
            .timeout_s = cli.timeout_s ? cli.timeout_s : 1,
        };
        char why[256];
        remote = ggfs_remote_new(&ro, why, sizeof why);
        if (!remote) {
            fprintf(stderr, "gguf-fs: %s: %s\n", cli.source, why);
            goto out_args;
        }
    }
    ggfs_model_error err;
    model = ggfs_model_open(cli.source, remote, &err);
    if (!model) {
        report_open_error(&err);
        goto out_remote;
    }
    ggfs_tree tree;
    if (!ggfs_tree_init(&tree, model)) {
        fprintf(stderr, "gguf-fs: %s: out of memory\n", cli.source);
        goto out_model;
    }
    tree.readahead_kb = cli.readahead_kb;
    if (remote && !(tree.remote_reads = ggfs_workers_new(GGFS_REMOTE_READ_THREADS, GGFS_REMOTE_READ_QUEUE))) {
        fprintf(stderr, "gguf-fs: %s: out of memory\n", cli.source);
        ggfs_tree_destroy(&tree);
        goto out_model;
    }
    status = serve(&ggfs_ops, &tree, tree.readahead_kb, cli.source, &args, &cli.cmd);
    // Normally gone with the session (ggfs_op_destroy).
    ggfs_workers_free(tree.remote_reads);
    ggfs_tree_destroy(&tree);
out_model:
    ggfs_model_close(model);
out_remote:
    ggfs_remote_free(remote);
out_args:
    ggfs_cli_destroy(&cli, &args);
    return status;
}
