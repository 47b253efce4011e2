/*
 * Values as the chat-template audit knows them (ggt_i.h): what the
 * operators and filters Jinja offers make of them. Where a result cannot be
 * worked out exactly, it is widened to what it may be: every function here
 * errs towards "may begin with '_'" for values made of constants, and
 * towards "data" for values that come from what the template is given.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ggt_i.h"

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

static void clear(ggt_val *v, uint8_t kind)
{
    memset(v, 0, sizeof *v);
    v->kind = kind;
}

static void set_witness(ggt_val *v, const char *w, size_t n)
{
    v->wlen = (uint8_t)min_size(n, GGT_WITNESS);
    memcpy(v->witness, w, v->wlen);
}

static void or_flags(ggt_val *out, const ggt_val *a)
{
    out->data |= a->data;
    out->built |= a->built;
}

void ggt_val_str(ggt_val *v, const char *s, size_t n)
{
    clear(v, GGT_V_STR);
    v->plen = (uint8_t)min_size(n, GGT_PREFIX);
    v->complete = n <= GGT_PREFIX;
    memcpy(v->prefix, s, v->plen);
}

void ggt_val_int(ggt_val *v, int64_t i)
{
    clear(v, GGT_V_INT);
    v->i = i;
}

void ggt_val_unknown(ggt_val *v, bool data)
{
    clear(v, GGT_V_STR);
    v->may_empty = true;
    v->data = data;
    v->built = !data;
}

void ggt_val_other(ggt_val *v, bool data)
{
    clear(v, GGT_V_OTHER);
    v->data = data;
}

void ggt_val_as_str(const ggt_val *v, ggt_val *out)
{
    if (v->kind == GGT_V_STR) {
        *out = *v;
        return;
    }
    if (v->kind == GGT_V_INT) {
        char buf[24];
        const int n = snprintf(buf, sizeof buf, "%" PRId64, v->i);
        ggt_val_str(out, buf, (size_t)n);
    } else if (v->kind == GGT_V_LIST) {
        ggt_val_str(out, "[", 1);
        out->complete = false;
    } else {
        ggt_val_unknown(out, v->data); // None, True, a float, a dict: not '_'
        out->may_empty = false;
    }
    or_flags(out, v);
}

/* As a string, whether it may begin with '_', with a witness. */
static bool str_may_begin_under(const ggt_val *s, const char **w, size_t *wn)
{
    if (s->plen) {
        *w = s->prefix, *wn = s->plen;
        return s->prefix[0] == '_';
    }
    *w = s->witness, *wn = s->wlen;
    return !s->complete && s->may_under;
}

bool ggt_val_may_begin_under(const ggt_val *v, const char **w, size_t *wn)
{
    return v->kind == GGT_V_STR && str_may_begin_under(v, w, wn);
}

/* Marks out as a value that may begin with '_', with v's witness, when v
 * used as a string may. */
static void may_begin_under_as(ggt_val *out, const ggt_val *v)
{
    const char *w;
    size_t wn;
    if (ggt_val_may_begin_under(v, &w, &wn)) {
        out->may_under = true;
        set_witness(out, w, wn);
    }
}

static bool str_may_be_empty(const ggt_val *s)
{
    return s->plen == 0 && (s->complete || s->may_empty);
}

/* ==== Joining and concatenating ==== */

static bool same(const ggt_val *a, const ggt_val *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case GGT_V_INT: return a->i == b->i;
    case GGT_V_LIST: return a->elems == b->elems && a->n == b->n;
    case GGT_V_STR:
        return a->complete && b->complete && a->plen == b->plen && memcmp(a->prefix, b->prefix, a->plen) == 0;
    default: return false;
    }
}

/* A list or other non-string, as one summary: whether an element may
 * begin with '_'. */
void ggt_val_flatten(const ggt_store *st, const ggt_val *v, ggt_val *out)
{
    if (v->kind != GGT_V_LIST) {
        *out = *v;
        return;
    }
    ggt_val_other(out, v->data);
    out->built = v->built;
    for (uint32_t i = 0; i < v->n; i++) {
        const ggt_val *e = &st->elems[v->elems + i];
        const char *w;
        size_t wn;
        if (!out->may_under &&
            (ggt_val_may_begin_under(e, &w, &wn) || (e->kind != GGT_V_STR && e->may_under))) {
            out->may_under = true;
            if (e->kind == GGT_V_STR)
                set_witness(out, w, wn);
            else
                set_witness(out, e->witness, e->wlen);
        }
        or_flags(out, e);
    }
}

