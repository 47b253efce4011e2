/*
 * Edits over a model's header (see edits.h). The edits are a state: each
 * key of the model (kept, replaced or deleted, with its id), the keys
 * added, and the scratch files. A change copies the state (values are
 * shared, reference-counted, never changed in place), changes the copy,
 * makes the view of it and saves it; only when all that worked does the
 * copy become the state. So a change that fails at any step (a text that
 * does not parse, a limit, a full disk) leaves everything as it was.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/edits.h"
#include "model/edits_file.h"
#include "model/header.h"
#include "util/log.h"

#define ELEMENTS_MAX (UINT64_C(1) << 22) // array elements over all edited values

/* ==== Blobs: immutable bytes shared by states ==== */

typedef struct blob {
    unsigned refs;          // changed under the edits' lock only
    size_t len;
    uint8_t bytes[];
} blob;

static blob *blob_new(const void *bytes, size_t len)
{
    blob *b = malloc(sizeof *b + (len ? len : 1));
    if (!b)
        return NULL;
    b->refs = 1;
    b->len = len;
    if (len)
        memcpy(b->bytes, bytes, len);
    return b;
}

static blob *blob_ref(blob *b)
{
    if (b)
        b->refs++;
    return b;
}

static void blob_put(blob *b)
{
    if (b && --b->refs == 0)
        free(b);
}

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
    _Atomic uint64_t version; // changes made to the keys
    pthread_mutex_t view_lock; // guards view: held only to take a reference
    ggfs_view *view;         // the current view, one reference held here
    _Atomic int64_t open_bytes; // text of files open for writing
};

static void state_free(state *s, uint64_t n_src)
{
    for (uint64_t i = 0; s->src && i < n_src; i++)
        blob_put(s->src[i].kv);
    for (uint64_t i = 0; i < s->n_added; i++)
        blob_put(s->added[i].kv);
    for (uint64_t i = 0; i < s->n_scratch; i++) {
        blob_put(s->scratch[i].name);
        blob_put(s->scratch[i].text);
    }
    free(s->src);
    free(s->added);
    free(s->scratch);
    memset(s, 0, sizeof *s);
}

/* A copy sharing every value; false when out of memory. */
static bool state_clone(const state *from, uint64_t n_src, state *to)
{
    *to = *from;
    to->src = malloc((n_src ? n_src : 1) * sizeof *to->src);
    to->added = malloc((from->cap_added ? from->cap_added : 1) * sizeof *to->added);
    to->scratch = malloc((from->cap_scratch ? from->cap_scratch : 1) * sizeof *to->scratch);
    if (!to->src || !to->added || !to->scratch) {
        free(to->src);
        free(to->added);
        free(to->scratch);
        memset(to, 0, sizeof *to);
        return false;
    }
    // (memcpy from NULL is undefined even for 0 bytes: a state may have no arrays)
    if (n_src)
        memcpy(to->src, from->src, n_src * sizeof *to->src);
    if (from->n_added)
        memcpy(to->added, from->added, from->n_added * sizeof *to->added);
    if (from->n_scratch)
        memcpy(to->scratch, from->scratch, from->n_scratch * sizeof *to->scratch);
    for (uint64_t i = 0; i < n_src; i++)
        blob_ref(to->src[i].kv);
    for (uint64_t i = 0; i < from->n_added; i++)
        blob_ref(to->added[i].kv);
    for (uint64_t i = 0; i < from->n_scratch; i++) {
        blob_ref(to->scratch[i].name);
        blob_ref(to->scratch[i].text);
    }
    return true;
}

/* ==== Names ==== */

static uint64_t width_of(const ggfs_edits *e)
{
    return ggp_version(e->source) == 1 ? 4 : 8;
}

/* The name inside a key's bytes (length, name, type, value). */
static ggp_str blob_name(const ggfs_edits *e, const blob *kv)
{
    const uint64_t w = width_of(e);
    const bool big = ggp_byte_order_of(e->source) == GGP_BIG;
    uint64_t len = 0;
    for (uint64_t i = 0; i < w; i++)
        len |= (uint64_t)kv->bytes[big ? i : w - 1 - i] << (8 * (w - 1 - i));
    return (ggp_str){(const char *)kv->bytes + w, len};
}

static ggp_str src_name(const ggfs_edits *e, const state *s, uint64_t i)
{
    return s->src[i].kv ? blob_name(e, s->src[i].kv) : ggp_kv_at(e->source, i)->key;
}

static bool same_name(ggp_str a, const char *name, size_t len)
{
    return a.len == len && memcmp(a.ptr, name, len) == 0;
}

/* Slots number the keys of a state: the model's first, then those added. */
static key_entry *slot_entry(const ggfs_edits *e, state *s, uint64_t slot)
{
    return slot < e->n_src ? &s->src[slot] : &s->added[slot - e->n_src];
}

static ggp_str slot_name(const ggfs_edits *e, const state *s, uint64_t slot)
{
    return slot < e->n_src ? src_name(e, s, slot) : blob_name(e, s->added[slot - e->n_src].kv);
}

/* The live key called name; false when none. */
static bool find_key(const ggfs_edits *e, const state *s, const char *name, size_t len, uint64_t *slot)
{
    for (uint64_t i = 0; i < e->n_src; i++) {
        if (!s->src[i].deleted && same_name(src_name(e, s, i), name, len))
            return *slot = i, true;
    }
    for (uint64_t i = 0; i < s->n_added; i++) {
        if (same_name(blob_name(e, s->added[i].kv), name, len))
            return *slot = e->n_src + i, true;
    }
    return false;
}

