/*
 * What every chat-template audit must give, whatever its input: findings
 * inside the text, in order of offset, with short names; every byte of
 * every name is read (ASan sees a name that points outside).
 */
#ifndef GGFS_FUZZ_AUDIT_CHECK_H
#define GGFS_FUZZ_AUDIT_CHECK_H

#include <stdint.h>
#include <stdlib.h>

#include "ggt.h"

typedef struct audit_check {
    uint64_t size;
    uint64_t last_at;  // findings come in order of offset
    uint64_t checksum; // reads every byte of every name
} audit_check;

static void finding(void *ctx, const ggt_finding *f)
{
    audit_check *a = ctx;
    if (f->at > a->size || f->at < a->last_at || f->name.len > 96)
        abort();
    a->last_at = f->at;
    for (uint64_t i = 0; i < f->name.len; i++)
        a->checksum += (unsigned char)f->name.ptr[i];
}

#endif
