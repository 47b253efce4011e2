/*
 * Log lines of the layers below the FUSE side (sources, models), which
 * must not depend on libfuse. They go to stderr until the daemon names
 * another sink (syslog, once it has left its terminal), in the same
 * levels as syslog(3) and libfuse's fuse_log.
 *
 * The sink is the one piece of process-wide state outside main, set by
 * main alone, before it starts any thread, as libfuse's fuse_set_log_func
 * is. A module the program loads (util/module.h) has its own copy, which
 * the program sets to ggfs_vlog when it loads it.
 */
#ifndef GGFS_UTIL_LOG_H
#define GGFS_UTIL_LOG_H

#include <stdarg.h>

enum { GGFS_LOG_ERR = 3, GGFS_LOG_WARNING = 4, GGFS_LOG_INFO = 6 }; // syslog's numbers

typedef void ggfs_log_sink(int level, const char *fmt, va_list ap);

/* Sends every later line to sink (NULL: stderr again). */
void ggfs_log_set_sink(ggfs_log_sink *sink);

/* One line (fmt ends with "\n"). */
void ggfs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same with a va_list: a ggfs_log_sink, which the program gives each
 * module it loads (util/module.h), whose code has a sink of its own, so
 * that the module's lines go wherever the program's go. */
void ggfs_vlog(int level, const char *fmt, va_list ap);

#endif
