/*
 * Jinja's lexer for the chat-template audit: tags, tokens and string
 * literals as Jinja 3 (jinja2/lexer.py) reads them, over bytes that may be
 * anything. Every loop moves forward through the template, so lexing is
 * linear in its length; nothing is read outside [0, len).
 */
#include "jinja_lex.h"

#include <string.h>
#include <strings.h>


void ggt_lexer_init(ggt_lexer *lx, const uint8_t *src, uint64_t len, ggt_tok *toks,
                    uint32_t *open, uint32_t cap, ggt_token_fn on_token, void *ctx)
{
    *lx = (ggt_lexer){src, len, 0, toks, cap, open, on_token, ctx, false};
}

bool ggt_tok_is_name(const uint8_t *src, const ggt_tok *t, const char *word)
{
    const size_t n = strlen(word);
    return t->kind == GGT_TOK_NAME && t->len == n && memcmp(src + t->at, word, n) == 0;
}

/* ==== Characters ==== */

size_t ggt_space_len(const uint8_t *p, uint64_t n)
{
    if (n == 0)
        return 0;
    const uint8_t c = p[0];
    if ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20))
        return 1;
    if (c == 0xc2 && n >= 2 && (p[1] == 0x85 || p[1] == 0xa0))
        return 2; // U+0085, U+00A0
    if (n < 3)
        return 0;
    if (c == 0xe1 && p[1] == 0x9a && p[2] == 0x80)
        return 3; // U+1680
    if (c == 0xe2 && p[1] == 0x80 && (p[2] <= 0x8a || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf) &&
        p[2] >= 0x80)
        return 3; // U+2000..U+200A, U+2028, U+2029, U+202F
    if (c == 0xe2 && p[1] == 0x81 && p[2] == 0x9f)
        return 3; // U+205F
    if (c == 0xe3 && p[1] == 0x80 && p[2] == 0x80)
        return 3; // U+3000
    return 0;
}

/* Unicode's table of well-formed sequences (3-7): the lead byte gives the
 * length and the second byte's range, which leaves out overlong forms,
 * UTF-16 surrogates and code points past U+10FFFF, as Python's decoder does. */
