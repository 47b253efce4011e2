/*
 * bench_mount: wall time from starting the gguf-fs daemon to the mount
 * answering "ls tensors" and "cat metadata/general.name".
 *
 *   bench_mount RUNS MOUNTPOINT DAEMON [DAEMON ARGS...]
 *
 * Each run spawns DAEMON ARGS (gguf-fs in daemon mode, which exits once
 * the mount is up), waits for it, then lists MOUNTPOINT/tensors with
 * readdir and reads MOUNTPOINT/metadata/general.name, as ls and cat do
 * (without the two processes); then, untimed, unmounts with fusermount3 -u.
 * Prints, on one line: the best and median time in ms of the whole
 * sequence, the best time in ms until the daemon's exit (mounted), and the
 * number of names under tensors/.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_timing.h"

extern char **environ;

/* Runs argv[0] from PATH; returns its exit status, or -1. */
static int run(char *const argv[])
{
    pid_t pid;
    if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s RUNS MOUNTPOINT DAEMON [DAEMON ARGS...]\n", argv[0]);
        return 2;
    }
    const int runs = atoi(argv[1]);
    const char *mnt = argv[2];
    if (runs < 1)
        return 2;
    char tensors[4096], name[4096];
    snprintf(tensors, sizeof tensors, "%s/tensors", mnt);
    snprintf(name, sizeof name, "%s/metadata/general.name", mnt);
    char fusermount[] = "fusermount3", dash_u[] = "-u";
    char *unmount[] = {fusermount, dash_u, argv[2], NULL};

    double *total = malloc((size_t)runs * sizeof *total);
    double best_mounted = 1e30;
    long entries = 0;
    if (!total)
        return 1;
    for (int r = 0; r < runs; r++) {
        const double t0 = bench_now();
        if (run(argv + 3) != 0) {
            fprintf(stderr, "bench_mount: %s failed\n", argv[3]);
            return 1;
        }
        const double t_mounted = bench_now();
        DIR *d = opendir(tensors);
        if (!d) {
            perror(tensors);
            run(unmount);
            return 1;
        }
        entries = 0;
        while (readdir(d))
            entries++;
        closedir(d);
        char buf[4096];
        const int fd = open(name, O_RDONLY);
        ssize_t got = 0;
        while (fd >= 0 && (got = read(fd, buf, sizeof buf)) > 0)
            ;
        // A model without the key answers ENOENT: an answer all the same.
        if ((fd < 0 && errno != ENOENT) || got < 0) {
            perror(name);
            run(unmount);
            return 1;
        }
        if (fd >= 0)
            close(fd);
        const double t1 = bench_now();
        total[r] = t1 - t0;
        if (t_mounted - t0 < best_mounted)
            best_mounted = t_mounted - t0;
        if (run(unmount) != 0) {
            fprintf(stderr, "bench_mount: fusermount3 -u %s failed\n", mnt);
            return 1;
        }
        // Let the daemon see the unmount and exit before the next run.
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    bench_sort_times(total, runs);
    printf("%.3f %.3f %.3f %ld\n", total[0] * 1e3, total[runs / 2] * 1e3, best_mounted * 1e3,
           entries - 2);
    free(total);
    return 0;
}
