#!/usr/bin/env python3
"""Renders what SPEC.md says metadata/ must hold, from ggml's own reading of
a model (the X.expected dump ggml-ref writes), independently of the C code.

usage: spec_render.py X.expected OUTDIR

Writes OUTDIR/metadata/<file name> per key with the expected contents, and
OUTDIR/types.tsv with "<user.gguf.type>\t<file name>" lines.
"""
import math
import os
import struct
import sys


def fnv1a32(b):
    h = 0x811c9dc5
    for c in b:
        h = ((h ^ c) * 0x01000193) & 0xffffffff
    return h


def file_name(key):
    if key in (b'.', b'..'):
        return b'%2E' * len(key)
    pieces = [{0x25: b'%25', 0x2f: b'%2F', 0: b'%00'}.get(c, bytes([c])) for c in key]
    out = b''.join(pieces)
    if len(out) <= 255:
        return out
    # Cut to 246 bytes without splitting an escape or a UTF-8 sequence.
    kept = b''
    for p in pieces:
        if len(kept) + len(p) > 246:
            break
        kept += p
    while kept and kept[-1] & 0xc0 == 0x80:
        kept = kept[:-1]
    if kept and kept[-1] >= 0xc0:
        kept = kept[:-1]
    return kept + b'~%08x' % fnv1a32(key)


def shortest(x, single):
    if math.isnan(x):
        return 'nan'
    if math.isinf(x):
        return '-inf' if x < 0 else 'inf'
    if single:
        # The fewest significant digits that read back to the same float32,
        # laid out as Python lays out that decimal.
        want = struct.pack('<f', x)
        for p in range(1, 10):
            s = '%.*e' % (p - 1, x)
            try:
                if struct.pack('<f', float(s)) == want:
                    break
            except OverflowError:  # rounded past the largest float32
                continue
        x = float(s)
    r = repr(x)
    return r[:-2] if r.endswith('.0') else r


def line_escape(b):
    out = []
    i = 0
    while i < len(b):
        c = b[i]
        n = utf8_len(b, i)
        if n > 1:
            out.append(b[i:i + n].decode())
            i += n
            continue
        if c == 0x5c:
            out.append('\\\\')
        elif c == 0x0a:
            out.append('\\n')
        elif c == 0x0d:
            out.append('\\r')
        elif c == 0x09:
            out.append('\\t')
        elif c < 0x20 or c == 0x7f or n == 0:
            out.append('\\x%02x' % c)
        else:
            out.append(chr(c))
        i += 1
    return ''.join(out).encode()


def utf8_len(b, i):
    """Length of the valid UTF-8 sequence at b[i], or 0."""
    for n in (1, 2, 3, 4):
        try:
            b[i:i + n].decode('utf-8')
            return n
        except UnicodeDecodeError:
            continue
    return 0


def scalar(t, v):
    if t in ('f32', 'f64'):
        bits = int(v, 16)
        x = struct.unpack('<f', struct.pack('<I', bits))[0] if t == 'f32' else \
            struct.unpack('<d', struct.pack('<Q', bits))[0]
        return shortest(x, t == 'f32').encode()
    if t == 'bool':
        return b'true' if v == '1' else b'false'
    return v.encode()


def render(t, v):
    if t == 'str':
        return bytes.fromhex(v) + b'\n'
    if not t.startswith('arr['):
        return scalar(t, v) + b'\n'
    et = t[4:-1]
    count, _, rest = v.partition(':')
    items = rest.split(',') if int(count) else []
    if et == 'str':
        lines = [line_escape(bytes.fromhex(x)) for x in items]
    else:
        lines = [scalar(et, x) for x in items]
    return b''.join(l + b'\n' for l in lines)


def main():
    expected, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, 'metadata'), exist_ok=True)
    types = []
    with open(expected) as f:
        for line in f:
            k, t, v = line.rstrip('\n').split('\t')
            key = bytes.fromhex(k)
            name = file_name(key)
            with open(os.path.join(out.encode(), b'metadata', name), 'wb') as g:
                g.write(render(t, v))
            types.append(t.encode() + b'\t' + name)
    with open(os.path.join(out, 'types.tsv'), 'wb') as g:
        g.write(b''.join(t + b'\n' for t in types))


if __name__ == '__main__':
    main()
