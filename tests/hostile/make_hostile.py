#!/usr/bin/env python3
"""Writes the corpus of hostile GGUF files: one file per refusal rule of
SPEC.md ("Input the program accepts"), each with the byte offset and a
phrase its refusal must name, plus files that bend the rules without
breaking them and must be accepted.

usage: make_hostile.py OUTDIR

OUTDIR/manifest.tsv has one line per file:
    <file>\trefuse\t<offset>\t<phrase>     refused at <offset>, message has <phrase>
    <file>\trefuse\tmax:<n>\t-            refused at an offset of at most <n>
    <file>\taccept\t-\t-                   opens, every file of the mount readable
"""
import os
import struct
import sys

V = dict(u8=0, i8=1, u16=2, i16=3, u32=4, i32=5, f32=6, bool=7, str=8, arr=9, u64=10, i64=11, f64=12)
FMT = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: 'B', 10: 'Q', 11: 'q', 12: 'd'}


class Gguf:
    """A GGUF writer that records where each field lands and lets a case
    write any field wrong."""

    def __init__(self, version=3, big=False, magic=None):
        self.b = bytearray()
        self.version = version
        self.e = '>' if big else '<'
        self.marks = {}
        self.b += magic if magic is not None else (b'FUGG' if big else b'GGUF')
        self.u32(version)

    def mark(self, name):
        self.marks[name] = len(self.b)

    def raw(self, data):
        self.b += data

    def u32(self, v):
        self.b += struct.pack(self.e + 'I', v)

    def u64(self, v):
        self.b += struct.pack(self.e + 'Q', v)

    def count(self, v):
        if self.version == 1:
            self.u32(v)
        else:
            self.u64(v)

    def string(self, s, length=None):
        s = s.encode() if isinstance(s, str) else s
        self.count(len(s) if length is None else length)
        self.b += s

    def scalar(self, vtype, v):
        if vtype == V['str']:
            self.string(v)
        else:
            self.b += struct.pack(self.e + FMT[vtype], v)

    def kv(self, key, vtype, value):
        self.string(key)
        self.mark('type')
        self.u32(vtype)
        self.mark('value')
        self.scalar(vtype, value)

    def kv_array(self, key, etype, values, count=None):
        self.string(key)
        self.u32(V['arr'])
        self.mark('array')
        self.u32(etype)
        self.count(len(values) if count is None else count)
        for v in values:
            self.scalar(etype, v)

    def tensor(self, name, dims, ttype, offset):
        self.mark('tensor')
        self.string(name)
        self.mark('n_dims')
        self.u32(len(dims))
        for d in dims:
            self.mark('dim')
            self.count(d)
        self.mark('ttype')
        self.u32(ttype)
        self.mark('offset')
        self.u64(offset)

    def pad(self, alignment=32):
        self.b += b'\0' * (-len(self.b) % alignment)

    def header(self, n_tensors, n_kv):
        self.mark('tensor_count')
        self.count(n_tensors)
        self.mark('kv_count')
        self.count(n_kv)


def f32_model(g, names=('a',), dims=(8,), data_size=None):
    """Finishes g with one f32 tensor per name, each 8 floats."""
    for i, n in enumerate(names):
        g.tensor(n, dims, 0, i * 32)
    g.pad()
    g.raw(b'\x01' * (data_size if data_size is not None else 32 * len(names)))
    return g