void ggt_val_join(const ggt_store *st, const ggt_val *a, const ggt_val *b, ggt_val *out)
{
    if (same(a, b)) {
        *out = *a;
        or_flags(out, b);
        return;
    }
    const bool a_str = a->kind == GGT_V_STR || a->kind == GGT_V_INT;
    const bool b_str = b->kind == GGT_V_STR || b->kind == GGT_V_INT;
    if (!a_str || !b_str) {
        if (a_str != b_str) { // a string or a list: keep what the string may be
            const ggt_val *s = a_str ? a : b, *l = a_str ? b : a;
            ggt_val fl;
            ggt_val_flatten(st, l, &fl);
            ggt_val_as_str(s, out);
            out->complete = false;
            out->plen = 0;
            const char *w;
            size_t wn;
            if (str_may_begin_under(s, &w, &wn)) {
                out->may_under = true;
                set_witness(out, w, wn);
            }
            out->may_empty = true;
            or_flags(out, &fl);
            return;
        }
        ggt_val fa, fb;
        ggt_val_flatten(st, a, &fa);
        ggt_val_flatten(st, b, &fb);
        *out = fa;
        if (!out->may_under && fb.may_under) {
            out->may_under = true;
            set_witness(out, fb.witness, fb.wlen);
        }
        or_flags(out, &fb);
        return;
    }
    ggt_val sa, sb;
    ggt_val_as_str(a, &sa);
    ggt_val_as_str(b, &sb);
    size_t lcp = 0;
    while (lcp < sa.plen && lcp < sb.plen && sa.prefix[lcp] == sb.prefix[lcp])
        lcp++;
    clear(out, GGT_V_STR);
    out->plen = (uint8_t)lcp;
    memcpy(out->prefix, sa.prefix, lcp);
    if (lcp == 0) {
        const ggt_val *sides[2] = {&sa, &sb};
        for (int i = 0; i < 2; i++) {
            const char *w;
            size_t wn;
            if (!out->may_under && str_may_begin_under(sides[i], &w, &wn)) {
                out->may_under = true;
                set_witness(out, w, wn);
            }
            out->may_empty |= str_may_be_empty(sides[i]);
        }
    }
    or_flags(out, &sa);
    or_flags(out, &sb);
}

void ggt_val_concat(const ggt_val *a, const ggt_val *b, ggt_val *out)
{
    ggt_val sa, sb;
    ggt_val_as_str(a, &sa);
    ggt_val_as_str(b, &sb);
    if (sa.complete) {
        if (sa.plen == 0) {
            *out = sb;
        } else {
            *out = sa;
            const size_t room = GGT_PREFIX - sa.plen;
            const size_t n = min_size(sb.plen, room);
            memcpy(out->prefix + sa.plen, sb.prefix, n);
            out->plen = (uint8_t)(sa.plen + n);
            out->complete = sb.complete && sb.plen <= room;
        }
    } else {
        *out = sa;
        if (sa.plen == 0) {
            const char *w;
            size_t wn;
            if (!sa.may_under && sa.may_empty && str_may_begin_under(&sb, &w, &wn)) {
                out->may_under = true;
                set_witness(out, w, wn);
            }
            out->may_empty = sa.may_empty && str_may_be_empty(&sb);
        }
    }
    or_flags(out, &sa);
    or_flags(out, &sb);
}

/* ==== Lists ==== */

void ggt_val_list(ggt_store *st, const ggt_val *items, uint32_t n, ggt_val *out)
{
    if (n <= GGT_LIST_MAX && st->cap - st->n >= n) {
        clear(out, GGT_V_LIST);
        out->elems = st->n;
        out->n = (uint8_t)n;
        memcpy(st->elems + st->n, items, n * sizeof *items);
        st->n += n;
        for (uint32_t i = 0; i < n; i++)
            or_flags(out, &items[i]);
        return;
    }
    // Too many to keep one by one: a summary of them.
    ggt_val_other(out, false);
    for (uint32_t i = 0; i < n; i++) {
        if (!out->may_under)
            may_begin_under_as(out, &items[i]);
        or_flags(out, &items[i]);
    }
}

