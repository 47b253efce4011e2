/*
 * `verify` of several models at once: a walk such as `cat` over every
 * model's verify (a glob of them) reads one after another, but the shell's
 * glob looked every one of them up first. Each lookup of a model's
 * `verify` is noted; the first open of a verify then queues the
 * computation of the others noted in the last VERIFY_WANTED_S seconds on
 * threads of their own, as many as the machine has cores, so the walk
 * takes about the time of its largest models rather than their sum. A
 * reader's open of a verify being computed
 * waits for that computation (util/once.h); one not started yet is
 * computed by the reader itself, and the job then finds it done.
 *
 * At most max_open - 1 models are queued at a time beside the one read,
 * so that the models verified ahead stay open, keeping their results,
 * until the walk reads them (a model closed meanwhile computes again).
 * A lookup alone (`ls -l`, `stat`) computes nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/catalog_private.h"
#include "util/clock.h"
#include "util/workers.h"

#define VERIFY_WANTED_S 30

typedef struct verify_job {
    ggfs_catalog *cat;
    uint64_t slot; // pinned while the job waits or runs
} verify_job;

static void run(void *arg, bool cancelled)
{
    verify_job *j = arg;
    ggfs_catalog *cat = j->cat;
    int err;
    ggfs_tree *tree = cancelled ? NULL : ggfs_catalog_get(cat, j->slot, &err);
    if (tree) {
        const ggfs_verify_result *r;
        (void)ggfs_verify_get(&tree->verify, tree->model, &r); // kept for the reader
        ggfs_catalog_put(cat, j->slot, tree);
    }
    pthread_mutex_lock(&cat->lock);
    ggfs_cat_unpin(cat, cat->slots[j->slot]);
    pthread_mutex_unlock(&cat->lock);
    free(j);
}

void ggfs_catalog_verify_wanted(ggfs_catalog *cat, uint64_t id)
{
    pthread_mutex_lock(&cat->lock);
    verify_wanted *w = &cat->verify_wanted;
    if (w->count < GGFS_VERIFY_WANTED_MAX)
        w->items[w->count++] = (verify_item){id, ggfs_now_ns()};
    pthread_mutex_unlock(&cat->lock);
}

/* Name order: the order of a glob, so of the reader. */
static int by_name(const void *a, const void *b)
{
    const slot *x = *(slot *const *)a, *y = *(slot *const *)b;
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    return strcmp(x->name, y->name);
}

void ggfs_catalog_verify_ahead(ggfs_catalog *cat, uint64_t opened)
{
    pthread_mutex_lock(&cat->lock);
    verify_wanted *w = &cat->verify_wanted;
    if (!w->count) {
        pthread_mutex_unlock(&cat->lock);
        return;
    }
    if (!cat->verifiers) {
        // Made on first use: the mount's threads start after the daemon forked.
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        cat->verifiers = ggfs_workers_new(cores > 0 ? (unsigned)cores : 1, GGFS_VERIFY_WANTED_MAX);
    }
    // The models noted lately, each once, in name order.
    const int64_t since = ggfs_now_ns() - (int64_t)VERIFY_WANTED_S * 1000000000;
    slot **wanted = malloc(w->count * sizeof *wanted);
    size_t n = 0;
    for (size_t i = 0; i < w->count && wanted; i++) {
        const verify_item it = w->items[i];
        slot *s = slot_at(cat, it.slot);
        if (it.slot == opened || it.at < since || !s || s->kind != GGFS_CAT_MODEL || s->error || s->stale)
            continue;
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++)
            seen = wanted[k] == s;
        if (!seen)
            wanted[n++] = s;
    }
    if (wanted)
        qsort(wanted, n, sizeof *wanted, by_name);
    for (size_t i = 0; i < n && cat->verifiers && i + 1 < cat->max_open; i++) {
        verify_job *j = malloc(sizeof *j);
        if (!j)
            break;
        *j = (verify_job){cat, wanted[i]->id};
        wanted[i]->pins++;
        if (!ggfs_workers_submit(cat->verifiers, run, j)) {
            wanted[i]->pins--;
            free(j);
            break;
        }
    }
    free(wanted);
    w->count = 0;
    pthread_mutex_unlock(&cat->lock);
}
