/*
 * pread until the bytes asked for are in, the file ends or an error
 * comes: one read(2) may return fewer bytes than asked (a signal, a FUSE
 * or network file system), and every reader of a whole range wants the
 * same loop.
 */
#ifndef GGFS_UTIL_PREAD_FULL_H
#define GGFS_UTIL_PREAD_FULL_H

#include <stddef.h>
#include <stdint.h>

/* Reads up to len bytes of fd at off into buf, retrying on EINTR and
 * short reads. *got is the number of bytes read: len, or fewer when the
 * file ends first. Returns 0, or the errno of a failed read (*got then
 * counts the bytes read before it). */
int ggfs_pread_full(int fd, void *buf, size_t len, uint64_t off, size_t *got);

#endif
