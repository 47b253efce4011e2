/*
 * Giving the daemon a usable stderr back after libfuse's loop. The loop
 * ends its threads with pthread_cancel. When an unmount ends the connection
 * while a thread is reading a request, the read fails with ECONNABORTED and
 * libfuse reports it with perror(), which glibc writes holding stderr's lock
 * with no cancellation handler: a thread cancelled in that write keeps the
 * lock for good. Any later write to stderr (libfuse's own, ours, a
 * sanitizer's flush at exit) would then wait for ever.
 */
#ifndef GGFS_DAEMON_STDERR_RENEW_H
#define GGFS_DAEMON_STDERR_RENEW_H

#include <stdbool.h>

/* When stderr's lock stays held by another thread for 50 ms, puts a fresh
 * unbuffered stream on descriptor 2 in stderr's place and returns true; the
 * old stream is left as it is (closing it would wait on its lock). Call it
 * once the loop's threads are joined. */
bool ggfs_stderr_renew_if_held(void);

#endif
