/*
 * Reading a Jinja expression without running it (Jinja 3's grammar, from
 * jinja2/parser.py), working out what each part may be (value.c)
 * and reporting the names a template reaches Python's internals with:
 *
 *   x['NAME']            a subscript, whose key is worked out when it is
 *                        made of constants (literals, ~ + * %, format, join,
 *                        variables assigned such values)
 *   x|attr('NAME')       the attr filter, and the filters taking an
 *   x|map(attribute='a.NAME')   attribute name (a dotted path): map,
 *                        selectattr, rejectattr, sort, groupby, sum,
 *                        unique, min, max, join; map('attr', ...) too
 *
 * Attributes written `x.NAME` are seen by the lexer's callback instead.
 * Recursion follows brackets and stops at GGT_DEPTH of them.
 */
#include <stdio.h>
#include <string.h>

#include "ggt_i.h"

static void cond(ggt_eval *e, ggt_val *v);
static void unary(ggt_eval *e, ggt_val *v, bool with_filter);

/* ==== Tokens ==== */

static const ggt_tok *cur(const ggt_eval *e)
{
    return e->pos < e->n ? &e->toks[e->pos] : NULL;
}

static bool at_op(const ggt_eval *e, uint8_t op)
{
    const ggt_tok *t = cur(e);
    return t && t->kind == GGT_TOK_OP && t->op == op;
}

static bool at_name(const ggt_eval *e, const char *word)
{
    const ggt_tok *t = cur(e);
    return t && ggt_tok_is_name(e->src, t, word);
}

static bool next_is_op(const ggt_eval *e, uint8_t op)
{
    return e->pos + 1 < e->n && e->toks[e->pos + 1].kind == GGT_TOK_OP && e->toks[e->pos + 1].op == op;
}

/* Past the closing bracket of the opening one at index open. */
static uint32_t after_match(const ggt_eval *e, uint32_t open)
{
    const uint32_t m = e->toks[open].match;
    return m == GGT_NO_MATCH ? e->n : m + 1;
}

static const char *text_of(const ggt_eval *e, const ggt_tok *t)
{
    return (const char *)e->src + t->at;
}

/* ==== Findings ==== */

static void report(ggt_eval *e, uint64_t at, const char *what, const char *how, const char *name, size_t len,
                   bool cut)
{
    if (e->report)
        e->found(e->ctx, at, what, how, name, len, cut);
}

/* The source text of tokens [first, end), for a finding. */
static void report_source(ggt_eval *e, uint32_t first, uint32_t end, const char *what, const char *how)
{
    if (first >= end || end > e->n)
        return;
    const uint64_t from = e->toks[first].at, to = e->toks[end - 1].at + e->toks[end - 1].len;
    const uint64_t len = to - from;
    report(e, from, what, how, (const char *)e->src + from, len > 64 ? 64 : (size_t)len, len > 64);
}

/* Whether every token of [first, end) is a string literal. */
static bool literal_strings(const ggt_eval *e, uint32_t first, uint32_t end)
{
    if (first >= end)
        return false;
    for (uint32_t i = first; i < end; i++) {
        if (e->toks[i].kind != GGT_TOK_STRING)
            return false;
    }
    return true;
}

/* The first dot-separated part of s beginning with '_', or NULL. */
static const char *underscore_part(const char *s, size_t n, bool dotted, size_t *part_len)
{
    for (size_t i = 0; i < n;) {
        const char *dot = dotted ? memchr(s + i, '.', n - i) : NULL;
        const size_t end = dot ? (size_t)(dot - s) : n;
        if (end > i && s[i] == '_') {
            *part_len = end - i;
            return s + i;
        }
        i = end + 1;
        if (!dotted)
            break;
    }
    return NULL;
}

/* A name given to attr (dotted: an attribute path, as map(attribute=)
 * and the others take). Literal names are judged as Jinja decodes them;
 * any other is reported, with what it may be when that is worked out. */
