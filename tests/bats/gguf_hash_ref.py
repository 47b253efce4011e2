#!/usr/bin/env python3
"""What `llama-gguf-hash --all --uuid model.gguf` prints for a GGUF file,
computed here independently of the C code, and a check of a mount against it.

usage: gguf_hash_ref.py print MODEL [SIZES]
       gguf_hash_ref.py check MOUNT MODEL [SIZES] [--files-first]

The header of MODEL (any version, either byte order) is parsed here: the
counts, the keys skipped by their types, each tensor's name, type and
offset, general.alignment, and the data section at the next multiple of
the alignment. A tensor's size is ggml's own (ggml_nbytes, the bytes
gguf-hash hashes) from SIZES, ggml's dump of the model's tensors (X.tensors:
name, type, ne, offset, nbytes; for a variant of a fixture, the original's
dump: the same tensors), or else from the few types this script knows. When
SIZES is MODEL's own dump, the offsets found here must be ggml's.

gguf-hash (llama.cpp tools/gguf-hash) prints, for each tensor in file order,
the lines xxh64, xxh3, sha1, sha256 of its bytes, then the model's xxh64,
xxh3, sha1, sha256 over every tensor's bytes in order and its UUIDv5 (RFC
9562: SHA-1 of the namespace's 16 bytes and then the bytes, version and
variant bits set) in llama.cpp's namespace, uuid5(NAMESPACE_URL,
'en.wikipedia.org/wiki/Llama.cpp'), each as printf("%-8s  %s  %s\\n", kind,
hex, "model.gguf:NAME" or "model.gguf").

check reads the mount's `hashes` (and compares its size in stat) and every
tensors/NAME/{xxh64,sha1,sha256} (hex and a newline), the tensor files
first with --files-first (each computing one hash on a fresh mount), else
after `hashes`. Prints each difference and exits 1 on any.
"""
import hashlib
import os
import struct
import sys
import uuid

import xxhash

from spec_render import file_name

LLAMA_CPP_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, 'en.wikipedia.org/wiki/Llama.cpp')
assert str(LLAMA_CPP_NAMESPACE) == 'ef001206-dadc-5f6d-a15f-3359e577d4e5'

# Sizes of the types used by files the tests write by hand: type id ->
# (elements per block, bytes per block).
KNOWN_TYPES = {0: (1, 4), 1: (1, 2), 8: (32, 34), 12: (256, 144)}
SCALAR = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: 'B', 10: 'Q', 11: 'q', 12: 'd'}
STRING, ARRAY = 8, 9


class Header:
    def __init__(self, data):
        self.data = data
        if data[:4] == b'FUGG':
            self.order = '>'
        elif struct.unpack('<I', data[4:8])[0] in (1, 2, 3):
            self.order = '<'
        else:
            self.order = '>'  # "GGUF" and a byte-swapped version
        self.pos = 4
        self.version = self.int('I')
        count = 'I' if self.version == 1 else 'Q'
        n_tensors, n_kv = self.int(count), self.int(count)
        self.count = count
        alignment = 32
        for _ in range(n_kv):
            key = self.string()
            vtype = self.int('I')
            value = self.value(vtype)
            if key == b'general.alignment' and vtype == 4:
                alignment = value
        self.tensors = []
        for _ in range(n_tensors):
            name = self.string()
            n_dims = self.int('I')
            ne = [self.int(count) for _ in range(n_dims)]
            ttype = self.int('I')
            offset = self.int('Q')
            self.tensors.append((name, ttype, ne, offset))
        self.data_offset = (self.pos + alignment - 1) // alignment * alignment

    def int(self, fmt):
        size = struct.calcsize(fmt)
        v = struct.unpack(self.order + fmt, self.data[self.pos:self.pos + size])[0]
        self.pos += size
        return v

    def string(self):
        n = self.int(self.count)
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s

    def value(self, vtype):
        if vtype == STRING:
            return self.string()
        if vtype == ARRAY:
            etype, n = self.int('I'), self.int(self.count)
            return [self.value(etype) for _ in range(n)]
        return self.int(SCALAR[vtype])


