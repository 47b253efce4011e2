/*
 * A view: the model's keys and model.gguf's header as they are at one
 * moment. A model that is not edited has one view for its life, over its
 * first shard's own index. An edited one (edits.h) makes a new view after
 * each change and never changes one it has handed out: readers take a
 * reference to the current view for as long as one request needs it, so
 * each request sees one consistent version while edits go on.
 *
 * Keys have ids, which the tree turns into inode numbers: a key of the
 * first shard starts with its index as id; keys made later get ids past
 * those. A key renamed keeps its id; a file renamed over a key brings its
 * own (as the kernel expects of rename).
 */
#ifndef GGFS_MODEL_VIEW_H
#define GGFS_MODEL_VIEW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ggp.h"
#include "model/compute_memo.h"
#include "model/merged.h"

#define GGFS_VIEW_SIZE_SLOTS 8 // sizes of whole-model texts a tree keeps per view

/* A whole-model text kept with a view once rendered (the tree keeps those
 * slow to render): len bytes. Freed with the view. */
typedef struct ggfs_view_text {
    size_t len;
    char data[];
} ggfs_view_text;

/* One id's place among a view's keys. */
typedef struct ggfs_view_id {
    uint64_t id;
    uint64_t index;
} ggfs_view_id;

typedef struct ggfs_view {
    atomic_uint refs;          // references handed out; the unedited view is never freed by them
    uint64_t version;          // 0 for the model as it is; one more per change
    bool edited;               // false: keys are shard 1's own, model.gguf the model's
    const ggp_file *keys;      // metadata/: shard 1's keys, edited; its tensors
                               // are shard 1's, for header's counts and offsets
    uint64_t keys_file_size;   // the size of shard 1 with these keys
    ggp_file *own_keys;        // keys, when this view parsed them itself
    uint8_t *keys_header;      // the bytes own_keys points into
    uint64_t *id_of;           // each key's id; NULL: key i has id i
    ggfs_view_id *by_id;       // (id, index) sorted by id; NULL with id_of
    ggfs_gguf_head gguf;       // model.gguf's header, when edited
    uint8_t *gguf_header;      // its bytes, when not the keys' own (split sets)
    uint64_t *changed_at;      // each key's content version: the version of the view
                               // its value or type last changed in; NULL: 0 for
                               // every key (the model's own values)
    _Atomic uint64_t *kv_size; // each key's rendered size, UINT64_MAX until computed
    _Atomic uint64_t text_size[GGFS_VIEW_SIZE_SLOTS]; // the same for the tree's whole-model texts
    _Atomic(ggfs_view_text *) text[GGFS_VIEW_SIZE_SLOTS]; // such a text itself, when kept; else NULL
    ggfs_compute_memo *compute; // offload/'s compute buffers worked out for this view (NULL: none kept)
} ggfs_view;

/* The unedited view of a model whose first shard's index is keys: no
 * allocation but the size caches. False when out of memory. */
bool ggfs_view_init_unedited(ggfs_view *v, const ggp_file *keys, uint64_t keys_file_size);
void ggfs_view_destroy_unedited(ggfs_view *v);

/* Takes and gives back a reference (the unedited view counts none). */
void ggfs_view_ref(ggfs_view *v);
void ggfs_view_put(ggfs_view *v);

/* The id of key i of the view. */
static inline uint64_t ggfs_view_id_of(const ggfs_view *v, uint64_t index)
{
    return v->id_of ? v->id_of[index] : index;
}

/* The version key i's value and type last changed in: 0 when they are the
 * model's own. Two views whose key `id` has the same content version hold
 * the same value for it. */
static inline uint64_t ggfs_view_changed_at(const ggfs_view *v, uint64_t index)
{
    return v->changed_at ? v->changed_at[index] : 0;
}

/* Gives each key of v (an edited view) its content version from prev, the
 * view it follows: a key whose id prev holds with the same type and value
 * bytes keeps prev's, any other takes v->version. False when out of
 * memory. */
bool ggfs_view_follow(ggfs_view *v, const ggfs_view *prev);

/* The index of the key with this id, or UINT64_MAX when the view has none. */
uint64_t ggfs_view_index_of(const ggfs_view *v, uint64_t id);

/* The index of the key with exactly this name, or UINT64_MAX. */
uint64_t ggfs_view_find(const ggfs_view *v, const char *name, uint64_t len);

/* Makes an edited view, owning keys_header (parsed here over
 * keys_file_size bytes of shard 1 as edited) and gguf_header (NULL when
 * model.gguf's header is keys_header itself: a single file), and id_of
 * (one id per key). gguf says where model.gguf's header and data lie.
 * On failure frees what it was given and returns NULL with err filled. */
ggfs_view *ggfs_view_new(uint64_t version, uint8_t *keys_header, uint64_t keys_len, uint64_t keys_file_size,
                         uint8_t *gguf_header, ggfs_gguf_head gguf, uint64_t *id_of, ggp_error *err);

#endif
