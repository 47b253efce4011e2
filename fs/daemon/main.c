/*
 * gguf-fs: mounts a GGUF model (a file, or a split set by any of its
 * shards) as a read-only directory tree, or every model under a folder.
 *
 *   gguf-fs [options] SOURCE MOUNTPOINT
 *
 * The command line is checked first (exit 2, daemon/cli.c), then a model is
 * opened and validated before anything is mounted (a bad one is one line on
 * stderr and exit 1; a folder's models are opened as they are looked into),
 * then mounted (exit 3 when that fails). Once this command returns 0 the
 * mount answers requests: it daemonizes only after mounting. Under a
 * service manager the daemon says READY=1 at that point (daemon/notify.h).
 */
#define _DEFAULT_SOURCE // vsyslog is not POSIX
#include <errno.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "catalog/ops.h"
#include "catalog/store.h"
#include "catalog/store_hf_repo.h"
#include "catalog/store_s3.h"
#include "daemon/cli.h"
#include "daemon/kernel_readahead.h"
#include "daemon/notify.h"
#include "daemon/ollama_mount.h"
#include "daemon/stderr_renew.h"
#include "model/guard.h"
#include "source/ollama_name.h"
#include "source/remote_engine.h"
#include "source/source_table.h"
#include "model/edits.h"
#include "tree/affinity.h"
#include "tree/invalidate.h"
#include "tree/layer_trees.h"
#include "tree/open_text.h"
#include "tree/ops.h"
#include "tree/remote_files.h"
#include "tree/session_end.h"
#include "tree/tree.h"
#include "tree/versions.h"
#include "util/log.h"
#include "util/text.h"
#include "util/workers.h"

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

/* Once daemonized, stderr is /dev/null: log lines go to syslog, both
 * libfuse's and those of the layers below FUSE (util/log.h). */
static void log_to_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
    vsyslog((int)level, fmt, ap);
}

static void layers_log_to_syslog(int level, const char *fmt, va_list ap)
{
    vsyslog(level, fmt, ap);
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

/* ==== Stopping a catalog ==== */

/* A catalog asks the kernel to forget entries from a thread of its own
 * (catalog/forget_thread.h), and the kernel makes that request wait for any lookup
 * or listing in flight in the directory. When a signal ends libfuse's loop,
 * a request the loop has just read is dropped unanswered: its caller waits
 * until /dev/fuse is closed, which the blocked request of the catalog's
 * thread prevents for ever. So for a catalog SIGHUP, SIGINT and SIGTERM
 * are taken here: a thread stops the catalog's own while the loop still
 * answers, then ends the loop. */
static sem_t exit_signalled; // posted by the handler: the one state it may touch

static void on_exit_signal(int sig)
{
    (void)sig;
    sem_post(&exit_signalled); // async-signal-safe
}

static const int exit_signals[] = {SIGHUP, SIGINT, SIGTERM};
#define N_EXIT_SIGNALS (sizeof exit_signals / sizeof exit_signals[0])

/* What a catalog adds to serving: the session for its notifications, and
 * its background work, which must stop before the loop does. */
typedef struct serve_hooks {
    struct fuse_session **session; // set before any request is served
    void (*stop)(void *userdata);  // stops the work, from any thread; or NULL
    void (*loop_ended)(void *userdata); // once the loop's threads are gone,
                                   // before the session's device closes:
                                   // what still replies through it ends; or NULL
} serve_hooks;

typedef struct stopper {
    const serve_hooks *hooks;
    void *userdata;
    struct fuse_session *se;
    pthread_t loop;                // the thread running the loop
    pthread_t thread;
    atomic_bool loop_ended;        // the loop ended by itself (unmounted)
    int wake;                      // a signal that ends the loop's waits, or 0
    struct sigaction libfuse[N_EXIT_SIGNALS]; // put back when done
    bool taken[N_EXIT_SIGNALS];
} stopper;

static void *stop_on_signal(void *arg)
{
    stopper *st = arg;
    while (sem_wait(&exit_signalled) != 0) {
    }
    if (atomic_load(&st->loop_ended))
        return NULL;
    st->hooks->stop(st->userdata);
    fuse_session_exit(st->se);
    // The loop waits in read() or sem_wait(), which a caught signal ends.
    pthread_kill(st->loop, st->wake);
    return NULL;
}

/* Takes the exit signals libfuse caught (those ignored stay ignored) and
 * starts the thread; false when it cannot, and libfuse keeps them. */
static bool stopper_start(stopper *st)
{
    if (sem_init(&exit_signalled, 0, 0) != 0)
        return false;
    st->loop = pthread_self();
    atomic_init(&st->loop_ended, false);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_exit_signal; // no SA_RESTART: the loop's waits end
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_EXIT_SIGNALS; i++) {
        st->taken[i] = sigaction(exit_signals[i], NULL, &st->libfuse[i]) == 0 &&
                       st->libfuse[i].sa_handler != SIG_IGN && st->libfuse[i].sa_handler != SIG_DFL &&
                       sigaction(exit_signals[i], &sa, NULL) == 0;
        if (st->taken[i])
            st->wake = exit_signals[i];
    }
    if (st->wake && pthread_create(&st->thread, NULL, stop_on_signal, st) == 0)
        return true;
    for (size_t i = 0; i < N_EXIT_SIGNALS; i++)
        if (st->taken[i])
            sigaction(exit_signals[i], &st->libfuse[i], NULL);
    sem_destroy(&exit_signalled);
    return false;
}

