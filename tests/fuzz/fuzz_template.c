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
#include "audit_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    audit_check audit = {size, 0, 0};
    if (!ggt_audit(data, size, finding, &audit))
        abort();
    return 0;
}
