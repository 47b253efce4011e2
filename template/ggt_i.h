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

#define TV_PREFIX 64    // leading bytes of a string kept exactly
#define TV_WITNESS 48   // bytes of a value beginning with '_' it may take
#define TV_LIST_MAX 16  // list elements kept one by one
#define TV_NAME 64      // the longest variable name followed
#define TV_VARS 256     // variables followed (slots: a power of two)
#define TV_MACROS 32
#define TV_PARAMS 8
#define TV_PARAM_NAME 32
#define TV_DEPTH 24     // brackets nested deeper are not followed

typedef enum tv_kind { TV_STR, TV_INT, TV_LIST, TV_OTHER } tv_kind;

typedef struct tval {
    uint8_t kind;       // tv_kind
    bool complete;      // TV_STR: the prefix is the whole string
    bool may_under;     // TV_STR with nothing known: may begin with '_';
                        // TV_LIST, TV_OTHER: an element may
    bool may_empty;     // TV_STR with nothing known: may be empty
    bool data;          // depends on what the template is rendered with
    bool built;         // made of constants in ways not followed here
    uint8_t plen, wlen;
    uint8_t n;          // TV_LIST: elements, in the tag's element store
    uint32_t elems;     // TV_LIST: the first one's index there
    int64_t i;          // TV_INT
    char prefix[TV_PREFIX];
    char witness[TV_WITNESS]; // a string beginning with '_' it may be
} tval;

/* ==== Values (value.c) ==== */

typedef struct tstore {
    tval *elems;        // list elements of the tag being read
    uint32_t n, cap;
} tstore;

void tv_str(tval *v, const char *s, size_t n);
void tv_int(tval *v, int64_t i);
void tv_unknown(tval *v, bool data);      // a string nothing is known of
void tv_other(tval *v, bool data);        // a value that is no string
/* Its text, as str() gives it (numbers in decimal, lists from "["). */
void tv_as_str(const tval *v, tval *out);
/* Whether, used as a string, it may begin with '_'; *w (wn bytes) is such
 * a string when one is known. Numbers and lists never do. */
bool tv_may_begin_under(const tval *v, const char **w, size_t *wn);
/* One value that is either a or b. */
void tv_join(const tstore *st, const tval *a, const tval *b, tval *out);
void tv_concat(const tval *a, const tval *b, tval *out);
/* Any one of its elements, as a for loop or |first would take them. */
void tv_element(const tstore *st, const tval *v, tval *out);
/* Stores a list of n values (elements cut to TV_LIST_MAX); false when the
 * store is full, leaving a summary in out. */
void tv_list(tstore *st, const tval *items, uint32_t n, tval *out);
/* What is kept of v beyond the tag (a list becomes a summary). */
void tv_flatten(const tstore *st, const tval *v, tval *out);
/* a * b, a % b (printf-style formatting when a is a string). */
void tv_mul(const tval *a, const tval *b, tval *out);
void tv_mod(const tstore *st, const tval *a, const tval *b, tval *out);

/* An argument of a call or filter. */
typedef struct targ {
    uint32_t name;      // token of a keyword argument's name, or UINT32_MAX
    uint8_t star;       // 1: *args, 2: **kwargs
    uint32_t first, end; // its tokens
    tval v;
} targ;
#define TV_ARGS 8

/* The value of `input|NAME(args)`. */
void tv_filter(tstore *st, const char *name, size_t name_len, const tval *input, const targ *args,
               uint32_t n_args, const uint8_t *src, const jinja_tok *toks, tval *out);

/* ==== Variables ==== */

typedef struct tvar {
    uint8_t used, len;
    char name[TV_NAME];
    tval v;
} tvar;

typedef struct tmacro {
    uint8_t len, n_params;
    char name[TV_NAME];
    char params[TV_PARAMS][TV_PARAM_NAME];
    uint8_t param_len[TV_PARAMS];
    bool has_out;
    tval out;           // what it renders, as far as known
} tmacro;

typedef struct tscope {
    tvar vars[TV_VARS];
    uint32_t n_vars;
    tmacro macros[TV_MACROS];
    uint32_t n_macros;
    bool full;          // an assignment could not be kept
    uint32_t failures;  // assignments not kept
    bool changed;       // this pass changed a variable
} tscope;

/* The variable's value, or NULL. */
const tval *tscope_get(const tscope *s, const char *name, size_t len);
/* Joins v into what the variable may hold. */
void tscope_assign(tscope *s, const char *name, size_t len, const tval *v);
tmacro *tscope_macro(tscope *s, const char *name, size_t len, bool create);

/* ==== Reading expressions (eval.c) ==== */

typedef void (*tfound_fn)(void *ctx, uint64_t at, const char *what, const char *how, const char *name,
                          size_t name_len, bool cut);

typedef struct teval {
    const uint8_t *src;
    const jinja_tok *toks;
    uint32_t n;         // the tag's tokens
    uint32_t pos;       // the next one
    uint32_t depth;
    tstore store;
    tscope *scope;
    bool report;        // the last pass: findings are reported
    tfound_fn found;
    void *ctx;
} teval;

/* Reads one expression at e->pos into v, reporting what it finds. Returns
 * false, having moved past nothing, when no expression starts there. */
bool teval_expr(teval *e, tval *v);
/* The same for a filter chain after `{% filter`, applied to data. */
void teval_filter_chain(teval *e);
/* Reads a call's arguments after its '(' at e->pos (the ')' included). */
uint32_t teval_args(teval *e, targ *args);

/* The replacement fields of a str.format string: calls hit with each
 * attribute name of a field ({0.__class__} gives __class__) that begins
 * with '_'. */
void template_check_format(const char *s, size_t n, void (*hit)(void *ctx, const char *name, size_t len),
                           void *ctx);

#endif