/* The loop has ended: stops the thread and gives libfuse its handlers back. */
static void stopper_end(stopper *st)
{
    atomic_store(&st->loop_ended, true);
    sem_post(&exit_signalled);
    pthread_join(st->thread, NULL);
    for (size_t i = 0; i < N_EXIT_SIGNALS; i++)
        if (st->taken[i])
            sigaction(exit_signals[i], &st->libfuse[i], NULL);
    sem_destroy(&exit_signalled);
}

/* ==== Serving ==== */

/* Mounts and serves until unmounted: ops over userdata, with a catalog's
 * hooks (NULL for one model). Returns the exit status: GGFS_EXIT_MOUNT
 * when mounting fails or the loop ends in an error (the parent of a daemon
 * has returned GGFS_EXIT_MOUNTED by then). */
static int serve(const struct fuse_lowlevel_ops *ops, void *userdata, const serve_hooks *hooks,
                 unsigned readahead_kb, const char *source, struct fuse_args *args,
                 struct fuse_cmdline_opts *cmd)
{
    // The options were tried when the command line was read (cli.c).
    struct fuse_session *se = fuse_session_new(args, ops, sizeof *ops, userdata);
    if (!se)
        return GGFS_EXIT_USAGE;
    if (hooks)
        *hooks->session = se;
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
        ggfs_log_set_sink(layers_log_to_syslog);
    }
    fuse_daemonize(cmd->foreground);
    // In the daemon's process: the thread must be this process's.
    stopper st = {.hooks = hooks, .userdata = userdata, .se = se};
    const bool stopping = hooks && hooks->stop && stopper_start(&st);
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
    // The loop's threads are gone; one may have left stderr locked.
    ggfs_stderr_renew_if_held();
    if (stopping)
        stopper_end(&st);
    if (hooks && hooks->stop)
        hooks->stop(userdata); // if no signal did (unmounted: nothing waits)
    if (hooks && hooks->loop_ended)
        hooks->loop_ended(userdata);
    notify("STOPPING=1");
    // The loop returns the number of the signal that ended it (SIGTERM from
    // systemctl stop, say): a clean end as much as an unmount is. An
    // unmount ends the loop with 0, or with -ECONNABORTED when it cut short
    // a request a thread was reading (libfuse prints "reading device" then).
    status = res >= 0 || res == -ECONNABORTED ? GGFS_EXIT_MOUNTED : GGFS_EXIT_MOUNT;
    fuse_session_unmount(se);
out_signals:
    fuse_remove_signal_handlers(se);
out_session:
    fuse_session_destroy(se);
    return status;
}

static void stop_catalog(void *mount)
{
    // A collection's reads ahead and reads give up now, not at their
    // timeout: the stop takes a second at most.
    ggfs_catalog_stop_remote(((ggfs_catalog_mount *)mount)->catalog);
    ggfs_catalog_mount_stop(mount);
}

/* Mounts every model under the folder cli->source: nothing is read but
 * the folder's own entry until someone looks. */
