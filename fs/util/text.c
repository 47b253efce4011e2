/*
 * Checks and repairs of untrusted text.
 */
#include "util/text.h"

size_t ggfs_lower_hex_span(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
        i++;
    return i;
}

void ggfs_one_line(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
}
