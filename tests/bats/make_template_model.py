#!/usr/bin/env python3
"""make_template_model.py OUT KEY=FILE...: writes a small GGUF model (one
f32 tensor) whose string keys KEY hold the bytes of FILE, in the order
given (a KEY given twice is a repeated key), and prints, one line per key,
the key and the file offset of its value's first byte."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'hostile'))
from make_hostile import V, Gguf, f32_model  # noqa: E402


def main():
    out, pairs = sys.argv[1], [a.split('=', 1) for a in sys.argv[2:]]
    g = Gguf()
    g.header(1, 1 + len(pairs))
    g.kv('general.architecture', V['str'], 'llama')
    offsets = []
    for key, path in pairs:
        value = open(path, 'rb').read()
        g.string(key)
        g.u32(V['str'])
        g.count(len(value))
        offsets.append((key, len(g.b)))
        g.raw(value)
    write_model(g, out, offsets)


def write_model(g, out, offsets):
    """Ends g with one f32 tensor, writes it to out and prints each
    (key, offset) of offsets on a line."""
    f32_model(g)
    open(out, 'wb').write(g.b)
    for key, at in offsets:
        print(key, at)


if __name__ == '__main__':
    main()