static int serve_catalog(ggfs_cli *cli, struct fuse_args *args)
{
    int err;
    if (cli->edit) {
        fprintf(stderr, "gguf-fs: %s: a folder of models cannot be edited: -o edit and -o edits= "
                        "take one model (a file, a split set or a URL)\n", cli->source);
        return GGFS_EXIT_USAGE;
    }
    const unsigned ttl = cli->listing_ttl_s == GGFS_CLI_UNSET ? GGFS_DEFAULT_LISTING_TTL_S : cli->listing_ttl_s;
    ggfs_catalog *catalog = ggfs_catalog_open(cli->source, cli->cmd.mountpoint, cli->max_open, ttl,
                                              &err);
    if (!catalog) {
        fprintf(stderr, "gguf-fs: %s: %s\n", cli->source, strerror(err));
        return GGFS_EXIT_REFUSED;
    }
    ggfs_catalog_mount mount;
    ggfs_catalog_mount_init(&mount, catalog);
    mount.readahead_kb = cli->readahead_kb;
    mount.mountpoint = cli->cmd.mountpoint; // absolute (cli.c)
    const serve_hooks hooks = {.session = &mount.session, .stop = stop_catalog};
    const int status = serve(&ggfs_catalog_ops, &mount, &hooks, mount.readahead_kb, cli->source, args, &cli->cmd);
    ggfs_catalog_mount_destroy(&mount);
    ggfs_catalog_close(catalog);
    return status;
}

/* The remote engine of a mount of a URL or a remote collection, with the
 * command line's options; NULL with one line on stderr when it cannot
 * start. */
static ggfs_remote_engine *start_remote(const ggfs_cli *cli, unsigned reopen_trust_s)
{
    const ggfs_remote_options ro = {
        .cache_mb = cli->cache_mb,
        .cache_dir = cli->cache_dir,
        .timeout_s = cli->timeout_s ? cli->timeout_s : 1,
        .connections = cli->connections,
        .prefetch = cli->prefetch,
        .prefetch_after_mb = cli->prefetch_after_mb,
        .offline = cli->offline,
        .s3_endpoint = cli->s3_endpoint,
        .s3_path_style = cli->s3_path_style,
        .s3_no_sign = cli->s3_no_sign,
        .reopen_trust_s = reopen_trust_s,
    };
    char why[640];
    ggfs_remote_engine *remote = ggfs_remote_engine_start(&ro, why, sizeof why);
    if (!remote)
        fprintf(stderr, "gguf-fs: %s: %s\n", cli->source, why);
    return remote;
}

/* Mounts every model of a remote collection (hf://ORG/REPO[/DIR], hf://ORG,
 * s3://BUCKET[/PREFIX]): its listing is read at mount, and refused there
 * (one line, exit 1); the models open as they are looked into. */
static int serve_collection(ggfs_cli *cli, struct fuse_args *args)
{
    if (cli->edit) {
        fprintf(stderr, "gguf-fs: %s: a collection of models cannot be edited: -o edit and -o edits= "
                        "take one model (a file, a split set or a URL)\n", cli->source);
        return GGFS_EXIT_USAGE;
    }
    const bool author = ggfs_hf_is_author(cli->source), bucket = ggfs_s3_is_collection(cli->source);
    const unsigned ttl = cli->listing_ttl_s != GGFS_CLI_UNSET ? cli->listing_ttl_s
                         : bucket                           ? GGFS_DEFAULT_BUCKET_TTL_S
                         : author                           ? GGFS_DEFAULT_AUTHOR_TTL_S
                                                            : GGFS_DEFAULT_LISTING_TTL_S;
    // A model the listing still vouches for reopens with no request.
    ggfs_remote_engine *remote = start_remote(cli, ttl);
    if (!remote)
        return GGFS_EXIT_REFUSED;
    char why[2048];
    // An author (hf://ORG), a repo (hf://ORG/REPO[/DIR]) or a bucket
    // (s3://BUCKET[/PREFIX]): a root state the store frees, read now so
    // that a refusal is one line and exit 1.
    const ggfs_cat_kind kind = bucket ? GGFS_CAT_S3 : author ? GGFS_CAT_HF_AUTHOR : GGFS_CAT_HF_REPO;
    void *root = bucket   ? (void *)ggfs_s3_bucket_open(remote, cli->source, why, sizeof why)
                 : author ? (void *)ggfs_hf_author_open(remote, cli->source, why, sizeof why)
                          : (void *)ggfs_hf_repo_open(remote, cli->source, why, sizeof why);
    if (!root) {
        ggfs_one_line(why);
        fprintf(stderr, "gguf-fs: %s\n", why);
        ggfs_remote_engine_stop(remote);
        return GGFS_EXIT_REFUSED;
    }
    int err;
    ggfs_catalog *catalog = ggfs_catalog_open_store(kind, root, remote, cli->max_open, ttl, &err);
    if (!catalog) {
        fprintf(stderr, "gguf-fs: %s: %s\n", cli->source, strerror(err));
        ggfs_store_of(kind)->root_free(root);
        ggfs_remote_engine_stop(remote);
        return GGFS_EXIT_REFUSED;
    }
    ggfs_catalog_mount mount;
    ggfs_catalog_mount_init(&mount, catalog);
    mount.readahead_kb = cli->readahead_kb;
    mount.mountpoint = cli->cmd.mountpoint;
    const serve_hooks hooks = {.session = &mount.session, .stop = stop_catalog};
    const int status = serve(&ggfs_catalog_ops, &mount, &hooks, mount.readahead_kb, cli->source, args, &cli->cmd);
    ggfs_remote_engine_abort(remote);
    ggfs_catalog_mount_destroy(&mount);
    ggfs_catalog_close(catalog);
    ggfs_remote_engine_stop(remote);
    return status;
}

