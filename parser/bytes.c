/*
 * Growable byte buffers (ggp_bytes) and a sink that fills one: what the
 * text parser writes encodings into, and what callers render text into
 * when they keep it.
 */
#include <stdlib.h>
#include <string.h>

#include "ggp_i.h"

bool ggp_bytes_append(ggp_bytes *b, const void *bytes, size_t n)
{
    if (n == 0)
        return true;
    if (n > SIZE_MAX - b->len)
        return false;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
        uint8_t *grown = realloc(b->data, cap);
        if (!grown)
            return false;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
    return true;
}

static void bytes_write(ggp_sink *sink, const char *bytes, size_t len)
{
    ggp_bytes_sink *s = (ggp_bytes_sink *)sink;
    if (!s->failed && !ggp_bytes_append(s->out, bytes, len))
        s->failed = true;
}

void ggp_bytes_sink_init(ggp_bytes_sink *s, ggp_bytes *out)
{
    *s = (ggp_bytes_sink){{bytes_write}, out, false};
}
