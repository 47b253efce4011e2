#!/usr/bin/env python3
"""Prints the file offset of a key's length field in a GGUF file (where
`warnings` lines about that key point), read with a walk of its own.

usage: key_offset.py MODEL.gguf KEY
"""
import struct
import sys

SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY = 8, 9


def skip_value(f, vtype):
    if vtype in SCALAR:
        f.seek(SCALAR[vtype], 1)
    elif vtype == STRING:
        (n,) = struct.unpack("<Q", f.read(8))
        f.seek(n, 1)
    elif vtype == ARRAY:
        etype, count = struct.unpack("<IQ", f.read(12))
        for _ in range(count):
            skip_value(f, etype)
    else:
        sys.exit("unknown value type %d" % vtype)


def main():
    path, wanted = sys.argv[1], sys.argv[2].encode()
    with open(path, "rb") as f:
        magic, _version, _tensors, n_kv = struct.unpack("<4sIQQ", f.read(24))
        if magic != b"GGUF":
            sys.exit("not a GGUF file")
        for _ in range(n_kv):
            at = f.tell()
            (n,) = struct.unpack("<Q", f.read(8))
            key = f.read(n)
            (vtype,) = struct.unpack("<I", f.read(4))
            if key == wanted:
                print(at)
                return
            skip_value(f, vtype)
    sys.exit("no key " + sys.argv[2])


if __name__ == "__main__":
    main()
