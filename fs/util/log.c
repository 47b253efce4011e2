/*
 * Log lines to the daemon's sink (log.h).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "util/log.h"

static _Atomic(ggfs_log_sink *) log_sink;

void ggfs_log_set_sink(ggfs_log_sink *sink)
{
    atomic_store(&log_sink, sink);
}

void ggfs_vlog(int level, const char *fmt, va_list ap)
{
    ggfs_log_sink *sink = atomic_load(&log_sink);
    if (sink)
        sink(level, fmt, ap);
    else
        vfprintf(stderr, fmt, ap);
}

void ggfs_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ggfs_vlog(level, fmt, ap);
    va_end(ap);
}
