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

#include "model/edits_file.h"
#include "model/edits_private.h"
#include "util/log.h"

/* Parses text as a value of type for the key called name: 0, or EINVAL /
 * EFBIG / ENOMEM with a log line. */
static int parse_value(const ggfs_edits *e, const char *name, size_t name_len, ggp_value_type type, const char *text,
                       size_t len, ggp_bytes *out, uint64_t *elements)
{
    char type_name[GGP_TYPE_TEXT_SIZE];
    ggp_value_type_format(type, type_name);
    if (len > GGFS_EDIT_VALUE_MAX) {
        ggfs_ed_log_key(name, name_len, "%zu bytes of text, more than the %" PRIu64 " a value may have", len,
                GGFS_EDIT_VALUE_MAX);
        return EFBIG;
    }
    ggp_error err;
    switch (ggp_parse_text(text, len, type, ggp_version(e->source), ggp_byte_order_of(e->source),
                           GGFS_EDIT_VALUE_MAX, out, &err)) {
    case GGP_OK:
        break;
    case GGP_ERR_TOO_BIG:
        ggfs_ed_log_key(name, name_len, "%s", err.msg);
        return EFBIG;
    case GGP_ERR_NOMEM:
        ggfs_ed_log_key(name, name_len, "%s", err.msg);
        return ENOMEM;
    default:
        ggfs_ed_log_key(name, name_len, "offset %" PRIu64 ": not a %s value: %s; the value stays as it was", err.offset,
                type_name, err.msg);
        return EINVAL;
    }
    *elements = ggfs_ed_elements_of(e, type, out, text, len);
    if (*elements > GGFS_EDIT_ELEMENTS_MAX) {
        ggfs_ed_log_key(name, name_len, "%" PRIu64 " array elements, more than the %" PRIu64 " edits may hold", *elements,
                GGFS_EDIT_ELEMENTS_MAX);
        return EFBIG;
    }
    return 0;
}

/* The key `id`'s text as metadata/KEY reads now (from the current view). */
static int current_text(ggfs_edits *e, uint64_t id, ggp_bytes *out)
{
    const ggfs_view *v = e->view;
    const uint64_t index = ggfs_view_index_of(v, id);
    if (index == UINT64_MAX)
        return ENOENT;
    ggp_bytes_sink s;
    ggp_bytes_sink_init(&s, out);
    ggp_render(v->keys, &ggp_kv_at(v->keys, index)->value, &s.sink);
    return s.failed ? ENOMEM : 0;
}

/* The bytes after the type field of key `id` in the current view. */
static ggfs_run current_value(ggfs_edits *e, uint64_t id)
{
    const ggfs_view *v = e->view;
    return ggfs_value_run(v->keys, ggp_kv_at(v->keys, ggfs_view_index_of(v, id)));
}

/* The pending file at pos becomes a key of this text, read as the file's
 * type: the deleted key of the model of its name back where it was, or a
 * new key at the end. 0, or the errno of the text or of the change (the
 * file then stays pending). */
static int make_pending_key(ggfs_edits *e, uint64_t pos, const char *text, size_t len)
{
    const scratch_entry *f = &e->st.scratch[pos];
    // The name lives in the state being replaced: copy it first.
    const size_t name_len = f->name->len;
    char *name = malloc(name_len ? name_len : 1);
    if (!name)
        return ENOMEM;
    memcpy(name, f->name->bytes, name_len);
    const uint64_t id = f->id;
    const ggp_value_type type = f->type;
    ggp_bytes value = {0};
    uint64_t elements, slot;
    state next;
    int err = parse_value(e, name, name_len, type, text, len, &value, &elements);
    if (!err)
        err = ggfs_ed_clone_current(e, &next);
    if (!err) {
        ggfs_ed_remove_scratch(&next, pos);
        if (ggfs_ed_find_deleted(e, &next, name, name_len, &slot)) {
            err = ggfs_ed_set_slot(e, &next, slot, name, name_len, type, value.data, value.len, elements);
            ggfs_ed_slot_entry(e, &next, slot)->id = id;
        } else {
            err = ggfs_ed_add_key(e, &next, id, name, name_len, type, value.data, value.len, elements);
        }
        if (err)
            ggfs_ed_state_free(&next, e->n_src);
        else
            err = ggfs_ed_commit(e, &next, true, name, name_len);
    }
    free(value.data);
    free(name);
    return err;
}

