#!/usr/bin/env python3
"""One reader of the load test: for SECONDS, reads a mounted model's
tensors every way a user does (whole files, os.pread at random offsets and
lengths like dd, numpy.memmap slices) and compares every byte with ggml's
reference f32 and with the model's raw bytes.

usage: load_reader.py MOUNTPOINT FIXTURE_BASE SEED SECONDS
"""
import os
import random
import sys
import time

import numpy as np

from spec_render import file_name


def main():
    mnt, base, seed, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    rng = random.Random(seed)
    ref = open(base + '.ref', 'rb').read()
    model = open(base + '.gguf', 'rb').read()
    tensors = []
    pos = 0
    for line in open(base + '.tensors'):
        if line.startswith('#'):
            continue
        name, _, ne, offset, nbytes = line.rstrip('\n').split('\t')
        n = int(np.prod([int(x) for x in ne.split()]))
        d = os.path.join(mnt, 'tensors', file_name(name.encode()).decode('utf-8', 'surrogateescape'))
        tensors.append((d, ref[pos:pos + 4 * n], model[int(offset):int(offset) + int(nbytes)]))
        pos += 4 * n
    deadline = time.monotonic() + seconds
    reads = 0
    while time.monotonic() < deadline:
        d, f32, raw = rng.choice(tensors)
        way = rng.randrange(3)
        if way == 0:
            assert open(d + '/f32', 'rb').read() == f32, d
            assert open(d + '/raw', 'rb').read() == raw, d
        elif way == 1:
            for path, want in ((d + '/f32', f32), (d + '/raw', raw)):
                fd = os.open(path, os.O_RDONLY)
                off = rng.randrange(len(want))
                n = rng.randrange(1, len(want) - off + 1)
                assert os.pread(fd, n, off) == want[off:off + n], (path, off, n)
                os.close(fd)
        else:
            m = np.memmap(d + '/f32', dtype='<f4', mode='r')
            i = rng.randrange(len(m))
            j = rng.randrange(i, len(m)) + 1
            assert m[i:j].tobytes() == f32[4 * i:4 * j], (d, i, j)
            del m
        reads += 1
    print(f'{mnt}: {reads} checked reads')


if __name__ == '__main__':
    main()
