/*
 * The state of a model's edits (edits_private.h): its blobs, copying and
 * freeing it, finding its entries by name and id, the names tools give
 * temporary files, encoding keys, and the changes to entries that every
 * edit is made of. Nothing here takes a lock or makes a view: edits.c
 * changes a copy of the state under its lock, edits_commit.c makes it the
 * state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/edits_private.h"
#include "util/log.h"

/* ==== Blobs ==== */

blob *ggfs_ed_blob_new(const void *bytes, size_t len)
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

blob *ggfs_ed_blob_ref(blob *b)
{
    if (b)
        b->refs++;
    return b;
}

void ggfs_ed_blob_put(blob *b)
{
    if (b && --b->refs == 0)
        free(b);
}

/* ==== The state ==== */

void ggfs_ed_state_free(state *s, uint64_t n_src)
{
    for (uint64_t i = 0; s->src && i < n_src; i++)
        ggfs_ed_blob_put(s->src[i].kv);
    for (uint64_t i = 0; i < s->n_added; i++)
        ggfs_ed_blob_put(s->added[i].kv);
    for (uint64_t i = 0; i < s->n_scratch; i++) {
        ggfs_ed_blob_put(s->scratch[i].name);
        ggfs_ed_blob_put(s->scratch[i].text);
    }
    free(s->src);
    free(s->added);
    free(s->scratch);
    memset(s, 0, sizeof *s);
}

/* A copy sharing every value; false when out of memory. */
bool ggfs_ed_state_clone(const state *from, uint64_t n_src, state *to)
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
        ggfs_ed_blob_ref(to->src[i].kv);
    for (uint64_t i = 0; i < from->n_added; i++)
        ggfs_ed_blob_ref(to->added[i].kv);
    for (uint64_t i = 0; i < from->n_scratch; i++) {
        ggfs_ed_blob_ref(to->scratch[i].name);
        ggfs_ed_blob_ref(to->scratch[i].text);
    }
    return true;
}

/* ==== Names ==== */

uint64_t ggfs_ed_width_of(const ggfs_edits *e)
{
    return ggp_version(e->source) == 1 ? 4 : 8;
}

/* The name inside a key's bytes (length, name, type, value). */
ggp_str ggfs_ed_blob_name(const ggfs_edits *e, const blob *kv)
{
    const uint64_t w = ggfs_ed_width_of(e);
    const bool big = ggp_byte_order_of(e->source) == GGP_BIG;
    uint64_t len = 0;
    for (uint64_t i = 0; i < w; i++)
        len |= (uint64_t)kv->bytes[big ? i : w - 1 - i] << (8 * (w - 1 - i));
    return (ggp_str){(const char *)kv->bytes + w, len};
}

ggp_str ggfs_ed_src_name(const ggfs_edits *e, const state *s, uint64_t i)
{
    return s->src[i].kv ? ggfs_ed_blob_name(e, s->src[i].kv) : ggp_kv_at(e->source, i)->key;
}

bool ggfs_ed_same_name(ggp_str a, const char *name, size_t len)
{
    return a.len == len && memcmp(a.ptr, name, len) == 0;
}

/* Slots number the keys of a state: the model's first, then those added. */
key_entry *ggfs_ed_slot_entry(const ggfs_edits *e, state *s, uint64_t slot)
{
    return slot < e->n_src ? &s->src[slot] : &s->added[slot - e->n_src];
}

ggp_str ggfs_ed_slot_name(const ggfs_edits *e, const state *s, uint64_t slot)
{
    return slot < e->n_src ? ggfs_ed_src_name(e, s, slot) : ggfs_ed_blob_name(e, s->added[slot - e->n_src].kv);
}

/* The live key called name; false when none. */
bool ggfs_ed_find_key(const ggfs_edits *e, const state *s, const char *name, size_t len, uint64_t *slot)
{
    for (uint64_t i = 0; i < e->n_src; i++) {
        if (!s->src[i].deleted && ggfs_ed_same_name(ggfs_ed_src_name(e, s, i), name, len))
            return *slot = i, true;
    }
    for (uint64_t i = 0; i < s->n_added; i++) {
        if (ggfs_ed_same_name(ggfs_ed_blob_name(e, s->added[i].kv), name, len))
            return *slot = e->n_src + i, true;
    }
    return false;
}

/* The deleted key of the model called name. */
bool ggfs_ed_find_deleted(const ggfs_edits *e, const state *s, const char *name, size_t len, uint64_t *slot)
{
    for (uint64_t i = 0; i < e->n_src; i++) {
        if (s->src[i].deleted && ggfs_ed_same_name(ggp_kv_at(e->source, i)->key, name, len))
            return *slot = i, true;
    }
    return false;
}

bool ggfs_ed_find_id(const ggfs_edits *e, const state *s, uint64_t id, uint64_t *slot)
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

bool ggfs_ed_find_scratch(const state *s, const char *name, size_t len, uint64_t *pos)
{
    for (uint64_t i = 0; i < s->n_scratch; i++) {
        if (ggfs_ed_same_name((ggp_str){(const char *)s->scratch[i].name->bytes, s->scratch[i].name->len}, name, len))
            return *pos = i, true;
    }
    return false;
}