size_t ggt_utf8_len(const uint8_t *p, uint64_t n)
{
    if (n == 0)
        return 0;
    const uint8_t c = p[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        lo = c == 0xe0 ? 0xa0 : lo;
        hi = c == 0xed ? 0x9f : hi;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        lo = c == 0xf0 ? 0x90 : lo;
        hi = c == 0xf4 ? 0x8f : hi;
    } else {
        return 0;
    }
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

size_t ggt_utf8_encode(uint32_t cp, uint8_t b[4])
{
    if (cp < 0x80) {
        b[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (uint8_t)(0xc0 | cp >> 6), b[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (uint8_t)(0xe0 | cp >> 12), b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    b[0] = (uint8_t)(0xf0 | cp >> 18), b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)), b[3] = (uint8_t)(0x80 | (cp & 0x3f));
    return 4;
}

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static bool is_alpha(uint8_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

/* ==== Tags ==== */

/* The first "{{", "{%" or "{#" at or after from; len when there is none. */
static uint64_t find_tag_start(const uint8_t *s, uint64_t len, uint64_t from)
{
    while (from + 1 < len) {
        const uint8_t *b = memchr(s + from, '{', (size_t)(len - from - 1));
        if (!b)
            break;
        const uint64_t at = (uint64_t)(b - s);
        const uint8_t c = s[at + 1];
        if (c == '{' || c == '%' || c == '#')
            return at;
        from = at + 1;
    }
    return len;
}

/* The first occurrence of the two bytes a b at or after from, or len. */
static uint64_t find_pair(const uint8_t *s, uint64_t len, uint64_t from, uint8_t a, uint8_t b)
{
    while (from + 1 < len) {
        const uint8_t *p = memchr(s + from, a, (size_t)(len - from - 1));
        if (!p)
            break;
        const uint64_t at = (uint64_t)(p - s);
        if (s[at + 1] == b)
            return at;
        from = at + 1;
    }
    return len;
}

static uint64_t skip_spaces(const uint8_t *s, uint64_t len, uint64_t p)
{
    size_t n;
    while (p < len && (n = ggt_space_len(s + p, len - p)) > 0)
        p += n;
    return p;
}

/* At p just past "{%": "[-+]?\s*WORD\s*" then one of the closings; returns
 * the offset past the closing, or 0 when it is not that tag. Closings:
 * "-%}" and "%}", and "+%}" when plus is allowed. */
static uint64_t match_word_tag(const uint8_t *s, uint64_t len, uint64_t p, const char *word, bool plus)
{
    if (p < len && (s[p] == '-' || s[p] == '+'))
        p++;
    p = skip_spaces(s, len, p);
    const size_t n = strlen(word);
    if (len - p < n || memcmp(s + p, word, n) != 0)
        return 0;
    p = skip_spaces(s, len, p + n);
    if (p < len && (s[p] == '-' || (plus && s[p] == '+')))
        p++;
    if (len - p >= 2 && s[p] == '%' && s[p + 1] == '}')
        return p + 2;
    return 0;
}

/* ==== Tokens ==== */

static const struct { char text[3]; uint8_t op; } operators[] = {
    {"//", GGT_OP_FLOORDIV}, {"**", GGT_OP_POW}, {"==", GGT_OP_EQ}, {"!=", GGT_OP_NE},
    {">=", GGT_OP_GTEQ}, {"<=", GGT_OP_LTEQ}, {"+", GGT_OP_ADD}, {"-", GGT_OP_SUB}, {"/", GGT_OP_DIV},
    {"*", GGT_OP_MUL}, {"%", GGT_OP_MOD}, {"~", GGT_OP_TILDE}, {"[", GGT_OP_LBRACKET},
    {"]", GGT_OP_RBRACKET}, {"(", GGT_OP_LPAREN}, {")", GGT_OP_RPAREN}, {"{", GGT_OP_LBRACE},
    {"}", GGT_OP_RBRACE}, {">", GGT_OP_GT}, {"<", GGT_OP_LT}, {"=", GGT_OP_ASSIGN}, {".", GGT_OP_DOT},
    {":", GGT_OP_COLON}, {"|", GGT_OP_PIPE}, {",", GGT_OP_COMMA}, {";", GGT_OP_SEMICOLON},
};

/* Digits with single underscores between them, in the given base. */
static uint64_t digits(const uint8_t *s, uint64_t len, uint64_t p, int base)
{
    uint64_t q = p;
    for (;;) {
        const uint64_t start = q;
        while (q < len) {
            const uint8_t c = s[q] | 0x20;
            const bool ok = base == 16 ? (is_digit(s[q]) || (c >= 'a' && c <= 'f'))
                                       : (s[q] >= '0' && s[q] < '0' + base);
            if (!ok)
                break;
            q++;
        }
        if (q == start)
            return start == p ? p : start - 1; // drop a trailing '_'
        if (q + 1 < len && s[q] == '_') {
            q++;
            continue;
        }
        return q;
    }
}

/* A number at p (a digit): its end, and whether it is a float. */
static uint64_t lex_number(const uint8_t *s, uint64_t len, uint64_t p, bool after_dot, bool *is_float)
{
    *is_float = false;
    if (s[p] == '0' && p + 2 < len) {
        const uint8_t x = s[p + 1] | 0x20;
        const int base = x == 'x' ? 16 : x == 'o' ? 8 : x == 'b' ? 2 : 0;
        if (base) {
            uint64_t q = p + 2;
            if (q < len && s[q] == '_')
                q++;
            const uint64_t end = digits(s, len, q, base);
            if (end > q)
                return end;
        }
    }
    uint64_t q = digits(s, len, p, 10);
    if (after_dot) // Jinja's float pattern does not start right after a dot
        return q;
    if (q + 1 < len && s[q] == '.' && is_digit(s[q + 1])) {
        q = digits(s, len, q + 1, 10);
        *is_float = true;
    }
    if (q < len && (s[q] | 0x20) == 'e') {
        uint64_t e = q + 1;
        if (e < len && (s[e] == '+' || s[e] == '-'))
            e++;
        if (e < len && is_digit(s[e])) {
            q = digits(s, len, e, 10);
            *is_float = true;
        }
    }
    return q;
}

/* A name: ASCII letters, digits, '_' and any other character that is not
 * whitespace (Jinja takes \w and the characters of Python identifiers;
 * what is not one makes it refuse the template). */
static uint64_t lex_name(const uint8_t *s, uint64_t len, uint64_t p)
{
    while (p < len) {
        const uint8_t c = s[p];
        if (c < 0x80) {
            if (!is_alpha(c) && !is_digit(c))
                break;
            p++;
        } else if (ggt_space_len(s + p, len - p)) {
            break;
        } else {
            const size_t n = ggt_utf8_len(s + p, len - p);
            p += n ? n : 1;
        }
    }
    return p;
}

/* The end of the string literal opening at p, or 0 when it does not end. */
static uint64_t lex_string(const uint8_t *s, uint64_t len, uint64_t p)
{
    const uint8_t quote = s[p];
    for (uint64_t q = p + 1; q < len; q++) {
        if (s[q] == '\\')
            q++;
        else if (s[q] == quote)
            return q + 1;
    }
    return 0;
}

static void keep(ggt_lexer *lx, ggt_tag *tag, const ggt_tok *t, uint64_t *depth)
{
    const bool kept = tag->n_tokens < lx->cap;
    const uint32_t index = tag->n_tokens;
    if (kept)
        lx->toks[tag->n_tokens++] = *t;
    else
        tag->cut = true;
    if (t->kind != GGT_TOK_OP)
        return;
    if (t->op == GGT_OP_LPAREN || t->op == GGT_OP_LBRACKET || t->op == GGT_OP_LBRACE) {
        if (*depth < lx->cap)
            lx->open[*depth] = kept ? index : GGT_NO_MATCH;
        ++*depth;
    } else if ((t->op == GGT_OP_RPAREN || t->op == GGT_OP_RBRACKET || t->op == GGT_OP_RBRACE) && *depth > 0) {
        --*depth;
        if (*depth < lx->cap && kept && lx->open[*depth] != GGT_NO_MATCH)
            lx->toks[lx->open[*depth]].match = index;
    }
}

/* Lexes a tag's body from p; fills tag and returns the offset after it. */
static uint64_t lex_body(ggt_lexer *lx, ggt_tag *tag, uint64_t p)
{
    const uint8_t *s = lx->src;
    const uint64_t len = lx->len;
    const uint8_t closer = tag->block ? '%' : '}';
    uint64_t depth = 0;
    ggt_tok prev = {0};
    bool have_prev = false;
    while (p < len) {
        size_t n = ggt_space_len(s + p, len - p);
        if (n) {
            p += n;
            continue;
        }
        const uint8_t c = s[p];
        if (c >= 0x80 && ggt_utf8_len(s + p, len - p) == 0) {
            p++; // not UTF-8: skipped
            continue;
        }
        if (depth == 0) {
            uint64_t q = p;
            if (c == '-' || (tag->block && c == '+'))
                q++;
            if (len - q >= 2 && s[q] == closer && s[q + 1] == '}') {
                tag->closed = true;
                return q + 2;
            }
        }
        ggt_tok t = {p, 1, GGT_NO_MATCH, GGT_TOK_BAD, GGT_OP_NONE};
        if (is_digit(c)) {
            bool is_float;
            const bool after_dot =
                have_prev && prev.kind == GGT_TOK_OP && prev.op == GGT_OP_DOT && prev.at + 1 == p;
            t.len = lex_number(s, len, p, after_dot, &is_float) - p;
            t.kind = is_float ? GGT_TOK_FLOAT : GGT_TOK_INT;
        } else if (is_alpha(c) || c >= 0x80) {
            t.len = lex_name(s, len, p) - p;
            t.kind = GGT_TOK_NAME;
        } else if (c == '\'' || c == '"') {
            const uint64_t end = lex_string(s, len, p);
            if (!end) {
                lx->stopped = true; // Jinja refuses the template here
                return len;
            }
            t.len = end - p;
            t.kind = GGT_TOK_STRING;
        } else {
            for (size_t i = 0; i < sizeof operators / sizeof operators[0]; i++) {
                const size_t k = strlen(operators[i].text);
                if (len - p >= k && memcmp(s + p, operators[i].text, k) == 0) {
                    t.len = k, t.kind = GGT_TOK_OP, t.op = operators[i].op;
                    break;
                }
            }
        }
        if (lx->on_token)
            lx->on_token(lx->ctx, s, have_prev ? &prev : NULL, &t);
        keep(lx, tag, &t, &depth);
        prev = t, have_prev = true;
        p += t.len;
    }
    return len;
}

bool ggt_next_tag(ggt_lexer *lx, ggt_tag *tag)
{
    const uint8_t *s = lx->src;
    const uint64_t len = lx->len;
    *tag = (ggt_tag){lx->pos, len, len, 0, 0, false, false, false, false, false, 0};
    if (lx->stopped || lx->pos >= len)
        return false;
    const uint64_t at = find_tag_start(s, len, lx->pos);
    if (at >= len) {
        lx->pos = len;
        return false;
    }
    tag->at = at;
    const uint8_t kind = s[at + 1];
    if (kind == '#') {
        // A comment: text. One without an end makes Jinja refuse the template.
        const uint64_t end = find_pair(s, len, at + 2, '#', '}');
        tag->closed = end < len;
        tag->end = lx->pos = end < len ? end + 2 : len;
        tag->comment = true;
        return true;
    }
    if (kind == '%') {
        const uint64_t raw_end = match_word_tag(s, len, at + 2, "raw", false);
        if (raw_end) {
            // Everything up to {% endraw %} is text.
            uint64_t from = raw_end, end = len, text_end = len;
            for (;;) {
                const uint64_t open = find_pair(s, len, from, '{', '%');
                if (open >= len)
                    break;
                const uint64_t close = match_word_tag(s, len, open + 2, "endraw", true);
                if (close) {
                    end = close, text_end = open;
                    tag->closed = true;
                    break;
                }
                from = open + 2;
            }
            tag->raw_at = raw_end, tag->raw_end = text_end;
            tag->end = lx->pos = end;
            tag->raw = true;
            return true;
        }
    }
    tag->block = kind == '%';
    uint64_t p = at + 2;
    if (p < len && (s[p] == '-' || s[p] == '+'))
        p++;
    tag->end = lx->pos = lex_body(lx, tag, p);
    return true;
}

/* ==== String literals ==== */

static int hex_value(uint8_t c)
{
    if (is_digit(c))
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

typedef struct out_buf {
    char *p;
    size_t n, cap;
    bool *cut;
} out_buf;

static void emit(out_buf *o, const void *bytes, size_t n)
{
    if (n > o->cap - o->n) {
        n = o->cap - o->n;
        *o->cut = true;
    }
    memcpy(o->p + o->n, bytes, n);
    o->n += n;
}

static void emit_cp(out_buf *o, uint32_t cp)
{
    uint8_t b[4];
    if (cp >= 0xd800 && cp <= 0xdfff)
        cp = 0xfffd; // a lone surrogate: no UTF-8 for it
    emit(o, b, ggt_utf8_encode(cp, b));
}

/* `count` hex digits at p (before end) as a code point, or -1. */
static int64_t hex_digits(const uint8_t *p, const uint8_t *end, int count)
{
    if (end - p < count)
        return -1;
    int64_t v = 0;
    for (int i = 0; i < count; i++) {
        const int h = hex_value(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* The code point of the UTF-8 sequence at p, n bytes long. */
static uint32_t decode_cp(const uint8_t *p, size_t n)
{
    static const uint8_t lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    uint32_t cp = p[0] & lead_mask[n];
    for (size_t i = 1; i < n; i++)
        cp = cp << 6 | (p[i] & 0x3f);
    return cp;
}

/* \xNN, \uNNNN or \UNNNNNNNN at p: its code point, *q just past it; or -1,
 * with "\x" kept as written and *q after it, when Python refuses it. */
static int64_t hex_escape(out_buf *o, const uint8_t *p, const uint8_t *end, const uint8_t **q)
{
    const int count = p[1] == 'x' ? 2 : p[1] == 'u' ? 4 : 8;
    const int64_t cp = hex_digits(p + 2, end, count);
    if (cp < 0 || cp > 0x10ffff) {
        emit(o, p, 2);
        *q = p + 2;
        return -1;
    }
    *q = p + 2 + count;
    return cp;
}

/* \N{LOW LINE} at p, in any case, is '_'; other names are kept as written
 * (and -1 returned). *q is just past the name's '}'. */
static int64_t named_escape(out_buf *o, const uint8_t *p, const uint8_t *end, const uint8_t **q)
{
    const uint8_t *name = p + 2;
    const uint8_t *close = name < end && *name == '{' ? memchr(name, '}', (size_t)(end - name)) : NULL;
    if (close && close - name - 1 == 8 && strncasecmp((const char *)name + 1, "low line", 8) == 0) {
        *q = close + 1;
        return '_';
    }
    *q = close ? close + 1 : name;
    emit(o, p, (size_t)(*q - p));
    return -1;
}

/* A backslash before a character that is not ASCII, at p: Jinja writes the
 * character as \xNN, \uNNNN or \UNNNNNNNN before decoding, so the
 * backslash escapes the one it adds. Returns just past the character. */
static const uint8_t *non_ascii_escape(out_buf *o, const uint8_t *p, const uint8_t *end)
{
    const size_t n = ggt_utf8_len(p + 1, (uint64_t)(end - p - 1));
    emit(o, "\\", 1);
    if (n) {
        char esc[12];
        const uint32_t v = decode_cp(p + 1, n);
        const int w = v < 0x100 ? 2 : v < 0x10000 ? 4 : 8;
        esc[0] = w == 2 ? 'x' : w == 4 ? 'u' : 'U';
        for (int i = 0; i < w; i++)
            esc[1 + i] = "0123456789abcdef"[(v >> (4 * (w - 1 - i))) & 15];
        emit(o, esc, (size_t)w + 1);
    }
    return p + 1 + (n ? n : 1);
}

/* The escape at p (a backslash with at least one byte after it before
 * end): the code point it stands for, or -1 when it stands for none or
 * was written out as it is; *q is just past it. */
static int64_t escape(out_buf *o, const uint8_t *p, const uint8_t *end, const uint8_t **q)
{
    const uint8_t d = p[1];
    *q = p + 2;
    switch (d) {
    case '\n': return -1; // a line continuation
    case '\r': *q += *q < end && **q == '\n'; return -1;
    case '\\': case '\'': case '"': return d;
    case 'a': return 7;
    case 'b': return 8;
    case 'f': return 12;
    case 'n': return 10;
    case 'r': return 13;
    case 't': return 9;
    case 'v': return 11;
    case 'x': case 'u': case 'U': return hex_escape(o, p, end, q);
    case 'N': return named_escape(o, p, end, q);
    default:
        break;
    }
    if (d >= '0' && d <= '7') { // octal, up to three digits
        int64_t cp = d - '0';
        for (int i = 0; i < 2 && *q < end && **q >= '0' && **q <= '7'; i++, (*q)++)
            cp = cp * 8 + (**q - '0');
        return cp;
    }
    if (d >= 0x80) {
        *q = non_ascii_escape(o, p, end);
        return -1;
    }
    emit(o, p, 2); // an unknown escape stays as it is
    return -1;
}

size_t ggt_unescape(const uint8_t *src, const ggt_tok *t, char *out, size_t cap, bool *cut)
{
    *cut = false;
    out_buf o = {out, 0, cap, cut};
    if (t->kind != GGT_TOK_STRING || t->len < 2)
        return 0;
    const uint8_t *p = src + t->at + 1, *end = src + t->at + t->len - 1;
    while (p < end && !*cut) {
        const uint8_t c = *p;
        if (c == '\r') { // newlines are normalised first
            emit(&o, "\n", 1);
            p += p + 1 < end && p[1] == '\n' ? 2 : 1;
            continue;
        }
        if (c != '\\') {
            const size_t n = c < 0x80 ? 1 : ggt_utf8_len(p, (uint64_t)(end - p));
            if (n)
                emit(&o, p, n);
            p += n ? n : 1; // not UTF-8: dropped
            continue;
        }
        if (p + 1 >= end) {
            emit(&o, "\\", 1);
            break;
        }
        const uint8_t *q;
        const int64_t cp = escape(&o, p, end, &q);
        if (cp >= 0)
            emit_cp(&o, (uint32_t)cp);
        p = q;
    }
    if (p < end)
        *cut = true;
    return o.n;
}

bool ggt_int_value(const uint8_t *src, const ggt_tok *t, int64_t *value)
{
    const uint8_t *p = src + t->at, *end = p + t->len;
    int base = 10;
    if (t->len > 2 && p[0] == '0') {
        const uint8_t x = p[1] | 0x20;
        base = x == 'x' ? 16 : x == 'o' ? 8 : x == 'b' ? 2 : 10;
        if (base != 10)
            p += 2;
    }
    uint64_t v = 0;
    for (; p < end; p++) {
        if (*p == '_')
            continue;
        const int d = hex_value(*p);
        if (d < 0 || d >= base || v > (UINT64_C(1) << 62) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *value = (int64_t)v;
    return true;
}
