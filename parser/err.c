/*
 * Error codes, messages and the quoting of untrusted names inside them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "ggp_i.h"

const char *ggp_strerror(ggp_err code)
{
    switch (code) {
    case GGP_OK: return "no error";
    case GGP_ERR_IO: return "cannot read the file";
    case GGP_ERR_NOMEM: return "out of memory";
    case GGP_ERR_MAGIC: return "not a GGUF file";
    case GGP_ERR_VERSION: return "unsupported GGUF version";
    case GGP_ERR_TRUNCATED: return "truncated";
    case GGP_ERR_KEY: return "bad key";
    case GGP_ERR_VALUE_TYPE: return "bad value type";
    case GGP_ERR_BOOL: return "bad bool";
    case GGP_ERR_NESTING: return "arrays nested too deep";
    case GGP_ERR_ALIGNMENT: return "bad alignment";
    case GGP_ERR_TENSOR: return "bad tensor";
    case GGP_ERR_DATA: return "bad tensor data";
    case GGP_ERR_RANGE: return "out of range";
    case GGP_ERR_UNSUPPORTED: return "not supported";
    case GGP_ERR_NEED_MORE: return "header continues past the bytes given";
    case GGP_ERR_TEXT: return "not a value of the type";
    case GGP_ERR_TOO_BIG: return "value too big";
    }
    return "unknown error";
}

bool ggp_fail(ggp_error *err, ggp_err code, uint64_t offset, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return false;
}

size_t ggp_utf8_seq_len(const uint8_t *p, size_t n)
{
    if (n == 0)
        return 0;
    uint8_t c = p[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t min;
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
        len = 2, min = 0x80, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, min = 0x800, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, min = 0x10000, cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past Unicode are invalid.
    if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

const char *ggp_quote_name(ggp_str name, char *buf, size_t bufsize)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *p = (const uint8_t *)name.ptr;
    size_t out = 0;
    const size_t room = bufsize - 4; // keeps space for "..." and NUL
    for (uint64_t i = 0; i < name.len;) {
        size_t seq = ggp_utf8_seq_len(p + i, (size_t)(name.len - i < 4 ? name.len - i : 4));
        bool printable = seq > 1 || (seq == 1 && p[i] >= 0x20 && p[i] != 0x7f && p[i] != '\\');
        size_t need = printable ? seq : 4;
        if (out + need > room) {
            buf[out++] = '.', buf[out++] = '.', buf[out++] = '.';
            break;
        }
        if (printable) {
            for (size_t k = 0; k < seq; k++)
                buf[out++] = (char)p[i + k];
            i += seq;
        } else {
            buf[out++] = '\\', buf[out++] = 'x';
            buf[out++] = hex[p[i] >> 4], buf[out++] = hex[p[i] & 15];
            i += 1;
        }
    }
    buf[out] = '\0';
    return buf;
}

uint64_t ggp_hash_bytes(const void *bytes, uint64_t len)
{
    const uint8_t *p = bytes;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (uint64_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}