bool ggfs_ed_find_scratch_id(const state *s, uint64_t id, uint64_t *pos)
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

void ggfs_ed_log_key(const char *name, size_t len, const char *fmt, ...)
{
    char what[300], q[GGP_QUOTE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ggfs_log(GGFS_LOG_WARNING, "gguf-fs: metadata/%s: %s\n", ggp_quote_name((ggp_str){name, len}, q, sizeof q), what);
}

/* ==== Values ==== */

/* A key's bytes: name, type, value (value_len bytes after the type). */
blob *ggfs_ed_encode_key(const ggfs_edits *e, const char *name, size_t len, ggp_value_type type,
                        const uint8_t *value, size_t value_len)
{
    const uint64_t n = ggfs_kv_encoded_len(e->source, len, value_len);
    blob *b = ggfs_ed_blob_new(NULL, 0);
    blob *sized = b ? realloc(b, sizeof *b + n) : NULL;
    if (!sized) {
        free(b);
        return NULL;
    }
    sized->len = (size_t)n;
    ggfs_kv_encode(e->source, name, len, ggfs_ed_top_type(type), value, value_len, sized->bytes);
    return sized;
}

/* An array value's element count (an upper bound for arrays of arrays),
 * for GGFS_EDIT_ELEMENTS_MAX. */
uint64_t ggfs_ed_elements_of(const ggfs_edits *e, ggp_value_type type, const ggp_bytes *value, const char *text,
                            size_t len)
{
    if (type.depth == 0)
        return 0;
    if (type.depth == 1) {
        const uint64_t w = ggfs_ed_width_of(e);
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

static bool grow(void *array, uint64_t n, uint64_t *cap, size_t size)
{
    if (n < *cap)
        return true;
    const uint64_t more = *cap ? *cap * 2 : 16;
    void *grown = realloc(*(void **)array, more * size);
    if (!grown)
        return false;
    *(void **)array = grown;
    *cap = more;
    return true;
}

static bool grow_added(state *s)
{
    return grow(&s->added, s->n_added, &s->cap_added, sizeof *s->added);
}

static bool grow_scratch(state *s)
{
    return grow(&s->scratch, s->n_scratch, &s->cap_scratch, sizeof *s->scratch);
}

/* Sets the value of slot to a key `name` of `type` whose value is
 * value[0, value_len), keeping its id unless id is given. */
int ggfs_ed_set_slot(ggfs_edits *e, state *s, uint64_t slot, const char *name, size_t len, ggp_value_type type,
                    const uint8_t *value, size_t value_len, uint64_t elements)
{
    blob *kv = ggfs_ed_encode_key(e, name, len, type, value, value_len);
    if (!kv)
        return ENOMEM;
    key_entry *k = ggfs_ed_slot_entry(e, s, slot);
    if (k->kv)
        s->bytes -= k->kv->len;
    s->elements -= k->elements;
    ggfs_ed_blob_put(k->kv);
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
void ggfs_ed_remove_slot(ggfs_edits *e, state *s, uint64_t slot)
{
    key_entry *k = ggfs_ed_slot_entry(e, s, slot);
    if (k->kv)
        s->bytes -= k->kv->len;
    s->elements -= k->elements;
    ggfs_ed_blob_put(k->kv);
    if (slot < e->n_src) {
        *k = (key_entry){UINT64_MAX, NULL, e->src_type[slot], true, 0};
        return;
    }
    const uint64_t i = slot - e->n_src;
    if (i + 1 < s->n_added)
        memmove(&s->added[i], &s->added[i + 1], (s->n_added - i - 1) * sizeof *s->added);
    s->n_added--;
}

void ggfs_ed_remove_scratch(state *s, uint64_t pos)
{
    scratch_entry *f = &s->scratch[pos];
    s->bytes -= f->name->len + (f->text ? f->text->len : 0);
    ggfs_ed_blob_put(f->name);
    ggfs_ed_blob_put(f->text);
    if (pos + 1 < s->n_scratch)
        memmove(&s->scratch[pos], &s->scratch[pos + 1], (s->n_scratch - pos - 1) * sizeof *s->scratch);
    s->n_scratch--;
}

int ggfs_ed_add_scratch(state *s, uint64_t id, const char *name, size_t len, blob *text, ggp_value_type type)
{
    blob *n = ggfs_ed_blob_new(name, len);
    if (!n || !grow_scratch(s)) {
        free(n);
        return ENOMEM;
    }
    s->scratch[s->n_scratch++] = (scratch_entry){id, n, ggfs_ed_blob_ref(text), type, false};
    s->bytes += len + (text ? text->len : 0);
    return 0;
}

int ggfs_ed_add_key(ggfs_edits *e, state *s, uint64_t id, const char *name, size_t len, ggp_value_type type,
                   const uint8_t *value, size_t value_len, uint64_t elements)
{
    if (!grow_added(s))
        return ENOMEM;
    s->added[s->n_added++] = (key_entry){id, NULL, type, false, 0};
    return ggfs_ed_set_slot(e, s, e->n_src + s->n_added - 1, name, len, type, value, value_len, elements);
}
