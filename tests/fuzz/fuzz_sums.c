/*
 * sha256sum's lines (fs/source/sums.c), as a SHA256SUMS or a FILE.sha256
 * beside a model holds them: anyone who can write beside a model writes
 * them. The input is the file; each line is parsed, and a line that parses
 * must name exactly the name this harness unescapes from it (and not that
 * name changed by one byte); then the whole file is searched for that name
 * and a fixed one, as a whole file and as one cut at the reader's bound,
 * and read as a FILE.sha256.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/sums.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool hex_digit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The line's name unescaped by this harness's own reading of sha256sum's
 * escapes, into out (at least l->name_len bytes); its length. */
static size_t unescaped(const ggfs_sums_line *l, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < l->name_len; i++) {
        char c = l->name[i];
        if (l->escaped && c == '\\') {
            const char e = l->name[++i];
            c = e == 'n' ? '\n' : e == 'r' ? '\r' : e;
        }
        out[n++] = c;
    }
    return n;
}

static void check_line(const char *text, const char *line, size_t len, bool whole)
{
    ggfs_sums_line l;
    if (!ggfs_sums_parse_line(line, len, &l))
        return;
    // Views inside the line, the digits all hex, a name.
    if (l.hex < line || l.hex + GGFS_SUMS_HEX > line + len || l.name < l.hex + GGFS_SUMS_HEX ||
        l.name + l.name_len > line + len || l.name_len == 0)
        abort();
    for (size_t i = 0; i < GGFS_SUMS_HEX; i++)
        if (!hex_digit(l.hex[i]))
            abort();
    char *name = malloc(l.name_len + 1);
    if (!name)
        abort();
    size_t n = unescaped(&l, name);
    // "./name" names name.
    const size_t skip = n >= 2 && name[0] == '.' && name[1] == '/' ? 2 : 0;
    if (!ggfs_sums_line_names(&l, name + skip, n - skip))
        abort();
    if (n > skip) {
        name[n - 1] ^= 1;
        if (ggfs_sums_line_names(&l, name + skip, n - skip))
            abort();
        name[n - 1] ^= 1;
        if (ggfs_sums_line_names(&l, name + skip, n - skip - 1))
            abort();
    }
    // The whole text holds a line for the name: one is found, its digits
    // hex (the first line for it, not necessarily this one).
    char hex[GGFS_SUMS_HEX];
    if (whole && !ggfs_sums_find(text, (size_t)(line + len - text), true, name + skip, n - skip, hex))
        abort();
    free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t at = 0;
    while (at < size) {
        const char *nl = memchr(text + at, '\n', size - at);
        const size_t end = nl ? (size_t)(nl - text) : size;
        check_line(text, text + at, end - at, true);
        at = end + 1;
    }
    char hex[GGFS_SUMS_HEX];
    static const char model[] = "model.gguf";
    for (int whole = 0; whole <= 1; whole++) {
        if (ggfs_sums_find(text, size, whole, model, sizeof model - 1, hex))
            for (size_t i = 0; i < GGFS_SUMS_HEX; i++)
                if (!hex_digit(hex[i]))
                    abort();
    }
    if (ggfs_sums_single(text, size, hex))
        for (size_t i = 0; i < GGFS_SUMS_HEX; i++)
            if (!hex_digit(hex[i]))
                abort();
    return 0;
}
