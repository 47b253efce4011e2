/*
 * Private to the edits: included only by the files that implement
 * edits.h. It holds the state of a model's edits and the helpers one file
 * lends the others:
 *
 *   edits.c         the changes (write, create, unlink, rename, set_type),
 *                   the scratch files' queries, opening from a file
 *   edits_state.c   the state: blobs, copying, finding entries, encoding
 *                   keys, and the entry changes edits are made of
 *   edits_commit.c  making a changed copy the state: limits, its view,
 *                   saving it; and handing out the current view
 *
 * Changes are made one at a time under the edits' lock: every function
 * below but ggfs_ed_blob_* and the finders is called with it held, on a
 * copy of the state (next) or the state itself (e->st).
 */
#ifndef GGFS_MODEL_EDITS_PRIVATE_H
#define GGFS_MODEL_EDITS_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggp.h"
#include "model/edits.h"
#include "model/header.h"
#include "model/view.h"

/* ==== Blobs: immutable bytes shared by states ==== */

typedef struct blob {
    unsigned refs;          // changed under the edits' lock only
    size_t len;
    uint8_t bytes[];
} blob;

/* ==== The state ==== */

typedef struct key_entry {
    uint64_t id;
    blob *kv;               // the whole key in the model's format; NULL: the model's own
    ggp_value_type type;
    bool deleted;           // the model's keys only
    uint64_t elements;      // array elements of an edited value, for the limit
} key_entry;

typedef struct scratch_entry {
    uint64_t id;
    blob *name;
    blob *text;             // NULL when empty
    ggp_value_type type;
    bool pending;           // a key being made by an open (ggfs_edits_create):
                            // no key until its first text takes
} scratch_entry;

typedef struct state {
    key_entry *src;         // one per key of the model, in its order
    key_entry *added;       // in the order they were made
    uint64_t n_added, cap_added;
    scratch_entry *scratch;
    uint64_t n_scratch, cap_scratch;
    uint64_t next_id;
    uint64_t bytes;         // held by edited keys and scratch texts
    uint64_t elements;
} state;

struct ggfs_edits {
    ggfs_model *model;
    const ggp_file *source;  // shard 1's keys
    uint64_t n_src;
    ggp_value_type *src_type; // each model key's type
    char *path;              // NULL: edits kept in memory only
    pthread_mutex_t lock;    // one change at a time; guards st
    state st;
    _Atomic uint64_t version; // the last view's version: one more per change; 0
                             // is the model's own, and edits read from a file
                             // make version 1
    pthread_mutex_t view_lock; // guards view: held only to take a reference
    ggfs_view *view;         // the current view, one reference held here
    _Atomic int64_t open_bytes; // text of files open for writing
};

/* ==== Blobs (reference counts change under the lock only) ==== */

blob *ggfs_ed_blob_new(const void *bytes, size_t len); // NULL when out of memory
blob *ggfs_ed_blob_ref(blob *b);                       // b may be NULL
void ggfs_ed_blob_put(blob *b);

/* ==== States ==== */

void ggfs_ed_state_free(state *s, uint64_t n_src);
/* A copy sharing every value; false when out of memory. */
bool ggfs_ed_state_clone(const state *from, uint64_t n_src, state *to);

/* Bytes of a length or count field in the model's version. */
uint64_t ggfs_ed_width_of(const ggfs_edits *e);

/* Names: the one inside a key's bytes, a key of the model's, and a slot's
 * (slots number the keys of a state: the model's first, then those added). */
ggp_str ggfs_ed_blob_name(const ggfs_edits *e, const blob *kv);
ggp_str ggfs_ed_src_name(const ggfs_edits *e, const state *s, uint64_t i);
bool ggfs_ed_same_name(ggp_str a, const char *name, size_t len);
key_entry *ggfs_ed_slot_entry(const ggfs_edits *e, state *s, uint64_t slot);
ggp_str ggfs_ed_slot_name(const ggfs_edits *e, const state *s, uint64_t slot);

/* Finders: a live key by name or id, a deleted key of the model by name,
 * a scratch file by name or id. False when there is none. */
bool ggfs_ed_find_key(const ggfs_edits *e, const state *s, const char *name, size_t len, uint64_t *slot);
bool ggfs_ed_find_deleted(const ggfs_edits *e, const state *s, const char *name, size_t len, uint64_t *slot);
bool ggfs_ed_find_id(const ggfs_edits *e, const state *s, uint64_t id, uint64_t *slot);
bool ggfs_ed_find_scratch(const state *s, const char *name, size_t len, uint64_t *pos);
bool ggfs_ed_find_scratch_id(const state *s, uint64_t id, uint64_t *pos);

/* One log line about the key or file called name. */
void ggfs_ed_log_key(const char *name, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline ggp_vtype ggfs_ed_top_type(ggp_value_type t)
{
    return t.depth > 0 ? GGP_V_ARRAY : t.leaf;
}

static inline bool ggfs_ed_same_type(ggp_value_type a, ggp_value_type b)
{
    return a.depth == b.depth && a.leaf == b.leaf;
}

/* A key's bytes (name, type, value[0, value_len) after the type field) in
 * the model's format; NULL when out of memory. */
blob *ggfs_ed_encode_key(const ggfs_edits *e, const char *name, size_t len, ggp_value_type type,
                         const uint8_t *value, size_t value_len);

/* An array value's element count (an upper bound for arrays of arrays,
 * from its text), for GGFS_EDIT_ELEMENTS_MAX; 0 for a scalar or string. */
uint64_t ggfs_ed_elements_of(const ggfs_edits *e, ggp_value_type type, const ggp_bytes *value, const char *text,
                             size_t len);

/* ==== Changes to entries ==== */

/* Sets slot (a key, or a deleted key of the model, which comes back) to
 * key `name` of `type` with this value, keeping its id. */
int ggfs_ed_set_slot(ggfs_edits *e, state *s, uint64_t slot, const char *name, size_t len, ggp_value_type type,
                     const uint8_t *value, size_t value_len, uint64_t elements);
/* Takes slot out: a key of the model is marked deleted, one added goes. */
void ggfs_ed_remove_slot(ggfs_edits *e, state *s, uint64_t slot);
void ggfs_ed_remove_scratch(state *s, uint64_t pos);
/* Adds a scratch file (text shared, may be NULL) or a key at the end. */
int ggfs_ed_add_scratch(state *s, uint64_t id, const char *name, size_t len, blob *text, ggp_value_type type);
int ggfs_ed_add_key(ggfs_edits *e, state *s, uint64_t id, const char *name, size_t len, ggp_value_type type,
                    const uint8_t *value, size_t value_len, uint64_t elements);

/* ==== Making a state the state (edits_commit.c) ==== */

/* The view of s: the model's own when s changes nothing; NULL with err
 * filled when the edited header cannot be made. */
ggfs_view *ggfs_ed_view_of(ggfs_edits *e, state *s, uint64_t version, ggp_error *err);

/* Makes next the state: after checking the limits and, when the keys
 * changed, making its view and saving it. Takes next either way; name is
 * the file the change is about, for log lines. */
int ggfs_ed_commit(ggfs_edits *e, state *next, bool keys_changed, const char *name, size_t len);

/* A copy of the state to change: 0 or ENOMEM. */
int ggfs_ed_clone_current(ggfs_edits *e, state *next);

#endif
