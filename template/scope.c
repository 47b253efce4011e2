/*
 * The variables and macros of a chat template, as the audit follows them:
 * one table for the whole template, each name holding every value any
 * assignment anywhere gives it (Jinja's scopes are not told apart, so a
 * name may hold more here than at any one point when rendering).
 */
#include <string.h>

#include "ggt_i.h"

static bool same_value(const ggt_val *a, const ggt_val *b)
{
    return a->kind == b->kind && a->complete == b->complete && a->may_under == b->may_under &&
           a->may_empty == b->may_empty && a->data == b->data && a->built == b->built &&
           a->plen == b->plen && a->i == b->i && memcmp(a->prefix, b->prefix, a->plen) == 0;
}

/* FNV-1a, for the variables' slots. */
static uint64_t name_hash(const char *name, size_t len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)name[i]) * UINT64_C(0x100000001b3);
    return h;
}

static ggt_var *slot(const ggt_scope *s, const char *name, size_t len, bool *found)
{
    uint64_t h = name_hash(name, len);
    for (uint32_t probe = 0; probe < GGT_VARS; probe++, h++) {
        ggt_var *v = (ggt_var *)&s->vars[h & (GGT_VARS - 1)];
        if (!v->used || (v->len == len && memcmp(v->name, name, len) == 0)) {
            *found = v->used;
            return v;
        }
    }
    *found = false;
    return NULL;
}

const ggt_val *ggt_scope_get(const ggt_scope *s, const char *name, size_t len)
{
    bool found;
    const ggt_var *v = len <= GGT_NAME ? slot(s, name, len, &found) : NULL;
    return v && found ? &v->v : NULL;
}

void ggt_scope_assign(ggt_scope *s, const char *name, size_t len, const ggt_val *value)
{
    bool found;
    ggt_var *v = len <= GGT_NAME ? slot(s, name, len, &found) : NULL;
    if (!v || (!found && s->n_vars >= GGT_VARS * 3 / 4)) {
        s->full = true;
        s->failures++;
        return;
    }
    if (!found) {
        v->used = 1;
        v->len = (uint8_t)len;
        memcpy(v->name, name, len);
        v->v = *value;
        s->n_vars++;
        s->changed = true;
        return;
    }
    ggt_val joined;
    ggt_val_join(NULL, &v->v, value, &joined);
    if (!same_value(&joined, &v->v)) {
        v->v = joined;
        s->changed = true;
    }
}

ggt_macro *ggt_scope_macro(ggt_scope *s, const char *name, size_t len, bool create)
{
    if (len > GGT_NAME)
        return NULL;
    for (uint32_t i = 0; i < s->n_macros; i++) {
        if (s->macros[i].len == len && memcmp(s->macros[i].name, name, len) == 0)
            return &s->macros[i];
    }
    if (!create)
        return NULL;
    if (s->n_macros == GGT_MACROS) {
        s->full = true;
        s->failures++;
        return NULL;
    }
    ggt_macro *m = &s->macros[s->n_macros++];
    memset(m, 0, sizeof *m);
    m->len = (uint8_t)len;
    memcpy(m->name, name, len);
    s->changed = true;
    return m;
}