static void judge_name(ggt_eval *e, const ggt_arg *a, const char *what, bool dotted)
{
    if (a->star) {
        report_source(e, a->first, a->end, what, "is computed:");
        return;
    }
    if (a->end == a->first + 1 &&
        (e->toks[a->first].kind == GGT_TOK_INT || e->toks[a->first].kind == GGT_TOK_FLOAT))
        return; // an index
    if (literal_strings(e, a->first, a->end)) {
        char name[256];
        size_t n = 0;
        bool cut = false;
        for (uint32_t i = a->first; i < a->end && !cut; i++)
            n += ggt_unescape(e->src, &e->toks[i], name + n, sizeof name - n, &cut);
        size_t part_len;
        const char *part = underscore_part(name, n, dotted, &part_len);
        if (part == name)
            report(e, e->toks[a->first].at, what, "begins with '_'", name, n, cut);
        else if (part)
            report(e, e->toks[a->first].at, what, "has a part beginning with '_'", name, n, cut);
        return;
    }
    const char *w;
    size_t wn;
    if (ggt_val_may_begin_under(&a->v, &w, &wn)) {
        report(e, e->toks[a->first].at, what, "begins with '_'", w, wn,
               wn >= GGT_WITNESS && w == a->v.witness);
        return;
    }
    size_t part_len;
    if (dotted && a->v.kind == GGT_V_STR && underscore_part(a->v.prefix, a->v.plen, true, &part_len)) {
        report(e, e->toks[a->first].at, what, "has a part beginning with '_'", a->v.prefix, a->v.plen,
               !a->v.complete);
        return;
    }
    report_source(e, a->first, a->end, what, "is computed:");
}

/* The argument at position k, or keyword kw; NULL when not given. */
static const ggt_arg *arg_at(const ggt_eval *e, const ggt_arg *args, uint32_t n, int k, const char *kw)
{
    for (uint32_t i = 0; i < n; i++) {
        if (kw && args[i].name != UINT32_MAX && ggt_tok_is_name(e->src, &e->toks[args[i].name], kw))
            return &args[i];
    }
    for (uint32_t i = 0; k >= 0 && i < n; i++) {
        if (args[i].name == UINT32_MAX && !args[i].star && k-- == 0)
            return &args[i];
    }
    return NULL;
}

static bool has_star(const ggt_arg *args, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (args[i].star)
            return true;
    }
    return false;
}

/* The filters that take an attribute name, and where. */
static const struct {
    const char *name;
    int position; // of the attribute among positional arguments, or -1
    bool keyword; // also as attribute=
} attribute_filters[] = {
    {"selectattr", 0, false}, {"rejectattr", 0, false}, {"groupby", 0, true}, {"sum", 0, true},
    {"unique", 1, true},      {"min", 1, true},         {"max", 1, true},     {"join", 1, true},
    {"sort", 2, true},        {"map", -1, true},
};

/* Checks the filter `name` applied with args; via is "" or how map()
 * named it ("map('attr')"). */
static void check_filter(ggt_eval *e, const char *name, size_t len, const ggt_arg *args, uint32_t n,
                         const char *via, int hops)
{
    char what[96];
    if (len == 4 && memcmp(name, "attr", 4) == 0) {
        snprintf(what, sizeof what, "%sattr filter name", via);
        const ggt_arg *a = arg_at(e, args, n, 0, "name");
        if (a)
            judge_name(e, a, what, false);
        else if (has_star(args, n))
            judge_name(e, &args[0], what, false);
        return;
    }
    for (size_t i = 0; i < sizeof attribute_filters / sizeof attribute_filters[0]; i++) {
        const char *f = attribute_filters[i].name;
        if (strlen(f) != len || memcmp(f, name, len) != 0)
            continue;
        snprintf(what, sizeof what, "%s%s attribute", via, f);
        const ggt_arg *a = arg_at(e, args, n, attribute_filters[i].position,
                                  attribute_filters[i].keyword ? "attribute" : NULL);
        if (a) {
            judge_name(e, a, what, true);
        } else if (has_star(args, n)) {
            for (uint32_t k = 0; k < n; k++) {
                if (args[k].star)
                    judge_name(e, &args[k], what, true);
            }
        } else if (len == 3 && memcmp(name, "map", 3) == 0) {
            // map(FILTER, args...) applies FILTER with the rest.
            const ggt_arg *g = arg_at(e, args, n, 0, NULL);
            if (!g)
                return;
            if (!literal_strings(e, g->first, g->end) || g->v.kind != GGT_V_STR || !g->v.complete) {
                snprintf(what, sizeof what, "%smap filter name", via);
                report_source(e, g->first, g->end, what, "is computed:");
                return;
            }
            if (hops < 4) {
                char inner[64];
                snprintf(inner, sizeof inner, "%smap('%.*s') ", via, (int)(g->v.plen > 24 ? 24 : g->v.plen),
                         g->v.prefix);
                check_filter(e, g->v.prefix, g->v.plen, g + 1, (uint32_t)(n - (uint32_t)(g + 1 - args)),
                             inner, hops + 1);
            }
        }
        return;
    }
}

