/*
 * The chat-template audit: reads a Jinja chat template (the value of
 * tokenizer.chat_template, or of tokenizer.chat_template.NAME) without
 * running it, and reports where it reaches for Python's internals the way
 * template-injection exploits do (CVE-2024-34359 ran code from a GGUF's
 * template: `{{ cycler.__init__.__globals__.os.popen('id').read() }}`):
 *
 *   x.NAME, x['NAME']            a name beginning with '_', string
 *                                literals decoded as Jinja does ('\x5f')
 *   x|attr('NAME')               the same for attr, and for the attribute
 *   x|map(attribute='a.NAME')    paths of map, selectattr, rejectattr,
 *                                sort, groupby, sum, unique, min, max, join
 *   x|attr(name)                 any name that is not a literal
 *   x['_' ~ '_class__']          a key made of constants that is worked
 *                                out to begin with '_', or is made of them
 *                                in a way not followed (doc/SEMANTICS.md)
 *   '{0.__class__}'.format(x)    str.format fields reaching such a name
 *
 * Only the insides of {{ }} and {% %} are read; text, comments and raw
 * blocks are not code. The template is any bytes: reading stops at its
 * end, takes time linear in its length (a few passes), and recursion stops
 * at 24 nested brackets (deeper ones are reported, not followed).
 *
 * A library of its own, below parser/: the parser's warnings view calls
 * it, and it needs nothing of the parser's (libc alone), so it takes plain
 * bytes and gives names as ggt_str views the caller turns into its own.
 */
#ifndef GGT_H
#define GGT_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes that are not NUL-terminated. */
typedef struct ggt_str {
    const char *ptr;
    uint64_t len;
} ggt_str;

typedef struct ggt_finding {
    uint64_t at;        // byte offset in the template
    const char *what;   // "attribute", "subscript", "attr filter name", ...
    const char *how;    // "begins with '_'", "is computed:", ...
    ggt_str name;       // the name as Jinja decodes it, or (source) the
                        // expression's text, at most 64 bytes
    bool source;        // name is source text, written after how
    bool cut;           // name was cut short
} ggt_finding;

typedef void (*ggt_found)(void *ctx, const ggt_finding *finding);

/* Calls found for each finding, in order of offset (at most 1000; one more
 * finding then says how many were left out). Allocates and frees its
 * tables; returns false, having called nothing, when that fails. */
bool ggt_audit(const void *bytes, uint64_t len, ggt_found found, void *ctx);

/* Whether a key is a chat template's: tokenizer.chat_template or
 * tokenizer.chat_template.NAME. */
bool ggt_is_chat_template_key(ggt_str key);

#endif
