/*
 * A fresh stderr in place of one whose lock a cancelled thread kept
 * (stderr_renew.h). glibc's stderr is a variable, as its manual says, so
 * it may be set like any other.
 */
#define _POSIX_C_SOURCE 200809L // fdopen, ftrylockfile, nanosleep
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "daemon/stderr_renew.h"

// A thread writing a line holds the lock for microseconds; one that is
// gone holds it for good.
#define TRIES 10
#define TRY_EVERY_NS (5 * 1000 * 1000)

static bool stderr_lock_frees(void)
{
    for (int i = 0; i < TRIES; i++) {
        if (ftrylockfile(stderr) == 0) {
            funlockfile(stderr);
            return true;
        }
        const struct timespec pause = {.tv_nsec = TRY_EVERY_NS};
        nanosleep(&pause, NULL);
    }
    return false;
}

bool ggfs_stderr_renew_if_held(void)
{
    if (stderr_lock_frees())
        return false;
    FILE *fresh = fdopen(STDERR_FILENO, "w");
    if (!fresh)
        return false;
    setvbuf(fresh, NULL, _IONBF, 0);
    stderr = fresh;
    return true;
}
