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
#ifndef JINJA_LEX_H
#define JINJA_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum jinja_kind {
    JK_NAME,   // identifier or keyword (if, in, not, ...)
    JK_STRING, // '...' or "...", quotes included
    JK_INT,
    JK_FLOAT,
    JK_OP,     // an operator, see jinja_op
    JK_BAD,    // a byte Jinja has no token for
} jinja_kind;

typedef enum jinja_op {
    JO_NONE, JO_ADD, JO_SUB, JO_DIV, JO_FLOORDIV, JO_MUL, JO_MOD, JO_POW, JO_TILDE,
    JO_LBRACKET, JO_RBRACKET, JO_LPAREN, JO_RPAREN, JO_LBRACE, JO_RBRACE,
    JO_EQ, JO_NE, JO_GT, JO_GTEQ, JO_LT, JO_LTEQ, JO_ASSIGN, JO_DOT, JO_COLON,
    JO_PIPE, JO_COMMA, JO_SEMICOLON,
} jinja_op;

#define JINJA_NO_MATCH UINT32_MAX

typedef struct jinja_tok {
    uint64_t at, len;   // its bytes in the template
    uint32_t match;     // an opening bracket: index of its closing one in
                        // the tag, or JINJA_NO_MATCH
    uint8_t kind;       // jinja_kind
    uint8_t op;         // jinja_op, for JK_OP
} jinja_tok;

typedef struct jinja_tag {
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
} jinja_tag;

/* Called for every token of every tag, kept or not: prev is the token
 * before it in the same tag, or NULL. */
typedef void (*jinja_token_fn)(void *ctx, const uint8_t *src, const jinja_tok *prev, const jinja_tok *tok);

typedef struct jinja_lexer {
    const uint8_t *src;
    uint64_t len;
    uint64_t pos;       // where the next search for a tag starts
    jinja_tok *toks;    // the current tag's tokens
    uint32_t cap;
    uint32_t *open;     // stack of open brackets' token indexes (cap entries)
    jinja_token_fn on_token;
    void *ctx;
    bool stopped;       // an unterminated string: nothing after it is lexed
} jinja_lexer;

/* The lexer keeps tokens in toks and open, both of cap entries, owned by
 * the caller. */
void jinja_lexer_init(jinja_lexer *lx, const uint8_t *src, uint64_t len, jinja_tok *toks,
                      uint32_t *open, uint32_t cap, jinja_token_fn on_token, void *ctx);

/* Finds the next tag and lexes it. Returns false when none is left; the
 * template's trailing text is then [tag->text_at, len). */
bool jinja_next_tag(jinja_lexer *lx, jinja_tag *tag);

/* Whether the token is the name `word`. */
bool jinja_is_name(const uint8_t *src, const jinja_tok *t, const char *word);

/* Decodes a string token as Jinja does (newlines normalised, then Python's
 * unicode-escape: \\x5f, \\u005f, \\U0000005f, octal \\137, \\N{LOW LINE},
 * line continuations; unknown escapes kept) into out, UTF-8. Stops after cap
 * bytes and sets *cut. Returns the length written. */
size_t jinja_unescape(const uint8_t *src, const jinja_tok *t, char *out, size_t cap, bool *cut);

/* The value of an integer token (0x, 0o, 0b, and _ between digits); false
 * when it does not fit in int64. */
bool jinja_int_value(const uint8_t *src, const jinja_tok *t, int64_t *value);

/* The length of the valid UTF-8 sequence at p (n bytes left), or 0: one
 * character as Python's decoder takes it. */
size_t jinja_utf8_len(const uint8_t *p, uint64_t n);

/* Python's str.isspace for the UTF-8 character at p (n bytes left):
 * its length when it is whitespace, else 0. */
size_t jinja_space_len(const uint8_t *p, uint64_t n);

#endif
