/*
 * The sd_notify datagram: what arrives on a path socket and on an abstract
 * one is exactly the state sent; no socket means nothing to do; addresses
 * that cannot work fail with errno set rather than send elsewhere.
 */
#define _GNU_SOURCE // mkdtemp

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "daemon/notify.h"

/* A datagram socket bound to name (a path, or '@' and an abstract name),
 * as systemd binds its end. */
static int listen_on(const char *name)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    memcpy(addr.sun_path, name, len);
    if (name[0] == '@')
        addr.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The next datagram on fd, NUL-terminated, into buf; its length or -1. */
static ssize_t receive(int fd, char *buf, size_t size)
{
    ssize_t n = recv(fd, buf, size - 1, MSG_DONTWAIT);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

static int test_path_socket_gets_the_state(void)
{
    char dir[] = "/tmp/test_notify.XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/notify", dir);
    int fd = listen_on(path);
    EXPECT(fd >= 0);
    char buf[64];
    int ok = ggfs_notify(path, "READY=1") && receive(fd, buf, sizeof buf) == 7 &&
             strcmp(buf, "READY=1") == 0 && ggfs_notify(path, "STOPPING=1") &&
             receive(fd, buf, sizeof buf) == 10 && strcmp(buf, "STOPPING=1") == 0;
    close(fd);
    unlink(path);
    rmdir(dir);
    EXPECT(ok);
    return 1;
}

static int test_abstract_socket_gets_the_state(void)
{
    char name[64];
    snprintf(name, sizeof name, "@gguf-fs-test-notify-%ld", (long)getpid());
    int fd = listen_on(name);
    EXPECT(fd >= 0);
    char buf[64];
    bool sent = ggfs_notify(name, "READY=1");
    ssize_t n = receive(fd, buf, sizeof buf);
    close(fd);
    EXPECT(sent);
    EXPECT_EQ(n, 7);
    EXPECT_STR(buf, "READY=1");
    return 1;
}

static int test_no_socket_is_nothing_to_do(void)
{
    EXPECT(ggfs_notify(NULL, "READY=1"));
    EXPECT(ggfs_notify("", "READY=1"));
    return 1;
}

static int test_unusable_addresses_fail_with_errno(void)
{
    errno = 0;
    EXPECT(!ggfs_notify("vsock:2:1234", "READY=1"));
    EXPECT_EQ(errno, EAFNOSUPPORT);
    char long_path[200];
    memset(long_path, 'x', sizeof long_path - 1);
    long_path[0] = '/';
    long_path[sizeof long_path - 1] = '\0';
    errno = 0;
    EXPECT(!ggfs_notify(long_path, "READY=1"));
    EXPECT_EQ(errno, ENAMETOOLONG);
    // Nobody listening: the failure is reported, not swallowed.
    EXPECT(!ggfs_notify("/nonexistent/gguf-fs/notify", "READY=1"));
    EXPECT(errno == ENOENT || errno == ECONNREFUSED);
    return 1;
}

int main(void)
{
    int ok = 1;
    ok &= test_path_socket_gets_the_state();
    ok &= test_abstract_socket_gets_the_state();
    ok &= test_no_socket_is_nothing_to_do();
    ok &= test_unusable_addresses_fail_with_errno();
    return ok ? 0 : 1;
}
