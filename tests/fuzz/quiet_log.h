/*
 * The harnesses' log sink: each line is formatted (so that formatting is
 * fuzzed too) and dropped, so that the fuzzer's output stays its own.
 */
#ifndef GGFS_FUZZ_QUIET_LOG_H
#define GGFS_FUZZ_QUIET_LOG_H

#include <stdarg.h>
#include <stdio.h>

static void quiet(int level, const char *fmt, va_list ap)
{
    (void)level;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
}

#endif
