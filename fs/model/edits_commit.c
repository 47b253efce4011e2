/*
 * Making a changed state the edits' state (edits_private.h): after
 * checking the limits, its view (the keys' header and model.gguf's,
 * rebuilt and parsed again) and, with a file of edits, saving it; and
 * handing out the current view.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/edits_file.h"
#include "model/edits_private.h"
#include "model/header.h"
#include "util/log.h"

/* ==== Views ==== */

static ggfs_run slot_run(const ggfs_edits *e, state *s, uint64_t slot)
{
    const key_entry *k = ggfs_ed_slot_entry(e, s, slot);
    if (k->kv)
        return (ggfs_run){k->kv->bytes, k->kv->len};
    return ggfs_kv_run(e->source, ggp_kv_at(e->source, slot));
}

/* The view of state s: shard 1's header with s's keys (metadata/), and
 * for a split set model.gguf's header over every shard. */
static ggfs_view *make_view(ggfs_edits *e, state *s, uint64_t version, ggp_error *err)
{
    const ggfs_model *m = e->model;
    const uint64_t n_slots = e->n_src + s->n_added;
    ggfs_run *runs = malloc((n_slots ? n_slots : 1) * sizeof *runs);
    ggfs_run *unsplit = malloc((n_slots ? n_slots : 1) * sizeof *unsplit);
    uint64_t *ids = malloc((n_slots ? n_slots : 1) * sizeof *ids);
    uint8_t *keys_header = NULL, *gguf_header = NULL;
    ggfs_view *v = NULL;
    *err = (ggp_error){GGP_ERR_NOMEM, 0, "out of memory"};
    if (!runs || !unsplit || !ids)
        goto out;
    uint64_t n = 0, n_unsplit = 0;
    for (uint64_t slot = 0; slot < n_slots; slot++) {
        const key_entry *k = ggfs_ed_slot_entry(e, s, slot);
        if (k->deleted)
            continue;
        runs[n] = slot_run(e, s, slot);
        ids[n++] = k->id;
        const ggp_str name = ggfs_ed_slot_name(e, s, slot);
        if (!ggfs_is_split_key(name.ptr, name.len))
            unsplit[n_unsplit++] = runs[n - 1];
    }
    const ggp_file *shard1 = e->source;
    const uint64_t alignment = ggp_alignment(shard1);
    ggfs_header_plan plan;
    ggfs_header_plan_file(&plan, shard1, runs, n);
    const uint64_t keys_len = ggfs_header_len(&plan);
    keys_header = malloc((size_t)keys_len);
    if (!keys_header)
        goto out;
    ggfs_header_write(&plan, keys_header);
    const uint64_t keys_file_size =
        ggfs_pad_to(keys_len, alignment) + (ggp_file_size(shard1) - ggfs_data_start(shard1));
    ggfs_gguf_head head = {NULL, keys_len, ggfs_pad_to(keys_len, alignment), keys_file_size};
    if (ggfs_model_is_split(m)) {
        ggfs_merged_plan(&m->merged, unsplit, n_unsplit, &plan);
        head.len = ggfs_header_len(&plan);
        gguf_header = malloc((size_t)head.len);
        if (!gguf_header)
            goto out;
        ggfs_header_write(&plan, gguf_header);
        head.bytes = gguf_header;
        head.data_offset = ggfs_pad_to(head.len, alignment);
        head.size = head.data_offset + m->merged.data_size;
    }
    v = ggfs_view_new(version, keys_header, keys_len, keys_file_size, gguf_header, head, ids, err);
    keys_header = gguf_header = NULL;
    ids = NULL; // the view owns them, or freed them
out:
    free(runs);
    free(unsplit);
    free(ids);
    free(keys_header);
    free(gguf_header);
    return v;
}

/* Whether s is the model as it is: then its view is the model's own. */
static bool pristine(const ggfs_edits *e, const state *s)
{
    if (s->n_added)
        return false;
    for (uint64_t i = 0; i < e->n_src; i++) {
        const key_entry *k = &s->src[i];
        if (k->deleted || k->kv || k->id != i || !ggfs_ed_same_type(k->type, e->src_type[i]))
            return false;
    }
    return true;
}

/* The view of s: the model's own when nothing is changed. Its keys' content
 * versions follow the current view's (the model's own at the start). */