/* The deleted key of the model called name. */
static bool find_deleted(const ggfs_edits *e, const state *s, const char *name, size_t len, uint64_t *slot)
{
    for (uint64_t i = 0; i < e->n_src; i++) {
        if (s->src[i].deleted && same_name(ggp_kv_at(e->source, i)->key, name, len))
            return *slot = i, true;
    }
    return false;
}

static bool find_id(const ggfs_edits *e, const state *s, uint64_t id, uint64_t *slot)
{
    for (uint64_t i = 0; i < e->n_src; i++) {
        if (!s->src[i].deleted && s->src[i].id == id)
            return *slot = i, true;
    }
    for (uint64_t i = 0; i < s->n_added; i++) {
        if (s->added[i].id == id)
            return *slot = e->n_src + i, true;
    }
    return false;
}

static bool find_scratch(const state *s, const char *name, size_t len, uint64_t *pos)
{
    for (uint64_t i = 0; i < s->n_scratch; i++) {
        if (same_name((ggp_str){(const char *)s->scratch[i].name->bytes, s->scratch[i].name->len}, name, len))
            return *pos = i, true;
    }
    return false;
}

static bool find_scratch_id(const state *s, uint64_t id, uint64_t *pos)
{
    for (uint64_t i = 0; i < s->n_scratch; i++) {
        if (s->scratch[i].id == id)
            return *pos = i, true;
    }
    return false;
}

static bool ends_with(const char *name, size_t len, const char *tail)
{
    const size_t n = strlen(tail);
    return len >= n && memcmp(name + len - n, tail, n) == 0;
}

/* name is prefix followed by n characters of the set (letters, digits,
 * and '_' when underscore). */
static bool prefix_and_chars(const char *name, size_t len, const char *prefix, size_t n, bool underscore)
{
    const size_t p = strlen(prefix);
    if (len != p + n || memcmp(name, prefix, p) != 0)
        return false;
    for (size_t i = p; i < len; i++) {
        const char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (underscore && c == '_')))
            return false;
    }
    return true;
}

bool ggfs_edits_is_scratch_name(const char *name, size_t len)
{
    return (len > 0 && name[0] == '.') || ends_with(name, len, "~") || ends_with(name, len, ".swp") ||
           ends_with(name, len, ".swx") || ends_with(name, len, ".tmp") || (len == 4 && memcmp(name, "4913", 4) == 0) ||
           prefix_and_chars(name, len, "sed", 6, false) || prefix_and_chars(name, len, "tmp", 8, true) ||
           (len > 4 && memcmp(name, "tmp.", 4) == 0);
}

bool ggfs_edits_is_protected(const char *name, size_t len)
{
    return (len == 17 && memcmp(name, "general.alignment", 17) == 0) || ggfs_is_split_key(name, len);
}

/* ==== Log lines ==== */

static void log_key(const char *name, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void log_key(const char *name, size_t len, const char *fmt, ...)
{
    char what[300], q[GGP_QUOTE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ggfs_log(GGFS_LOG_WARNING, "gguf-fs: metadata/%s: %s\n", ggp_quote_name((ggp_str){name, len}, q, sizeof q), what);
}

/* ==== Values ==== */

static ggp_vtype top_type(ggp_value_type t)
{
    return t.depth > 0 ? GGP_V_ARRAY : t.leaf;
}

static bool same_type(ggp_value_type a, ggp_value_type b)
{
    return a.depth == b.depth && a.leaf == b.leaf;
}

/* A key's bytes: name, type, value (value_len bytes after the type). */
static blob *encode_key(const ggfs_edits *e, const char *name, size_t len, ggp_value_type type,
                        const uint8_t *value, size_t value_len)
{
    const uint64_t n = ggfs_kv_encoded_len(e->source, len, value_len);
    blob *b = blob_new(NULL, 0);
    blob *sized = b ? realloc(b, sizeof *b + n) : NULL;
    if (!sized) {
        free(b);
        return NULL;
    }
    sized->len = (size_t)n;
    ggfs_kv_encode(e->source, name, len, top_type(type), value, value_len, sized->bytes);
    return sized;
}

/* An array value's element count (an upper bound for arrays of arrays),
 * for ELEMENTS_MAX. */
static uint64_t elements_of(const ggfs_edits *e, ggp_value_type type, const ggp_bytes *value, const char *text,
                            size_t len)
{
    if (type.depth == 0)
        return 0;
    if (type.depth == 1) {
        const uint64_t w = width_of(e);
        const bool big = ggp_byte_order_of(e->source) == GGP_BIG;
        uint64_t n = 0;
        for (uint64_t i = 0; i < w; i++)
            n |= (uint64_t)value->data[4 + (big ? i : w - 1 - i)] << (8 * (w - 1 - i));
        return n;
    }
    uint64_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == ',' || text[i] == '\n';
    return n;
}

/* Parses text as a value of type for the key called name: 0, or EINVAL /
 * EFBIG / ENOMEM with a log line. */
static int parse_value(const ggfs_edits *e, const char *name, size_t name_len, ggp_value_type type, const char *text,
                       size_t len, ggp_bytes *out, uint64_t *elements)
{
    char type_name[GGP_TYPE_TEXT_SIZE];
    ggp_value_type_format(type, type_name);
    if (len > GGFS_EDIT_VALUE_MAX) {
        log_key(name, name_len, "%zu bytes of text, more than the %" PRIu64 " a value may have", len,
                GGFS_EDIT_VALUE_MAX);
        return EFBIG;
    }
    ggp_error err;
    switch (ggp_parse_text(text, len, type, ggp_version(e->source), ggp_byte_order_of(e->source),
                           GGFS_EDIT_VALUE_MAX, out, &err)) {
    case GGP_OK:
        break;
    case GGP_ERR_TOO_BIG:
        log_key(name, name_len, "%s", err.msg);
        return EFBIG;
    case GGP_ERR_NOMEM:
        log_key(name, name_len, "%s", err.msg);
        return ENOMEM;
    default:
        log_key(name, name_len, "offset %" PRIu64 ": not a %s value: %s; the value stays as it was", err.offset,
                type_name, err.msg);
        return EINVAL;
    }
    *elements = elements_of(e, type, out, text, len);
    if (*elements > ELEMENTS_MAX) {
        log_key(name, name_len, "%" PRIu64 " array elements, more than the %" PRIu64 " edits may hold", *elements,
                ELEMENTS_MAX);
        return EFBIG;
    }
    return 0;
}

/* A sink into a ggp_bytes. */
typedef struct bytes_sink {
    ggp_sink sink;
    ggp_bytes *b;
    bool failed;
} bytes_sink;

static void bytes_write(ggp_sink *sink, const char *bytes, size_t len)
{
    bytes_sink *s = (bytes_sink *)sink;
    ggp_bytes *b = s->b;
    if (s->failed || len == 0)
        return;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len)
            cap *= 2;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown) {
            s->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, len);
    b->len += len;
}

