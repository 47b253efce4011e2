/*
 * Split-set file names: parsing -KKKKK-of-NNNNN.gguf and making shard k's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/split_name.h"

#define SUFFIX ".gguf"
#define MAX_NUMBER 999999u // u16 counts fit; longer runs of digits are not a set

/* Reads the decimal digits that end at name[end - 1], at least five;
 * returns where they start, or 0 when they are not there. */
static size_t digits_before(const char *name, size_t end, unsigned *value)
{
    size_t start = end;
    while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9' && end - start < 7)
        start--;
    if (end - start < 5)
        return 0;
    unsigned v = 0;
    for (size_t i = start; i < end; i++)
        v = v * 10 + (unsigned)(name[i] - '0');
    if (v > MAX_NUMBER)
        return 0;
    *value = v;
    return start;
}

bool ggfs_split_name_parse(const char *name, size_t *prefix_len, unsigned *k, unsigned *n)
{
    const size_t len = strlen(name), suffix = strlen(SUFFIX);
    if (len < suffix || strcmp(name + len - suffix, SUFFIX) != 0)
        return false;
    size_t at = digits_before(name, len - suffix, n);
    if (at < 4 || memcmp(name + at - 4, "-of-", 4) != 0)
        return false;
    at = digits_before(name, at - 4, k);
    if (at < 1 || name[at - 1] != '-')
        return false;
    if (*k < 1 || *k > *n)
        return false;
    *prefix_len = at - 1;
    return true;
}

char *ggfs_split_name_make(const char *name, size_t prefix_len, unsigned k, unsigned n)
{
    const size_t size = prefix_len + 32;
    char *out = malloc(size);
    if (out)
        snprintf(out, size, "%.*s-%05u-of-%05u" SUFFIX, (int)prefix_len, name, k, n);
    return out;
}