/* What a single model's mount stops before its loop ends: the thread
 * that drops pages of an edited one, the pushes of a prefetch. */
static void stop_model_work(void *userdata)
{
    ggfs_model_mount *mount = userdata;
    if (mount->tree->edits)
        ggfs_invalidate_stop(mount);
    // What waits on a server (the prefetch, reads) gives up now, not at
    // its timeout: the stop takes a second at most.
    ggfs_remote_engine_abort(mount->tree->remote);
    ggfs_tree_prefetch_quiet(mount->tree);
}

/* A remote model's reads handed to threads of their own reply through
 * the session: those running finish, those queued are answered EIO, before
 * its device closes. */
static void end_model_reads(void *userdata)
{
    ggfs_model_mount *mount = userdata;
    ggfs_workers_free(mount->tree->remote_reads);
    mount->tree->remote_reads = NULL;
}

/* The edits of a mount given -o edit or -o edits=PATH, read from PATH
 * when it exists; NULL, with one line on stderr, when PATH is refused. */
static ggfs_edits *open_edits(ggfs_cli *cli, ggfs_model *model, ggfs_model_mount *mount)
{
    const char *path = cli->edits_path;
    const size_t mlen = strlen(cli->cmd.mountpoint);
    if (path && strncmp(path, cli->cmd.mountpoint, mlen) == 0 && (path[mlen] == '/' || mlen == 1)) {
        // Saving into the mount would wait on the daemon that saves.
        fprintf(stderr, "gguf-fs: %s: the edits cannot be kept inside the mount point %s\n", path,
                cli->cmd.mountpoint);
        return NULL;
    }
    char why[640];
    ggfs_edits *edits = ggfs_edits_open(model, path, why, sizeof why);
    if (!edits) {
        fprintf(stderr, "gguf-fs: %s\n", why);
        return NULL;
    }
    mount->invalidator = ggfs_workers_new(1, 4096);
    if (!mount->invalidator) {
        fprintf(stderr, "gguf-fs: %s: out of memory\n", cli->source);
        ggfs_edits_close(edits);
        return NULL;
    }
    return edits;
}

/* Mounts one model: a file, a split set by any of its shards, or a URL.
 * The model is opened and validated whole before anything is mounted. */