/* A subscript's key: a name worked out to begin with '_', or one made of
 * constants in ways not followed here. */
static void check_subscript(ggt_eval *e, uint32_t first, uint32_t end, const ggt_val *key)
{
    const char *w;
    size_t wn;
    if (ggt_val_may_begin_under(key, &w, &wn)) {
        const bool cut = w == key->prefix ? !key->complete : wn >= GGT_WITNESS;
        report(e, e->toks[first].at, "subscript", "begins with '_'", w, wn, cut);
    } else if (key->kind == GGT_V_STR && key->plen == 0 && !key->complete && key->built && !key->data) {
        report_source(e, first, end, "subscript", "is built from constants in a way not followed here:");
    }
}

static void format_hit(void *ctx, const char *name, size_t len)
{
    ggt_eval *e = ((void **)ctx)[0];
    const ggt_tok *t = ((void **)ctx)[1];
    report(e, t->at, "str.format field attribute", "begins with '_'", name, len, false);
}

/* ==== Arguments ==== */

/* Reads one expression into v, inside brackets; where none starts, the
 * token is skipped so that the reading moves on, and false returned. */
static bool expr_or_skip(ggt_eval *e, ggt_val *v)
{
    const uint32_t before = e->pos;
    cond(e, v);
    if (e->pos != before)
        return true;
    e->pos++;
    return false;
}

uint32_t ggt_eval_args(ggt_eval *e, ggt_arg *args)
{
    const uint32_t open = e->pos;
    const uint32_t end = after_match(e, open);
    const uint32_t limit = end > open + 1 && end <= e->n && e->toks[end - 1].kind == GGT_TOK_OP &&
                                   e->toks[end - 1].op == GGT_OP_RPAREN
                               ? end - 1
                               : end;
    e->pos++;
    uint32_t n = 0;
    while (e->pos < limit) {
        if (at_op(e, GGT_OP_COMMA)) {
            e->pos++;
            continue;
        }
        ggt_arg a = {UINT32_MAX, 0, e->pos, e->pos, {0}};
        if (at_op(e, GGT_OP_MUL) || at_op(e, GGT_OP_POW)) {
            a.star = at_op(e, GGT_OP_MUL) ? 1 : 2;
            e->pos++;
        } else if (cur(e)->kind == GGT_TOK_NAME && next_is_op(e, GGT_OP_ASSIGN)) {
            a.name = e->pos;
            e->pos += 2;
        }
        a.first = e->pos;
        if (!expr_or_skip(e, &a.v))
            continue;
        a.end = e->pos;
        if (n < GGT_ARGS)
            args[n++] = a;
    }
    e->pos = end;
    return n;
}

/* Reads the arguments of a call whose value is not followed, one bracket
 * deeper, for what they report. */
static void call_args_for_findings(ggt_eval *e)
{
    ggt_arg args[GGT_ARGS];
    e->depth++;
    ggt_eval_args(e, args);
    e->depth--;
}

/* ==== Primaries ==== */

static void string_literal(ggt_eval *e, ggt_val *v)
{
    char buf[GGT_PREFIX + 1] = {0};
    size_t n = 0;
    bool cut = false;
    while (cur(e) && cur(e)->kind == GGT_TOK_STRING) {
        if (!cut) {
            bool c;
            n += ggt_unescape(e->src, cur(e), buf + n, sizeof buf - n, &c);
            cut = c;
        }
        e->pos++;
    }
    ggt_val_str(v, buf, n);
    if (cut || n > GGT_PREFIX) {
        v->complete = false;
        v->plen = GGT_PREFIX < n ? GGT_PREFIX : (uint8_t)n;
    }
}

/* Items up to the bracket closing at `end`, as a list; a dict keeps its
 * keys (what iterating it gives). */
