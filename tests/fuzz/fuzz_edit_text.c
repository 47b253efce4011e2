/*
 * Edit texts (parser/parse_text.c, parse_prefix.c): what a user writes
 * to metadata/KEY, read as a value of a type. The first byte picks the
 * type (leaf, array depth), the byte order and GGUF version; the rest is
 * the text, given whole to ggp_parse_text and to ggp_parse_prefix, and
 * growing in pieces with one prefix state (as a writer's chunks come).
 * The contract checked: a text the whole parser takes is never refused
 * as a start, whole or in pieces; a refusal names an offset inside the
 * text; a failed parse leaves the output as it was. Each line is also
 * read as one escaped line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t pick = data[0];
    const ggp_value_type type = {(pick >> 4) % 3, (ggp_vtype)((pick & 15) % GGP_V_COUNT)};
    if (type.leaf == GGP_V_ARRAY)
        return 0;
    const ggp_byte_order order = pick & 0x80 ? GGP_BIG : GGP_LITTLE;
    const uint32_t version = pick & 0x40 ? 1 : 3;
    const size_t len = size - 1;
    char *text = malloc(len ? len : 1); // exact size: a read past it is caught
    if (!text)
        return 0;
    memcpy(text, data + 1, len);

    ggp_bytes out = {0};
    ggp_error err;
    const ggp_err whole = ggp_parse_text(text, len, type, version, order, 1 << 16, &out, &err);
    if (whole != GGP_OK && (out.len != 0 || (whole == GGP_ERR_TEXT && err.offset > len)))
        abort();
    free(out.data);

    ggp_prefix_state st = {0, 0};
    const ggp_err as_start = ggp_parse_prefix(text, len, type, &st, &err);
    if (as_start != GGP_OK && as_start != GGP_ERR_TEXT)
        abort();
    if (as_start == GGP_ERR_TEXT && err.offset > len)
        abort();
    if (whole == GGP_OK && as_start != GGP_OK)
        abort();
    ggp_prefix_state piece = {0, 0};
    ggp_err grown = GGP_OK;
    const size_t step = len / 16 + 1;
    for (size_t n = 0; n < len + step && grown == GGP_OK; n += step)
        grown = ggp_parse_prefix(text, n < len ? n : len, type, &piece, NULL);
    if (grown != as_start)
        abort();

    for (const char *line = text, *end = text + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const size_t n = (size_t)((nl ? nl : end) - line);
        ggp_bytes b = {0};
        if (ggp_parse_line_escaped(line, n, 1 << 16, &b, &err) == GGP_OK && b.len > n)
            abort();
        free(b.data);
        line += n + 1;
    }
    free(text);
    return 0;
}
