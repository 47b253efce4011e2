/*
 * Telling a service manager how the daemon is doing, as sd_notify(3) does,
 * without libsystemd: one datagram on the AF_UNIX socket that
 * $NOTIFY_SOCKET names. A unit with Type=notify is started once the daemon
 * sends "READY=1" and sees "STOPPING=1" on the way down.
 */
#ifndef GGFS_DAEMON_NOTIFY_H
#define GGFS_DAEMON_NOTIFY_H

#include <stdbool.h>

/* Sends state ("READY=1", "STOPPING=1", ...) to socket_path, the value of
 * $NOTIFY_SOCKET: a path, or an abstract socket name starting with '@'.
 * Nothing is sent, and true returned, when socket_path is NULL or empty
 * (not run by a service manager). Returns false with errno set when the
 * address is unusable (EAFNOSUPPORT for kinds other than AF_UNIX,
 * ENAMETOOLONG) or sending failed. */
bool ggfs_notify(const char *socket_path, const char *state);

#endif