/* The key `id`'s text as metadata/KEY reads now (from the current view). */
static int current_text(ggfs_edits *e, uint64_t id, ggp_bytes *out)
{
    const ggfs_view *v = e->view;
    const uint64_t index = ggfs_view_index_of(v, id);
    if (index == UINT64_MAX)
        return ENOENT;
    bytes_sink s = {{bytes_write}, out, false};
    ggp_render(v->keys, &ggp_kv_at(v->keys, index)->value, &s.sink);
    return s.failed ? ENOMEM : 0;
}

/* The bytes after the type field of key `id` in the current view. */
static ggfs_run current_value(ggfs_edits *e, uint64_t id)
{
    const ggfs_view *v = e->view;
    return ggfs_value_run(v->keys, ggp_kv_at(v->keys, ggfs_view_index_of(v, id)));
}

/* ==== Views ==== */

static ggfs_run slot_run(const ggfs_edits *e, state *s, uint64_t slot)
{
    const key_entry *k = slot_entry(e, s, slot);
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
        const key_entry *k = slot_entry(e, s, slot);
        if (k->deleted)
            continue;
        runs[n] = slot_run(e, s, slot);
        ids[n++] = k->id;
        const ggp_str name = slot_name(e, s, slot);
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
        if (k->deleted || k->kv || k->id != i || !same_type(k->type, e->src_type[i]))
            return false;
    }
    return true;
}