static void items(ggt_eval *e, ggt_val *v, uint32_t end, bool dict)
{
    ggt_val list[GGT_LIST_MAX + 1];
    uint32_t n = 0;
    bool extra_under = false;
    ggt_val extra;
    const uint32_t limit =
        end > 0 && end <= e->n && e->toks[end - 1].kind == GGT_TOK_OP &&
                (e->toks[end - 1].op == GGT_OP_RPAREN || e->toks[end - 1].op == GGT_OP_RBRACKET ||
                 e->toks[end - 1].op == GGT_OP_RBRACE)
            ? end - 1
            : end;
    while (e->pos < limit) {
        if (at_op(e, GGT_OP_COMMA)) {
            e->pos++;
            continue;
        }
        ggt_val item;
        if (!expr_or_skip(e, &item))
            continue;
        if (dict && at_op(e, GGT_OP_COLON)) {
            e->pos++;
            ggt_val value;
            cond(e, &value);
        }
        if (n < GGT_LIST_MAX + 1) {
            list[n++] = item;
        } else {
            const char *w;
            size_t wn;
            if (!extra_under && ggt_val_may_begin_under(&item, &w, &wn))
                extra_under = true, extra = item;
        }
    }
    if (extra_under && n > 0)
        list[n - 1] = extra; // keeps the summary's witness
    ggt_val_list(&e->store, list, n, v);
}

/* A call of a name: Jinja's globals, the template's macros, or data. */
static void call_name(ggt_eval *e, const ggt_tok *name, ggt_val *v)
{
    ggt_arg args[GGT_ARGS];
    const uint32_t n = ggt_eval_args(e, args);
    const char *s = text_of(e, name);
    if (ggt_tok_is_name(e->src, name, "dict")) {
        ggt_val keys[GGT_LIST_MAX];
        uint32_t k = 0;
        bool other = false;
        for (uint32_t i = 0; i < n; i++) {
            if (args[i].name == UINT32_MAX) {
                other = true;
            } else if (k < GGT_LIST_MAX) {
                const ggt_tok *kw = &e->toks[args[i].name];
                ggt_val_str(&keys[k++], text_of(e, kw), (size_t)kw->len);
            }
        }
        ggt_val list;
        ggt_val_list(&e->store, keys, k, &list);
        if (other) {
            ggt_val_flatten(&e->store, &list, v);
            v->data = true;
        } else {
            *v = list;
        }
        return;
    }
    if (ggt_tok_is_name(e->src, name, "range") || ggt_tok_is_name(e->src, name, "namespace")) {
        ggt_val_other(v, false);
        return;
    }
    ggt_macro *m = ggt_scope_macro(e->scope, s, (size_t)name->len, false);
    if (!m) {
        ggt_val_unknown(v, true);
        return;
    }
    // Each argument may be what its parameter holds.
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        ggt_val flat;
        ggt_val_flatten(&e->store, &args[i].v, &flat);
        if (args[i].name != UINT32_MAX) {
            const ggt_tok *kw = &e->toks[args[i].name];
            ggt_scope_assign(e->scope, text_of(e, kw), (size_t)kw->len, &flat);
        } else if (!args[i].star && k < m->n_params) {
            ggt_scope_assign(e->scope, m->params[k], m->param_len[k], &flat);
            k++;
        }
    }
    if (m->has_out)
        *v = m->out;
    else
        ggt_val_unknown(v, true);
}

static void int_literal(ggt_eval *e, const ggt_tok *t, ggt_val *v)
{
    int64_t i;
    if (ggt_int_value(e->src, t, &i))
        ggt_val_int(v, i);
    else
        ggt_val_other(v, false);
    e->pos++;
}

/* A name: a constant, a call of a global or macro, or a variable (whose
 * name goes to var when it is short enough to be assigned to). */
static void name_primary(ggt_eval *e, const ggt_tok *t, ggt_val *v, char *var, size_t *var_len)
{
    static const char *const constants[] = {"true", "false", "none", "True", "False", "None", NULL};
    for (const char *const *c = constants; *c; c++) {
        if (ggt_tok_is_name(e->src, t, *c)) {
            ggt_val_other(v, false);
            e->pos++;
            return;
        }
    }
    e->pos++;
    if (at_op(e, GGT_OP_LPAREN)) {
        call_name(e, t, v);
        return;
    }
    const ggt_val *known = ggt_scope_get(e->scope, text_of(e, t), (size_t)t->len);
    if (known)
        *v = *known;
    else
        ggt_val_unknown(v, true);
    if (t->len <= GGT_NAME) {
        memcpy(var, text_of(e, t), (size_t)t->len);
        *var_len = (size_t)t->len;
    }
}

