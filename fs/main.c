/*
 * gguf-fs: mounts a GGUF model (a file, or a split set by any of its
 * shards) as a read-only directory tree, or every model under a folder.
 *
 *   gguf-fs [FUSE options] MODEL.gguf MOUNTPOINT
 *   gguf-fs [FUSE options] DIR MOUNTPOINT
 *
 * A model is opened and validated before anything is mounted; a bad file
 * is one line on stderr and exit status 1. A folder's models are opened as
 * they are looked into. Once this command returns 0 the mount answers
 * requests (it daemonizes only after mounting).
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
#include "guard.h"
#include "ops.h"
#include "readahead.h"
#include "tree.h"

#define GGFS_VERSION "0.1.0"
#define GGFS_DEFAULT_READAHEAD_KB 1024
// Each loop thread keeps a scratch the size of a read (up to the read-ahead
// window). Four threads keep two cores busy while the kernel reads ahead;
// ten (libfuse's default) only hold more memory. Letting idle threads exit
// instead measured 15% slower.
#define GGFS_DEFAULT_MAX_THREADS 4

typedef struct options {
    const char *model;
    int show_help;
    int show_version;
    int max_threads_given;
    unsigned readahead_kb; // 0: the kernel's default
    unsigned max_open;     // a folder's models open at once
} options;

enum { KEY_MAX_THREADS = 1 };

static const struct fuse_opt option_spec[] = {
    FUSE_OPT_KEY("max_threads=", KEY_MAX_THREADS),
    {"-h", offsetof(options, show_help), 1},
    {"--help", offsetof(options, show_help), 1},
    {"-V", offsetof(options, show_version), 1},
    {"--version", offsetof(options, show_version), 1},
    {"readahead_kb=%u", offsetof(options, readahead_kb), 0},
    {"max_open=%u", offsetof(options, max_open), 0},
    FUSE_OPT_END,
};

/* Takes the first non-option argument as the model; the next one is the
 * mount point, left for fuse_parse_cmdline. Notes whether the user chose
 * max_threads. */
static int take_model(void *data, const char *arg, int key, struct fuse_args *outargs)
{
    (void)outargs;
    options *o = data;
    if (key == KEY_MAX_THREADS)
        o->max_threads_given = 1; // and kept for fuse_parse_cmdline
    if (key == FUSE_OPT_KEY_NONOPT && o->model == NULL) {
        o->model = arg;
        return 0;
    }
    return 1;
}

static void usage(const char *prog)
{
    printf("usage: %s [options] MODEL.gguf MOUNTPOINT\n"
           "       %s [options] DIR MOUNTPOINT\n\n"
           "Mounts a GGUF model file as a read-only directory tree:\n"
           "  header, metadata/KEY, tensors/NAME/{info,raw,f32}\n"
           "or every model under DIR, each as a directory named as its file.\n\n"
           "    -h   --help            print help\n"
           "    -V   --version         print version\n"
           "    -o readahead_kb=N      read-ahead of this mount in KiB (default %u;\n"
           "                           0 keeps the kernel's 128)\n"
           "    -o max_open=N          models of a DIR open at once (default %u)\n",
           prog, prog, GGFS_DEFAULT_READAHEAD_KB, GGFS_DEFAULT_MAX_OPEN);
    fuse_cmdline_help();
    fuse_lowlevel_help();
}

/* fsname= takes the model path; FUSE option syntax needs ',' and '\'
 * escaped. Returns a malloc'ed "-o..." argument. */
static char *mount_options(const char *model)
{
    static const char prefix[] = "-oro,default_permissions,subtype=gguf,fsname=";
    char *arg = malloc(sizeof prefix + 2 * strlen(model));
    if (!arg)
        return NULL;
    char *o = arg + sprintf(arg, "%s", prefix);
    for (const char *p = model; *p; p++) {
        if (*p == ',' || *p == '\\')
            *o++ = '\\';
        *o++ = *p;
    }
    *o = '\0';
    return arg;
}

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

