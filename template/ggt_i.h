/*
 * Private to the chat-template audit: what it knows of a value while it
 * reads a template without running it, and the expression reader.
 *
 * The audit asks one question of a name built at run time (a subscript's
 * key, an attr filter's name): may it begin with '_'? A value is known by
 * its leading bytes, exactly, and by what may follow them: a string built
 * from literals with ~, +, *, % and a few filters is known whole; one that
 * comes from the data the template is rendered with (messages, tools) is
 * not, and an undefined name renders as the empty string, so
 * `x[nothing ~ '__class__']` is '__class__'.
 */
#ifndef GGT_I_H
#define GGT_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jinja_lex.h"

#define GGT_PREFIX 64     // leading bytes of a string kept exactly
#define GGT_WITNESS 48    // bytes of a value beginning with '_' it may take
#define GGT_LIST_MAX 16   // list elements kept one by one
#define GGT_NAME 64       // the longest variable name followed
#define GGT_VARS 256      // variables followed (slots: a power of two)
#define GGT_MACROS 32
#define GGT_PARAMS 8
#define GGT_PARAM_NAME 32
#define GGT_DEPTH 24      // brackets nested deeper are not followed

typedef enum ggt_val_kind { GGT_V_STR, GGT_V_INT, GGT_V_LIST, GGT_V_OTHER } ggt_val_kind;

typedef struct ggt_val {
    uint8_t kind;       // ggt_val_kind
    bool complete;      // GGT_V_STR: the prefix is the whole string
    bool may_under;     // GGT_V_STR with nothing known: may begin with '_';
                        // GGT_V_LIST, GGT_V_OTHER: an element may
    bool may_empty;     // GGT_V_STR with nothing known: may be empty
    bool data;          // depends on what the template is rendered with
    bool built;         // made of constants in ways not followed here
    uint8_t plen, wlen;
    uint8_t n;          // GGT_V_LIST: elements, in the tag's element store
    uint32_t elems;     // GGT_V_LIST: the first one's index there
    int64_t i;          // GGT_V_INT
    char prefix[GGT_PREFIX];
    char witness[GGT_WITNESS]; // a string beginning with '_' it may be
} ggt_val;

/* ==== Values (value.c) ==== */

typedef struct ggt_store {
    ggt_val *elems;     // list elements of the tag being read
    uint32_t n, cap;
} ggt_store;

void ggt_val_str(ggt_val *v, const char *s, size_t n);
void ggt_val_int(ggt_val *v, int64_t i);
void ggt_val_unknown(ggt_val *v, bool data); // a string nothing is known of
void ggt_val_other(ggt_val *v, bool data);   // a value that is no string
/* Its text, as str() gives it (numbers in decimal, lists from "["). */
void ggt_val_as_str(const ggt_val *v, ggt_val *out);
/* Whether, used as a string, it may begin with '_'; *w (wn bytes) is such
 * a string when one is known. Numbers and lists never do. */
bool ggt_val_may_begin_under(const ggt_val *v, const char **w, size_t *wn);
/* One value that is either a or b. */
void ggt_val_join(const ggt_store *st, const ggt_val *a, const ggt_val *b, ggt_val *out);
void ggt_val_concat(const ggt_val *a, const ggt_val *b, ggt_val *out);
/* Any one of its elements, as a for loop or |first would take them. */
void ggt_val_element(const ggt_store *st, const ggt_val *v, ggt_val *out);
/* Stores a list of n values (elements cut to GGT_LIST_MAX); false when the
 * store is full, leaving a summary in out. */
void ggt_val_list(ggt_store *st, const ggt_val *items, uint32_t n, ggt_val *out);
/* What is kept of v beyond the tag (a list becomes a summary). */
void ggt_val_flatten(const ggt_store *st, const ggt_val *v, ggt_val *out);
/* a * b, a % b (printf-style formatting when a is a string). */
void ggt_val_mul(const ggt_val *a, const ggt_val *b, ggt_val *out);
void ggt_val_mod(const ggt_store *st, const ggt_val *a, const ggt_val *b, ggt_val *out);

/* An argument of a call or filter. */
typedef struct ggt_arg {
    uint32_t name;      // token of a keyword argument's name, or UINT32_MAX
    uint8_t star;       // 1: *args, 2: **kwargs
    uint32_t first, end; // its tokens
    ggt_val v;
} ggt_arg;
#define GGT_ARGS 8

/* The value of `input|NAME(args)`. */
void ggt_val_filter(ggt_store *st, const char *name, size_t name_len, const ggt_val *input,
                    const ggt_arg *args, uint32_t n_args, const uint8_t *src, const ggt_tok *toks,
                    ggt_val *out);

/* ==== Variables ==== */

typedef struct ggt_var {
    uint8_t used, len;
    char name[GGT_NAME];
    ggt_val v;
} ggt_var;

typedef struct ggt_macro {
    uint8_t len, n_params;
    char name[GGT_NAME];
    char params[GGT_PARAMS][GGT_PARAM_NAME];
    uint8_t param_len[GGT_PARAMS];
    bool has_out;
    ggt_val out;        // what it renders, as far as known
} ggt_macro;

typedef struct ggt_scope {
    ggt_var vars[GGT_VARS];
    uint32_t n_vars;
    ggt_macro macros[GGT_MACROS];
    uint32_t n_macros;
    bool full;          // an assignment could not be kept
    uint32_t failures;  // assignments not kept
    bool changed;       // this pass changed a variable
} ggt_scope;

/* The variable's value, or NULL. */
const ggt_val *ggt_scope_get(const ggt_scope *s, const char *name, size_t len);
/* Joins v into what the variable may hold. */
void ggt_scope_assign(ggt_scope *s, const char *name, size_t len, const ggt_val *v);
ggt_macro *ggt_scope_macro(ggt_scope *s, const char *name, size_t len, bool create);

/* ==== Reading expressions (eval.c) ==== */

typedef void (*ggt_report_fn)(void *ctx, uint64_t at, const char *what, const char *how,
                              const char *name, size_t name_len, bool cut);

typedef struct ggt_eval {
    const uint8_t *src;
    const ggt_tok *toks;
    uint32_t n;         // the tag's tokens
    uint32_t pos;       // the next one
    uint32_t depth;
    ggt_store store;
    ggt_scope *scope;
    bool report;        // the last pass: findings are reported
    ggt_report_fn found;
    void *ctx;
} ggt_eval;

/* Reads one expression at e->pos into v, reporting what it finds. Returns
 * false, having moved past nothing, when no expression starts there. */
bool ggt_eval_expr(ggt_eval *e, ggt_val *v);
/* The same for a filter chain after `{% filter`, applied to data. */
void ggt_eval_filter_chain(ggt_eval *e);
/* Reads a call's arguments after its '(' at e->pos (the ')' included). */
uint32_t ggt_eval_args(ggt_eval *e, ggt_arg *args);

/* The replacement fields of a str.format string: calls hit with each
 * attribute name of a field ({0.__class__} gives __class__) that begins
 * with '_'. */
void ggt_check_format(const char *s, size_t n, void (*hit)(void *ctx, const char *name, size_t len),
                      void *ctx);

#endif