/* The view of s: the model's own when nothing is changed. */
static ggfs_view *view_of(ggfs_edits *e, state *s, uint64_t version, ggp_error *err)
{
    if (pristine(e, s))
        return &e->model->view;
    return make_view(e, s, version, err);
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
        const key_entry *k = slot_entry(e, s, slot);
        if (k->deleted) {
            deleted[n_deleted++] = ggp_kv_at(e->source, slot)->key;
            continue;
        }
        const bool model_key = slot < e->n_src;
        const bool retyped = model_key && !same_type(k->type, e->src_type[slot]);
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
static int commit(ggfs_edits *e, state *next, bool keys_changed, const char *name, size_t len)
{
    int err = 0;
    if (next->bytes > GGFS_EDIT_TOTAL_MAX) {
        log_key(name, len, "edits would hold %" PRIu64 " bytes, more than the %" PRIu64 " they may", next->bytes,
                GGFS_EDIT_TOTAL_MAX);
        err = ENOSPC;
    } else if (next->n_added + next->n_scratch > GGFS_EDIT_FILES_MAX) {
        log_key(name, len, "more than %d keys added and scratch files", GGFS_EDIT_FILES_MAX);
        err = ENOSPC;
    } else if (next->elements > ELEMENTS_MAX) {
        log_key(name, len, "edits would hold more than %" PRIu64 " array elements", ELEMENTS_MAX);
        err = ENOSPC;
    }
    ggfs_view *v = NULL;
    if (!err && keys_changed) {
        ggp_error perr;
        v = view_of(e, next, e->version + 1, &perr);
        if (!v) {
            log_key(name, len, "cannot make the edited header: %s", perr.msg);
            err = perr.code == GGP_ERR_NOMEM ? ENOMEM : EIO;
        } else if (e->path) {
            err = save(e, next, v);
        }
    }
    if (err) {
        ggfs_view_put(v);
        state_free(next, e->n_src);
        return err;
    }
    state_free(&e->st, e->n_src);
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

static int clone_current(ggfs_edits *e, state *next)
{
    return state_clone(&e->st, e->n_src, next) ? 0 : ENOMEM;
}

static bool grow_added(state *s)
{
    if (s->n_added < s->cap_added)
        return true;
    const uint64_t cap = s->cap_added ? s->cap_added * 2 : 16;
    key_entry *grown = realloc(s->added, cap * sizeof *grown);
    if (!grown)
        return false;
    s->added = grown;
    s->cap_added = cap;
    return true;
}

static bool grow_scratch(state *s)
{
    if (s->n_scratch < s->cap_scratch)
        return true;
    const uint64_t cap = s->cap_scratch ? s->cap_scratch * 2 : 8;
    scratch_entry *grown = realloc(s->scratch, cap * sizeof *grown);
    if (!grown)
        return false;
    s->scratch = grown;
    s->cap_scratch = cap;
    return true;
}

/* Sets the value of slot to a key `name` of `type` whose value is
 * value[0, value_len), keeping its id unless id is given. */
static int set_slot(ggfs_edits *e, state *s, uint64_t slot, const char *name, size_t len, ggp_value_type type,
                    const uint8_t *value, size_t value_len, uint64_t elements)
{
    blob *kv = encode_key(e, name, len, type, value, value_len);
    if (!kv)
        return ENOMEM;
    key_entry *k = slot_entry(e, s, slot);
    if (k->kv)
        s->bytes -= k->kv->len;
    s->elements -= k->elements;
    blob_put(k->kv);
    k->kv = kv;
    k->type = type;
    k->elements = elements;
    k->deleted = false;
    s->bytes += kv->len;
    s->elements += elements;
    return 0;
}

/* Takes slot out: a key of the model is marked deleted (and keeps nothing
 * but its name, from the model), one added goes. */
static void remove_slot(ggfs_edits *e, state *s, uint64_t slot)
{
    key_entry *k = slot_entry(e, s, slot);
    if (k->kv)
        s->bytes -= k->kv->len;
    s->elements -= k->elements;
    blob_put(k->kv);
    if (slot < e->n_src) {
        *k = (key_entry){UINT64_MAX, NULL, e->src_type[slot], true, 0};
        return;
    }
    const uint64_t i = slot - e->n_src;
    if (i + 1 < s->n_added)
        memmove(&s->added[i], &s->added[i + 1], (s->n_added - i - 1) * sizeof *s->added);
    s->n_added--;
}

static void remove_scratch(state *s, uint64_t pos)
{
    scratch_entry *f = &s->scratch[pos];
    s->bytes -= f->name->len + (f->text ? f->text->len : 0);
    blob_put(f->name);
    blob_put(f->text);
    if (pos + 1 < s->n_scratch)
        memmove(&s->scratch[pos], &s->scratch[pos + 1], (s->n_scratch - pos - 1) * sizeof *s->scratch);
    s->n_scratch--;
}

static int add_scratch(state *s, uint64_t id, const char *name, size_t len, blob *text, ggp_value_type type)
{
    blob *n = blob_new(name, len);
    if (!n || !grow_scratch(s)) {
        free(n);
        return ENOMEM;
    }
    s->scratch[s->n_scratch++] = (scratch_entry){id, n, blob_ref(text), type};
    s->bytes += len + (text ? text->len : 0);
    return 0;
}

static int add_key(ggfs_edits *e, state *s, uint64_t id, const char *name, size_t len, ggp_value_type type,
                   const uint8_t *value, size_t value_len, uint64_t elements)
{
    if (!grow_added(s))
        return ENOMEM;
    s->added[s->n_added++] = (key_entry){id, NULL, type, false, 0};
    return set_slot(e, s, e->n_src + s->n_added - 1, name, len, type, value, value_len, elements);
}

int ggfs_edits_write(ggfs_edits *e, uint64_t id, const char *text, size_t len, bool *changed)
{
    *changed = false;
    pthread_mutex_lock(&e->lock);
    state next;
    uint64_t pos, slot;
    int err = 0;
    ggp_bytes value = {0}, now = {0};
    if (find_scratch_id(&e->st, id, &pos)) {
        const blob *name = e->st.scratch[pos].name;
        if (len > GGFS_EDIT_VALUE_MAX) {
            log_key((const char *)name->bytes, name->len, "%zu bytes, more than the %" PRIu64 " a file may hold",
                    len, GGFS_EDIT_VALUE_MAX);
            err = EFBIG;
            goto out;
        }
        blob *t = blob_new(text, len);
        if (!t || (err = clone_current(e, &next)) != 0) {
            free(t);
            err = ENOMEM;
            goto out;
        }
        scratch_entry *f = &next.scratch[pos];
        next.bytes += len - (f->text ? f->text->len : 0);
        blob_put(f->text);
        f->text = t;
        err = commit(e, &next, false, (const char *)name->bytes, name->len);
        goto out;
    }
    if (!find_id(e, &e->st, id, &slot))
        goto out; // deleted while open: the text goes with it
    const ggp_str name = slot_name(e, &e->st, slot);
    if (ggfs_edits_is_protected(name.ptr, name.len)) {
        log_key(name.ptr, name.len, "may not change: the model's layout depends on it");
        err = EPERM;
        goto out;
    }
    if ((err = current_text(e, id, &now)) != 0)
        goto out;
    if (now.len == len && (len == 0 || memcmp(now.data, text, len) == 0))
        goto out; // the same text: the value stays bit for bit
    const key_entry *k = slot_entry(e, &e->st, slot);
    uint64_t elements;
    if ((err = parse_value(e, name.ptr, name.len, k->type, text, len, &value, &elements)) != 0)
        goto out;
    if ((err = clone_current(e, &next)) != 0)
        goto out;
    // The name lives in the state being replaced: copy it first.
    char *name_copy = malloc(name.len ? name.len : 1);
    if (!name_copy) {
        state_free(&next, e->n_src);
        err = ENOMEM;
        goto out;
    }
    memcpy(name_copy, name.ptr, name.len);
    err = set_slot(e, &next, slot, name_copy, name.len, k->type, value.data, value.len, elements);
    if (err)
        state_free(&next, e->n_src);
    else
        err = commit(e, &next, true, name_copy, name.len);
    free(name_copy);
    *changed = err == 0;
out:
    pthread_mutex_unlock(&e->lock);
    free(value.data);
    free(now.data);
    return err;
}

/* The encoding of an empty string: a value for keys just made. */
static int empty_string(const ggfs_edits *e, ggp_bytes *out)
{
    const ggp_err r = ggp_parse_text("", 0, (ggp_value_type){0, GGP_V_STRING}, ggp_version(e->source),
                                     ggp_byte_order_of(e->source), 64, out, NULL);
    return r == GGP_OK ? 0 : ENOMEM;
}

int ggfs_edits_create(ggfs_edits *e, const char *name, size_t len, uint64_t *id)
{
    if (len == 0)
        return EINVAL;
    pthread_mutex_lock(&e->lock);
    state next;
    uint64_t slot, pos;
    int err = 0;
    bool keys = true;
    ggp_bytes value = {0};
    if (find_key(e, &e->st, name, len, &slot) || find_scratch(&e->st, name, len, &pos)) {
        err = EEXIST;
        goto out;
    }
    const bool scratch = ggfs_edits_is_scratch_name(name, len);
    if (!scratch && ggfs_edits_is_protected(name, len)) {
        log_key(name, len, "may not be made: the model's layout depends on it");
        err = EPERM;
        goto out;
    }
    if ((err = clone_current(e, &next)) != 0)
        goto out;
    *id = next.next_id++;
    if (scratch) {
        keys = false;
        err = add_scratch(&next, *id, name, len, NULL, (ggp_value_type){0, GGP_V_STRING});
    } else if (find_deleted(e, &next, name, len, &slot)) {
        next.src[slot] = (key_entry){*id, NULL, e->src_type[slot], false, 0}; // back as the model has it
    } else if ((err = empty_string(e, &value)) == 0) {
        err = add_key(e, &next, *id, name, len, (ggp_value_type){0, GGP_V_STRING}, value.data, value.len, 0);
    }
    if (err)
        state_free(&next, e->n_src);
    else
        err = commit(e, &next, keys, name, len);
out:
    pthread_mutex_unlock(&e->lock);
    free(value.data);
    return err;
}

int ggfs_edits_unlink(ggfs_edits *e, const char *name, size_t len, uint64_t *id)
{
    pthread_mutex_lock(&e->lock);
    state next;
    uint64_t slot, pos;
    int err = 0;
    if (find_scratch(&e->st, name, len, &pos)) {
        *id = e->st.scratch[pos].id;
        if ((err = clone_current(e, &next)) == 0) {
            remove_scratch(&next, pos);
            err = commit(e, &next, false, name, len);
        }
    } else if (find_key(e, &e->st, name, len, &slot)) {
        if (ggfs_edits_is_protected(name, len)) {
            log_key(name, len, "may not be deleted: the model's layout depends on it");
            err = EPERM;
        } else if ((err = clone_current(e, &next)) == 0) {
            *id = slot_entry(e, &next, slot)->id;
            remove_slot(e, &next, slot);
            err = commit(e, &next, true, name, len);
        }
    } else {
        err = ENOENT;
    }
    pthread_mutex_unlock(&e->lock);
    return err;
}

/* What a rename moves: a scratch file's text and type, or a key's. */
typedef struct moved {
    bool is_key;
    uint64_t slot_or_pos;
    uint64_t id;
    ggp_value_type type;
    ggp_bytes text;          // its text as metadata/KEY reads
} moved;

/* The moved file's value for a key of type `type` called to: the key's own
 * bytes when the type is the same (so NaN payloads and all stay), else
 * its text parsed. */
static int moved_value(ggfs_edits *e, const moved *m, const char *to, size_t to_len, ggp_value_type type,
                       ggp_bytes *value, uint64_t *elements)
{
    if (m->is_key && same_type(m->type, type)) {
        const ggfs_run run = current_value(e, m->id);
        *elements = slot_entry(e, &e->st, m->slot_or_pos)->elements;
        if (*elements == 0 && type.depth > 0)
            *elements = elements_of(e, type, &(ggp_bytes){(uint8_t *)run.bytes, run.len, run.len},
                                    (const char *)m->text.data, m->text.len);
        value->data = malloc(run.len ? run.len : 1);
        if (!value->data)
            return ENOMEM;
        memcpy(value->data, run.bytes, run.len);
        value->len = value->cap = run.len;
        return 0;
    }
    return parse_value(e, to, to_len, type, (const char *)m->text.data, m->text.len, value, elements);
}

int ggfs_edits_rename(ggfs_edits *e, const char *from, size_t from_len, const char *to, size_t to_len,
                      bool no_replace, uint64_t ids[2], bool *changed)
{
    *changed = false;
    ids[0] = ids[1] = UINT64_MAX;
    if (to_len == 0)
        return EINVAL;
    pthread_mutex_lock(&e->lock);
    state next;
    moved m = {0};
    ggp_bytes value = {0};
    uint64_t slot, pos, to_slot, to_pos;
    int err = 0;
    if (find_scratch(&e->st, from, from_len, &pos)) {
        const scratch_entry *f = &e->st.scratch[pos];
        m = (moved){false, pos, f->id, f->type, {0}};
        if (f->text && f->text->len) {
            m.text.data = malloc(f->text->len);
            if (!m.text.data) {
                err = ENOMEM;
                goto out;
            }
            memcpy(m.text.data, f->text->bytes, f->text->len);
            m.text.len = m.text.cap = f->text->len;
        }
    } else if (find_key(e, &e->st, from, from_len, &slot)) {
        if (ggfs_edits_is_protected(from, from_len)) {
            log_key(from, from_len, "may not be renamed: the model's layout depends on it");
            err = EPERM;
            goto out;
        }
        const key_entry *k = slot_entry(e, &e->st, slot);
        m = (moved){true, slot, k->id, k->type, {0}};
        if ((err = current_text(e, k->id, &m.text)) != 0)
            goto out;
    } else {
        err = ENOENT;
        goto out;
    }
    ids[0] = m.id;
    if (from_len == to_len && memcmp(from, to, to_len) == 0)
        goto out;
    const bool to_scratch = ggfs_edits_is_scratch_name(to, to_len);
    const bool to_key = !to_scratch && find_key(e, &e->st, to, to_len, &to_slot);
    const bool to_deleted = !to_scratch && !to_key && find_deleted(e, &e->st, to, to_len, &to_slot);
    const bool to_file = to_scratch && find_scratch(&e->st, to, to_len, &to_pos);
    if (no_replace && (to_key || to_file)) {
        err = EEXIST;
        goto out;
    }
    if (!to_scratch && ggfs_edits_is_protected(to, to_len)) {
        log_key(to, to_len, "may not change: the model's layout depends on it");
        err = EPERM;
        goto out;
    }
    if (to_key)
        ids[1] = slot_entry(e, &e->st, to_slot)->id;
    else if (to_file)
        ids[1] = e->st.scratch[to_pos].id;
    uint64_t elements = 0;
    if (!to_scratch) {
        const ggp_value_type type = to_key      ? slot_entry(e, &e->st, to_slot)->type
                                    : to_deleted ? e->src_type[to_slot]
                                                 : m.type;
        if ((err = moved_value(e, &m, to, to_len, type, &value, &elements)) != 0)
            goto out;
        if ((err = clone_current(e, &next)) != 0)
            goto out;
        if (to_key || to_deleted) {
            err = set_slot(e, &next, to_slot, to, to_len, type, value.data, value.len, elements);
            slot_entry(e, &next, to_slot)->id = m.id;
        }
        // The source goes before a new key is added at the end: an added
        // key leaving shifts the slots after it, to_slot among them.
        if (!err && m.is_key)
            remove_slot(e, &next, m.slot_or_pos);
        else if (!err)
            remove_scratch(&next, m.slot_or_pos);
        if (!err && !(to_key || to_deleted))
            err = add_key(e, &next, m.id, to, to_len, m.type, value.data, value.len, elements);
    } else {
        if ((err = clone_current(e, &next)) != 0)
            goto out;
        if (to_file)
            remove_scratch(&next, to_pos);
        uint64_t from_pos = m.slot_or_pos;
        if (!m.is_key && to_file && to_pos < from_pos)
            from_pos--;
        if (m.is_key)
            remove_slot(e, &next, m.slot_or_pos);
        else
            remove_scratch(&next, from_pos);
        blob *text = blob_new(m.text.data, m.text.len);
        err = text ? add_scratch(&next, m.id, to, to_len, text, m.type) : ENOMEM;
        blob_put(text);
    }
    if (err) {
        state_free(&next, e->n_src);
        goto out;
    }
    const bool keys = m.is_key || !to_scratch;
    err = commit(e, &next, keys, to, to_len);
    *changed = err == 0 && keys;
out:
    pthread_mutex_unlock(&e->lock);
    free(m.text.data);
    free(value.data);
    return err;
}

/* The text that stands for an empty value of a type: what a key just made
 * (an empty string) becomes when given the type. */
static const char *zero_text(ggp_value_type t)
{
    if (t.depth > 0 || t.leaf == GGP_V_STRING)
        return "";
    return t.leaf == GGP_V_BOOL ? "false\n" : "0\n";
}

int ggfs_edits_set_type(ggfs_edits *e, uint64_t id, const char *type_name, size_t len, bool *changed)
{
    *changed = false;
    ggp_value_type type;
    // setfattr may pass a trailing NUL or newline.
    while (len > 0 && (type_name[len - 1] == '\0' || type_name[len - 1] == '\n'))
        len--;
    pthread_mutex_lock(&e->lock);
    state next;
    uint64_t slot, pos;
    int err = 0;
    ggp_bytes now = {0}, value = {0};
    char *name_copy = NULL;
    const bool parsed = ggp_value_type_parse(type_name, len, &type) && type.leaf != GGP_V_COUNT;
    if (find_scratch_id(&e->st, id, &pos)) {
        const blob *name = e->st.scratch[pos].name;
        if (!parsed) {
            log_key((const char *)name->bytes, name->len, "'%.*s' is no type (u8 ... f64, bool, str, arr[TYPE])",
                    (int)(len < 40 ? len : 40), type_name);
            err = EINVAL;
        } else if ((err = clone_current(e, &next)) == 0) {
            next.scratch[pos].type = type;
            err = commit(e, &next, false, (const char *)name->bytes, name->len);
        }
        goto out;
    }
    if (!find_id(e, &e->st, id, &slot)) {
        err = ENOENT;
        goto out;
    }
    const ggp_str name = slot_name(e, &e->st, slot);
    if (ggfs_edits_is_protected(name.ptr, name.len)) {
        log_key(name.ptr, name.len, "may not change: the model's layout depends on it");
        err = EPERM;
        goto out;
    }
    if (!parsed) {
        log_key(name.ptr, name.len, "'%.*s' is no type (u8 ... f64, bool, str, arr[TYPE])", (int)(len < 40 ? len : 40),
                type_name);
        err = EINVAL;
        goto out;
    }
    const key_entry *k = slot_entry(e, &e->st, slot);
    if (same_type(k->type, type))
        goto out;
    if ((err = current_text(e, id, &now)) != 0)
        goto out;
    // An empty string or array (what touch makes) takes any type.
    const bool empty = now.len == 0 || (now.len == 1 && now.data[0] == '\n' && k->type.depth == 0);
    const char *text = empty ? zero_text(type) : (const char *)now.data;
    const size_t text_len = empty ? strlen(text) : now.len;
    uint64_t elements;
    if ((err = parse_value(e, name.ptr, name.len, type, text, text_len, &value, &elements)) != 0)
        goto out;
    name_copy = malloc(name.len ? name.len : 1);
    if (!name_copy || (err = clone_current(e, &next)) != 0) {
        err = ENOMEM;
        goto out;
    }
    memcpy(name_copy, name.ptr, name.len);
    err = set_slot(e, &next, slot, name_copy, name.len, type, value.data, value.len, elements);
    if (err)
        state_free(&next, e->n_src);
    else
        err = commit(e, &next, true, name_copy, name.len);
    *changed = err == 0;
out:
    pthread_mutex_unlock(&e->lock);
    free(name_copy);
    free(now.data);
    free(value.data);
    return err;
}

/* ==== Scratch files ==== */

static void scratch_info(const scratch_entry *f, ggfs_scratch_info *out)
{
    out->id = f->id;
    out->name_len = f->name->len < sizeof out->name - 1 ? f->name->len : sizeof out->name - 1;
    memcpy(out->name, f->name->bytes, out->name_len);
    out->name[out->name_len] = '\0';
    out->size = f->text ? f->text->len : 0;
    out->type = f->type;
}

bool ggfs_edits_scratch_named(ggfs_edits *e, const char *name, size_t len, ggfs_scratch_info *out)
{
    pthread_mutex_lock(&e->lock);
    uint64_t pos;
    const bool found = find_scratch(&e->st, name, len, &pos);
    if (found)
        scratch_info(&e->st.scratch[pos], out);
    pthread_mutex_unlock(&e->lock);
    return found;
}

bool ggfs_edits_scratch_of(ggfs_edits *e, uint64_t id, ggfs_scratch_info *out)
{
    pthread_mutex_lock(&e->lock);
    uint64_t pos;
    const bool found = find_scratch_id(&e->st, id, &pos);
    if (found)
        scratch_info(&e->st.scratch[pos], out);
    pthread_mutex_unlock(&e->lock);
    return found;
}

bool ggfs_edits_scratch_at(ggfs_edits *e, uint64_t pos, ggfs_scratch_info *out)
{
    pthread_mutex_lock(&e->lock);
    const bool found = pos < e->st.n_scratch;
    if (found)
        scratch_info(&e->st.scratch[pos], out);
    pthread_mutex_unlock(&e->lock);
    return found;
}

int ggfs_edits_scratch_text(ggfs_edits *e, uint64_t id, ggp_bytes *out)
{
    pthread_mutex_lock(&e->lock);
    uint64_t pos;
    int err = find_scratch_id(&e->st, id, &pos) ? 0 : ENOENT;
    const blob *t = err ? NULL : e->st.scratch[pos].text;
    if (t) {
        bytes_sink s = {{bytes_write}, out, false};
        s.sink.write(&s.sink, (const char *)t->bytes, t->len);
        err = s.failed ? ENOMEM : 0;
    }
    pthread_mutex_unlock(&e->lock);
    return err;
}

uint64_t ggfs_edits_generation(ggfs_edits *e)
{
    return atomic_load(&e->version);
}

uint64_t ggfs_edits_first_new_id(const ggfs_edits *e)
{
    return e->n_src;
}

bool ggfs_edits_reserve(ggfs_edits *e, int64_t delta)
{
    if (delta <= 0) {
        atomic_fetch_add(&e->open_bytes, delta);
        return true;
    }
    int64_t now = atomic_load(&e->open_bytes);
    do {
        if ((uint64_t)(now + delta) > GGFS_EDIT_TOTAL_MAX)
            return false;
    } while (!atomic_compare_exchange_weak(&e->open_bytes, &now, now + delta));
    return true;
}

/* ==== The view ==== */

ggfs_view *ggfs_edits_view(ggfs_edits *e)
{
    pthread_mutex_lock(&e->view_lock);
    ggfs_view *v = e->view;
    ggfs_view_ref(v);
    pthread_mutex_unlock(&e->view_lock);
    return v;
}

/* ==== Opening: the edits kept in a file ==== */

static int loaded_refuse(char *why, size_t why_size, const char *path, const char *name, size_t len,
                         const char *what)
{
    char q[GGP_QUOTE_SIZE];
    if (why_size == 0)
        return EINVAL;
    snprintf(why, why_size, "%s: key '%s': %s", path, ggp_quote_name((ggp_str){name, len}, q, sizeof q), what);
    return EINVAL;
}

/* Applies the edits read from the file to the state: every check a change
 * through the mount makes, and that the file fits this model. */
static int apply_loaded(ggfs_edits *e, const ggfs_edits_loaded *l, char *why, size_t why_size)
{
    state *s = &e->st;
    for (uint64_t i = 0; i < l->n_deleted; i++) {
        const ggfs_edit_deleted *d = &l->deleted[i];
        uint64_t slot;
        if (ggfs_edits_is_protected(d->name, d->name_len))
            return loaded_refuse(why, why_size, e->path, d->name, d->name_len,
                                 "deleted, but the model's layout depends on it");
        if (!find_key(e, s, d->name, d->name_len, &slot) || slot >= e->n_src)
            return loaded_refuse(why, why_size, e->path, d->name, d->name_len,
                                 find_deleted(e, s, d->name, d->name_len, &slot) ? "deleted twice"
                                                                              : "deleted, but the model has no such key");
        remove_slot(e, s, slot);
    }
    for (uint64_t i = 0; i < l->n_keys; i++) {
        const ggfs_edit_record *r = &l->keys[i];
        char what[300];
        uint64_t slot;
        if (ggfs_edits_is_protected(r->name, r->name_len))
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len,
                                 "set, but the model's layout depends on it");
        if (r->type.leaf == GGP_V_COUNT)
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len, "the type needs its element type");
        const bool model_key = find_key(e, s, r->name, r->name_len, &slot);
        if (model_key && (slot >= e->n_src || s->src[slot].kv))
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len, "set twice");
        if (!model_key && find_deleted(e, s, r->name, r->name_len, &slot))
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len, "both set and deleted");
        if (model_key) {
            const ggp_value_type want = r->retyped ? r->was : r->type;
            if (!same_type(want, e->src_type[slot])) {
                char has[GGP_TYPE_TEXT_SIZE], said[GGP_TYPE_TEXT_SIZE];
                ggp_value_type_format(e->src_type[slot], has);
                ggp_value_type_format(want, said);
                snprintf(what, sizeof what, "the model's key is %s, the edits were made for %s", has, said);
                return loaded_refuse(why, why_size, e->path, r->name, r->name_len, what);
            }
        } else if (r->retyped) {
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len,
                                 "\"was\" names a type, but the model has no such key");
        }
        if (r->wrong_kind) {
            char type[GGP_TYPE_TEXT_SIZE];
            ggp_value_type_format(r->type, type);
            snprintf(what, sizeof what, "the value is no %s", type);
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len, what);
        }
        ggp_bytes value = {0};
        ggp_error perr;
        const ggp_err code = ggp_parse_text(r->text, r->text_len, r->type, ggp_version(e->source),
                                            ggp_byte_order_of(e->source), GGFS_EDIT_VALUE_MAX, &value, &perr);
        if (code != GGP_OK) {
            free(value.data);
            snprintf(what, sizeof what, "the value does not fit its type: %s", perr.msg);
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len, what);
        }
        const uint64_t elements = elements_of(e, r->type, &value, r->text, r->text_len);
        int err = model_key ? set_slot(e, s, slot, r->name, r->name_len, r->type, value.data, value.len, elements)
                            : add_key(e, s, s->next_id++, r->name, r->name_len, r->type, value.data, value.len,
                                      elements);
        free(value.data);
        if (err)
            return err;
        if (s->bytes > GGFS_EDIT_TOTAL_MAX || s->n_added > GGFS_EDIT_FILES_MAX || s->elements > ELEMENTS_MAX)
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len,
                                 "the edits pass the limits of what a mount keeps");
    }
    return 0;
}

