/*
 * The sd_notify protocol, client side: the state is the whole datagram,
 * newline-separated KEY=VALUE assignments; the socket address is
 * $NOTIFY_SOCKET, where a leading '@' stands for the NUL byte that starts
 * an abstract socket name (whose address length then counts no terminator).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/notify.h"

bool ggfs_notify(const char *socket_path, const char *state)
{
    if (!socket_path || !*socket_path)
        return true;
    if (socket_path[0] != '/' && socket_path[0] != '@') {
        errno = EAFNOSUPPORT; // vsock: addresses and the like
        return false;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t len = strlen(socket_path);
    if (len > sizeof addr.sun_path - (socket_path[0] == '/')) {
        errno = ENAMETOOLONG;
        return false;
    }
    memcpy(addr.sun_path, socket_path, len);
    if (addr.sun_path[0] == '@')
        addr.sun_path[0] = '\0';
    socklen_t addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);

    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    ssize_t sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&addr, addr_len);
    int saved = errno;
    close(fd);
    errno = saved;
    return sent == (ssize_t)strlen(state);
}
