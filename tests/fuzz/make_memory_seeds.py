#!/usr/bin/env python3
"""Writes the memory harness's seeds (tests/fuzz/seeds/memory): for each
model given, a small GGUF file with the model's keys as they are (their
bytes copied) and one tiny f32 tensor in each place offload/ tells apart
(the token embeddings, the output, each layer's norm, an expert tensor
where the model has them, rope_freqs), so that the fuzzer starts from
every architecture's rules with a file of a few kilobytes.

usage: make_memory_seeds.py OUTDIR MODEL.gguf...
"""
import os
import struct
import sys

SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def skip_value(data, at, vtype):
    if vtype in SCALAR:
        return at + SCALAR[vtype]
    if vtype == 8:
        (n,) = struct.unpack_from("<Q", data, at)
        return at + 8 + n
    if vtype == 9:
        etype, count = struct.unpack_from("<IQ", data, at)
        at += 12
        if etype in SCALAR:
            return at + SCALAR[etype] * count
        for _ in range(count):
            at = skip_value(data, at, etype)
        return at
    raise ValueError("value type %d" % vtype)


def keys_of(path):
    """The raw bytes of the model's keys, their count, and the names of its tensors."""
    with open(path, "rb") as f:
        data = f.read(32 << 20)
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
    assert magic == b"GGUF" and version == 3
    at = 24
    for _ in range(n_kv):
        (n,) = struct.unpack_from("<Q", data, at)
        at += 8 + n
        (vtype,) = struct.unpack_from("<I", data, at)
        at = skip_value(data, at + 4, vtype)
    kv_bytes = data[24:at]
    names = []
    for _ in range(n_tensors):
        (n,) = struct.unpack_from("<Q", data, at)
        names.append(data[at + 8:at + 8 + n].decode())
        (n_dims,) = struct.unpack_from("<I", data, at + 8 + n)
        at += 8 + n + 4 + 8 * n_dims + 4 + 8
    return kv_bytes, n_kv, names


def tensor_names(names):
    """One tensor per place offload/ tells apart."""
    keep, layers = [], set()
    for name in names:
        parts = name.split(".")
        if parts[0] == "blk":
            if parts[1] not in layers:
                layers.add(parts[1])
                keep.append(name)
            elif "_exps" in name and not any("_exps" in k for k in keep):
                keep.append(name)
        elif name.startswith(("token_embd.", "output", "rope_freqs.")):
            keep.append(name)
    return keep


def write_seed(out, kv_bytes, n_kv, names):
    head = b"GGUF" + struct.pack("<IQQ", 3, len(names), n_kv) + kv_bytes
    for i, name in enumerate(names):
        b = name.encode()
        head += struct.pack("<Q", len(b)) + b + struct.pack("<IQIQ", 1, 1, 0, 32 * i)
    head += b"\0" * (-len(head) % 32)
    with open(out, "wb") as f:
        f.write(head + b"\0" * (32 * len(names)))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for model in sys.argv[2:]:
        kv_bytes, n_kv, names = keys_of(model)
        write_seed(os.path.join(out, os.path.basename(model).removesuffix(".gguf")), kv_bytes, n_kv,
                   tensor_names(names))


if __name__ == "__main__":
    main()
