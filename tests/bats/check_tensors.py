#!/usr/bin/env python3
"""Checks a mounted model's tensors/ against ggml: every tensor's info
against ggml's reading (X.tensors), raw against the model's bytes, f32
against ggml's to_float (X.ref), through numpy.fromfile, numpy.memmap and
reads at arbitrary offsets and lengths.

usage: check_tensors.py MOUNTPOINT X.gguf X.tensors X.ref [TYPE_NAME]
Prints one line per failure; exits 1 if any.
"""
import os
import random
import sys

import numpy as np

from spec_render import file_name


def fail(msg):
    print(msg)
    fail.count += 1


fail.count = 0


def main():
    mnt, model, tensors, ref = sys.argv[1:5]
    ref_bytes = open(ref, 'rb').read()
    model_bytes = open(model, 'rb')
    rng = random.Random(1234)
    ref_pos = 0
    rows = [l.rstrip('\n').split('\t') for l in open(tensors) if not l.startswith('#')]
    listed = sorted(os.listdir(os.path.join(mnt.encode(), b'tensors')))
    if listed != sorted(file_name(r[0].encode()) for r in rows):
        fail(f'tensors/ lists {listed}, ggml has {[r[0] for r in rows]}')
    for name, type_id, ne, offset, nbytes in rows:
        d = os.path.join(mnt, 'tensors', file_name(name.encode()).decode('utf-8', 'surrogateescape'))
        dims = [int(x) for x in ne.split()]
        elements = int(np.prod(dims))
        info = dict(l.split(': ', 1) for l in open(os.path.join(d, 'info')).read().splitlines())
        shape = [int(x) for x in info['shape'].split()]
        # ggml pads the shape to 4 dims with 1s; info lists the file's dims.
        if shape + [1] * (4 - len(shape)) != dims:
            fail(f'{name}: shape {shape}, ggml says {dims}')
        for key, want in (('name', name), ('elements', str(elements)), ('bytes', nbytes), ('offset', offset)):
            if info.get(key) != want:
                fail(f'{name}: info {key} is {info.get(key)!r}, ggml says {want!r}')
        # raw: the bytes of the model file.
        model_bytes.seek(int(offset))
        stored = model_bytes.read(int(nbytes))
        raw_path = os.path.join(d, 'raw')
        if os.stat(raw_path).st_size != int(nbytes) or open(raw_path, 'rb').read() != stored:
            fail(f'{name}: raw differs from the model bytes')
        # f32: ggml's to_float, bit for bit.
        want = ref_bytes[ref_pos:ref_pos + 4 * elements]
        ref_pos += 4 * elements
        f32_path = os.path.join(d, 'f32')
        if os.stat(f32_path).st_size != 4 * elements:
            fail(f'{name}: f32 size {os.stat(f32_path).st_size}, expected {4 * elements}')
        got = open(f32_path, 'rb').read()
        if got != want:
            first = next(i for i in range(0, len(want), 4) if got[i:i + 4] != want[i:i + 4])
            fail(f'{name}: f32 differs from ggml first at element {first // 4}')
            continue
        arr = np.fromfile(f32_path, dtype='<f4').reshape(shape[::-1])
        expect = np.frombuffer(want, dtype='<f4').reshape(shape[::-1])
        if arr.tobytes() != expect.tobytes():
            fail(f'{name}: numpy.fromfile(...).reshape differs')
        mm = np.memmap(f32_path, dtype='<f4', mode='r')
        if mm.tobytes() != want:
            fail(f'{name}: numpy.memmap differs')
        del mm
        # Arbitrary offsets and lengths, mid-element and mid-block.
        fd = os.open(f32_path, os.O_RDONLY)
        rfd = os.open(raw_path, os.O_RDONLY)
        for _ in range(40):
            off = rng.randrange(0, len(want))
            n = rng.randrange(1, min(len(want) - off, 9000) + 1)
            if os.pread(fd, n, off) != want[off:off + n]:
                fail(f'{name}: f32 pread({n}, {off}) differs')
            roff = rng.randrange(0, len(stored))
            rn = rng.randrange(1, len(stored) - roff + 1)
            if os.pread(rfd, rn, roff) != stored[roff:roff + rn]:
                fail(f'{name}: raw pread({rn}, {roff}) differs')
        if os.pread(fd, 3, len(want) - 3) != want[-3:]:
            fail(f'{name}: last 3 bytes of f32 differ')
        if os.pread(fd, 100, len(want)) != b'':
            fail(f'{name}: read past the end returned data')
        os.close(fd)
        os.close(rfd)
    if ref_pos != len(ref_bytes):
        fail(f'{ref}: {len(ref_bytes) - ref_pos} reference bytes not matched to a tensor')
    sys.exit(1 if fail.count else 0)


if __name__ == '__main__':
    main()