static int serve_model(ggfs_cli *cli, struct fuse_args *args)
{
    int status = GGFS_EXIT_REFUSED;
    ggfs_remote_engine *remote = NULL;
    const bool ollama = ggfs_ollama_is_name(cli->source);
    if ((ggfs_source_is_remote(cli->source) || ollama) && !(remote = start_remote(cli, 0)))
        return status;
    ggfs_model_error err;
    ggfs_ollama_layers *layers = NULL;
    ggfs_model *layer_models[GGFS_OLLAMA_TREES] = {NULL}; // until their trees hold them
    ggfs_model *model = ollama ? ggfs_ollama_mount_open(cli->source, remote, &layers, layer_models)
                               : ggfs_model_open(cli->source, remote, &err);
    if (!model) {
        if (!ollama)
            report_open_error(&err);
        goto out_remote;
    }
    ggfs_tree tree;
    if (!ggfs_tree_init(&tree, model)) {
        fprintf(stderr, "gguf-fs: %s: out of memory\n", cli->source);
        goto out_model;
    }
    if (remote && !(tree.remote_reads = ggfs_workers_new(GGFS_REMOTE_READ_THREADS, GGFS_REMOTE_READ_QUEUE))) {
        fprintf(stderr, "gguf-fs: %s: out of memory\n", cli->source);
        ggfs_tree_destroy(&tree);
        goto out_model;
    }
    tree.remote = remote;
    tree.ollama = layers;
    ggfs_model_mount mount = {.tree = &tree, .readahead_kb = cli->readahead_kb};
    pthread_mutex_init(&mount.invalidator_lock, NULL);
    ggfs_edits *edits = NULL;
    if (cli->edit && !(edits = open_edits(cli, model, &mount))) {
        ggfs_workers_free(tree.remote_reads);
        ggfs_tree_destroy(&tree);
        goto out_model;
    }
    tree.edits = edits;
    if (edits && (!(tree.versions = ggfs_versions_new(cli->cmd.debug)) || !(tree.affinity = ggfs_affinity_new(GGFS_AFFINITY_SECONDS * INT64_C(1000000000))))) {
        fprintf(stderr, "gguf-fs: %s: out of memory\n", cli->source);
        ggfs_workers_free(tree.remote_reads);
        ggfs_tree_destroy(&tree);
        ggfs_edits_close(edits);
        goto out_model;
    }
    char gguf_path[PATH_MAX];
    // The mount point is absolute (cli.c).
    if (snprintf(gguf_path, sizeof gguf_path, "%s/model.gguf", cli->cmd.mountpoint) < (int)sizeof gguf_path)
        ggfs_tree_prefetch_prepare(&tree, gguf_path);
    // An edited mount tells the kernel of changes through its session, and
    // so does a prefetch handing its bytes on: both stop before the loop
    // ends. Any other mount gives its session only: the tree's hashes and
    // stats stop computing once it ends.
    const serve_hooks hooks = {.session = &mount.session, .stop = stop_model_work, .loop_ended = end_model_reads};
    const serve_hooks plain = {.session = &mount.session};
    tree.cancel = ggfs_session_end(&mount.session);
    tree.session = &mount.session;
    ggfs_open_texts open_texts;
    ggfs_open_texts_init(&open_texts);
    tree.open_texts = &open_texts;
    for (int k = 0; k < GGFS_OLLAMA_TREES; k++) {
        if (layer_models[k] && !ggfs_tree_add_layer_tree(&tree, k, layer_models[k]))
            fprintf(stderr, "gguf-fs: %s: out of memory: layers/ shows no %s\n", cli->source,
                    k == GGFS_OLLAMA_PROJECTOR_TREE ? "projector" : "adapter");
        layer_models[k] = NULL;
    }
    status = serve(&ggfs_ops, &mount, edits || remote ? &hooks : &plain, mount.readahead_kb, cli->source, args,
                   &cli->cmd);
    ggfs_invalidate_stop(&mount);
    // Normally stopped with the session (ggfs_op_destroy).
    ggfs_tree_prefetch_stop(&tree);
    // Normally gone with the loop (end_model_reads).
    ggfs_workers_free(tree.remote_reads);
    ggfs_open_texts_drain(&open_texts);
    ggfs_tree_destroy(&tree);
    ggfs_edits_close(edits);
    pthread_mutex_destroy(&mount.invalidator_lock);
out_model:
    for (int k = 0; k < GGFS_OLLAMA_TREES; k++)
        ggfs_model_close(layer_models[k]);
    ggfs_model_close(model);
    ggfs_ollama_layers_free(layers);
out_remote:
    ggfs_remote_engine_stop(remote);
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
    if (status < 0) {
        struct stat st;
        const bool folder = stat(cli.source, &st) == 0 && S_ISDIR(st.st_mode);
        status = folder                               ? serve_catalog(&cli, &args)
                 : ggfs_hf_is_collection(cli.source) || ggfs_s3_is_collection(cli.source)
                     ? serve_collection(&cli, &args)
                                                     : serve_model(&cli, &args);
    }
    ggfs_cli_destroy(&cli, &args);
    return status;
}
