/*
 * ggml's GGUF reader, as the benchmarks call it: libggml-base.so loaded at
 * run time with dlopen (nothing here links against ggml), and the few
 * functions they time looked up in it. The declarations are from ggml's
 * include/gguf.h.
 */
#ifndef BENCH_GGML_GGUF_H
#define BENCH_GGML_GGUF_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct gguf_context;
struct ggml_context;

struct gguf_init_params {
    bool no_alloc;
    struct ggml_context **ctx;
};

typedef struct ggml_gguf {
    struct gguf_context *(*init_from_file)(const char *, struct gguf_init_params);
    void (*free)(struct gguf_context *);
    int64_t (*get_n_tensors)(const struct gguf_context *);
    int64_t (*get_n_kv)(const struct gguf_context *);
} ggml_gguf;

/* Loads lib_path with dlopen's flags and looks the functions up; false,
 * with a line on stderr that starts with prog, when it cannot. */
static inline bool ggml_gguf_load(const char *prog, const char *lib_path, int flags, ggml_gguf *api)
{
    void *lib = dlopen(lib_path, flags);
    if (!lib) {
        fprintf(stderr, "%s: dlopen %s: %s\n", prog, lib_path, dlerror());
        return false;
    }
    static const char *const names[] = {"gguf_init_from_file", "gguf_free", "gguf_get_n_tensors",
                                        "gguf_get_n_kv"};
    void *syms[4];
    for (int i = 0; i < 4; i++)
        if (!(syms[i] = dlsym(lib, names[i]))) {
            fprintf(stderr, "%s: %s lacks %s\n", prog, lib_path, names[i]);
            return false;
        }
    // Object to function pointers: by their bytes, as POSIX allows.
    memcpy(&api->init_from_file, &syms[0], sizeof syms[0]);
    memcpy(&api->free, &syms[1], sizeof syms[1]);
    memcpy(&api->get_n_tensors, &syms[2], sizeof syms[2]);
    memcpy(&api->get_n_kv, &syms[3], sizeof syms[3]);
    return true;
}

#endif
