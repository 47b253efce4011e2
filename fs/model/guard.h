/*
 * guard: reads of the model's mapping that survive the model being cut
 * short under them. Touching a mapped page past the end of a truncated file
 * raises SIGBUS; inside a guarded read that signal unwinds to the read,
 * which then fails, and the daemon answers EIO instead of dying. This lets
 * f32 be decoded straight from the mapping, with no copy of the blocks.
 */
#ifndef GGFS_MODEL_GUARD_H
#define GGFS_MODEL_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"

/* Installs the process's SIGBUS handler. Call once, before any guarded
 * read; returns false (errno set) when sigaction fails. A SIGBUS outside a
 * guarded read keeps its default action and ends the process. */
bool ggfs_guard_install(void);

/* ggp_tensor_read_f32 under the guard. Returns GGP_OK or the library's
 * error; sets *cut_short (and returns GGP_ERR_IO) when the mapping faulted,
 * in which case dst holds an unspecified prefix of the values. */
ggp_err ggfs_guarded_read_f32(const ggp_file *file, const ggp_tensor *t, uint64_t first,
                              uint64_t count, float *dst, bool *cut_short);

/* Runs fn(arg), which reads the mapping, under the guard. Returns false
 * when the mapping faulted (fn was cut off part-way: whatever it was
 * building is to be thrown away), true when fn returned. */
bool ggfs_guarded_run(void (*fn)(void *arg), void *arg);

#endif
