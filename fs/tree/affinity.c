/*
 * The version each loading process keeps (see affinity.h): a short list,
 * as only processes that opened a root file of an edited model in the
 * last few seconds are in it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tree/affinity.h"
#include "util/clock.h"

typedef struct kept {
    pid_t process;
    ggfs_view *view;    // one reference
    int64_t since_ns;   // the process's first open of this version
} kept;

struct ggfs_affinity {
    pthread_mutex_t lock;
    int64_t keep_ns;
    kept *entries;
    size_t n, cap;
};

ggfs_affinity *ggfs_affinity_new(int64_t keep_ns)
{
    ggfs_affinity *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_mutex_init(&a->lock, NULL);
    a->keep_ns = keep_ns;
    return a;
}

void ggfs_affinity_free(ggfs_affinity *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        ggfs_view_put(a->entries[i].view);
    free(a->entries);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

pid_t ggfs_affinity_process(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    pid_t process = tid;
    int tgid;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "Tgid: %d", &tgid) == 1) {
            process = (pid_t)tgid;
            break;
        }
    }
    if (f)
        fclose(f);
    return process;
}

/* Takes entry i out; its view goes to *gone for the caller to put once
 * the lock is let go (a last reference frees a whole header). */
static void take_out(ggfs_affinity *a, size_t i, ggfs_view **gone)
{
    *gone = a->entries[i].view;
    a->entries[i] = a->entries[--a->n];
}

/* Lets go the entries past their time, and process's when `also`; returns
 * the index of process's live entry, or a->n. Views to put go to gone
 * (room for every entry). */
static size_t sweep(ggfs_affinity *a, pid_t process, bool also, ggfs_view **gone, size_t *n_gone)
{
    const int64_t now = ggfs_now_ns();
    size_t found = SIZE_MAX;
    for (size_t i = 0; i < a->n;) {
        const bool old = now - a->entries[i].since_ns > a->keep_ns;
        const bool mine = a->entries[i].process == process;
        if (old || (mine && also)) {
            take_out(a, i, &gone[(*n_gone)++]);
            continue;
        }
        if (mine)
            found = i;
        i++;
    }
    return found == SIZE_MAX ? a->n : found;
}

/* Under the lock: sweeps (process's entry too, with forget), then keeps
 * `opened` for process when it has no entry, or else returns its entry's
 * view with a reference (neither opened nor forget). The views let go are
 * put once the lock is free. */
static ggfs_view *locked(ggfs_affinity *a, pid_t process, bool forget, ggfs_view *opened)
{
    pthread_mutex_lock(&a->lock);
    ggfs_view *stack[8], **gone = a->n < 8 ? stack : malloc(a->n * sizeof *gone);
    size_t n_gone = 0;
    ggfs_view *result = NULL;
    if (gone) {
        const size_t i = sweep(a, process, forget, gone, &n_gone);
        if (opened && i == a->n) {
            if (a->n == a->cap) {
                const size_t cap = a->cap ? 2 * a->cap : 8;
                kept *grown = realloc(a->entries, cap * sizeof *grown);
                if (grown) {
                    a->entries = grown;
                    a->cap = cap;
                }
            }
            if (a->n < a->cap) {
                ggfs_view_ref(opened);
                a->entries[a->n++] = (kept){process, opened, ggfs_now_ns()};
            }
        } else if (!opened && !forget && i < a->n) {
            result = a->entries[i].view;
            ggfs_view_ref(result);
        }
    }
    pthread_mutex_unlock(&a->lock);
    for (size_t i = 0; i < n_gone; i++)
        ggfs_view_put(gone[i]);
    if (gone != stack)
        free(gone);
    return result;
}

void ggfs_affinity_opened(ggfs_affinity *a, pid_t process, ggfs_view *view)
{
    locked(a, process, false, view);
}

ggfs_view *ggfs_affinity_view(ggfs_affinity *a, pid_t process)
{
    return locked(a, process, false, NULL);
}

void ggfs_affinity_forget(ggfs_affinity *a, pid_t process)
{
    locked(a, process, true, NULL);
}
