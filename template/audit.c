/*
 * The chat-template audit (ggt.h): walks a template's tags, reads
 * each statement and expression (eval.c), follows assignments
 * (set, for, with, macro parameters and what macros and block sets render)
 * until they settle, then reads it once more reporting, and hands the
 * findings over sorted by offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggt.h"
#include "ggt_i.h"

#define MAX_TOKENS 4096   // tokens of one tag read as statements
#define MAX_ELEMS 1024    // list elements kept while one tag is read
#define MAX_FINDINGS 1000
#define MAX_BODIES 8      // nested block sets and macros followed
#define COLLECT_PASSES 4  // reads that follow assignments, at most

typedef struct finding {
    uint64_t at;
    uint32_t seq;
    bool source, cut;
    uint8_t name_len;
    char what[80];
    char how[80];
    char name[96];
} finding;

/* What a block set or a macro renders: any one of its pieces may come
 * first (control flow decides), so they are joined. */
typedef struct body {
    bool any;           // a piece was seen
    bool macro;
    bool filtered;      // {% set x | filter %}
    ggt_val acc;
    char target[GGT_NAME];
    uint8_t target_len;
} body;

typedef struct audit {
    const uint8_t *src;
    uint64_t len;
    ggt_tok *toks;
    uint32_t *open;
    ggt_val *elems;
    ggt_scope *scope;
    bool report;
    finding *found;
    uint32_t n_found, cap_found;
    uint64_t dropped;
    bool failed;        // out of memory for findings
    body bodies[MAX_BODIES];
    uint32_t n_bodies, skipped_bodies;
    uint32_t full_reported;
} audit;

/* ==== Findings ==== */

static void add_finding(void *ctx, uint64_t at, const char *what, const char *how, const char *name,
                        size_t len, bool cut)
{
    audit *a = ctx;
    if (!a->report)
        return;
    if (a->n_found == MAX_FINDINGS) {
        a->dropped++;
        return;
    }
    if (a->n_found == a->cap_found) {
        const uint32_t cap = a->cap_found ? a->cap_found * 2 : 16;
        finding *grown = realloc(a->found, cap * sizeof *grown);
        if (!grown) {
            a->failed = true;
            return;
        }
        a->found = grown, a->cap_found = cap;
    }
    finding *f = &a->found[a->n_found];
    f->at = at;
    f->seq = a->n_found++;
    f->source = how[0] && how[strlen(how) - 1] == ':';
    snprintf(f->what, sizeof f->what, "%s", what);
    snprintf(f->how, sizeof f->how, "%s", how);
    f->cut = cut || len > sizeof f->name;
    f->name_len = (uint8_t)(len > sizeof f->name ? sizeof f->name : len);
    memcpy(f->name, name, f->name_len);
}

static int by_offset(const void *x, const void *y)
{
    const finding *a = x, *b = y;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool same_finding(const finding *a, const finding *b)
{
    return a->at == b->at && a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0 &&
           strcmp(a->what, b->what) == 0 && strcmp(a->how, b->how) == 0;
}

/* ==== str.format fields ==== */

void ggt_check_format(const char *s, size_t n, void (*hit)(void *ctx, const char *name, size_t len),
                      void *ctx)
{
    static const char stops[] = ".[!:}";
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '{')
            continue;
        if (i + 1 < n && s[i + 1] == '{') {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n && !memchr(stops, s[j], sizeof stops - 1) && s[j] != '{')
            j++;
        while (j < n && (s[j] == '.' || s[j] == '[')) {
            if (s[j] == '[') {
                const char *close = memchr(s + j, ']', n - j);
                j = close ? (size_t)(close - s) + 1 : n;
                continue;
            }
            const size_t start = ++j;
            while (j < n && !memchr(stops, s[j], sizeof stops - 1) && s[j] != '{')
                j++;
            if (j > start && s[start] == '_')
                hit(ctx, s + start, j - start);
        }
        i = j > i ? j - 1 : i;
    }
}

typedef struct format_ctx {
    audit *a;
    uint64_t at;
} format_ctx;

static void literal_format_hit(void *ctx, const char *name, size_t len)
{
    const format_ctx *f = ctx;
    add_finding(f->a, f->at, "str.format field attribute", "begins with '_'", name, len, false);
}