/* The code point starting at p (n bytes left): its length, at least 1. */
static size_t char_len(const char *p, size_t n)
{
    const size_t k = ggt_utf8_len((const uint8_t *)p, n);
    return k ? k : 1;
}

void ggt_val_element(const ggt_store *st, const ggt_val *v, ggt_val *out)
{
    if (v->kind == GGT_V_LIST) {
        if (v->n == 0) {
            ggt_val_other(out, v->data);
            return;
        }
        *out = st->elems[v->elems];
        for (uint32_t i = 1; i < v->n; i++) {
            ggt_val j;
            ggt_val_join(st, out, &st->elems[v->elems + i], &j);
            *out = j;
        }
        return;
    }
    if (v->kind == GGT_V_STR && v->complete && v->plen > 0 && v->plen == char_len(v->prefix, v->plen)) {
        *out = *v; // a string of one character
        return;
    }
    ggt_val_unknown(out, v->data);
    out->built = v->built;
    out->may_empty = false;
    if (v->kind == GGT_V_STR && memchr(v->prefix, '_', v->plen)) {
        out->may_under = true;
        set_witness(out, "_", 1);
    } else if (v->kind != GGT_V_INT && (v->kind != GGT_V_STR || !v->complete) && v->may_under) {
        out->may_under = true;
        set_witness(out, v->witness, v->wlen);
    }
}

/* ==== Arithmetic and formatting ==== */

void ggt_val_mul(const ggt_val *a, const ggt_val *b, ggt_val *out)
{
    if (a->kind == GGT_V_INT && b->kind == GGT_V_INT) {
        int64_t r;
        if (__builtin_mul_overflow(a->i, b->i, &r))
            ggt_val_other(out, false);
        else
            ggt_val_int(out, r);
        return;
    }
    const ggt_val *s = a->kind == GGT_V_STR ? a : b->kind == GGT_V_STR ? b : NULL;
    const ggt_val *k = s == a ? b : a;
    if (!s || k->kind == GGT_V_STR || k->kind == GGT_V_LIST) {
        ggt_val_other(out, a->data || b->data);
        return;
    }
    *out = *s;
    if (k->kind == GGT_V_INT && s->complete) {
        if (k->i <= 0) {
            ggt_val_str(out, "", 0);
        } else {
            size_t n = 0;
            for (int64_t i = 0; i < k->i && n < GGT_PREFIX && s->plen > 0; i++) {
                const size_t m = min_size(s->plen, GGT_PREFIX - n);
                memcpy(out->prefix + n, s->prefix, m);
                n += m;
            }
            out->plen = (uint8_t)n;
            out->complete = (uint64_t)s->plen * (uint64_t)k->i <= GGT_PREFIX;
        }
    } else if (k->kind != GGT_V_INT) {
        out->complete = false; // repeated an unknown number of times
        out->may_empty = out->plen == 0 || out->may_empty;
    }
    or_flags(out, a);
    or_flags(out, b);
}

/* Appends text to the string being formatted. */
static void append(ggt_val *acc, const ggt_val *piece)
{
    ggt_val r;
    ggt_val_concat(acc, piece, &r);
    *acc = r;
}

static void append_bytes(ggt_val *acc, const char *s, size_t n)
{
    ggt_val p;
    ggt_val_str(&p, s, n);
    append(acc, &p);
}

/* Something formatted that is not worked out: may it begin with '_'? */
static void append_unknown(ggt_val *acc, bool may_under, bool data)
{
    ggt_val p;
    ggt_val_unknown(&p, data);
    p.may_empty = false;
    if (may_under) {
        p.may_under = true;
        set_witness(&p, "_", 1);
    }
    append(acc, &p);
}

/* Code points in s, at most limit of them: their byte length. */
static size_t chars_bytes(const char *s, size_t n, int64_t limit)
{
    size_t o = 0;
    for (int64_t k = 0; k < limit && o < n; k++)
        o += char_len(s + o, n - o);
    return o < n ? o : n;
}

