/*
 * The chat-template audit (template/: the Jinja lexer and reader) on its
 * own: the input is one template. Findings must come in order of offset,
 * inside the text, with short names; every byte of a name is read, so a
 * bad pointer faults here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct audit_check {
    uint64_t size;
    uint64_t last_at;
    uint64_t checksum;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    audit_check audit = {size, 0, 0};
    if (!ggt_audit(data, size, finding, &audit))
        abort();
    return 0;
}