/* Every token: `.NAME` with NAME beginning with '_', and str.format
 * fields in string literals. Runs for tags too long to read as
 * statements, too. */
static void on_token(void *ctx, const uint8_t *src, const ggt_tok *prev, const ggt_tok *tok)
{
    audit *a = ctx;
    if (!a->report)
        return;
    if (prev && prev->kind == GGT_TOK_OP && prev->op == GGT_OP_DOT && tok->kind == GGT_TOK_NAME &&
        src[tok->at] == '_') {
        add_finding(a, tok->at, "attribute", "begins with '_'", (const char *)src + tok->at,
                    tok->len > 96 ? 96 : (size_t)tok->len, tok->len > 96);
    } else if (tok->kind == GGT_TOK_STRING && memchr(src + tok->at, '{', (size_t)tok->len)) {
        char buf[512];
        bool cut;
        const size_t n = ggt_unescape(src, tok, buf, sizeof buf, &cut);
        format_ctx f = {a, tok->at};
        ggt_check_format(buf, n, literal_format_hit, &f);
    }
}

/* ==== What block sets and macros render ==== */

static void body_piece(audit *a, const ggt_val *v, const ggt_store *st)
{
    if (a->n_bodies == 0 || a->skipped_bodies)
        return;
    body *b = &a->bodies[a->n_bodies - 1];
    ggt_val flat;
    ggt_val_flatten(st, v, &flat);
    if (!b->any) {
        b->acc = flat;
        b->any = true;
    } else {
        ggt_val j;
        ggt_val_join(NULL, &b->acc, &flat, &j);
        b->acc = j;
    }
}

/* Text: its leading whitespace may be taken away by whitespace control. */
static void body_text(audit *a, uint64_t from, uint64_t to)
{
    if (a->n_bodies == 0 || a->skipped_bodies)
        return;
    size_t n;
    while (from < to && (n = ggt_space_len(a->src + from, to - from)) > 0)
        from += n;
    if (from >= to)
        return;
    ggt_val v;
    ggt_val_str(&v, (const char *)a->src + from, (size_t)(to - from));
    body_piece(a, &v, NULL);
}

static body *push_body(audit *a)
{
    if (a->n_bodies == MAX_BODIES || a->skipped_bodies) {
        a->skipped_bodies++;
        return NULL;
    }
    body *b = &a->bodies[a->n_bodies++];
    memset(b, 0, sizeof *b);
    return b;
}

/* The body's value, or NULL when it was not followed. */
static body *pop_body(audit *a, ggt_val *v)
{
    if (a->skipped_bodies) {
        a->skipped_bodies--;
        return NULL;
    }
    if (a->n_bodies == 0)
        return NULL;
    body *b = &a->bodies[--a->n_bodies];
    if (!b->any)
        ggt_val_str(&b->acc, "", 0);
    *v = b->acc;
    if (b->filtered) {
        ggt_val in = *v;
        ggt_val_filter(NULL, "", 0, &in, NULL, 0, a->src, a->toks, v);
    }
    return b;
}

/* ==== Statements ==== */

static bool at_name(const ggt_eval *e, const char *word)
{
    return e->pos < e->n && ggt_tok_is_name(e->src, &e->toks[e->pos], word);
}

static bool at_op(const ggt_eval *e, uint8_t op)
{
    return e->pos < e->n && e->toks[e->pos].kind == GGT_TOK_OP && e->toks[e->pos].op == op;
}

/* Reads the rest of the tag: every expression in it, for findings. */
static void read_rest(ggt_eval *e)
{
    while (e->pos < e->n) {
        ggt_val v;
        if (!ggt_eval_expr(e, &v))
            e->pos++;
    }
}

/* Assignment targets: names or ns.attr, separated by commas, into
 * names[k] (k < 4); returns how many. Stops at what is no target. */