/* After the '(' at open: a tuple, or an expression in parentheses. */
static void parenthesized(ggt_eval *e, uint32_t open, uint32_t end, ggt_val *v)
{
    ggt_val first;
    cond(e, &first);
    if (at_op(e, GGT_OP_COMMA) || e->pos == open + 1) {
        e->pos = open + 1;
        items(e, v, end, false); // a tuple
        return;
    }
    *v = first;
    // Anything else before the ')' is still read for findings.
    while (e->pos + 1 < end) {
        ggt_val more;
        expr_or_skip(e, &more);
    }
}

/* A tuple, list or dict, or an expression in parentheses, at the opening
 * bracket t: read one level deeper, unless that is too deep. */
static void bracketed(ggt_eval *e, const ggt_tok *t, ggt_val *v)
{
    const uint32_t open = e->pos, end = after_match(e, open);
    if (e->depth >= GGT_DEPTH) {
        report(e, t->at, "expression", "nests brackets deeper than 24, not followed", "", 0, false);
        ggt_val_unknown(v, true); // reported: not followed
        e->pos = end;
        return;
    }
    e->depth++;
    e->pos++;
    if (t->op == GGT_OP_LPAREN)
        parenthesized(e, open, end, v);
    else
        items(e, v, end, t->op == GGT_OP_LBRACE);
    e->depth--;
    e->pos = end;
}

/* Returns false, consuming nothing, when no primary starts here. */
static bool primary(ggt_eval *e, ggt_val *v, char *var, size_t *var_len)
{
    *var_len = 0;
    const ggt_tok *t = cur(e);
    if (!t) {
        ggt_val_unknown(v, true);
        return false;
    }
    switch (t->kind) {
    case GGT_TOK_STRING:
        string_literal(e, v);
        return true;
    case GGT_TOK_INT:
        int_literal(e, t, v);
        return true;
    case GGT_TOK_FLOAT:
        ggt_val_other(v, false);
        e->pos++;
        return true;
    case GGT_TOK_NAME:
        name_primary(e, t, v, var, var_len);
        return true;
    case GGT_TOK_OP:
        if (t->op == GGT_OP_LPAREN || t->op == GGT_OP_LBRACKET || t->op == GGT_OP_LBRACE) {
            bracketed(e, t, v);
            return true;
        }
        break;
    default:
        break;
    }
    ggt_val_unknown(v, true);
    return false;
}

/* ==== Postfix: .name, [key], (args) ==== */

static void subscript(ggt_eval *e, ggt_val *v)
{
    const uint32_t open = e->pos, end = after_match(e, open);
    const uint32_t limit =
        end > open + 1 && end <= e->n && e->toks[end - 1].op == GGT_OP_RBRACKET ? end - 1 : end;
    e->pos++;
    ggt_val parts[3];
    uint32_t n_parts = 0, commas = 0, key_first = e->pos, key_end = e->pos;
    bool slice = false;
    while (e->pos < limit) {
        if (at_op(e, GGT_OP_COLON)) {
            slice = true;
            e->pos++;
            n_parts++;
            continue;
        }
        if (at_op(e, GGT_OP_COMMA)) {
            commas++;
            e->pos++;
            continue;
        }
        ggt_val x;
        const uint32_t before = e->pos;
        if (!expr_or_skip(e, &x))
            continue;
        if (n_parts < 3 && !commas) {
            parts[n_parts] = x;
            if (n_parts == 0)
                key_first = before, key_end = e->pos;
        }
    }
    e->pos = end;
    ggt_val base = *v;
    if (slice || commas || key_end == key_first) {
        ggt_val_unknown(v, base.data);
        if (base.kind == GGT_V_STR && !base.data)
            ggt_val_element(&e->store, &base, v), v->may_empty = true;
        return;
    }
    const ggt_val *key = &parts[0];
    check_subscript(e, key_first, key_end, key);
    if (base.kind == GGT_V_LIST && key->kind == GGT_V_INT) {
        const int64_t i = key->i < 0 ? key->i + base.n : key->i;
        if (i >= 0 && i < base.n) {
            *v = e->store.elems[base.elems + i];
            return;
        }
    }
    if ((base.kind == GGT_V_STR || base.kind == GGT_V_LIST || base.kind == GGT_V_OTHER) &&
        key->kind == GGT_V_INT && !base.data) {
        ggt_val_element(&e->store, &base, v);
        return;
    }
    ggt_val_unknown(v, base.data || key->data || base.kind == GGT_V_OTHER);
    if (v->data)
        v->built = false;
}