int ggfs_edits_write(ggfs_edits *e, uint64_t id, const char *text, size_t len, bool *changed)
{
    *changed = false;
    pthread_mutex_lock(&e->lock);
    state next;
    uint64_t pos, slot;
    int err = 0;
    ggp_bytes value = {0}, now = {0};
    if (ggfs_ed_find_scratch_id(&e->st, id, &pos) && e->st.scratch[pos].pending) {
        err = make_pending_key(e, pos, text, len);
        *changed = err == 0;
        goto out;
    }
    if (ggfs_ed_find_scratch_id(&e->st, id, &pos)) {
        const blob *name = e->st.scratch[pos].name;
        if (len > GGFS_EDIT_VALUE_MAX) {
            ggfs_ed_log_key((const char *)name->bytes, name->len, "%zu bytes, more than the %" PRIu64 " a file may hold",
                    len, GGFS_EDIT_VALUE_MAX);
            err = EFBIG;
            goto out;
        }
        blob *t = ggfs_ed_blob_new(text, len);
        if (!t || (err = ggfs_ed_clone_current(e, &next)) != 0) {
            free(t);
            err = ENOMEM;
            goto out;
        }
        scratch_entry *f = &next.scratch[pos];
        next.bytes += len - (f->text ? f->text->len : 0);
        ggfs_ed_blob_put(f->text);
        f->text = t;
        err = ggfs_ed_commit(e, &next, false, (const char *)name->bytes, name->len);
        goto out;
    }
    if (!ggfs_ed_find_id(e, &e->st, id, &slot))
        goto out; // deleted while open: the text goes with it
    const ggp_str name = ggfs_ed_slot_name(e, &e->st, slot);
    if (ggfs_edits_is_protected(name.ptr, name.len)) {
        ggfs_ed_log_key(name.ptr, name.len, "may not change: the model's layout depends on it");
        err = EPERM;
        goto out;
    }
    if ((err = current_text(e, id, &now)) != 0)
        goto out;
    if (now.len == len && (len == 0 || memcmp(now.data, text, len) == 0))
        goto out; // the same text: the value stays bit for bit
    const key_entry *k = ggfs_ed_slot_entry(e, &e->st, slot);
    uint64_t elements;
    if ((err = parse_value(e, name.ptr, name.len, k->type, text, len, &value, &elements)) != 0)
        goto out;
    if ((err = ggfs_ed_clone_current(e, &next)) != 0)
        goto out;
    // The name lives in the state being replaced: copy it first.
    char *name_copy = malloc(name.len ? name.len : 1);
    if (!name_copy) {
        ggfs_ed_state_free(&next, e->n_src);
        err = ENOMEM;
        goto out;
    }
    memcpy(name_copy, name.ptr, name.len);
    err = ggfs_ed_set_slot(e, &next, slot, name_copy, name.len, k->type, value.data, value.len, elements);
    if (err)
        ggfs_ed_state_free(&next, e->n_src);
    else
        err = ggfs_ed_commit(e, &next, true, name_copy, name.len);
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

int ggfs_edits_create(ggfs_edits *e, const char *name, size_t len, bool pending, uint64_t *id)
{
    if (len == 0)
        return EINVAL;
    pthread_mutex_lock(&e->lock);
    state next;
    uint64_t slot, pos;
    int err = 0;
    bool keys = true;
    ggp_bytes value = {0};
    if (ggfs_ed_find_key(e, &e->st, name, len, &slot) || ggfs_ed_find_scratch(&e->st, name, len, &pos)) {
        err = EEXIST;
        goto out;
    }
    const bool scratch = ggfs_edits_is_scratch_name(name, len);
    if (!scratch && ggfs_edits_is_protected(name, len)) {
        ggfs_ed_log_key(name, len, "may not be made: the model's layout depends on it");
        err = EPERM;
        goto out;
    }
    if ((err = ggfs_ed_clone_current(e, &next)) != 0)
        goto out;
    *id = next.next_id++;
    if (scratch || pending) {
        // A pending key of the model's that was deleted takes its type.
        const bool deleted = !scratch && ggfs_ed_find_deleted(e, &next, name, len, &slot);
        keys = false;
        err = ggfs_ed_add_scratch(&next, *id, name, len, NULL,
                                  deleted ? e->src_type[slot] : (ggp_value_type){0, GGP_V_STRING});
        if (!err)
            next.scratch[next.n_scratch - 1].pending = !scratch;
    } else if (ggfs_ed_find_deleted(e, &next, name, len, &slot)) {
        next.src[slot] = (key_entry){*id, NULL, e->src_type[slot], false, 0}; // back as the model has it
    } else if ((err = empty_string(e, &value)) == 0) {
        err = ggfs_ed_add_key(e, &next, *id, name, len, (ggp_value_type){0, GGP_V_STRING}, value.data, value.len, 0);
    }
    if (err)
        ggfs_ed_state_free(&next, e->n_src);
    else
        err = ggfs_ed_commit(e, &next, keys, name, len);
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
    if (ggfs_ed_find_scratch(&e->st, name, len, &pos)) {
        *id = e->st.scratch[pos].id;
        if ((err = ggfs_ed_clone_current(e, &next)) == 0) {
            ggfs_ed_remove_scratch(&next, pos);
            err = ggfs_ed_commit(e, &next, false, name, len);
        }
    } else if (ggfs_ed_find_key(e, &e->st, name, len, &slot)) {
        if (ggfs_edits_is_protected(name, len)) {
            ggfs_ed_log_key(name, len, "may not be deleted: the model's layout depends on it");
            err = EPERM;
        } else if ((err = ggfs_ed_clone_current(e, &next)) == 0) {
            *id = ggfs_ed_slot_entry(e, &next, slot)->id;
            ggfs_ed_remove_slot(e, &next, slot);
            err = ggfs_ed_commit(e, &next, true, name, len);
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
    if (m->is_key && ggfs_ed_same_type(m->type, type)) {
        const ggfs_run run = current_value(e, m->id);
        *elements = ggfs_ed_slot_entry(e, &e->st, m->slot_or_pos)->elements;
        if (*elements == 0 && type.depth > 0)
            *elements = ggfs_ed_elements_of(e, type, &(ggp_bytes){(uint8_t *)run.bytes, run.len, run.len},
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
    if (ggfs_ed_find_scratch(&e->st, from, from_len, &pos)) {
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
    } else if (ggfs_ed_find_key(e, &e->st, from, from_len, &slot)) {
        if (ggfs_edits_is_protected(from, from_len)) {
            ggfs_ed_log_key(from, from_len, "may not be renamed: the model's layout depends on it");
            err = EPERM;
            goto out;
        }
        const key_entry *k = ggfs_ed_slot_entry(e, &e->st, slot);
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
    // A key of the model may have a name tools give temporary files: it
    // is a key all the same (create says EEXIST for it), never doubled by
    // a scratch file of that name.
    const bool to_key = ggfs_ed_find_key(e, &e->st, to, to_len, &to_slot);
    const bool to_scratch = !to_key && ggfs_edits_is_scratch_name(to, to_len);
    const bool to_deleted = !to_scratch && !to_key && ggfs_ed_find_deleted(e, &e->st, to, to_len, &to_slot);
    // A scratch file of that name, or a key being made there (pending).
    const bool to_file = ggfs_ed_find_scratch(&e->st, to, to_len, &to_pos);
    if (no_replace && (to_key || to_file)) {
        err = EEXIST;
        goto out;
    }
    if (!to_scratch && ggfs_edits_is_protected(to, to_len)) {
        ggfs_ed_log_key(to, to_len, "may not change: the model's layout depends on it");
        err = EPERM;
        goto out;
    }
    if (to_key)
        ids[1] = ggfs_ed_slot_entry(e, &e->st, to_slot)->id;
    else if (to_file)
        ids[1] = e->st.scratch[to_pos].id;
    uint64_t elements = 0;
    if (!to_scratch) {
        const ggp_value_type type = to_key      ? ggfs_ed_slot_entry(e, &e->st, to_slot)->type
                                    : to_deleted ? e->src_type[to_slot]
                                                 : m.type;
        if ((err = moved_value(e, &m, to, to_len, type, &value, &elements)) != 0)
            goto out;
        if ((err = ggfs_ed_clone_current(e, &next)) != 0)
            goto out;
        if (to_key || to_deleted) {
            err = ggfs_ed_set_slot(e, &next, to_slot, to, to_len, type, value.data, value.len, elements);
            ggfs_ed_slot_entry(e, &next, to_slot)->id = m.id;
        }
        uint64_t from_pos = m.slot_or_pos;
        if (!err && to_file) {
            // The key being made there is replaced by the moved file.
            ggfs_ed_remove_scratch(&next, to_pos);
            from_pos -= !m.is_key && to_pos < from_pos;
        }
        // The source goes before a new key is added at the end: an added
        // key leaving shifts the slots after it, to_slot among them.
        if (!err && m.is_key)
            ggfs_ed_remove_slot(e, &next, from_pos);
        else if (!err)
            ggfs_ed_remove_scratch(&next, from_pos);
        if (!err && !(to_key || to_deleted))
            err = ggfs_ed_add_key(e, &next, m.id, to, to_len, m.type, value.data, value.len, elements);
    } else {
        if ((err = ggfs_ed_clone_current(e, &next)) != 0)
            goto out;
        if (to_file)
            ggfs_ed_remove_scratch(&next, to_pos);
        uint64_t from_pos = m.slot_or_pos;
        if (!m.is_key && to_file && to_pos < from_pos)
            from_pos--;
        if (m.is_key)
            ggfs_ed_remove_slot(e, &next, m.slot_or_pos);
        else
            ggfs_ed_remove_scratch(&next, from_pos);
        blob *text = ggfs_ed_blob_new(m.text.data, m.text.len);
        err = text ? ggfs_ed_add_scratch(&next, m.id, to, to_len, text, m.type) : ENOMEM;
        ggfs_ed_blob_put(text);
    }
    if (err) {
        ggfs_ed_state_free(&next, e->n_src);
        goto out;
    }
    const bool keys = m.is_key || !to_scratch;
    err = ggfs_ed_commit(e, &next, keys, to, to_len);
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
    if (ggfs_ed_find_scratch_id(&e->st, id, &pos)) {
        const blob *name = e->st.scratch[pos].name;
        if (!parsed) {
            ggfs_ed_log_key((const char *)name->bytes, name->len, "'%.*s' is no type (u8 ... f64, bool, str, arr[TYPE])",
                    (int)(len < 40 ? len : 40), type_name);
            err = EINVAL;
        } else if ((err = ggfs_ed_clone_current(e, &next)) == 0) {
            next.scratch[pos].type = type;
            err = ggfs_ed_commit(e, &next, false, (const char *)name->bytes, name->len);
        }
        goto out;
    }
    if (!ggfs_ed_find_id(e, &e->st, id, &slot)) {
        err = ENOENT;
        goto out;
    }
    const ggp_str name = ggfs_ed_slot_name(e, &e->st, slot);
    if (ggfs_edits_is_protected(name.ptr, name.len)) {
        ggfs_ed_log_key(name.ptr, name.len, "may not change: the model's layout depends on it");
        err = EPERM;
        goto out;
    }
    if (!parsed) {
        ggfs_ed_log_key(name.ptr, name.len, "'%.*s' is no type (u8 ... f64, bool, str, arr[TYPE])", (int)(len < 40 ? len : 40),
                type_name);
        err = EINVAL;
        goto out;
    }
    const key_entry *k = ggfs_ed_slot_entry(e, &e->st, slot);
    if (ggfs_ed_same_type(k->type, type))
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
    if (!name_copy || (err = ggfs_ed_clone_current(e, &next)) != 0) {
        err = ENOMEM;
        goto out;
    }
    memcpy(name_copy, name.ptr, name.len);
    err = ggfs_ed_set_slot(e, &next, slot, name_copy, name.len, type, value.data, value.len, elements);
    if (err)
        ggfs_ed_state_free(&next, e->n_src);
    else
        err = ggfs_ed_commit(e, &next, true, name_copy, name.len);
    *changed = err == 0;
out:
    pthread_mutex_unlock(&e->lock);
    free(name_copy);
    free(now.data);
    free(value.data);
    return err;
}

int ggfs_edits_settle(ggfs_edits *e, uint64_t id, const char *text, size_t len, bool failed, bool *changed)
{
    *changed = false;
    pthread_mutex_lock(&e->lock);
    uint64_t pos;
    int err = 0;
    if (ggfs_ed_find_scratch_id(&e->st, id, &pos) && e->st.scratch[pos].pending) {
        // Nothing written (touch), it becomes the file's type's zero, as
        // a key touch made does when typed.
        if (len == 0)
            text = zero_text(e->st.scratch[pos].type), len = strlen(text);
        err = failed ? ECANCELED : make_pending_key(e, pos, text, len);
        *changed = err == 0;
        state next;
        // Nothing is left of a key whose making failed. (Taking a pending
        // file out frees memory only: it cannot fail but for ENOMEM.)
        if (err && ggfs_ed_clone_current(e, &next) == 0) {
            const blob *name = e->st.scratch[pos].name; // lives until the commit ends
            ggfs_ed_remove_scratch(&next, pos);
            ggfs_ed_commit(e, &next, false, (const char *)name->bytes, name->len);
        }
    }
    pthread_mutex_unlock(&e->lock);
    return err == ECANCELED ? 0 : err;
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
    const bool found = ggfs_ed_find_scratch(&e->st, name, len, &pos);
    if (found)
        scratch_info(&e->st.scratch[pos], out);
    pthread_mutex_unlock(&e->lock);
    return found;
}

bool ggfs_edits_scratch_of(ggfs_edits *e, uint64_t id, ggfs_scratch_info *out)
{
    pthread_mutex_lock(&e->lock);
    uint64_t pos;
    const bool found = ggfs_ed_find_scratch_id(&e->st, id, &pos);
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
    int err = ggfs_ed_find_scratch_id(&e->st, id, &pos) ? 0 : ENOENT;
    const blob *t = err ? NULL : e->st.scratch[pos].text;
    if (t && !ggp_bytes_append(out, t->bytes, t->len))
        err = ENOMEM;
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
        if (!ggfs_ed_find_key(e, s, d->name, d->name_len, &slot) || slot >= e->n_src)
            return loaded_refuse(why, why_size, e->path, d->name, d->name_len,
                                 ggfs_ed_find_deleted(e, s, d->name, d->name_len, &slot) ? "deleted twice"
                                                                              : "deleted, but the model has no such key");
        ggfs_ed_remove_slot(e, s, slot);
    }
    for (uint64_t i = 0; i < l->n_keys; i++) {
        const ggfs_edit_record *r = &l->keys[i];
        char what[300];
        uint64_t slot;
        if (ggfs_edits_is_protected(r->name, r->name_len))
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len,
                                 "set, but the model's layout depends on it");
        const bool model_key = ggfs_ed_find_key(e, s, r->name, r->name_len, &slot);
        if (model_key && (slot >= e->n_src || s->src[slot].kv))
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len, "set twice");
        if (!model_key && ggfs_ed_find_deleted(e, s, r->name, r->name_len, &slot))
            return loaded_refuse(why, why_size, e->path, r->name, r->name_len, "both set and deleted");
        if (model_key) {
            const ggp_value_type want = r->retyped ? r->was : r->type;
            if (!ggfs_ed_same_type(want, e->src_type[slot])) {
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
        const uint64_t elements = ggfs_ed_elements_of(e, r->type, &value, r->text, r->text_len);
        int err = model_key ? ggfs_ed_set_slot(e, s, slot, r->name, r->name_len, r->type, value.data, value.len, elements)
                            : ggfs_ed_add_key(e, s, s->next_id++, r->name, r->name_len, r->type, value.data, value.len,
                                      elements);
        free(value.data);
        if (err)
            return err;
        if (s->bytes > GGFS_EDIT_TOTAL_MAX || s->n_added > GGFS_EDIT_FILES_MAX || s->elements > GGFS_EDIT_ELEMENTS_MAX)
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
    // Edits read from PATH make view 1 (0 is the model's own).
    e->view = ggfs_ed_view_of(e, &e->st, 1, &perr);
    if (!e->view) {
        snprintf(why, why_size, "%s: cannot make the edited header: %s", path ? path : "edits", perr.msg);
        goto fail;
    }
    atomic_store(&e->version, e->view->version);
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
    ggfs_ed_state_free(&e->st, e->n_src);
    free(e->src_type);
    free(e->path);
    pthread_mutex_destroy(&e->lock);
    pthread_mutex_destroy(&e->view_lock);
    free(e);
}