static uint32_t targets(ggt_eval *e, char names[4][GGT_NAME], uint8_t *lens)
{
    uint32_t k = 0;
    if (at_op(e, GGT_OP_LPAREN))
        e->pos++;
    while (e->pos < e->n && e->toks[e->pos].kind == GGT_TOK_NAME && !at_name(e, "in")) {
        const ggt_tok *t = &e->toks[e->pos++];
        size_t len = (size_t)t->len;
        char name[GGT_NAME];
        bool fits = len <= GGT_NAME;
        if (fits)
            memcpy(name, e->src + t->at, len);
        while (at_op(e, GGT_OP_DOT) && e->pos + 1 < e->n && e->toks[e->pos + 1].kind == GGT_TOK_NAME) {
            const ggt_tok *u = &e->toks[e->pos + 1];
            fits = fits && len + 1 + u->len <= GGT_NAME;
            if (fits) {
                name[len] = '.';
                memcpy(name + len + 1, e->src + u->at, (size_t)u->len);
                len += 1 + (size_t)u->len;
            }
            e->pos += 2;
        }
        if (fits && k < 4) {
            memcpy(names[k], name, len);
            lens[k++] = (uint8_t)len;
        } else if (!fits) {
            e->scope->full = true;
            e->scope->failures++;
        }
        if (!at_op(e, GGT_OP_COMMA))
            break;
        e->pos++;
    }
    if (at_op(e, GGT_OP_RPAREN))
        e->pos++;
    return k;
}

static void assign_all(ggt_eval *e, char names[4][GGT_NAME], const uint8_t *lens, uint32_t k,
                       const ggt_val *v)
{
    ggt_val flat, each;
    if (k == 1) {
        ggt_val_flatten(&e->store, v, &flat);
    } else {
        ggt_val_element(&e->store, v, &each); // unpacking: any element
        ggt_val_flatten(&e->store, &each, &flat);
    }
    for (uint32_t i = 0; i < k; i++)
        ggt_scope_assign(e->scope, names[i], lens[i], &flat);
}

/* {% set ns = namespace(k=v, ...) %}: the attributes as variables. */
static void namespace_attrs(ggt_eval *e, const char *target, size_t target_len, uint32_t call_at)
{
    if (call_at + 1 >= e->n || !ggt_tok_is_name(e->src, &e->toks[call_at], "namespace") ||
        e->toks[call_at + 1].kind != GGT_TOK_OP || e->toks[call_at + 1].op != GGT_OP_LPAREN)
        return;
    ggt_eval sub = *e;
    sub.pos = call_at + 1;
    sub.report = false;
    ggt_arg args[GGT_ARGS];
    const uint32_t n = ggt_eval_args(&sub, args);
    for (uint32_t i = 0; i < n; i++) {
        if (args[i].name == UINT32_MAX)
            continue;
        const ggt_tok *kw = &e->toks[args[i].name];
        char name[GGT_NAME];
        if (target_len + 1 + kw->len > GGT_NAME)
            continue;
        memcpy(name, target, target_len);
        name[target_len] = '.';
        memcpy(name + target_len + 1, e->src + kw->at, (size_t)kw->len);
        ggt_val flat;
        ggt_val_flatten(&sub.store, &args[i].v, &flat);
        ggt_scope_assign(e->scope, name, target_len + 1 + (size_t)kw->len, &flat);
    }
}

static void statement_set(audit *a, ggt_eval *e)
{
    char names[4][GGT_NAME];
    uint8_t lens[4];
    const uint32_t k = targets(e, names, lens);
    if (at_op(e, GGT_OP_ASSIGN)) {
        e->pos++;
        const uint32_t value_at = e->pos;
        ggt_val v;
        if (ggt_eval_expr(e, &v) && k > 0) {
            assign_all(e, names, lens, k, &v);
            if (k == 1)
                namespace_attrs(e, names[0], lens[0], value_at);
        }
        read_rest(e);
        return;
    }
    body *b = push_body(a);
    if (b && k > 0) {
        memcpy(b->target, names[0], lens[0]);
        b->target_len = lens[0];
    }
    if (at_op(e, GGT_OP_PIPE)) {
        if (b)
            b->filtered = true;
        e->pos++;
        ggt_eval_filter_chain(e);
    }
    read_rest(e);
}

