#!/usr/bin/env python3
"""Writes a GGUF file for the remote tests: general.name, a vocabulary of
TOKENS strings (so the header can be larger than a fetch), and one f32
tensor t0, t1, ... per size in MiB, of random values, each aligned to 32.
Prints the offset where the tensor descriptors end. Deterministic.
With --hparams the header also has the hyperparameters of a Llama 3.1 8B
(32 layers, 32 heads, 8 KV heads, width 4096), so that memory/ and
offload/ have their tables: the tensors stay the ones given.

usage: make_model.py [--hparams] OUT TOKENS MIB...
"""
import random
import struct
import sys


def string(b):
    return struct.pack('<Q', len(b)) + b


LLAMA_8B = [('block_count', 32), ('context_length', 131072), ('embedding_length', 4096),
            ('feed_forward_length', 14336), ('attention.head_count', 32), ('attention.head_count_kv', 8)]


def main():
    args = sys.argv[1:]
    hparams = args[0] == '--hparams'
    if hparams:
        args = args[1:]
    out, n_tokens, sizes = args[0], int(args[1]), [int(a) for a in args[2:]]
    rng = random.Random(7)
    tokens = [b'tok%d-' % i + bytes(rng.choice(b'abcdefgh') for _ in range(rng.randrange(1, 12)))
              for i in range(n_tokens)]
    kvs = [string(b'general.architecture') + struct.pack('<I', 8) + string(b'llama'),
           string(b'general.name') + struct.pack('<I', 8) + string(b'remote test model'),
           string(b'tokenizer.ggml.tokens') + struct.pack('<IIQ', 9, 8, n_tokens)
           + b''.join(map(string, tokens))]
    if hparams:
        kvs += [string(b'llama.' + k.encode()) + struct.pack('<II', 4, v) for k, v in LLAMA_8B]
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
