/*
 * The response headers a server writes (fs/source/response_headers.h):
 * the input is a header block, one header a line; each line, copied to a
 * buffer of its exact size (so that a read past it is caught), goes
 * through every parser, and what they return is checked against their
 * contracts: a Content-Range in order and under the size limit, a wait
 * within its bounds, a Link's next URL and a Bearer challenge and its
 * params NUL-terminated inside their buffers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/response_headers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_string(const char *s, size_t cap)
{
    if (memchr(s, '\0', cap) == NULL)
        abort();
}

static void one_line(const char *line, size_t len)
{
    const char *value;
    size_t vlen;
    if (ggfs_header_match(line, len, "content-range", &value, &vlen)) {
        if (value < line || value + vlen > line + len)
            abort();
        uint64_t first, last, total;
        if (ggfs_content_range_parse(value, vlen, &first, &last, &total) == GGFS_CONTENT_RANGE_OK &&
            (first > last || last >= total || total > GGFS_REMOTE_SIZE_MAX))
            abort();
        char copy[32];
        ggfs_header_copy(value, vlen, copy, sizeof copy);
        check_string(copy, sizeof copy);
    }
    long wait_s = -7;
    if (ggfs_wait_header_parse(line, len, &wait_s) && wait_s != -7 && (wait_s < 0 || wait_s > GGFS_WAIT_MAX_S))
        abort();
    if (ggfs_header_match(line, len, "link", &value, &vlen)) {
        char next[64], big[4096];
        if (ggfs_link_next(value, vlen, next, sizeof next))
            check_string(next, sizeof next);
        if (ggfs_link_next(value, vlen, big, sizeof big))
            check_string(big, sizeof big);
    }
    char challenge[1024];
    if (ggfs_bearer_challenge(line, len, challenge, sizeof challenge)) {
        check_string(challenge, sizeof challenge);
        static const char *const keys[] = {"realm", "service", "scope", "error", ""};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char out[256], tiny[4];
            if (ggfs_challenge_param(challenge, keys[i], out, sizeof out))
                check_string(out, sizeof out);
            if (ggfs_challenge_param(challenge, keys[i], tiny, sizeof tiny))
                check_string(tiny, sizeof tiny);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *end = text + size;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const size_t len = (size_t)((nl ? nl + 1 : end) - text);
        char *line = malloc(len ? len : 1);
        if (!line)
            return 0;
        memcpy(line, text, len);
        one_line(line, len);
        free(line);
        text += len;
    }
    return 0;
}