ggfs_view *ggfs_ed_view_of(ggfs_edits *e, state *s, uint64_t version, ggp_error *err)
{
    if (pristine(e, s))
        return &e->model->view;
    ggfs_view *v = make_view(e, s, version, err);
    if (v && !ggfs_view_follow(v, e->view ? e->view : &e->model->view)) {
        ggfs_view_put(v);
        *err = (ggp_error){GGP_ERR_NOMEM, 0, "out of memory"};
        return NULL;
    }
    return v;
}

/* ==== Saving ==== */

/* Saves state s, whose view is v, to e->path. */
static int save(ggfs_edits *e, state *s, const ggfs_view *v)
{
    const uint64_t n_keys = ggp_kv_count(v->keys);
    ggfs_edit_save *set = malloc((n_keys ? n_keys : 1) * sizeof *set);
    ggp_str *deleted = malloc((e->n_src ? e->n_src : 1) * sizeof *deleted);
    uint64_t n_set = 0, n_deleted = 0;
    int err = 0;
    if (!set || !deleted) {
        err = ENOMEM;
        goto out;
    }
    // The keys of v are the live slots in order: index follows slot.
    uint64_t index = 0;
    for (uint64_t slot = 0; slot < e->n_src + s->n_added; slot++) {
        const key_entry *k = ggfs_ed_slot_entry(e, s, slot);
        if (k->deleted) {
            deleted[n_deleted++] = ggp_kv_at(e->source, slot)->key;
            continue;
        }
        const bool model_key = slot < e->n_src;
        const bool retyped = model_key && !ggfs_ed_same_type(k->type, e->src_type[slot]);
        if (k->kv)
            set[n_set++] = (ggfs_edit_save){index, retyped, model_key ? e->src_type[slot] : k->type};
        index++;
    }
    char why[512];
    err = ggfs_edits_file_save(e->path, v->keys, set, n_set, deleted, n_deleted, why, sizeof why);
    if (err)
        ggfs_log(GGFS_LOG_ERR, "gguf-fs: %s; the change is not made\n", why);
out:
    free(set);
    free(deleted);
    return err;
}

/* ==== Changes ==== */

/* Makes next the state: after checking the limits and, when the keys
 * changed, making its view and saving it. Takes next either way. */
int ggfs_ed_commit(ggfs_edits *e, state *next, bool keys_changed, const char *name, size_t len)
{
    int err = 0;
    if (next->bytes > GGFS_EDIT_TOTAL_MAX) {
        ggfs_ed_log_key(name, len, "edits would hold %" PRIu64 " bytes, more than the %" PRIu64 " they may", next->bytes,
                GGFS_EDIT_TOTAL_MAX);
        err = ENOSPC;
    } else if (next->n_added + next->n_scratch > GGFS_EDIT_FILES_MAX) {
        ggfs_ed_log_key(name, len, "more than %d keys added and scratch files", GGFS_EDIT_FILES_MAX);
        err = ENOSPC;
    } else if (next->elements > GGFS_EDIT_ELEMENTS_MAX) {
        ggfs_ed_log_key(name, len, "edits would hold more than %" PRIu64 " array elements", GGFS_EDIT_ELEMENTS_MAX);
        err = ENOSPC;
    }
    ggfs_view *v = NULL;
    if (!err && keys_changed) {
        ggp_error perr;
        v = ggfs_ed_view_of(e, next, e->version + 1, &perr);
        if (!v) {
            ggfs_ed_log_key(name, len, "cannot make the edited header: %s", perr.msg);
            err = perr.code == GGP_ERR_NOMEM ? ENOMEM : EIO;
        } else if (e->path) {
            err = save(e, next, v);
        }
    }
    if (err) {
        ggfs_view_put(v);
        ggfs_ed_state_free(next, e->n_src);
        return err;
    }
    ggfs_ed_state_free(&e->st, e->n_src);
    e->st = *next;
    if (v) {
        atomic_fetch_add(&e->version, 1);
        pthread_mutex_lock(&e->view_lock);
        ggfs_view *old = e->view;
        e->view = v;
        pthread_mutex_unlock(&e->view_lock);
        ggfs_view_put(old);
    }
    return 0;
}

int ggfs_ed_clone_current(ggfs_edits *e, state *next)
{
    return ggfs_ed_state_clone(&e->st, e->n_src, next) ? 0 : ENOMEM;
}

/* Room for one more element in an array of n of cap elements of size
 * bytes; false when out of memory. */
/* ==== The view ==== */

ggfs_view *ggfs_edits_view(ggfs_edits *e)
{
    pthread_mutex_lock(&e->view_lock);
    ggfs_view *v = e->view;
    ggfs_view_ref(v);
    pthread_mutex_unlock(&e->view_lock);
    return v;
}