/* chr(cp), as %c makes it. */
static void encode_cp(int64_t cp, ggt_val *out)
{
    if (cp < 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        ggt_val_other(out, false); // Python refuses it
        return;
    }
    uint8_t b[4];
    const size_t n = ggt_utf8_encode((uint32_t)cp, b);
    ggt_val_str(out, (const char *)b, n);
}

/* One conversion specifier of a % format: %[(key)][flags][width][.precision][length]conv. */
typedef struct conversion {
    bool left, zero;    // the flags '-' and '0'
    bool keyed;         // %(key)s: takes a mapping's value, not followed
    int64_t width;      // 0: none
    int64_t precision;  // -1: none
    char conv;          // s, r, a, c, d, i, u, x, X, o, or one not followed
} conversion;

/* A '*' width or precision: the next argument, when it is a number. */
static int64_t star_arg(const ggt_val *args, uint32_t n_args, uint32_t *next)
{
    const int64_t v = *next < n_args && args[*next].kind == GGT_V_INT ? args[*next].i : 0;
    (*next)++;
    return v;
}

/* Digits of a width or precision, added to v (which stops growing past
 * 100000); *j moves past them. */
static int64_t read_number(const char *f, size_t n, size_t *j, int64_t v)
{
    for (; *j < n && f[*j] >= '0' && f[*j] <= '9' && v < 100000; (*j)++)
        v = v * 10 + (f[*j] - '0');
    return v;
}

/* Reads the specifier after the '%' at f[*at], taking '*' widths and
 * precisions from args at *next; *at moves past its conversion character.
 * False when the format ends before that character (Python refuses it). */
static bool read_conversion(const char *f, size_t n, size_t *at, const ggt_val *args, uint32_t n_args,
                            uint32_t *next, conversion *c)
{
    *c = (conversion){.precision = -1};
    size_t j = *at + 1;
    if (j < n && f[j] == '(') { // %(name)s: a mapping, not followed
        const char *close = memchr(f + j, ')', n - j);
        j = close ? (size_t)(close - f) + 1 : n;
        c->keyed = true;
    }
    for (; j < n && strchr("-+ #0", f[j]); j++) {
        c->left |= f[j] == '-';
        c->zero |= f[j] == '0';
    }
    if (j < n && f[j] == '*') {
        c->width = star_arg(args, n_args, next);
        j++;
    }
    c->width = read_number(f, n, &j, c->width);
    if (j < n && f[j] == '.') {
        c->precision = 0;
        j++;
        if (j < n && f[j] == '*') {
            c->precision = star_arg(args, n_args, next);
            j++;
        }
        c->precision = read_number(f, n, &j, c->precision);
    }
    for (; j < n && strchr("hlL", f[j]); j++) {
    }
    if (j >= n)
        return false;
    c->conv = f[j];
    *at = j + 1;
    return true;
}

/* The printf format of an integer conversion: %x, %X, %o, else decimal. */
static const char *int_format(char conv)
{
    switch (conv) {
    case 'x': return "%" PRIx64;
    case 'X': return "%" PRIX64;
    case 'o': return "%" PRIo64;
    default: return "%" PRId64;
    }
}

/* What conversion c makes of arg; a string, or a value Python refuses. */
static void convert(const conversion *c, const ggt_val *arg, ggt_val *piece)
{
    char buf[32];
    switch (c->conv) {
    case 's':
        ggt_val_as_str(arg, piece);
        if (c->precision >= 0 && piece->complete)
            piece->plen = (uint8_t)chars_bytes(piece->prefix, piece->plen, c->precision);
        break;
    case 'r': case 'a':
        if (arg->kind == GGT_V_STR) {
            ggt_val_str(piece, "'", 1); // repr() of a string starts with a quote
            piece->complete = false;
            or_flags(piece, arg);
        } else {
            ggt_val_as_str(arg, piece);
        }
        break;
    case 'c':
        if (arg->kind == GGT_V_INT)
            encode_cp(arg->i, piece);
        else
            *piece = *arg; // a one-character string, or Python refuses it
        break;
    case 'd': case 'i': case 'u': case 'x': case 'X': case 'o':
        if (arg->kind == GGT_V_INT) {
            const int k = snprintf(buf, sizeof buf, int_format(c->conv), arg->i);
            ggt_val_str(piece, buf, (size_t)k);
        } else {
            ggt_val_unknown(piece, arg->data); // a number: never '_'
            piece->may_empty = false;
            piece->built = false;
        }
        break;
    default: // floats, and what Python refuses
        ggt_val_unknown(piece, arg->data);
        piece->may_empty = false;
        piece->built = false;
    }
}

