/*
 * The loop of write_full.h.
 */
#include <errno.h>
#include <unistd.h>

#include "util/write_full.h"

int ggfs_write_full(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        const ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            return EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
