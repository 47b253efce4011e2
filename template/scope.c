/*
 * The variables and macros of a chat template, as the audit follows them:
 * one table for the whole template, each name holding every value any
 * assignment anywhere gives it (Jinja's scopes are not told apart, so a
 * name may hold more here than at any one point when rendering).
 */
#include <string.h>

#include "ggt_i.h"

static bool same_value(const tval *a, const tval *b)
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

static tvar *slot(const tscope *s, const char *name, size_t len, bool *found)
{
    uint64_t h = name_hash(name, len);
    for (uint32_t probe = 0; probe < TV_VARS; probe++, h++) {
        tvar *v = (tvar *)&s->vars[h & (TV_VARS - 1)];
        if (!v->used || (v->len == len && memcmp(v->name, name, len) == 0)) {
            *found = v->used;
            return v;
        }
    }
    *found = false;
    return NULL;
}

const tval *tscope_get(const tscope *s, const char *name, size_t len)
{
    bool found;
    const tvar *v = len <= TV_NAME ? slot(s, name, len, &found) : NULL;
    return v && found ? &v->v : NULL;
}

void tscope_assign(tscope *s, const char *name, size_t len, const tval *value)
{
    bool found;
    tvar *v = len <= TV_NAME ? slot(s, name, len, &found) : NULL;
    if (!v || (!found && s->n_vars >= TV_VARS * 3 / 4)) {
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
    tval joined;
    tv_join(NULL, &v->v, value, &joined);
    if (!same_value(&joined, &v->v)) {
        v->v = joined;
        s->changed = true;
    }
}

tmacro *tscope_macro(tscope *s, const char *name, size_t len, bool create)
{
    if (len > TV_NAME)
        return NULL;
    for (uint32_t i = 0; i < s->n_macros; i++) {
        if (s->macros[i].len == len && memcmp(s->macros[i].name, name, len) == 0)
            return &s->macros[i];
    }
    if (!create)
        return NULL;
    if (s->n_macros == TV_MACROS) {
        s->full = true;
        s->failures++;
        return NULL;
    }
    tmacro *m = &s->macros[s->n_macros++];
    memset(m, 0, sizeof *m);
    m->len = (uint8_t)len;
    memcpy(m->name, name, len);
    s->changed = true;
    return m;
}