def cases():
    """Yields (name, bytes, verdict, offset, phrase)."""
    # Rule 1: magic and version.
    g = Gguf(magic=b'GGUX'); g.header(0, 0)
    yield 'bad-magic', g.b, 'refuse', 0, 'magic'
    for v in (0, 4):
        g = Gguf(version=v); g.header(0, 0)
        yield f'version-{v}', g.b, 'refuse', 4, 'version'
    g = Gguf(version=7, big=True); g.header(0, 0)
    yield 'big-endian-version-7', g.b, 'refuse', 4, 'version'

    # Rule 2: counts and lengths must fit in what remains.
    g = Gguf(); g.header(0, 2**60)
    yield 'kv-count-2^60', g.b, 'refuse', g.marks['kv_count'], 'kv_count'
    g = Gguf(); g.header(2**60, 0)
    yield 'tensor-count-2^60', g.b, 'refuse', g.marks['tensor_count'], 'tensor_count'
    g = Gguf(); g.header(0, 1); g.mark('key'); g.string('k', length=2**40); g.raw(b'\0' * 16)
    yield 'key-length-past-end', g.b, 'refuse', g.marks['key'], 'key'
    g = Gguf(); g.header(0, 1); g.string('k'); g.u32(V['str']); g.mark('s'); g.string('abc', length=1000)
    yield 'string-length-past-end', g.b, 'refuse', g.marks['s'], 'length 1000'
    g = Gguf(); g.header(0, 1); g.kv_array('k', V['u32'], [1, 2], count=2**61)
    yield 'array-count-2^61', g.b, 'refuse', g.marks['array'] + 4, 'array of'
    g = Gguf(); g.header(0, 1); g.kv_array('k', V['str'], ['x'], count=2**40)
    yield 'string-array-count-2^40', g.b, 'refuse', g.marks['array'] + 4, 'array of'
    g = Gguf(); g.header(1, 0); g.tensor('t', [8], 0, 0)
    g.b = g.b[:g.marks['offset'] + 3]
    yield 'tensor-cut-in-offset', g.b, 'refuse', g.marks['offset'], 'tensor data offset'

    # Rule 3: keys and tensor names non-empty and unique.
    g = Gguf(); g.header(0, 1); g.mark('key'); g.kv('', V['u8'], 1)
    yield 'empty-key', g.b, 'refuse', g.marks['key'], 'empty'
    # A repeated key is accepted (llama.cpp's converters wrote such files);
    # the later occurrence goes to warnings.
    g = Gguf(); g.header(0, 2); g.kv('dup', V['u8'], 1); g.kv('dup', V['u8'], 2)
    yield 'duplicate-key', g.b, 'accept', '-', '-'
    g = Gguf(); g.header(0, 3); g.kv_array('tokens', V['str'], ['a', 'b']); g.kv('x', V['u8'], 1)
    g.kv_array('tokens', V['str'], [b'c\n', b'\xff'])
    yield 'duplicate-array-key', g.b, 'accept', '-', '-'
    g = Gguf(); g.header(1, 0); g.tensor('', [8], 0, 0); g.pad(); g.raw(b'\0' * 32)
    yield 'empty-tensor-name', g.b, 'refuse', g.marks['tensor'], 'empty name'
    g = Gguf(); g.header(2, 0); g.tensor('t', [8], 0, 0); f32_model(g, names=['t'])
    yield 'duplicate-tensor', g.b, 'refuse', g.marks['tensor'], 'twice'

    # Rule 4: value types and nesting.
    g = Gguf(); g.header(0, 1); g.string('k'); g.mark('t'); g.u32(13); g.u32(0)
    yield 'value-type-13', g.b, 'refuse', g.marks['t'], 'value type 13'
    g = Gguf(); g.header(0, 1); g.string('k'); g.u32(V['arr']); g.mark('t'); g.u32(99); g.count(0)
    yield 'array-element-type-99', g.b, 'refuse', g.marks['t'], 'element type 99'
    for depth, verdict in ((8, 'accept'), (9, 'refuse')):
        g = Gguf(); g.header(0, 1); g.string('nested'); g.u32(V['arr'])
        for level in range(depth - 1):
            if level == depth - 2:
                g.mark('deepest')
            g.u32(V['arr']); g.count(1)
        g.u32(V['u8']); g.count(1); g.raw(b'\x07')
        if verdict == 'accept':
            yield f'nesting-depth-{depth}', g.b, 'accept', '-', '-'
        else:
            yield f'nesting-depth-{depth}', g.b, 'refuse', g.marks['deepest'] + 4 + (8 if g.version > 1 else 4), 'nested deeper'

    # Rule 5: bools are 0 or 1.
    g = Gguf(); g.header(0, 1); g.kv('b', V['bool'], 2)
    yield 'bool-2', g.b, 'refuse', g.marks['value'], 'bool is 2'
    g = Gguf(); g.header(0, 1); g.kv_array('b', V['bool'], [0, 1, 1, 255])
    yield 'bool-array-255', g.b, 'refuse', g.marks['array'] + 12 + 3, 'bool is 255'

    # Rule 6: general.alignment.
    g = Gguf(); g.header(0, 1); g.kv('general.alignment', V['u64'], 64)
    yield 'alignment-u64', g.b, 'refuse', g.marks['type'], 'not u32'
    for a in (0, 48):
        g = Gguf(); g.header(0, 1); g.kv('general.alignment', V['u32'], a)
        yield f'alignment-{a}', g.b, 'refuse', g.marks['value'], 'power of two'

    # Rule 7: tensor shapes and types.
    g = Gguf(); g.header(1, 0); g.tensor('t', [1, 1, 1, 1, 8], 0, 0); g.pad(); g.raw(b'\0' * 32)
    yield 'five-dims', g.b, 'refuse', g.marks['n_dims'], '5 dimensions'
    g = Gguf(); g.header(1, 0); g.tensor('t', [2**63], 0, 0)
    yield 'dim-past-int64', g.b, 'refuse', g.marks['dim'], 'past int64'
    g = Gguf(); g.header(1, 0); g.tensor('t', [2**32, 2**32], 0, 0)
    yield 'elements-overflow', g.b, 'refuse', g.marks['dim'], 'overflows'
    g = Gguf(); g.header(1, 0); g.tensor('t', [33], 2, 0); g.pad(); g.raw(b'\0' * 64)
    yield 'q4_0-row-not-whole-blocks', g.b, 'refuse', g.marks['n_dims'], 'not a multiple'
    g = Gguf(); g.header(1, 0); g.tensor('t', [2**62], 28, 0)
    yield 'bytes-overflow', g.b, 'refuse', g.marks['n_dims'], 'byte size overflows'
    g = Gguf(); g.header(1, 0); g.tensor('t', [32], 4, 0); g.pad(); g.raw(b'\0' * 32)
    yield 'removed-type-4', g.b, 'refuse', g.marks['ttype'], 'removed'
    g = Gguf(); g.header(1, 0); g.tensor('t', [32], 36, 0); g.pad(); g.raw(b'\0' * 32)
    yield 'removed-type-36', g.b, 'refuse', g.marks['ttype'], 'removed'

    # Rule 8: tensor data placement.
    g = Gguf(); g.header(1, 0); g.tensor('t', [8], 0, 16); g.pad(); g.raw(b'\0' * 64)
    yield 'misaligned-offset', g.b, 'refuse', g.marks['offset'], 'alignment'
    g = Gguf(); g.header(1, 0); g.tensor('t', [8], 0, 0); f32_model(g, names=[], data_size=31)
    yield 'data-past-end', g.b, 'refuse', g.marks['offset'], 'past end of file'
    g = Gguf(); g.header(1, 0); g.tensor('t', [8], 0, 2**64 - 32)
    yield 'offset-wraps', g.b, 'refuse', g.marks['offset'], 'past end of file'

    # ik_llama.cpp's types are known by size: iq4_ks (144) has rows of a
    # 4-byte scale and 136-byte blocks of 256, so 2 rows of 512 take 552 bytes.
    g = Gguf(); g.header(2, 0); g.tensor('ik', [512, 2], 144, 0); g.tensor('next', [8], 0, 576)
    g.pad(); g.raw(b'\0' * (576 + 32))
    yield 'ik-llama-iq4_ks', g.b, 'accept', '-', '-'
    g = Gguf(); g.header(1, 0); g.tensor('ik', [512, 2], 144, 0); g.pad(); g.raw(b'\0' * 551)
    yield 'ik-llama-iq4_ks-past-end', g.b, 'refuse', g.marks['offset'], 'past end of file'
    g = Gguf(); g.header(1, 0); g.tensor('ik', [100], 144, 0); g.pad(); g.raw(b'\0' * 1024)
    yield 'ik-llama-iq4_ks-ragged-row', g.b, 'refuse', g.marks['n_dims'], 'block size 256'

    # Bent but not broken: these must open.
    # An id neither ggml nor ik_llama.cpp assigned (99 is ik_llama.cpp's q8_2_x4).
    g = Gguf(); g.header(1, 0); g.tensor('odd', [32], 1000, 0); g.pad()
    yield 'unknown-type-1000', g.b, 'accept', '-', '-'
    g = Gguf(); g.header(2, 0); g.tensor('x', [8], 0, 0); g.tensor('y', [8], 0, 0); g.pad(); g.raw(b'\0' * 32)
    yield 'overlapping-tensors', g.b, 'accept', '-', '-'
    g = Gguf(); g.header(2, 0); g.tensor('x', [8], 0, 0); g.tensor('y', [8], 0, 128); g.pad(); g.raw(b'\0' * 160)
    yield 'gap-between-tensors', g.b, 'accept', '-', '-'
    g = Gguf(); g.header(2, 0); g.tensor('empty', [0, 4], 12, 0); g.tensor('scalar', [], 0, 0); g.pad(); g.raw(b'\0' * 32)
    yield 'zero-sized-and-scalar', g.b, 'accept', '-', '-'
    g = Gguf(); g.header(0, 3)
    g.kv('Not.Snake-Case', V['str'], b'\xff\xfe invalid utf-8 \x00 nul')
    g.kv('a/b', V['u8'], 1); g.kv('..', V['u8'], 2)
    g.raw(b'trailing bytes after everything')
    yield 'odd-keys-and-trailing-bytes', g.b, 'accept', '-', '-'
    g = Gguf(); g.header(0, 1); g.kv('general.alignment', V['u32'], 1)
    yield 'alignment-1', g.b, 'accept', '-', '-'
    names = [b'a/b', b'..', b'.', b'%', b'%2F', b'x' * 300 + b'1', b'x' * 300 + b'2',
             b'ctl\x01\x7f', b'\xff\xfe', b'/' * 100]
    g = Gguf(); g.header(len(names), 0)
    for i, n in enumerate(names):
        g.tensor(n, [8], 0, 32 * i)
    g.pad(); g.raw(b'\0' * 32 * len(names))
    yield 'hostile-tensor-names', g.b, 'accept', '-', '-'


def truncations(out, lines):
    """Every proper prefix of a small valid file must be refused cleanly."""
    g = Gguf(); g.header(1, 2)
    g.kv('general.name', V['str'], 'tiny')
    g.kv_array('tokens', V['str'], ['a', 'bc'])
    f32_model(g, names=['t'])
    whole = bytes(g.b)
    with open(os.path.join(out, 'truncate-base.gguf'), 'wb') as f:
        f.write(whole)
    lines.append('truncate-base.gguf\taccept\t-\t-')
    for n in range(len(whole)):
        name = f'truncate-{n:04d}.gguf'
        with open(os.path.join(out, name), 'wb') as f:
            f.write(whole[:n])
        # Wherever the cut falls, the refusal names an offset inside what is left.
        lines.append(f'{name}\trefuse\tmax:{n}\t-')


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    lines = []
    for name, data, verdict, offset, phrase in cases():
        with open(os.path.join(out, name + '.gguf'), 'wb') as f:
            f.write(bytes(data))
        lines.append(f'{name}.gguf\t{verdict}\t{offset}\t{phrase}')
    truncations(out, lines)
    with open(os.path.join(out, 'manifest.tsv'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
