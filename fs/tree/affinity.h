/*
 * One version of an edited model per load. A client may open model.gguf
 * more than once to load it: llama.cpp parses the header from one open
 * (gguf_init_from_file) and maps the data through a second, and
 * node-llama-cpp reads the metadata through a third, from several
 * threads. An edit between those opens would hand the load the header of
 * one version and the data of another. So a process that opened a
 * version of the root's files that follow the keys (model.gguf, header,
 * metadata.json, warnings) finds that same version again at its lookups
 * for GGFS_AFFINITY_SECONDS after its first open of it, unless it made an
 * edit itself meanwhile (then it sees its edit at once); every other
 * process finds the newest.
 *
 * A process is its thread group (the FUSE request names a thread). Each
 * entry holds its version's view; entries past their time are let go at
 * the next call. All calls are thread-safe.
 */
#ifndef GGFS_TREE_AFFINITY_H
#define GGFS_TREE_AFFINITY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/view.h"

#define GGFS_AFFINITY_SECONDS 5

typedef struct ggfs_affinity ggfs_affinity;

/* Versions kept for keep_ns from a process's first open of one
 * (GGFS_AFFINITY_SECONDS in the daemon); NULL when out of memory. */
ggfs_affinity *ggfs_affinity_new(int64_t keep_ns);
void ggfs_affinity_free(ggfs_affinity *a);

/* The process (thread group) of thread tid; tid itself when /proc does
 * not say. */
pid_t ggfs_affinity_process(pid_t tid);

/* Process opened view's version: the first open starts its time. */
void ggfs_affinity_opened(ggfs_affinity *a, pid_t process, ggfs_view *view);

/* The version process keeps, with a reference; NULL when none (or past
 * its time). */
ggfs_view *ggfs_affinity_view(ggfs_affinity *a, pid_t process);

/* Process made an edit: it sees the newest version from now on. */
void ggfs_affinity_forget(ggfs_affinity *a, pid_t process);

#endif
