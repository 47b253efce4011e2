/*
 * Parsing the command line with libfuse's option parser. gguf-fs's own
 * options are taken out here; FUSE's are left in args for
 * fuse_parse_cmdline (loop options) and fuse_session_new (mount options),
 * which reject what nobody knows.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog/catalog.h" // GGFS_DEFAULT_MAX_OPEN, GGFS_DEFAULT_LISTING_TTL_S
#include "daemon/cli.h"
#include "source/hf_name.h"
#include "source/remote.h" // GGFS_REMOTE_DEFAULT_*

#ifndef GGFS_VERSION
#error "GGFS_VERSION comes from meson.build"
#endif

#define STR_(x) #x
#define STR(x) STR_(x) // a default's digits, so that --help cannot disagree

/* The one list of options. gguf-fs(1) and README.md describe each of them;
 * tests/bats/install.bats checks that they do. */
static const char help_text[] =
    "usage: gguf-fs [options] SOURCE MOUNTPOINT\n"
    "\n"
    "Mounts a GGUF model read-only: header, warnings, model.gguf, metadata.json,\n"
    "tensors.tsv, metadata/KEY, tensors/NAME/{info,raw,f32,f32.npy,stats}\n"
    "(metadata/ writable with -o edit).\n"
    "SOURCE is a .gguf file (a shard mounts its whole split set), a directory\n"
    "of models, an http:// or https:// URL, or hf://ORG/REPO/FILE.gguf[@REVISION].\n"
    "ollama://[HOST/][NAMESPACE/]NAME[:TAG] mounts a model of an Ollama registry\n"
    "with its Modelfile and layers/ (ollama+http:// for a plain HTTP one).\n"
    "\n"
    "Options:\n"
    "    -h, --help             print this help and exit\n"
    "    -V, --version          print the version and exit\n"
    "    -f                     stay in the foreground\n"
    "    -d, -o debug           print every request (implies -f)\n"
    "    -s                     serve requests on one thread\n"
    "    -o max_threads=N       serve requests on at most N threads (default " STR(GGFS_DEFAULT_MAX_THREADS) ")\n"
    "    -o max_idle_threads=N  keep at most N idle threads (default: no limit)\n"
    "    -o clone_fd            one /dev/fuse descriptor per thread\n"
    "    -o allow_other         let every user in (needs user_allow_other\n"
    "                           in /etc/fuse.conf unless root mounts)\n"
    "    -o allow_root          let root in as well as the mounting user\n"
    "    -o auto_unmount        unmount when the daemon ends, however it ends\n"
    "    -o readahead_kb=N      read-ahead of the mount in KiB (default " STR(GGFS_DEFAULT_READAHEAD_KB) ";\n"
    "                           0 keeps the kernel's 128)\n"
    "    -o max_open=N          DIR sources: models open at once (default " STR(GGFS_DEFAULT_MAX_OPEN) ")\n"
    "    -o listing_ttl_s=N     DIR sources: how long a directory's listing is\n"
    "                           trusted before it is read again, in seconds\n"
    "                           (default " STR(GGFS_DEFAULT_LISTING_TTL_S) "; " STR(GGFS_DEFAULT_AUTHOR_TTL_S) " for hf://ORG,\n"
    "                           " STR(GGFS_DEFAULT_BUCKET_TTL_S) " for s3://BUCKET[/PREFIX])\n"
    "    -o cache_mb=N          URL sources: memory cache in MiB (default " STR(GGFS_REMOTE_DEFAULT_CACHE_MB) ")\n"
    "    -o cache_dir=PATH      URL sources: keep fetched bytes in PATH too\n"
    "                           (default: no disk cache)\n"
    "    -o timeout_s=N         URL sources: retry a failing request for up to\n"
    "                           N seconds, then fail that read (default " STR(GGFS_REMOTE_DEFAULT_TIMEOUT_S) ")\n"
    "    -o connections=N       URL sources: range requests in flight at most,\n"
    "                           1 to " STR(GGFS_MAX_CONNECTIONS) " (default " STR(GGFS_DEFAULT_CONNECTIONS) ")\n"
    "    -o offline             remote sources (URLs, hf:// repos and authors,\n"
    "                           ollama://): send no request; mount what\n"
    "                           cache_dir holds from an earlier mount (also\n"
    "                           HF_HUB_OFFLINE=1 for hf:// sources)\n"
    "    -o prefetch            URL sources: fetch the whole model into the\n"
    "                           caches in the background from mount on\n"
    "    -o prefetch_after_mb=N\n"
    "                           URL sources: the same once N MiB of an open\n"
    "                           model.gguf were read out of order, as a model\n"
    "                           load does (default " STR(GGFS_REMOTE_DEFAULT_PREFETCH_AFTER_MB) "; 0: never)\n"
    "    -o endpoint=URL        s3:// sources: an S3-compatible store's URL\n"
    "                           (path-style; default: AWS_ENDPOINT_URL_S3,\n"
    "                           AWS_ENDPOINT_URL, else AWS's of the region)\n"
    "    -o path_style          s3:// sources: BUCKET in the path, not the host\n"
    "    -o no_sign_request     s3:// sources: send requests unsigned (public buckets)\n"
    "    -o edit                make metadata/ writable: edits change model.gguf\n"
    "                           and the views, never the source (kept in memory)\n"
    "    -o edits=PATH          as edit, and keep the edits in PATH: read at\n"
    "                           mount, rewritten after every change\n"
    "\n"
    "Every mount is ro (rw with edit), nosuid, nodev, default_permissions,\n"
    "fsname=SOURCE, subtype=gguf-fs: rw, suid and dev are overridden (rw with\n"
    "a warning, unless editing).\n"
    "Ignored: what only mount(8) and systemd read (auto, noauto, user, users,\n"
    "nouser, owner, group, nofail, _netdev, defaults, comment=, x-*, X-*), and\n"
    "what means nothing on a read-only mount (relatime, strictatime, lazytime,\n"
    "diratime, iversion, mand, symfollow, their no- forms, silent, loud).\n"
    "\n"
    "Exit status: 0 mounted, 1 source refused, 2 usage error, 3 mount failed.\n"
    "See gguf-fs(1).\n";

