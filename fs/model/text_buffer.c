/*
 * A growable buffer sink (text_buffer.h).
 */
#include <stdlib.h>
#include <string.h>

#include "model/text_buffer.h"

static void buffer_write(ggp_sink *sink, const char *bytes, size_t len)
{
    ggfs_buffer *b = (ggfs_buffer *)sink;
    if (b->failed)
        return;
    if (len > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < len)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, len);
    b->len += len;
}

void ggfs_buffer_init(ggfs_buffer *b)
{
    *b = (ggfs_buffer){{buffer_write}, NULL, 0, 0, false};
}