/* Pads a piece known whole to the conversion's width: spaces (or zeros
 * for a number with the '0' flag) before it, or after it with '-'. */
static void pad_to_width(const conversion *c, ggt_val *piece)
{
    if (c->width <= 0 || !piece->complete || piece->plen >= c->width || piece->plen >= GGT_PREFIX)
        return;
    const size_t pad = min_size((size_t)c->width - piece->plen, GGT_PREFIX);
    char spaces[GGT_PREFIX];
    memset(spaces, c->zero && strchr("diuxXo", c->conv) ? '0' : ' ', pad);
    ggt_val p;
    ggt_val_str(&p, spaces, pad);
    ggt_val r;
    if (c->left)
        ggt_val_concat(piece, &p, &r);
    else
        ggt_val_concat(&p, piece, &r);
    *piece = r;
}

/* printf-style formatting of fmt with args, as Python's str % does it for
 * the conversions a name can be built with (%s %c %d %x %o %%). */
static void format_args(const ggt_val *fmt, const ggt_val *args, uint32_t n_args, bool mapping, ggt_val *out)
{
    ggt_val_str(out, "", 0);
    const char *f = fmt->prefix;
    const size_t n = fmt->plen;
    uint32_t next = 0;
    bool any_data = fmt->data;
    for (uint32_t i = 0; i < n_args; i++)
        any_data |= args[i].data;
    size_t i = 0;
    while (i < n) {
        const char *pct = memchr(f + i, '%', n - i);
        const size_t lit = pct ? (size_t)(pct - f) - i : n - i;
        append_bytes(out, f + i, lit);
        i += lit;
        if (!pct)
            break;
        if (i + 1 < n && f[i + 1] == '%') {
            append_bytes(out, "%", 1);
            i += 2;
            continue;
        }
        conversion c;
        if (!read_conversion(f, n, &i, args, n_args, &next, &c)) {
            ggt_val_other(out, any_data);
            return;
        }
        const ggt_val *arg = !c.keyed && !mapping && next < n_args ? &args[next++] : NULL;
        if (c.keyed || mapping || !arg) {
            append_unknown(out, !any_data, any_data);
            continue;
        }
        ggt_val piece;
        convert(&c, arg, &piece);
        if (piece.kind != GGT_V_STR) {
            ggt_val_other(out, any_data);
            return;
        }
        pad_to_width(&c, &piece);
        append(out, &piece);
    }
    if (!fmt->complete) { // the rest of the format is not known
        append_unknown(out, fmt->may_under || !fmt->data, fmt->data);
    }
    out->data |= any_data;
}

void ggt_val_mod(const ggt_store *st, const ggt_val *a, const ggt_val *b, ggt_val *out)
{
    if (a->kind != GGT_V_STR) {
        ggt_val_other(out, a->data || b->data); // a number
        return;
    }
    if (b->kind == GGT_V_LIST) {
        format_args(a, st->elems + b->elems, b->n, false, out);
    } else if (b->kind == GGT_V_OTHER) {
        format_args(a, NULL, 0, true, out); // a dict, or a summary
        or_flags(out, b);
    } else {
        format_args(a, b, 1, false, out);
    }
}

/* ==== Filters ==== */

static const ggt_val *positional(const ggt_arg *args, uint32_t n, uint32_t k)
{
    for (uint32_t i = 0; i < n; i++) {
        if (args[i].name == UINT32_MAX && !args[i].star && k-- == 0)
            return &args[i].v;
    }
    return NULL;
}