static void statement_for(ggt_eval *e)
{
    char names[4][GGT_NAME];
    uint8_t lens[4];
    const uint32_t k = targets(e, names, lens);
    if (at_name(e, "in")) {
        e->pos++;
        ggt_val iter, each;
        if (ggt_eval_expr(e, &iter) && k > 0) {
            if (iter.kind == GGT_V_LIST && k > 1) {
                // for a, b in [(x, y), ...]: a takes each first item, b each second.
                for (uint32_t j = 0; j < iter.n; j++) {
                    const ggt_val *item = &e->store.elems[iter.elems + j];
                    for (uint32_t i = 0; i < k; i++) {
                        ggt_val flat;
                        if (item->kind == GGT_V_LIST && i < item->n)
                            ggt_val_flatten(&e->store, &e->store.elems[item->elems + i], &flat);
                        else
                            ggt_val_element(&e->store, item, &each), ggt_val_flatten(&e->store, &each, &flat);
                        ggt_scope_assign(e->scope, names[i], lens[i], &flat);
                    }
                }
            } else {
                ggt_val_element(&e->store, &iter, &each);
                assign_all(e, names, lens, k, &each);
            }
        }
    }
    read_rest(e);
}

static void statement_macro(audit *a, ggt_eval *e)
{
    ggt_macro *m = NULL;
    if (e->pos < e->n && e->toks[e->pos].kind == GGT_TOK_NAME) {
        const ggt_tok *t = &e->toks[e->pos++];
        m = ggt_scope_macro(e->scope, (const char *)e->src + t->at, (size_t)t->len, true);
    }
    if (at_op(e, GGT_OP_LPAREN)) {
        const uint32_t close = e->toks[e->pos].match;
        const uint32_t end = close == GGT_NO_MATCH ? e->n : close;
        e->pos++;
        uint32_t k = 0;
        while (e->pos < end) {
            const ggt_tok *t = &e->toks[e->pos];
            if (t->kind != GGT_TOK_NAME) {
                e->pos++;
                continue;
            }
            e->pos++;
            const bool kept = m && k < GGT_PARAMS && t->len <= GGT_PARAM_NAME;
            if (kept) {
                memcpy(m->params[k], e->src + t->at, (size_t)t->len);
                m->param_len[k] = (uint8_t)t->len;
                m->n_params = (uint8_t)(k + 1 > m->n_params ? k + 1 : m->n_params);
            }
            if (at_op(e, GGT_OP_ASSIGN)) {
                e->pos++;
                ggt_val v, flat;
                if (ggt_eval_expr(e, &v)) {
                    ggt_val_flatten(&e->store, &v, &flat);
                    ggt_scope_assign(e->scope, (const char *)e->src + t->at, (size_t)t->len, &flat);
                }
            }
            k++;
            while (e->pos < end && !at_op(e, GGT_OP_COMMA))
                e->pos++;
        }
        e->pos = end < e->n ? end + 1 : e->n;
    }
    body *b = push_body(a);
    if (b && m) {
        b->macro = true;
        memcpy(b->target, m->name, m->len);
        b->target_len = m->len;
    }
    read_rest(e);
}

static void end_body(audit *a, ggt_eval *e)
{
    ggt_val v;
    body *b = pop_body(a, &v);
    if (!b || b->target_len == 0)
        return;
    if (!b->macro) {
        ggt_scope_assign(e->scope, b->target, b->target_len, &v);
        return;
    }
    ggt_macro *m = ggt_scope_macro(e->scope, b->target, b->target_len, false);
    if (!m)
        return;
    ggt_val joined = v;
    if (m->has_out)
        ggt_val_join(NULL, &m->out, &v, &joined);
    if (!m->has_out || memcmp(&joined, &m->out, sizeof joined) != 0) {
        m->out = joined;
        m->has_out = true;
        e->scope->changed = true;
    }
}

static void statement_with(ggt_eval *e)
{
    while (e->pos + 1 < e->n && e->toks[e->pos].kind == GGT_TOK_NAME &&
           e->toks[e->pos + 1].kind == GGT_TOK_OP && e->toks[e->pos + 1].op == GGT_OP_ASSIGN) {
        const ggt_tok *t = &e->toks[e->pos];
        e->pos += 2;
        ggt_val v, flat;
        if (!ggt_eval_expr(e, &v))
            break;
        ggt_val_flatten(&e->store, &v, &flat);
        ggt_scope_assign(e->scope, (const char *)e->src + t->at, (size_t)t->len, &flat);
        if (!at_op(e, GGT_OP_COMMA))
            break;
        e->pos++;
    }
    read_rest(e);
}