/* A method called on a value: string methods are worked out as the
 * filters of the same names; others give data. */
static void method(ggt_eval *e, const ggt_tok *name, ggt_val *v)
{
    ggt_arg args[GGT_ARGS];
    const uint32_t n = ggt_eval_args(e, args);
    const ggt_val base = *v;
    static const struct { const char *method, *filter; } same[] = {
        {"lower", "lower"}, {"upper", "upper"}, {"title", "title"}, {"capitalize", "capitalize"},
        {"replace", "replace"}, {"strip", "trim"}, {"lstrip", "trim"}, {"rstrip", "string"},
        {"format", "str.format"}, {"format_map", "str.format"},
    };
    if (ggt_tok_is_name(e->src, name, "join") && n >= 1) {
        ggt_arg sep = {UINT32_MAX, 0, 0, 0, base};
        ggt_val_filter(&e->store, "join", 4, &args[0].v, &sep, 1, e->src, e->toks, v);
        return;
    }
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        if (ggt_tok_is_name(e->src, name, same[i].method)) {
            ggt_val_filter(&e->store, same[i].filter, strlen(same[i].filter), &base, args, n, e->src, e->toks,
                           v);
            return;
        }
    }
    ggt_val_unknown(v, true);
}

static void postfix(ggt_eval *e, ggt_val *v, char *var, size_t var_len)
{
    for (;;) {
        if (at_op(e, GGT_OP_DOT)) {
            e->pos++;
            const ggt_tok *t = cur(e);
            if (!t || (t->kind != GGT_TOK_NAME && t->kind != GGT_TOK_INT))
                continue;
            e->pos++;
            if (t->kind == GGT_TOK_NAME && at_op(e, GGT_OP_LPAREN)) {
                // A literal's fields are checked where it is written (the
                // lexer's callback); a string worked out here, now.
                const bool literal = e->pos >= 3 && e->toks[e->pos - 3].kind == GGT_TOK_STRING;
                if ((ggt_tok_is_name(e->src, t, "format") || ggt_tok_is_name(e->src, t, "format_map")) &&
                    v->kind == GGT_V_STR && v->plen > 0 && !literal) {
                    void *ctx[2] = {e, (void *)t};
                    ggt_check_format(v->prefix, v->plen, format_hit, ctx);
                }
                method(e, t, v);
                var_len = 0;
                continue;
            }
            // ns.attr: a variable of its own when assigned as one.
            if (var_len && t->kind == GGT_TOK_NAME && var_len + 1 + t->len <= GGT_NAME) {
                var[var_len] = '.';
                memcpy(var + var_len + 1, text_of(e, t), (size_t)t->len);
                var_len += 1 + (size_t)t->len;
                const ggt_val *known = ggt_scope_get(e->scope, var, var_len);
                if (known) {
                    *v = *known;
                    continue;
                }
            }
            var_len = 0;
            ggt_val_unknown(v, true);
        } else if (at_op(e, GGT_OP_LBRACKET)) {
            if (e->depth >= GGT_DEPTH) {
                report(e, cur(e)->at, "expression", "nests brackets deeper than 24, not followed", "", 0,
                       false);
                e->pos = after_match(e, e->pos);
                ggt_val_unknown(v, true); // reported: not followed
                continue;
            }
            e->depth++;
            subscript(e, v);
            e->depth--;
            var_len = 0;
        } else if (at_op(e, GGT_OP_LPAREN)) {
            call_args_for_findings(e);
            ggt_val_unknown(v, true);
            var_len = 0;
        } else {
            return;
        }
    }
}

/* ==== Filters and tests ==== */

