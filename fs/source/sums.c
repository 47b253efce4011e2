/*
 * sha256sum's lines (sums.h): split, checked byte by byte, names compared
 * unescaped without a copy.
 */
#include <string.h>

#include "source/sums.h"

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_hex(s[i]))
            return false;
    return true;
}

/* The byte an escape `\c` stands for in an escaped name; 0 for none. */
static char unescape(char c)
{
    return c == '\\' ? '\\' : c == 'n' ? '\n' : c == 'r' ? '\r' : 0;
}

bool ggfs_sums_parse_line(const char *line, size_t len, ggfs_sums_line *out)
{
    if (len > 0 && line[len - 1] == '\r')
        len--;
    if (len > GGFS_SUMS_LINE_MAX)
        return false;
    // As GNU sha256sum -c reads a line: blanks before it, then the digits,
    // a blank, a space (text) or '*' (binary), and the name.
    size_t at = 0;
    while (at < len && (line[at] == ' ' || line[at] == '\t'))
        at++;
    out->escaped = at < len && line[at] == '\\';
    at += out->escaped;
    if (len - at < GGFS_SUMS_HEX + 3 || !all_hex(line + at, GGFS_SUMS_HEX))
        return false;
    out->hex = line + at;
    at += GGFS_SUMS_HEX;
    if ((line[at] != ' ' && line[at] != '\t') || (line[at + 1] != ' ' && line[at + 1] != '*'))
        return false;
    at += 2;
    out->name = line + at;
    out->name_len = len - at;
    if (!out->escaped)
        return true;
    for (size_t i = 0; i < out->name_len; i++) {
        if (out->name[i] == '\\' && (i + 1 == out->name_len || !unescape(out->name[++i])))
            return false;
    }
    return true;
}

bool ggfs_sums_line_names(const ggfs_sums_line *l, const char *name, size_t name_len)
{
    // The name unescaped, one byte at a time: s[i] stands for the byte at k.
    const char *s = l->name;
    size_t i = 0, n = l->name_len;
    if (n >= 2 && s[0] == '.' && s[1] == '/')
        i = 2;
    size_t k = 0;
    for (; i < n; i++, k++) {
        char c = s[i];
        if (l->escaped && c == '\\')
            c = unescape(s[++i]); // checked by the parse: never past n
        if (k == name_len || c != name[k])
            return false;
    }
    return k == name_len;
}

bool ggfs_sums_find(const char *text, size_t len, bool whole, const char *name, size_t name_len,
                    char hex[GGFS_SUMS_HEX])
{
    size_t at = 0;
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        if (!nl && !whole)
            return false; // cut short by the reader's bound
        const size_t end = nl ? (size_t)(nl - text) : len;
        ggfs_sums_line l;
        if (ggfs_sums_parse_line(text + at, end - at, &l) && ggfs_sums_line_names(&l, name, name_len)) {
            memcpy(hex, l.hex, GGFS_SUMS_HEX);
            return true;
        }
        at = end + 1;
    }
    return false;
}

bool ggfs_sums_single(const char *text, size_t len, char hex[GGFS_SUMS_HEX])
{
    // sha256sum's escaped form, for a file whose name needed it.
    const size_t at = len > 0 && text[0] == '\\';
    if (len - at < GGFS_SUMS_HEX || !all_hex(text + at, GGFS_SUMS_HEX))
        return false;
    const size_t after = at + GGFS_SUMS_HEX;
    const char next = after < len ? text[after] : '\n';
    if (next != ' ' && next != '\t' && next != '\r' && next != '\n')
        return false; // more digits, or some other word
    memcpy(hex, text + at, GGFS_SUMS_HEX);
    return true;
}
