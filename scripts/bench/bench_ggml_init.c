/*
 * bench_ggml_init: how long a program of ggml's takes to read a GGUF
 * file's header, metadata and tensor infos as a whole process: started,
 * libggml-base.so loaded, gguf_init_from_file with no_alloc = true and no
 * ggml context, then exit (no gguf_free: a tool that only wanted the
 * answer exits). scripts/bench/run compares starting gguf-fs until its
 * mount answers against it: both pay for exec, the dynamic loader and
 * their libraries, not only for parsing.
 *
 *   bench_ggml_init RUNS LIBGGML_BASE.so MODEL.gguf
 *
 * Each run spawns this program again (/proc/self/exe) with `--once`, which
 * loads the library as a program linking it would (lazy binding, global
 * scope), reads the model and prints its tensor count on a pipe; the time
 * is from the spawn until the child has been waited for. Prints, on one
 * line: the best and median time in ms, and the tensor count.
 */
#define _DEFAULT_SOURCE // waitpid's status macros with c11
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_timing.h"
#include "ggml_gguf.h"

extern char **environ;

/* The child: one read of the model, its tensor count on stdout. */
static int once(const char *lib_path, const char *model)
{
    ggml_gguf api;
    if (!ggml_gguf_load("bench_ggml_init", lib_path, RTLD_LAZY | RTLD_GLOBAL, &api))
        return 1;
    const struct gguf_init_params params = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *ctx = api.init_from_file(model, params);
    if (!ctx) {
        fprintf(stderr, "bench_ggml_init: ggml cannot read %s\n", model);
        return 1;
    }
    printf("%lld\n", (long long)api.get_n_tensors(ctx));
    return 0;
}

/* Spawns `self --once lib model` with stdout on a pipe; returns the
 * tensor count it printed, or -1. */
static long long spawn_once(char *self, char *lib, char *model)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char flag[] = "--once";
    char *argv[] = {self, flag, lib, model, NULL};
    pid_t pid;
    const int spawned = posix_spawn(&pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    int st = 0;
    if (spawned == 0)
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
    char buf[32] = "";
    const ssize_t got = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    if (spawned != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || got <= 0)
        return -1;
    return atoll(buf);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--once") == 0)
        return once(argv[2], argv[3]);
    if (argc != 4) {
        fprintf(stderr, "usage: %s RUNS LIBGGML_BASE.so MODEL.gguf\n", argv[0]);
        return 2;
    }
    const int runs = atoi(argv[1]);
    if (runs < 1)
        return 2;
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = '\0';
    double *t = malloc((size_t)runs * sizeof *t);
    if (!t)
        return 1;
    long long n_tensors = 0;
    for (int r = 0; r < runs; r++) {
        const double t0 = bench_now();
        n_tensors = spawn_once(self, argv[2], argv[3]);
        t[r] = bench_now() - t0;
        if (n_tensors < 0) {
            fprintf(stderr, "bench_ggml_init: the run on %s failed\n", argv[3]);
            return 1;
        }
    }
    bench_sort_times(t, runs);
    printf("%.3f %.3f %lld\n", t[0] * 1e3, t[runs / 2] * 1e3, n_tensors);
    free(t);
    return 0;
}
