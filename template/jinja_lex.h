/*
 * Jinja's lexer, as far as the chat-template audit needs it: where the tags
 * are in a template and the tokens inside them, with Jinja 3's rules.
 *
 *   text {{ expression }} text {% statement %} {# comment #} {% raw %}...{% endraw %}
 *
 * An opening delimiter may carry '-' or '+' (whitespace control). Inside a
 * tag, `}}` or `%}` ends it only outside brackets, and a string literal may
 * hold either. Comments and raw blocks are text. A string literal that does
 * not end makes Jinja refuse the whole template; the lexer stops there.
 *
 * Every offset is a byte offset in the template. Bytes that are not UTF-8
 * are skipped between tokens (as a reader that decodes with errors ignored
 * sees the text) and kept inside names and strings.
 */
#ifndef GGT_JINJA_LEX_H
#define GGT_JINJA_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ggt_tok_kind {
    GGT_TOK_NAME,    // identifier or keyword (if, in, not, ...)
    GGT_TOK_STRING,  // '...' or "...", quotes included
    GGT_TOK_INT,
    GGT_TOK_FLOAT,
    GGT_TOK_OP,      // an operator, see ggt_op
    GGT_TOK_BAD,     // a byte Jinja has no token for
} ggt_tok_kind;

typedef enum ggt_op {
    GGT_OP_NONE, GGT_OP_ADD, GGT_OP_SUB, GGT_OP_DIV, GGT_OP_FLOORDIV, GGT_OP_MUL, GGT_OP_MOD, GGT_OP_POW,
    GGT_OP_TILDE, GGT_OP_LBRACKET, GGT_OP_RBRACKET, GGT_OP_LPAREN, GGT_OP_RPAREN, GGT_OP_LBRACE,
    GGT_OP_RBRACE, GGT_OP_EQ, GGT_OP_NE, GGT_OP_GT, GGT_OP_GTEQ, GGT_OP_LT, GGT_OP_LTEQ, GGT_OP_ASSIGN,
    GGT_OP_DOT, GGT_OP_COLON, GGT_OP_PIPE, GGT_OP_COMMA, GGT_OP_SEMICOLON,
} ggt_op;

#define GGT_NO_MATCH UINT32_MAX

typedef struct ggt_tok {
    uint64_t at, len;   // its bytes in the template
    uint32_t match;     // an opening bracket: index of its closing one in
                        // the tag, or GGT_NO_MATCH
    uint8_t kind;       // ggt_tok_kind
    uint8_t op;         // ggt_op, for GGT_TOK_OP
} ggt_tok;

typedef struct ggt_tag {
    uint64_t text_at;   // the text before the tag: [text_at, at)
    uint64_t at;        // the opening delimiter
    uint64_t end;       // just past the closing delimiter
    uint64_t raw_at, raw_end; // a raw block's text (else empty)
    bool block;         // {% %} rather than {{ }}
    bool comment;       // {# #}: text, nothing to read
    bool raw;           // {% raw %}...{% endraw %}: text
    bool closed;        // the closing delimiter was found
    bool cut;           // more tokens than the buffer holds: the rest were
                        // seen (for on_token) but not kept
    uint32_t n_tokens;  // kept in the lexer's buffer
} ggt_tag;

/* Called for every token of every tag, kept or not: prev is the token
 * before it in the same tag, or NULL. */
typedef void (*ggt_token_fn)(void *ctx, const uint8_t *src, const ggt_tok *prev, const ggt_tok *tok);

typedef struct ggt_lexer {
    const uint8_t *src;
    uint64_t len;
    uint64_t pos;       // where the next search for a tag starts
    ggt_tok *toks;      // the current tag's tokens
    uint32_t cap;
    uint32_t *open;     // stack of open brackets' token indexes (cap entries)
    ggt_token_fn on_token;
    void *ctx;
    bool stopped;       // an unterminated string: nothing after it is lexed
} ggt_lexer;

/* The lexer keeps tokens in toks and open, both of cap entries, owned by
 * the caller. */
void ggt_lexer_init(ggt_lexer *lx, const uint8_t *src, uint64_t len, ggt_tok *toks,
                    uint32_t *open, uint32_t cap, ggt_token_fn on_token, void *ctx);

/* Finds the next tag and lexes it. Returns false when none is left; the
 * template's trailing text is then [tag->text_at, len). */
bool ggt_next_tag(ggt_lexer *lx, ggt_tag *tag);

/* Whether the token is the name `word`. */
bool ggt_tok_is_name(const uint8_t *src, const ggt_tok *t, const char *word);

/* Decodes a string token as Jinja does (newlines normalised, then Python's
 * unicode-escape: \\x5f, \\u005f, \\U0000005f, octal \\137, \\N{LOW LINE},
 * line continuations; unknown escapes kept) into out, UTF-8. Stops after cap
 * bytes and sets *cut. Returns the length written. */
size_t ggt_unescape(const uint8_t *src, const ggt_tok *t, char *out, size_t cap, bool *cut);

/* The value of an integer token (0x, 0o, 0b, and _ between digits); false
 * when it does not fit in int64. */
bool ggt_int_value(const uint8_t *src, const ggt_tok *t, int64_t *value);

/* The length of the valid UTF-8 sequence at p (n bytes left), or 0: one
 * character as Python's decoder takes it. */
size_t ggt_utf8_len(const uint8_t *p, uint64_t n);

/* Writes the code point cp (at most U+10FFFF, no surrogate) as UTF-8 into
 * b; returns its length. */
size_t ggt_utf8_encode(uint32_t cp, uint8_t b[4]);

/* Python's str.isspace for the UTF-8 character at p (n bytes left):
 * its length when it is whitespace, else 0. */
size_t ggt_space_len(const uint8_t *p, uint64_t n);

#endif