static const char usage_line[] = "usage: gguf-fs [options] SOURCE MOUNTPOINT (see gguf-fs --help)\n";

/* Options that mean something to mount(8), systemd or other file systems,
 * never to a read-only FUSE mount. mount.fuse3 drops a few of them itself;
 * gguf-fs run by hand with an fstab line's options must not fail on the
 * others. */
static const char *const ignored_options[] = {
    "auto", "noauto", "user", "users", "nouser", "owner", "group", "nofail", "_netdev",
    "defaults", "relatime", "norelatime", "strictatime", "nostrictatime", "lazytime",
    "nolazytime", "diratime", "nodiratime", "iversion", "noiversion", "mand", "nomand",
    "symfollow", "nosymfollow", "silent", "loud",
};

static const char *const ignored_prefixes[] = {"x-", "X-", "comment="};

enum {
    KEY_HELP = 1,
    KEY_VERSION,
    KEY_MAX_THREADS,
    KEY_READAHEAD_KB,
    KEY_MAX_OPEN,
    KEY_LISTING_TTL_S,
    KEY_CACHE_MB,
    KEY_CACHE_DIR,
    KEY_TIMEOUT_S,
    KEY_CONNECTIONS,
    KEY_OFFLINE,
    KEY_PREFETCH,
    KEY_PREFETCH_AFTER_MB,
    KEY_EDIT,
    KEY_EDITS,
    KEY_ENDPOINT,
    KEY_PATH_STYLE,
    KEY_NO_SIGN_REQUEST,
};

static const struct fuse_opt option_spec[] = {
    FUSE_OPT_KEY("-h", KEY_HELP),
    FUSE_OPT_KEY("--help", KEY_HELP),
    FUSE_OPT_KEY("-V", KEY_VERSION),
    FUSE_OPT_KEY("--version", KEY_VERSION),
    FUSE_OPT_KEY("max_threads=", KEY_MAX_THREADS),
    FUSE_OPT_KEY("readahead_kb=", KEY_READAHEAD_KB),
    FUSE_OPT_KEY("max_open=", KEY_MAX_OPEN),
    FUSE_OPT_KEY("listing_ttl_s=", KEY_LISTING_TTL_S),
    FUSE_OPT_KEY("cache_mb=", KEY_CACHE_MB),
    FUSE_OPT_KEY("cache_dir=", KEY_CACHE_DIR),
    FUSE_OPT_KEY("timeout_s=", KEY_TIMEOUT_S),
    FUSE_OPT_KEY("connections=", KEY_CONNECTIONS),
    FUSE_OPT_KEY("offline", KEY_OFFLINE),
    FUSE_OPT_KEY("prefetch", KEY_PREFETCH),
    FUSE_OPT_KEY("prefetch_after_mb=", KEY_PREFETCH_AFTER_MB),
    FUSE_OPT_KEY("edit", KEY_EDIT),
    FUSE_OPT_KEY("edits=", KEY_EDITS),
    FUSE_OPT_KEY("endpoint=", KEY_ENDPOINT),
    FUSE_OPT_KEY("path_style", KEY_PATH_STYLE),
    FUSE_OPT_KEY("no_sign_request", KEY_NO_SIGN_REQUEST),
    FUSE_OPT_END,
};

