/*
 * A growable buffer of text, as a parser sink (ggp.h's ggp_sink): what the
 * tree's text files and the Modelfile are written into.
 */
#ifndef GGFS_MODEL_TEXT_BUFFER_H
#define GGFS_MODEL_TEXT_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

#include "ggp.h"

/* A growable buffer sink. Allocates; free data with free(). */
typedef struct ggfs_buffer {
    ggp_sink sink;
    char *data;
    size_t len;
    size_t cap;
    bool failed; // an allocation failed
} ggfs_buffer;

void ggfs_buffer_init(ggfs_buffer *b);

#endif