static const ggt_val *keyword(const ggt_arg *args, uint32_t n, const uint8_t *src, const ggt_tok *toks,
                              const char *name)
{
    for (uint32_t i = 0; i < n; i++) {
        if (args[i].name != UINT32_MAX && ggt_tok_is_name(src, &toks[args[i].name], name))
            return &args[i].v;
    }
    return NULL;
}

static bool is(const char *name, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(name, word, len) == 0;
}

static bool in_list(const char *name, size_t len, const char *const *words)
{
    for (; *words; words++) {
        if (is(name, len, *words))
            return true;
    }
    return false;
}

/* The string with leading whitespace removed from its known bytes. */
static void lstrip(const ggt_val *s, ggt_val *out)
{
    *out = *s;
    size_t k = 0, n;
    while (k < s->plen && (n = ggt_space_len((const uint8_t *)s->prefix + k, s->plen - k)) > 0)
        k += n;
    if (k == 0)
        return;
    out->plen = (uint8_t)(s->plen - k);
    memmove(out->prefix, s->prefix + k, out->plen);
    if (out->plen == 0 && !s->complete) {
        out->may_empty = true;
        out->may_under = s->may_under;
        set_witness(out, s->witness, s->wlen);
    }
}

/* A result nothing is worked out of, beyond whether it may begin with '_':
 * it may when the input may, or when an '_' is anywhere in what is known. */
static void widened(const ggt_val *in, ggt_val *out)
{
    ggt_val s;
    ggt_val_as_str(in, &s);
    ggt_val_unknown(out, in->data);
    out->built = !in->data;
    const char *w;
    size_t wn;
    if (str_may_begin_under(&s, &w, &wn)) {
        out->may_under = true;
        set_witness(out, w, wn);
    } else if (memchr(s.prefix, '_', s.plen) || (!s.complete && s.may_under)) {
        out->may_under = true;
        set_witness(out, "_", 1);
    }
}

static void map_case(const ggt_val *in, const char *name, size_t len, ggt_val *out)
{
    ggt_val_as_str(in, out);
    bool start = true;
    for (size_t i = 0; i < out->plen; i++) {
        char c = out->prefix[i];
        const bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z';
        bool up;
        if (is(name, len, "upper"))
            up = true;
        else if (is(name, len, "lower"))
            up = false;
        else if (is(name, len, "capitalize"))
            up = i == 0;
        else // title
            up = start;
        if (up && lower)
            c = (char)(c - 32);
        else if (!up && upper)
            c = (char)(c + 32);
        out->prefix[i] = c;
        start = !(lower || upper);
    }
}

static void replace(const ggt_val *in, const ggt_val *old, const ggt_val *new_, ggt_val *out)
{
    if (in->kind != GGT_V_STR || !in->complete || !old || !new_ || old->kind != GGT_V_STR || !old->complete ||
        new_->kind != GGT_V_STR || !new_->complete || old->plen == 0) {
        ggt_val j;
        ggt_val_unknown(&j, false);
        if (new_)
            ggt_val_concat(in, new_, &j); // either may come first
        widened(&j, out);
        or_flags(out, in);
        return;
    }
    char buf[GGT_PREFIX];
    size_t o = 0;
    bool cut = false;
    for (size_t i = 0; i < in->plen && !cut;) {
        if (in->plen - i >= old->plen && memcmp(in->prefix + i, old->prefix, old->plen) == 0) {
            cut = GGT_PREFIX - o < new_->plen;
            const size_t m = min_size(new_->plen, GGT_PREFIX - o);
            memcpy(buf + o, new_->prefix, m);
            o += m, i += old->plen;
        } else {
            cut = o == GGT_PREFIX;
            if (!cut)
                buf[o++] = in->prefix[i++];
        }
    }
    ggt_val_str(out, buf, o);
    out->complete = !cut;
    or_flags(out, in);
}

