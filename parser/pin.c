/*
 * Pinning the header: the pages of the mapping that hold the header,
 * metadata and tensor descriptors are replaced, at the same addresses, by
 * private anonymous copies. Every view stays valid, and a model file cut
 * short or rewritten later cannot fault or change them; tensor data is
 * still the file's own pages.
 */
#define _DEFAULT_SOURCE // MAP_ANONYMOUS is not POSIX
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ggp_i.h"

bool ggp_file_pin_header(ggp_file *f, ggp_error *err)
{
    if (f->fd < 0 || f->size == 0)
        return true; // the caller's bytes, or nothing mapped
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const uint64_t header = f->data_offset < f->size ? f->data_offset : f->size;
    const uint64_t len = (header + page - 1) / page * page;
    const uint64_t copied = len < f->size ? len : f->size;
    void *copy = malloc(copied ? copied : 1);
    if (!copy)
        return ggp_fail(err, GGP_ERR_NOMEM, 0, "no memory to keep the %llu-byte header",
                        (unsigned long long)copied);
    memcpy(copy, f->base, copied);
    void *at = (void *)f->base;
    void *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
    if (p != at) {
        free(copy);
        return ggp_fail(err, GGP_ERR_NOMEM, 0, "cannot map the %llu-byte header",
                        (unsigned long long)len);
    }
    memcpy(p, copy, copied);
    free(copy);
    mprotect(p, len, PROT_READ);
    return true;
}