/* Mounts and serves until unmounted: ops over userdata. */
static int serve(const struct fuse_lowlevel_ops *ops, void *userdata, unsigned readahead_kb,
                 const char *source, struct fuse_args *args, struct fuse_cmdline_opts *cmd)
{
    int status = 1;
    struct fuse_session *se = fuse_session_new(args, ops, sizeof *ops, userdata);
    if (!se)
        return 1;
    // f32 is decoded straight from the model's mapping: a model cut short
    // under it must give EIO, not SIGBUS.
    if (!ggfs_guard_install() || fuse_set_signal_handlers(se) != 0)
        goto out_session;
    if (fuse_session_mount(se, cmd->mountpoint) != 0)
        goto out_signals;
    if (readahead_kb && !ggfs_set_mount_readahead(cmd->mountpoint, readahead_kb))
        fprintf(stderr, "gguf-fs: %s: cannot set read-ahead to %u KiB: %s (continuing)\n", source,
                readahead_kb, strerror(errno));
    if (!cmd->foreground) {
        openlog("gguf-fs", LOG_PID, LOG_DAEMON);
        fuse_set_log_func(log_to_syslog);
    }
    fuse_daemonize(cmd->foreground);
    if (cmd->singlethread) {
        status = fuse_session_loop(se);
    } else {
        struct fuse_loop_config *loop = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(loop, cmd->clone_fd);
        fuse_loop_cfg_set_max_threads(loop, cmd->max_threads);
        if (cmd->max_idle_threads != UINT_MAX)
            fuse_loop_cfg_set_idle_threads(loop, cmd->max_idle_threads);
        status = fuse_session_loop_mt(se, loop);
        fuse_loop_cfg_destroy(loop);
    }
    status = status == 0 ? 0 : 1;
    fuse_session_unmount(se);
out_signals:
    fuse_remove_signal_handlers(se);
out_session:
    fuse_session_destroy(se);
    return status;
}

/* Mounts every model under the folder opts->model: nothing is read but
 * the folder's own entry until someone looks. */
static int serve_catalog(const options *opts, struct fuse_args *args, struct fuse_cmdline_opts *cmd)
{
    int err;
    ggfs_catalog_mount mount = {
        .catalog = ggfs_catalog_open(opts->model, cmd->mountpoint, opts->max_open, &err),
        .readahead_kb = opts->readahead_kb,
    };
    if (!mount.catalog) {
        fprintf(stderr, "gguf-fs: %s: %s\n", opts->model, strerror(err));
        return 1;
    }
    const int status = serve(&ggfs_catalog_ops, &mount, mount.readahead_kb, opts->model, args, cmd);
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
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    options opts = {.readahead_kb = GGFS_DEFAULT_READAHEAD_KB, .max_open = GGFS_DEFAULT_MAX_OPEN};
    if (fuse_opt_parse(&args, &opts, option_spec, take_model) != 0)
        return 1;
    if (opts.show_help) {
        usage(argv[0]);
        fuse_opt_free_args(&args);
        return 0;
    }
    if (opts.show_version) {
        printf("gguf-fs version %s\nFUSE library version %s\n", GGFS_VERSION, fuse_pkgversion());
        fuse_lowlevel_version();
        fuse_opt_free_args(&args);
        return 0;
    }
    struct fuse_cmdline_opts cmd;
    if (fuse_parse_cmdline(&args, &cmd) != 0)
        return 1;
    if (!opts.max_threads_given)
        cmd.max_threads = GGFS_DEFAULT_MAX_THREADS;
    if (!opts.model || !cmd.mountpoint) {
        fprintf(stderr, "usage: %s [options] MODEL.gguf|DIR MOUNTPOINT (see --help)\n", argv[0]);
        free(cmd.mountpoint);
        fuse_opt_free_args(&args);
        return 1;
    }

    int status = 1;
    char *mount_opts = mount_options(opts.model);
    if (!mount_opts || fuse_opt_add_arg(&args, mount_opts) != 0) {
        fprintf(stderr, "gguf-fs: %s: out of memory\n", opts.model);
        free(mount_opts);
        goto out_args;
    }
    free(mount_opts);
    struct stat st;
    if (stat(opts.model, &st) == 0 && S_ISDIR(st.st_mode)) {
        status = serve_catalog(&opts, &args, &cmd);
        goto out_args;
    }
    ggfs_model_error err;
    ggfs_model *model = ggfs_model_open(opts.model, &err);
    if (!model) {
        report_open_error(&err);
        goto out_args;
    }
    ggfs_tree tree;
    if (!ggfs_tree_init(&tree, model)) {
        fprintf(stderr, "gguf-fs: %s: out of memory\n", opts.model);
        goto out_model;
    }
    tree.readahead_kb = opts.readahead_kb;
    status = serve(&ggfs_ops, &tree, tree.readahead_kb, opts.model, &args, &cmd);
    ggfs_tree_destroy(&tree);
out_model:
    ggfs_model_close(model);
out_args:
    free(cmd.mountpoint);
    fuse_opt_free_args(&args);
    return status;
}
