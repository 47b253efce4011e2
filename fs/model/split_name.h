/*
 * The names of a split set's shards, as llama.cpp's gguf-split writes them:
 * PREFIX-00001-of-00005.gguf ... PREFIX-00005-of-00005.gguf (numbers in at
 * least five digits, counted from 1).
 */
#ifndef GGFS_MODEL_SPLIT_NAME_H
#define GGFS_MODEL_SPLIT_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* Whether name ends in -KKKKK-of-NNNNN.gguf with 1 <= K <= N; if so fills
 * the length of the prefix before "-KKKKK", and K and N. */
bool ggfs_split_name_parse(const char *name, size_t *prefix_len, unsigned *k, unsigned *n);

/* The name of shard k of n, with the prefix of a name ggfs_split_name_parse
 * accepted. Returns a malloc'ed string, NULL when out of memory. */
char *ggfs_split_name_make(const char *name, size_t prefix_len, unsigned k, unsigned n);

#endif
