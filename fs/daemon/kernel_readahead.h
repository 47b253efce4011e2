/*
 * The read-ahead of one mount. Buffered readers of a FUSE file get its
 * bytes in requests no larger than the mount's read-ahead window (128 KiB
 * by default); raising it lets `cat` and numpy pull 1 MiB per request.
 */
#ifndef GGFS_DAEMON_KERNEL_READAHEAD_H
#define GGFS_DAEMON_KERNEL_READAHEAD_H

#include <stdbool.h>

/* Sets read_ahead_kb of the backing device of the mount at mountpoint
 * (through /sys/class/bdi). Needs root; returns false with errno set. */
bool ggfs_set_mount_readahead(const char *mountpoint, unsigned kb);

#endif