static void reverse(ggt_store *st, const ggt_val *in, ggt_val *out)
{
    if (in->kind == GGT_V_LIST) {
        ggt_val items[GGT_LIST_MAX];
        for (uint32_t i = 0; i < in->n; i++)
            items[i] = st->elems[in->elems + in->n - 1 - i];
        ggt_val_list(st, items, in->n, out);
        return;
    }
    if (in->kind != GGT_V_STR || !in->complete) {
        widened(in, out);
        return;
    }
    char buf[GGT_PREFIX];
    size_t o = in->plen;
    for (size_t i = 0; i < in->plen;) {
        const size_t k = char_len(in->prefix + i, in->plen - i);
        o -= k;
        memcpy(buf + o, in->prefix + i, k);
        i += k;
    }
    ggt_val_str(out, buf, in->plen);
    or_flags(out, in);
}

/* A list whose elements are those of in (a list, or a string's
 * characters), known only by whether one may begin with '_'. */
static void summary_of_elements(const ggt_store *st, const ggt_val *in, ggt_val *out)
{
    if (in->kind == GGT_V_LIST || in->kind == GGT_V_OTHER) {
        ggt_val_flatten(st, in, out);
        out->kind = GGT_V_OTHER;
        return;
    }
    ggt_val e;
    ggt_val_element(st, in, &e);
    ggt_val_other(out, e.data);
    out->built = e.built;
    may_begin_under_as(out, &e);
}

static void chars(ggt_store *st, const ggt_val *in, ggt_val *out)
{
    if (in->kind == GGT_V_LIST) {
        *out = *in;
        return;
    }
    if (in->kind != GGT_V_STR || !in->complete) {
        summary_of_elements(st, in, out);
        return;
    }
    ggt_val items[GGT_LIST_MAX + 1];
    uint32_t n = 0;
    for (size_t i = 0; i < in->plen && n <= GGT_LIST_MAX;) {
        const size_t k = char_len(in->prefix + i, in->plen - i);
        ggt_val_str(&items[n++], in->prefix + i, k);
        or_flags(&items[n - 1], in);
        i += k;
    }
    ggt_val_list(st, items, n, out);
}

static void join(ggt_store *st, const ggt_val *in, const ggt_val *sep, ggt_val *out)
{
    ggt_val list;
    chars(st, in, &list);
    if (list.kind != GGT_V_LIST) {
        // Elements known only as a summary: the first one's first character
        // comes first (or the separator's, after empty ones).
        ggt_val e, j;
        ggt_val_element(st, &list, &e);
        if (sep)
            ggt_val_join(st, &e, sep, &j);
        else
            j = e;
        ggt_val_unknown(out, j.data);
        out->built = j.built;
        may_begin_under_as(out, &j);
        or_flags(out, in);
        return;
    }
    ggt_val_str(out, "", 0);
    for (uint32_t i = 0; i < list.n; i++) {
        if (i > 0 && sep)
            append(out, sep);
        append(out, &st->elems[list.elems + i]);
    }
    or_flags(out, in);
}

static void first_or_last(ggt_store *st, const ggt_val *in, bool last, ggt_val *out)
{
    if (in->kind == GGT_V_LIST) {
        if (in->n == 0)
            ggt_val_other(out, in->data);
        else
            *out = st->elems[in->elems + (last ? in->n - 1 : 0)];
        return;
    }
    if (in->kind == GGT_V_STR && in->plen > 0 && (!last || in->complete)) {
        size_t at = 0, k = char_len(in->prefix, in->plen);
        if (last) {
            for (size_t i = 0; i < in->plen; i += k) {
                k = char_len(in->prefix + i, in->plen - i);
                at = i;
            }
        }
        ggt_val_str(out, in->prefix + at, k);
        or_flags(out, in);
        return;
    }
    ggt_val_element(st, in, out);
}

/* `in|format(args)`: str % with the positional arguments; keyword and
 * starred ones make it a mapping's, which is not followed. */
static void format_filter(const ggt_val *in, const ggt_arg *args, uint32_t n_args, ggt_val *out)
{
    ggt_val fmt;
    ggt_val_as_str(in, &fmt);
    ggt_val pos[GGT_ARGS];
    uint32_t n = 0;
    bool mapping = false;
    for (uint32_t i = 0; i < n_args; i++) {
        if (args[i].name != UINT32_MAX || args[i].star)
            mapping = true;
        else
            pos[n++] = args[i].v;
    }
    format_args(&fmt, pos, n, mapping, out);
}

/* The filters worked out one by one (format, join, first, last, the case
 * filters, replace, reverse, list, default); false when name is none. */