/* `|name(args)` at the '|': applies it to v. */
static void filter(ggt_eval *e, ggt_val *v)
{
    e->pos++;
    const ggt_tok *t = cur(e);
    if (!t || t->kind != GGT_TOK_NAME)
        return;
    uint32_t first = e->pos;
    e->pos++;
    while (at_op(e, GGT_OP_DOT) && e->pos + 1 < e->n && e->toks[e->pos + 1].kind == GGT_TOK_NAME)
        e->pos += 2;
    const ggt_tok *last = &e->toks[e->pos - 1];
    const char *name = text_of(e, &e->toks[first]);
    const size_t len = (size_t)(last->at + last->len - e->toks[first].at);
    ggt_arg args[GGT_ARGS];
    uint32_t n = 0;
    if (at_op(e, GGT_OP_LPAREN)) {
        if (e->depth >= GGT_DEPTH) {
            report(e, cur(e)->at, "expression", "nests brackets deeper than 24, not followed", "", 0, false);
            e->pos = after_match(e, e->pos);
            ggt_val_unknown(v, true); // reported: not followed
            return;
        }
        e->depth++;
        n = ggt_eval_args(e, args);
        e->depth--;
    }
    check_filter(e, name, len, args, n, "", 0);
    ggt_val in = *v;
    ggt_val_filter(&e->store, name, len, &in, args, n, e->src, e->toks, v);
}

static bool starts_test_arg(const ggt_eval *e)
{
    const ggt_tok *t = cur(e);
    if (!t)
        return false;
    if (t->kind == GGT_TOK_NAME)
        return !at_name(e, "else") && !at_name(e, "or") && !at_name(e, "and") && !at_name(e, "is");
    return t->kind == GGT_TOK_STRING || t->kind == GGT_TOK_INT || t->kind == GGT_TOK_FLOAT ||
           (t->kind == GGT_TOK_OP &&
            (t->op == GGT_OP_LPAREN || t->op == GGT_OP_LBRACKET || t->op == GGT_OP_LBRACE));
}

static void test(ggt_eval *e, ggt_val *v)
{
    e->pos++; // is
    if (at_name(e, "not"))
        e->pos++;
    if (cur(e) && cur(e)->kind == GGT_TOK_NAME) {
        e->pos++;
        while (at_op(e, GGT_OP_DOT) && e->pos + 1 < e->n && e->toks[e->pos + 1].kind == GGT_TOK_NAME)
            e->pos += 2;
    }
    if (at_op(e, GGT_OP_LPAREN)) {
        call_args_for_findings(e);
    } else if (starts_test_arg(e)) {
        ggt_val arg;
        char var[GGT_NAME + 1];
        size_t var_len;
        if (primary(e, &arg, var, &var_len))
            postfix(e, &arg, var, var_len);
    }
    ggt_val_other(v, v->data);
}

static void filter_expr(ggt_eval *e, ggt_val *v)
{
    for (;;) {
        if (at_op(e, GGT_OP_PIPE)) {
            filter(e, v);
        } else if (at_name(e, "is")) {
            test(e, v);
        } else if (at_op(e, GGT_OP_LPAREN)) {
            call_args_for_findings(e);
            ggt_val_unknown(v, true);
        } else {
            return;
        }
    }
}

void ggt_eval_filter_chain(ggt_eval *e)
{
    ggt_val v;
    ggt_val_unknown(&v, true);
    if (cur(e) && cur(e)->kind == GGT_TOK_NAME) {
        e->pos--; // as if after a '|'
        filter(e, &v);
        filter_expr(e, &v);
    }
}

/* ==== Operators, lowest binding last ==== */

static void unary(ggt_eval *e, ggt_val *v, bool with_filter)
{
    if (at_op(e, GGT_OP_SUB) || at_op(e, GGT_OP_ADD)) {
        e->pos++;
        unary(e, v, false);
        if (v->kind == GGT_V_INT && v->i != INT64_MIN)
            v->i = -v->i;
        else
            ggt_val_other(v, v->data);
    } else {
        char var[GGT_NAME + 1];
        size_t var_len;
        if (!primary(e, v, var, &var_len))
            return;
        postfix(e, v, var, var_len);
    }
    if (with_filter)
        filter_expr(e, v);
}

static void power(ggt_eval *e, ggt_val *v)
{
    unary(e, v, true);
    while (at_op(e, GGT_OP_POW)) {
        e->pos++;
        ggt_val r;
        unary(e, &r, true);
        ggt_val_other(v, v->data || r.data);
    }
}

