/*
 * Pinning the header: the pages of the mapping that hold the header,
 * metadata and tensor descriptors are replaced, at the same addresses, by
 * private anonymous copies. Every view stays valid, and a model file cut
 * short or rewritten later cannot fault or change them; tensor data is
 * still the file's own pages.
 */
#define _GNU_SOURCE // MAP_ANONYMOUS and mremap are Linux
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
    // Copy into fresh anonymous pages, then move them over the file's pages
    // in one step: the views never see a moment without their bytes.
    void *copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (copy == MAP_FAILED)
        return ggp_fail(err, GGP_ERR_NOMEM, 0, "no memory to keep the %llu-byte header",
                        (unsigned long long)copied);
    // pread, not a copy through the mapping: the same page-cache bytes,
    // without a page fault per page, and a short count instead of SIGBUS
    // should the file shrink meanwhile.
    uint64_t done = 0;
    while (done < copied) {
        const ssize_t n = pread(f->fd, (char *)copy + done, (size_t)(copied - done), (off_t)done);
        if (n <= 0) {
            munmap(copy, len);
            return ggp_fail(err, GGP_ERR_IO, done, "file changed while it was opened");
        }
        done += (uint64_t)n;
    }
    mprotect(copy, len, PROT_READ);
    void *at = (void *)f->base;
    if (mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, at) != at) {
        munmap(copy, len);
        return ggp_fail(err, GGP_ERR_NOMEM, 0, "cannot move the %llu-byte header into place",
                        (unsigned long long)len);
    }
    return true;
}
