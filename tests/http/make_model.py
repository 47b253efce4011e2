#!/usr/bin/env python3
"""Writes a GGUF file for the remote tests: general.name, a vocabulary of
TOKENS strings (so the header can be larger than a fetch), and one f32
tensor t0, t1, ... per size in MiB, of random values, each aligned to 32.
Prints the offset where the tensor descriptors end. Deterministic.

usage: make_model.py OUT TOKENS MIB...
"""
import random
import struct
import sys


def string(b):
    return struct.pack('<Q', len(b)) + b


def main():
    out, n_tokens, sizes = sys.argv[1], int(sys.argv[2]), [int(a) for a in sys.argv[3:]]
    rng = random.Random(7)
    tokens = [b'tok%d-' % i + bytes(rng.choice(b'abcdefgh') for _ in range(rng.randrange(1, 12)))
              for i in range(n_tokens)]
    kvs = [string(b'general.architecture') + struct.pack('<I', 8) + string(b'llama'),
           string(b'general.name') + struct.pack('<I', 8) + string(b'remote test model'),
           string(b'tokenizer.ggml.tokens') + struct.pack('<IIQ', 9, 8, n_tokens)
           + b''.join(map(string, tokens))]
    descs, offset = [], 0
    for i, mib in enumerate(sizes):
        n = mib * (1 << 20) // 4
        descs.append(string(b't%d' % i) + struct.pack('<IQIQ', 1, n, 0, offset))
        offset += mib << 20
    head = b'GGUF' + struct.pack('<IQQ', 3, len(sizes), len(kvs)) + b''.join(kvs) + b''.join(descs)
    end = len(head)
    pad = (-len(head)) % 32
    with open(out, 'wb') as f:
        f.write(head + b'\0' * pad)
        data = random.Random(11)
        for mib in sizes:
            f.write(data.randbytes(mib << 20))
    print(end)


if __name__ == '__main__':
    main()
