/*
 * The hashes' names and sizes, and their computation through the loaded
 * module (digest.h).
 */
#include <stdlib.h>

#include "tree/digest.h"
#include "util/module.h"

struct ggfs_digests {
    const ggfs_digest_module *module;
    void *state;
};

static const char *const names[GGFS_N_HASHES] = {"xxh64", "xxh3", "sha1", "sha256", "md5"};
static const size_t sizes[GGFS_N_HASHES] = {8, 8, 20, 32, 16};

const char *ggfs_hash_name(ggfs_hash h)
{
    return names[h];
}

size_t ggfs_hash_size(ggfs_hash h)
{
    return sizes[h];
}

const ggfs_digest_module *ggfs_digest_module_load(char *why, size_t why_size)
{
    return ggfs_module_load(GGFS_DIGEST_MODULE_FILE, GGFS_DIGEST_MODULE_ENTRY, why, why_size);
}

ggfs_digests *ggfs_digests_new(const ggfs_digest_module *module, unsigned mask)
{
    ggfs_digests *d = malloc(sizeof *d);
    if (!d)
        return NULL;
    d->module = module;
    d->state = module->start(mask);
    if (!d->state) {
        free(d);
        return NULL;
    }
    return d;
}

void ggfs_digests_update(ggfs_digests *d, const void *bytes, size_t len)
{
    d->module->update(d->state, bytes, len);
}

bool ggfs_digests_final(ggfs_digests *d, uint8_t out[GGFS_N_HASHES][GGFS_DIGEST_MAX])
{
    return d->module->final(d->state, out);
}

void ggfs_digests_free(ggfs_digests *d)
{
    if (!d)
        return;
    d->module->free(d->state);
    free(d);
}

void ggfs_hex(const uint8_t *bytes, size_t len, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        hex[2 * i] = digits[bytes[i] >> 4];
        hex[2 * i + 1] = digits[bytes[i] & 15];
    }
}
