#include "util/pread_full.h"

#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

int ggfs_pread_full(int fd, void *buf, size_t len, uint64_t off, size_t *got)
{
    size_t done = 0;
    int err = 0;
    while (done < len) {
        const ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            err = errno;
            break;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    *got = done;
    return err;
}
