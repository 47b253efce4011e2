/*
 * The command line of gguf-fs: its options (the --help text is their one
 * list), the mount options every mount gets, and the exit statuses the
 * program promises.
 *
 * The command is run by hand and by mount(8) through mount.fuse3, which
 * passes what fstab and mount(8) hold (rw, dev, suid, noauto, _netdev,
 * x-systemd.*, ...). None of those may break a mount: options that only
 * mean something to mount(8) or systemd are dropped here, rw is overridden
 * by ro with a warning.
 */
#ifndef GGFS_DAEMON_CLI_H
#define GGFS_DAEMON_CLI_H

#include <fuse_lowlevel.h>
#include <limits.h>

/* Exit statuses, as gguf-fs(1) documents them. */
typedef enum ggfs_exit {
    GGFS_EXIT_MOUNTED = 0, // mounted (or the help or version printed)
    GGFS_EXIT_REFUSED = 1, // the source cannot be opened or is no valid model
    GGFS_EXIT_USAGE = 2,   // the command line is wrong
    GGFS_EXIT_MOUNT = 3,   // mounting failed (mount point, permissions,
                           // /dev/fuse), or the mount ended in an error
} ggfs_exit;

#define GGFS_DEFAULT_READAHEAD_KB 1024
// Each loop thread keeps a scratch the size of a read (up to the read-ahead
// window). Four threads keep two cores busy while the kernel reads ahead;
// ten (libfuse's default) only hold more memory. Letting idle threads exit
// instead measured 15% slower.
#define GGFS_DEFAULT_MAX_THREADS 4

#define GGFS_CLI_UNSET UINT_MAX   // an option not given
#define GGFS_DEFAULT_AUTHOR_TTL_S 300 // hf://ORG: how long the author's repos are trusted
#define GGFS_DEFAULT_BUCKET_TTL_S 60  // s3://BUCKET[/PREFIX]: how long a prefix's listing is trusted

typedef struct ggfs_cli {
    const char *source;           // as given (path or URL); borrowed from argv
    struct fuse_cmdline_opts cmd; // mountpoint (malloc'ed), -f, -s, -d, threads
    unsigned readahead_kb;        // 0: the kernel's default
    unsigned max_open;            // DIR sources: models open at once
    unsigned listing_ttl_s;       // DIR and hf://ORG sources: a listing is trusted this long;
                                  // GGFS_CLI_UNSET: the source's default
    unsigned cache_mb;            // remote sources: memory cache in MiB
    char *cache_dir;              // remote sources: disk cache, or NULL
    unsigned timeout_s;           // remote sources: retry a failing request this long
    unsigned connections;         // remote sources: requests in flight at most
    int offline;                  // remote sources: no request, cache_dir only
                                  // (-o offline, or HF_HUB_OFFLINE for hf://)
    int prefetch;                 // remote sources: fetch everything in the background
    unsigned prefetch_after_mb;   // remote sources: or once this much of model.gguf was read
    char *s3_endpoint;            // s3:// sources: -o endpoint=URL, or NULL
    int s3_path_style;            // s3:// sources: -o path_style
    int s3_no_sign;               // s3:// sources: -o no_sign_request
    int edit;                     // metadata/ is writable (-o edit or -o edits=PATH)
    char *edits_path;             // -o edits=PATH, made absolute; NULL for none
} ggfs_cli;

/* Parses argv. On return, args holds what is left for fuse_session_new,
 * with the options of every gguf-fs mount (ro, or rw when editing;
 * nosuid, nodev, default_permissions, fsname=SOURCE, subtype=gguf-fs)
 * added, and
 * cli->cmd.mountpoint the absolute path of an existing directory. Returns
 * -1 when the caller should go on and mount; otherwise the status to exit
 * with, after a message: GGFS_EXIT_MOUNTED after --help or --version,
 * GGFS_EXIT_USAGE for a wrong command line (an option that neither gguf-fs
 * nor libfuse knows included), GGFS_EXIT_MOUNT for a mount
 * point that is missing or no directory. Either way, release with
 * ggfs_cli_destroy. */
int ggfs_cli_parse(int argc, char *argv[], struct fuse_args *args, ggfs_cli *cli);

void ggfs_cli_destroy(ggfs_cli *cli, struct fuse_args *args);

#endif