static void math2(ggt_eval *e, ggt_val *v)
{
    power(e, v);
    while (at_op(e, GGT_OP_MUL) || at_op(e, GGT_OP_DIV) || at_op(e, GGT_OP_FLOORDIV) ||
           at_op(e, GGT_OP_MOD)) {
        const uint8_t op = cur(e)->op;
        e->pos++;
        ggt_val r, l = *v;
        power(e, &r);
        if (op == GGT_OP_MUL)
            ggt_val_mul(&l, &r, v);
        else if (op == GGT_OP_MOD)
            ggt_val_mod(&e->store, &l, &r, v);
        else
            ggt_val_other(v, l.data || r.data);
    }
}

static void concat(ggt_eval *e, ggt_val *v)
{
    math2(e, v);
    while (at_op(e, GGT_OP_TILDE)) {
        e->pos++;
        ggt_val r, l = *v;
        math2(e, &r);
        ggt_val_concat(&l, &r, v);
    }
}

static void math1(ggt_eval *e, ggt_val *v)
{
    concat(e, v);
    while (at_op(e, GGT_OP_ADD) || at_op(e, GGT_OP_SUB)) {
        const uint8_t op = cur(e)->op;
        e->pos++;
        ggt_val r, l = *v;
        concat(e, &r);
        int64_t sum;
        if (l.kind == GGT_V_INT && r.kind == GGT_V_INT) {
            if (op == GGT_OP_ADD ? __builtin_add_overflow(l.i, r.i, &sum)
                                 : __builtin_sub_overflow(l.i, r.i, &sum))
                ggt_val_other(v, false);
            else
                ggt_val_int(v, sum);
        } else if (op == GGT_OP_ADD && (l.kind == GGT_V_STR || r.kind == GGT_V_STR)) {
            ggt_val_concat(&l, &r, v);
        } else if (op == GGT_OP_ADD && (l.kind == GGT_V_LIST || r.kind == GGT_V_LIST)) {
            ggt_val_join(&e->store, &l, &r, v); // list + list: the elements of both
        } else {
            ggt_val_other(v, l.data || r.data);
        }
    }
}

static void compare(ggt_eval *e, ggt_val *v)
{
    math1(e, v);
    for (;;) {
        const ggt_tok *t = cur(e);
        if (!t)
            return;
        const bool op =
            t->kind == GGT_TOK_OP && (t->op == GGT_OP_EQ || t->op == GGT_OP_NE || t->op == GGT_OP_LT ||
                                      t->op == GGT_OP_LTEQ || t->op == GGT_OP_GT || t->op == GGT_OP_GTEQ);
        if (op || at_name(e, "in")) {
            e->pos++;
        } else if (at_name(e, "not") && e->pos + 1 < e->n &&
                   ggt_tok_is_name(e->src, &e->toks[e->pos + 1], "in")) {
            e->pos += 2;
        } else {
            return;
        }
        ggt_val r;
        math1(e, &r);
        ggt_val_other(v, v->data || r.data);
    }
}

static void not_(ggt_eval *e, ggt_val *v)
{
    if (at_name(e, "not")) {
        e->pos++;
        not_(e, v);
        ggt_val_other(v, v->data);
        return;
    }
    compare(e, v);
}

static void and_or(ggt_eval *e, ggt_val *v, bool is_or)
{
    if (is_or)
        and_or(e, v, false);
    else
        not_(e, v);
    while (at_name(e, is_or ? "or" : "and")) {
        e->pos++;
        ggt_val r, l = *v;
        if (is_or)
            and_or(e, &r, false);
        else
            not_(e, &r);
        ggt_val_join(&e->store, &l, &r, v); // either operand is the result
    }
}

static void cond(ggt_eval *e, ggt_val *v)
{
    and_or(e, v, true);
    while (at_name(e, "if")) {
        e->pos++;
        ggt_val c, alt;
        and_or(e, &c, true);
        if (at_name(e, "else")) {
            e->pos++;
            cond(e, &alt);
        } else {
            ggt_val_str(&alt, "", 0); // undefined: renders as ''
        }
        ggt_val l = *v;
        ggt_val_join(&e->store, &l, &alt, v);
    }
}

bool ggt_eval_expr(ggt_eval *e, ggt_val *v)
{
    const uint32_t before = e->pos;
    cond(e, v);
    return e->pos > before;
}