static void read_tag(audit *a, const ggt_tag *tag)
{
    body_text(a, tag->text_at, tag->at);
    if (tag->comment)
        return;
    if (tag->raw) {
        body_text(a, tag->raw_at, tag->raw_end);
        return;
    }
    if (tag->cut)
        add_finding(a, tag->at, "tag", "has more than 4096 tokens, the rest are not read as expressions", "",
                    0, false);
    const uint32_t failures = a->scope->failures;
    ggt_eval e = {a->src, a->toks, tag->n_tokens, 0, 0, {a->elems, 0, MAX_ELEMS}, a->scope, a->report,
               add_finding, a};
    if (!tag->block) {
        ggt_val v;
        if (ggt_eval_expr(&e, &v))
            body_piece(a, &v, &e.store);
        read_rest(&e);
    } else if (e.n == 0 || a->toks[0].kind != GGT_TOK_NAME) {
        read_rest(&e);
    } else {
        e.pos = 1;
        const ggt_tok *t = &a->toks[0];
        if (ggt_tok_is_name(a->src, t, "set"))
            statement_set(a, &e);
        else if (ggt_tok_is_name(a->src, t, "for"))
            statement_for(&e);
        else if (ggt_tok_is_name(a->src, t, "macro"))
            statement_macro(a, &e);
        else if (ggt_tok_is_name(a->src, t, "with"))
            statement_with(&e);
        else if (ggt_tok_is_name(a->src, t, "filter"))
            ggt_eval_filter_chain(&e), read_rest(&e);
        else if (ggt_tok_is_name(a->src, t, "endset") || ggt_tok_is_name(a->src, t, "endmacro"))
            end_body(a, &e), read_rest(&e);
        else
            read_rest(&e);
    }
    if (a->scope->failures != failures && !a->full_reported++)
        add_finding(a, tag->at, "tag", "assigns more variables than are followed, taken as data", "", 0,
                    false);
}

/* One read of the whole template. */
static void walk(audit *a)
{
    ggt_lexer lx;
    ggt_lexer_init(&lx, a->src, a->len, a->toks, a->open, MAX_TOKENS, on_token, a);
    a->n_bodies = a->skipped_bodies = a->full_reported = 0;
    ggt_tag tag;
    while (ggt_next_tag(&lx, &tag))
        read_tag(a, &tag);
    body_text(a, tag.text_at, a->len);
}

/* ==== The API ==== */

bool ggt_is_chat_template_key(ggt_str key)
{
    static const char base[] = "tokenizer.chat_template";
    const size_t n = sizeof base - 1;
    if (key.len < n || memcmp(key.ptr, base, n) != 0)
        return false;
    return key.len == n || (key.len > n + 1 && key.ptr[n] == '.');
}

bool ggt_audit(const void *bytes, uint64_t len, ggt_found found, void *ctx)
{
    audit a = {0};
    a.src = bytes;
    a.len = len;
    a.toks = malloc(MAX_TOKENS * sizeof *a.toks);
    a.open = malloc(MAX_TOKENS * sizeof *a.open);
    a.elems = malloc(MAX_ELEMS * sizeof *a.elems);
    a.scope = calloc(1, sizeof *a.scope);
    bool ok = a.toks && a.open && a.elems && a.scope;
    if (ok) {
        for (int pass = 0; pass < COLLECT_PASSES; pass++) {
            a.scope->changed = false;
            walk(&a);
            if (!a.scope->changed)
                break;
        }
        a.report = true;
        walk(&a);
        ok = !a.failed;
    }
    if (ok && a.n_found > 0) {
        qsort(a.found, a.n_found, sizeof *a.found, by_offset);
        for (uint32_t i = 0; i < a.n_found; i++) {
            const finding *f = &a.found[i];
            if (i > 0 && same_finding(f, &a.found[i - 1]))
                continue;
            const ggt_finding out = {f->at, f->what, f->how, {f->name, f->name_len}, f->source, f->cut};
            found(ctx, &out);
        }
        if (a.dropped) {
            char more[64];
            const int n = snprintf(more, sizeof more, "%llu more findings", (unsigned long long)a.dropped);
            const ggt_finding out = {a.found[a.n_found - 1].at, "template", "has", {more, (uint64_t)n},
                                              true, false};
            found(ctx, &out);
        }
    }
    free(a.toks);
    free(a.open);
    free(a.elems);
    free(a.scope);
    free(a.found);
    return ok;
}