def tensors(model, sizes):
    """(name, absolute offset, bytes) of each tensor of model, in file order."""
    data = open(model, 'rb').read()
    h = Header(data)
    dump = {}
    if sizes:
        for line in open(sizes, 'rb'):
            if not line.startswith(b'#'):
                name, _, _, offset, nbytes = line.rstrip(b'\n').split(b'\t')
                dump[name] = (int(offset), int(nbytes))
    own_dump = sizes and os.path.splitext(sizes)[0] == os.path.splitext(model)[0]
    out = []
    for name, ttype, ne, offset in h.tensors:
        at = h.data_offset + offset
        if name in dump:
            ggml_at, nbytes = dump[name]
            if own_dump and ggml_at != at:
                raise SystemExit(f'{model}: tensor {name!r} at {at} here, at {ggml_at} for ggml')
        else:
            elements = 1
            for d in ne:
                elements *= d
            block, size = KNOWN_TYPES[ttype]
            nbytes = elements // block * size
        out.append((name, data[at:at + nbytes]))
    return out


def line(kind, digest_hex, what):
    return b'%-8s  %s  %s\n' % (kind.encode(), digest_hex.encode(), what)


def tensor_hashes(raw):
    return [('xxh64', xxhash.xxh64(raw, seed=0).hexdigest()), ('xxh3', xxhash.xxh3_64(raw).hexdigest()),
            ('sha1', hashlib.sha1(raw).hexdigest()), ('sha256', hashlib.sha256(raw).hexdigest())]


def expected(model, sizes):
    text = b''
    model_hashes = [xxhash.xxh64(seed=0), xxhash.xxh3_64(), hashlib.sha1(), hashlib.sha256()]
    for_uuid = hashlib.sha1(LLAMA_CPP_NAMESPACE.bytes)
    per_tensor = {}
    for name, raw in tensors(model, sizes):
        printed = name.split(b'\0', 1)[0]  # printf's %s stops at a NUL
        per_tensor[name] = dict(tensor_hashes(raw))
        for kind, hexdigest in tensor_hashes(raw):
            text += line(kind, hexdigest, b'model.gguf:' + printed)
        for m in model_hashes:
            m.update(raw)
        for_uuid.update(raw)
    for kind, m in zip(('xxh64', 'xxh3', 'sha1', 'sha256'), model_hashes):
        text += line(kind, m.hexdigest(), b'model.gguf')
    u = uuid.UUID(bytes=for_uuid.digest()[:16], version=5)
    text += line('uuid', str(u), b'model.gguf')
    return text, per_tensor


def check(mount, model, sizes, files_first):
    want, per_tensor = expected(model, sizes)
    problems = []

    def check_files():
        for name, hashes in per_tensor.items():
            d = os.path.join(mount.encode(), b'tensors', file_name(name))
            for kind in ('xxh64', 'sha1', 'sha256'):
                path = os.path.join(d, kind.encode())
                got = open(path, 'rb').read()
                if got != hashes[kind].encode() + b'\n':
                    problems.append(f'tensors/{name!r}/{kind}: {got!r}, want {hashes[kind]}')
                if os.stat(path).st_size != len(got):
                    problems.append(f'tensors/{name!r}/{kind}: {os.stat(path).st_size} bytes in stat, read {len(got)}')

    if files_first:
        check_files()
    path = os.path.join(mount, 'hashes')
    size = os.stat(path).st_size
    got = open(path, 'rb').read()
    if got != want:
        g, w = got.splitlines(), want.splitlines()
        first = next((i for i in range(min(len(g), len(w))) if g[i] != w[i]), min(len(g), len(w)))
        problems.append(f'hashes line {first + 1}: {g[first:first + 1]} want {w[first:first + 1]} '
                        f'({len(g)} lines, want {len(w)})')
    if size != len(got):
        problems.append(f'hashes: {size} bytes in stat, read {len(got)}')
    if not files_first:
        check_files()
    for p in problems:
        print(p)
    if not problems:
        print(f'{len(per_tensor)} tensors: hashes and tensor files equal')
    return 1 if problems else 0


def main(argv):
    if argv[:1] == ['print'] and len(argv) in (2, 3):
        sys.stdout.buffer.write(expected(argv[1], argv[2] if len(argv) > 2 else None)[0])
        return 0
    if argv[:1] == ['check']:
        files_first = '--files-first' in argv
        args = [a for a in argv[1:] if a != '--files-first']
        if len(args) in (2, 3):
            return check(args[0], args[1], args[2] if len(args) > 2 else None, files_first)
    print(__doc__.split('\n\n')[1], file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