static bool exact_filter(ggt_store *st, const char *name, size_t len, const ggt_val *in, const ggt_arg *args,
                         uint32_t n_args, const uint8_t *src, const ggt_tok *toks, ggt_val *out)
{
    if (is(name, len, "format")) {
        format_filter(in, args, n_args, out);
    } else if (is(name, len, "join")) {
        const ggt_val *sep = positional(args, n_args, 0);
        if (!sep)
            sep = keyword(args, n_args, src, toks, "d");
        if (positional(args, n_args, 1) || keyword(args, n_args, src, toks, "attribute"))
            ggt_val_unknown(out, true); // the elements' attributes
        else
            join(st, in, sep, out);
    } else if (is(name, len, "first") || is(name, len, "last")) {
        first_or_last(st, in, is(name, len, "last"), out);
    } else if (is(name, len, "lower") || is(name, len, "upper") || is(name, len, "capitalize") ||
               is(name, len, "title")) {
        map_case(in, name, len, out);
    } else if (is(name, len, "replace")) {
        ggt_val s;
        ggt_val_as_str(in, &s);
        replace(&s, positional(args, n_args, 0), positional(args, n_args, 1), out);
    } else if (is(name, len, "reverse")) {
        reverse(st, in, out);
    } else if (is(name, len, "list")) {
        chars(st, in, out);
    } else if (is(name, len, "default") || is(name, len, "d")) {
        const ggt_val *alt = positional(args, n_args, 0);
        if (!alt)
            alt = keyword(args, n_args, src, toks, "default_value");
        ggt_val empty;
        ggt_val_str(&empty, "", 0);
        ggt_val_join(st, in, alt ? alt : &empty, out);
    } else {
        return false;
    }
    return true;
}

/* The other filters, known by what kind of value they make; one not known
 * here is widened. data: the input or an argument comes from data. */
static void filter_by_kind(const ggt_store *st, const char *name, size_t len, const ggt_val *in, bool data,
                           ggt_val *out)
{
    static const char *const same_text[] = {"string", "e", "escape", "forceescape", "safe", "urlencode", NULL};
    static const char *const numbers[] = {"length", "count", "wordcount", "int", "float", "abs",
                                          "round", "sum", "filesizeformat", NULL};
    static const char *const not_under[] = {"tojson", "pprint", "xmlattr", NULL};
    static const char *const elements[] = {"random", "min", "max", NULL};
    static const char *const reshaped[] = {"dictsort", "items", "batch", "slice", "groupby", "map",
                                           "select", "reject", "selectattr", "rejectattr", "sort",
                                           "unique", NULL};
    static const char *const spaced[] = {"striptags", "indent", "wordwrap", "truncate", "center",
                                         "urlize", "trim", NULL};
    if (in_list(name, len, same_text)) {
        ggt_val_as_str(in, out);
    } else if (in_list(name, len, numbers)) {
        ggt_val_other(out, data);
    } else if (in_list(name, len, not_under)) {
        ggt_val_unknown(out, data);
        out->may_empty = false;
        out->built = false;
    } else if (in_list(name, len, elements)) {
        ggt_val_element(st, in, out);
    } else if (in_list(name, len, reshaped)) {
        summary_of_elements(st, in, out);
    } else if (in_list(name, len, spaced)) {
        ggt_val s, t;
        ggt_val_as_str(in, &s);
        lstrip(&s, &t);
        widened(&t, out);
    } else if (is(name, len, "attr")) {
        ggt_val_unknown(out, true);
    } else {
        widened(in, out); // a filter not known here
    }
}

void ggt_val_filter(ggt_store *st, const char *name, size_t len, const ggt_val *in, const ggt_arg *args,
                    uint32_t n_args, const uint8_t *src, const ggt_tok *toks, ggt_val *out)
{
    bool data = in->data;
    for (uint32_t i = 0; i < n_args; i++)
        data |= args[i].v.data || args[i].star;
    if (!exact_filter(st, name, len, in, args, n_args, src, toks, out))
        filter_by_kind(st, name, len, in, data, out);
    out->data |= data;
    if (out->data)
        out->built = false;
}
