/*
 * write until every byte is out or an error comes: one write(2) may take
 * fewer bytes than given (a signal, a full pipe), and every writer of a
 * whole file wants the same loop.
 */
#ifndef GGFS_UTIL_WRITE_FULL_H
#define GGFS_UTIL_WRITE_FULL_H

#include <stddef.h>

/* Writes len bytes of data to fd, retrying on EINTR and short writes.
 * Returns 0, or the errno of the write that failed (EIO when one wrote
 * nothing without saying why). */
int ggfs_write_full(int fd, const void *data, size_t len);

#endif
