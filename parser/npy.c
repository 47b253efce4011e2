/*
 * The header of tensors/NAME/f32.npy: NumPy's format 1.0, so that
 * numpy.load(p, mmap_mode="r") gives the tensor with its shape, the f32
 * bytes following the header unchanged.
 *
 *   \x93NUMPY  1 0  HEADER_LEN (u16 little-endian)
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (ne[n-1], ..., ne[0]), }
 *   spaces, then '\n', so that the whole header is a multiple of 64 bytes
 *
 * ggml's ne0 varies fastest, which is NumPy's last axis in C order, hence
 * the reversed shape. A tensor with no dimensions is a scalar, shape ().
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ggp_i.h"

size_t ggp_npy_header(const ggp_tensor *t, char buf[GGP_NPY_HEADER_MAX])
{
    static const char magic[] = "\x93NUMPY\x01\x00";
    const size_t prefix = 10; // magic (6), version (2), header length (2)
    char dict[160];
    size_t o = (size_t)sprintf(dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    for (uint32_t j = t->n_dims; j-- > 0;)
        o += (size_t)sprintf(dict + o, j + 1 < t->n_dims ? ", %" PRId64 : "%" PRId64, t->ne[j]);
    o += (size_t)sprintf(dict + o, t->n_dims == 1 ? ",), }" : "), }");
    // Pad with spaces; the newline ends the header at a multiple of 64.
    const size_t total = (prefix + o + 1 + 63) / 64 * 64;
    const size_t header_len = total - prefix;
    memcpy(buf, magic, 8);
    buf[8] = (char)(header_len & 0xff);
    buf[9] = (char)(header_len >> 8);
    memcpy(buf + prefix, dict, o);
    memset(buf + prefix + o, ' ', total - prefix - o - 1);
    buf[total - 1] = '\n';
    return total;
}