ggfs_edits *ggfs_edits_open(ggfs_model *model, const char *path, char *why, size_t why_size)
{
    ggfs_edits *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    e->model = model;
    e->source = ggfs_model_keys(model);
    e->n_src = ggp_kv_count(e->source);
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_init(&e->view_lock, NULL);
    atomic_init(&e->open_bytes, 0);
    atomic_init(&e->version, 0);
    e->st.next_id = e->n_src;
    e->src_type = malloc((e->n_src ? e->n_src : 1) * sizeof *e->src_type);
    e->st.src = malloc((e->n_src ? e->n_src : 1) * sizeof *e->st.src);
    e->path = path ? strdup(path) : NULL;
    if (!e->src_type || !e->st.src || (path && !e->path)) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    for (uint64_t i = 0; i < e->n_src; i++) {
        const ggp_kv *kv = ggp_kv_at(e->source, i);
        e->src_type[i] = ggp_value_type_of(e->source, &kv->value);
        e->st.src[i] = (key_entry){i, NULL, e->src_type[i], false, 0};
    }
    ggfs_edits_loaded loaded;
    const int err = path ? ggfs_edits_file_load(path, &loaded, why, why_size) : ENOENT;
    if (err && err != ENOENT)
        goto fail;
    if (!err) {
        const int bad = apply_loaded(e, &loaded, why, why_size);
        ggfs_edits_loaded_free(&loaded);
        if (bad) {
            if (bad == ENOMEM)
                snprintf(why, why_size, "%s: out of memory", path);
            goto fail;
        }
    }
    ggp_error perr;
    e->view = view_of(e, &e->st, 0, &perr);
    if (!e->view) {
        snprintf(why, why_size, "%s: cannot make the edited header: %s", path ? path : "edits", perr.msg);
        goto fail;
    }
    return e;
fail:
    ggfs_edits_close(e);
    return NULL;
}

void ggfs_edits_close(ggfs_edits *e)
{
    if (!e)
        return;
    ggfs_view_put(e->view);
    state_free(&e->st, e->n_src);
    free(e->src_type);
    free(e->path);
    pthread_mutex_destroy(&e->lock);
    pthread_mutex_destroy(&e->view_lock);
    free(e);
}