typedef struct parse_state {
    ggfs_cli *cli;
    const char *mountpoint; // as given; borrowed from argv
    const char *extra_arg;  // a third non-option argument, if any
    int show_help;
    int show_version;
    int max_threads_given;
    int rw_given;
} parse_state;

/* The value of a NAME=N option as an unsigned decimal. Returns false, with
 * a message, when it is not one. */
static bool number_of(const char *opt, unsigned *out)
{
    const char *digits = strchr(opt, '=') + 1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(digits, &end, 10);
    if (*digits < '0' || *digits > '9' || *end != '\0' || errno != 0 || v > UINT_MAX) {
        fprintf(stderr, "gguf-fs: -o %s: not a whole number from 0 to %u\n", opt, UINT_MAX);
        return false;
    }
    *out = (unsigned)v;
    return true;
}

static bool ignored(const char *opt)
{
    for (size_t i = 0; i < sizeof ignored_options / sizeof *ignored_options; i++)
        if (strcmp(opt, ignored_options[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof ignored_prefixes / sizeof *ignored_prefixes; i++)
        if (strncmp(opt, ignored_prefixes[i], strlen(ignored_prefixes[i])) == 0)
            return true;
    return false;
}

/* The file PATH names, as an absolute path (the daemon leaves the working
 * directory): its directory must exist, the file need not. NULL, with a
 * message, when it cannot be. */
static char *absolute_file_path(const char *given)
{
    if (!*given) {
        fprintf(stderr, "gguf-fs: -o edits= needs a file name\n");
        return NULL;
    }
    const char *slash = strrchr(given, '/');
    const char *base = slash ? slash + 1 : given;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        fprintf(stderr, "gguf-fs: -o edits=%s: names a directory, not a file\n", given);
        return NULL;
    }
    char *dir = slash ? strndup(given, slash == given ? 1 : (size_t)(slash - given)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    char *path = real ? malloc(strlen(real) + strlen(base) + 2) : NULL;
    if (path)
        sprintf(path, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
    else
        fprintf(stderr, "gguf-fs: -o edits=%s: %s: %s\n", given, dir ? dir : "", strerror(errno));
    free(dir);
    free(real);
    return path;
}

/* An offline mount reads cache_dir alone: without one it could mount
 * nothing. HF_HUB_OFFLINE asks it of hf:// sources as -o offline does.
 * False, with a message, when offline is asked without cache_dir. */
static bool offline_has_cache(ggfs_cli *cli)
{
    const bool hf_offline = strncmp(cli->source, GGFS_HF_SCHEME, strlen(GGFS_HF_SCHEME)) == 0 && ggfs_hf_offline_asked();
    if (hf_offline)
        cli->offline = 1;
    if (!cli->offline || cli->cache_dir)
        return true;
    fprintf(stderr, "gguf-fs: %s: an offline mount reads only what -o cache_dir=PATH holds, and none is given\n",
            hf_offline ? "HF_HUB_OFFLINE" : "-o offline");
    return false;
}

/* An option's value (after '=') in place of the one given before; 0, or -1
 * when out of memory. */
static int replace_value(char **field, const char *arg)
{
    char *copy = strdup(strchr(arg, '=') + 1);
    if (!copy)
        return -1;
    free(*field);
    *field = copy;
    return 0;
}

/* fuse_opt_parse's callback: returns 0 to take an argument out of args, 1
 * to keep it for libfuse, -1 to fail the parse. */
static int take_arg(void *data, const char *arg, int key, struct fuse_args *outargs)
{
    (void)outargs;
    parse_state *st = data;
    ggfs_cli *cli = st->cli;
    switch (key) {
    case KEY_HELP:
        st->show_help = 1;
        return 0;
    case KEY_VERSION:
        st->show_version = 1;
        return 0;
    case KEY_MAX_THREADS:
        st->max_threads_given = 1;
        return 1; // for fuse_parse_cmdline
    case KEY_READAHEAD_KB:
        return number_of(arg, &cli->readahead_kb) ? 0 : -1;
    case KEY_MAX_OPEN:
        return number_of(arg, &cli->max_open) ? 0 : -1;
    case KEY_LISTING_TTL_S:
        return number_of(arg, &cli->listing_ttl_s) ? 0 : -1;
    case KEY_CACHE_MB:
        return number_of(arg, &cli->cache_mb) ? 0 : -1;
    case KEY_TIMEOUT_S:
        return number_of(arg, &cli->timeout_s) ? 0 : -1;
    case KEY_CONNECTIONS:
        if (!number_of(arg, &cli->connections))
            return -1;
        if (cli->connections == 0 || cli->connections > GGFS_MAX_CONNECTIONS) {
            fprintf(stderr, "gguf-fs: -o %s: between 1 and %d\n", arg, GGFS_MAX_CONNECTIONS);
            return -1;
        }
        return 0;
    case KEY_OFFLINE:
        cli->offline = 1;
        return 0;
    case KEY_PREFETCH:
        cli->prefetch = 1;
        return 0;
    case KEY_PREFETCH_AFTER_MB:
        return number_of(arg, &cli->prefetch_after_mb) ? 0 : -1;
    case KEY_EDIT:
        cli->edit = 1;
        return 0;
    case KEY_EDITS: {
        char *path = absolute_file_path(strchr(arg, '=') + 1);
        if (!path)
            return -1;
        free(cli->edits_path);
        cli->edits_path = path;
        cli->edit = 1;
        return 0;
    }
    case KEY_ENDPOINT:
        return replace_value(&cli->s3_endpoint, arg);
    case KEY_PATH_STYLE:
        cli->s3_path_style = 1;
        return 0;
    case KEY_NO_SIGN_REQUEST:
        cli->s3_no_sign = 1;
        return 0;
    case KEY_CACHE_DIR: {
        const char *path = strchr(arg, '=') + 1;
        if (!*path) {
            fprintf(stderr, "gguf-fs: -o cache_dir= needs a directory\n");
            return -1;
        }
        return replace_value(&cli->cache_dir, arg);
    }
    case FUSE_OPT_KEY_NONOPT:
        // The mount point is taken here rather than by fuse_parse_cmdline,
        // which would fail on a missing one as on a usage error.
        if (!cli->source)
            cli->source = arg;
        else if (!st->mountpoint)
            st->mountpoint = arg;
        else if (!st->extra_arg)
            st->extra_arg = arg;
        return 0;
    case FUSE_OPT_KEY_OPT:
        if (strcmp(arg, "rw") == 0) {
            st->rw_given = 1; // said once all options are read (-o edit may follow)
            return 0;
        }
        return ignored(arg) ? 0 : 1;
    default:
        return 1;
    }
}

/* fsname= takes the source; FUSE option syntax needs ',' and '\' escaped.
 * Returns a malloc'ed "-o..." argument. */
static char *mount_options(const char *source, bool rw)
{
    static const char prefix[] = "-o%s,nosuid,nodev,default_permissions,subtype=gguf-fs,fsname=";
    char *arg = malloc(sizeof prefix + 2 * strlen(source));
    if (!arg)
        return NULL;
    char *o = arg + sprintf(arg, prefix, rw ? "rw" : "ro");
    for (const char *p = source; *p; p++) {
        if (*p == ',' || *p == '\\')
            *o++ = '\\';
        *o++ = *p;
    }
    *o = '\0';
    return arg;
}

/* The mount point as libfuse wants it: absolute, or the /dev/fd/N that
 * mount.fuse3's drop_privileges passes. NULL, with a message, when it does
 * not resolve. */
static char *resolve_mountpoint(const char *given)
{
    unsigned fd;
    char tail;
    if (sscanf(given, "/dev/fd/%u%c", &fd, &tail) == 1)
        return strdup(given);
    char *path = realpath(given, NULL);
    struct stat st;
    if (!path || stat(path, &st) != 0) {
        fprintf(stderr, "gguf-fs: %s: bad mount point: %s\n", given, strerror(errno));
        free(path);
        return NULL;
    }
    // The kernel would mount the tree on a file too, and nothing could
    // enter it.
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gguf-fs: %s: bad mount point: not a directory\n", given);
        free(path);
        return NULL;
    }
    return path;
}

/* Drops libfuse's debug lines (its version, under -d) while options are
 * tried; errors still go to stderr. */
static void errors_only(enum fuse_log_level level, const char *fmt, va_list ap)
{
    if (level <= FUSE_LOG_ERR)
        vfprintf(stderr, fmt, ap);
}

/* Whether fuse_session_new takes args: a session is made from a copy and
 * thrown away, so that an option nobody knows is a usage error before any
 * source is opened or fetched. libfuse prints what it rejects. */
static bool fuse_takes(const struct fuse_args *args)
{
    static const struct fuse_lowlevel_ops no_ops;
    struct fuse_args copy = FUSE_ARGS_INIT(0, NULL);
    for (int i = 0; i < args->argc; i++) {
        if (fuse_opt_add_arg(&copy, args->argv[i]) != 0) {
            fuse_opt_free_args(&copy);
            return false;
        }
    }
    fuse_set_log_func(errors_only);
    struct fuse_session *se = fuse_session_new(&copy, &no_ops, sizeof no_ops, NULL);
    fuse_set_log_func(NULL);
    if (se)
        fuse_session_destroy(se);
    fuse_opt_free_args(&copy);
    return se != NULL;
}

int ggfs_cli_parse(int argc, char *argv[], struct fuse_args *args, ggfs_cli *cli)
{
    *cli = (ggfs_cli){
        .readahead_kb = GGFS_DEFAULT_READAHEAD_KB,
        .max_open = GGFS_DEFAULT_MAX_OPEN,
        .listing_ttl_s = GGFS_CLI_UNSET,
        .cache_mb = GGFS_REMOTE_DEFAULT_CACHE_MB,
        .timeout_s = GGFS_REMOTE_DEFAULT_TIMEOUT_S,
        .connections = GGFS_DEFAULT_CONNECTIONS,
        .prefetch_after_mb = GGFS_REMOTE_DEFAULT_PREFETCH_AFTER_MB,
    };
    *args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
    parse_state st = {.cli = cli};
    if (fuse_opt_parse(args, &st, option_spec, take_arg) != 0)
        return GGFS_EXIT_USAGE;
    if (st.show_help) {
        fputs(help_text, stdout);
        return GGFS_EXIT_MOUNTED;
    }
    if (st.show_version) {
        printf("gguf-fs version %s\nFUSE library version %s\n", GGFS_VERSION, fuse_pkgversion());
        fflush(stdout); // fusermount3 --version writes the next line
        fuse_lowlevel_version();
        return GGFS_EXIT_MOUNTED;
    }
    if (st.extra_arg)
        fprintf(stderr, "gguf-fs: unexpected argument '%s'\n", st.extra_arg);
    if (!st.mountpoint || st.extra_arg) {
        fputs(usage_line, stderr);
        return GGFS_EXIT_USAGE;
    }
    if (!offline_has_cache(cli))
        return GGFS_EXIT_USAGE;
    if (st.rw_given && !cli->edit)
        fprintf(stderr, "gguf-fs: the mount is read-only: ignoring rw\n");
    if (fuse_parse_cmdline(args, &cli->cmd) != 0)
        return GGFS_EXIT_USAGE;
    if (!st.max_threads_given)
        cli->cmd.max_threads = GGFS_DEFAULT_MAX_THREADS;
    char *opts = mount_options(cli->source, cli->edit);
    if (!opts || fuse_opt_add_arg(args, opts) != 0) {
        free(opts);
        fprintf(stderr, "gguf-fs: out of memory\n");
        return GGFS_EXIT_USAGE;
    }
    free(opts);
    if (!fuse_takes(args))
        return GGFS_EXIT_USAGE;
    cli->cmd.mountpoint = resolve_mountpoint(st.mountpoint);
    return cli->cmd.mountpoint ? -1 : GGFS_EXIT_MOUNT;
}

void ggfs_cli_destroy(ggfs_cli *cli, struct fuse_args *args)
{
    free(cli->cmd.mountpoint);
    free(cli->cache_dir);
    free(cli->s3_endpoint);
    free(cli->edits_path);
    fuse_opt_free_args(args);
}
