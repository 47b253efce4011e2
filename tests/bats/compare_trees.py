#!/usr/bin/env python3
"""compare_trees.py SPLIT_MNT SINGLE_MNT: the tree of a mounted split set
equals the tree of the same model mounted from one file: the same metadata
files but split.*, the same tensor directories with the same info (but the
offset and shard lines), raw, f32, f32.npy and stats bytes. Prints the first difference
and exits 1; prints what it compared and exits 0 when equal."""

import os
import sys


def listing(path):
    return sorted(os.listdir(path))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def info_without_place(text):
    return [l for l in text.splitlines() if not l.startswith((b"offset: ", b"shard: "))]


def main(split, single):
    keys = [k for k in listing(f"{split}/metadata") if not k.startswith("split.")]
    if keys != listing(f"{single}/metadata"):
        return f"metadata names differ: {keys} vs {listing(f'{single}/metadata')}"
    for k in keys:
        if read(f"{split}/metadata/{k}") != read(f"{single}/metadata/{k}"):
            return f"metadata/{k} differs"
    tensors = listing(f"{split}/tensors")
    if tensors != listing(f"{single}/tensors"):
        return "tensor names differ"
    files = 0
    for t in tensors:
        a, b = f"{split}/tensors/{t}", f"{single}/tensors/{t}"
        if listing(a) != listing(b):
            return f"tensors/{t}: files differ: {listing(a)} vs {listing(b)}"
        if info_without_place(read(f"{a}/info")) != info_without_place(read(f"{b}/info")):
            return f"tensors/{t}/info differs"
        for name in ("raw", "f32", "f32.npy", "stats"):
            if os.path.exists(f"{b}/{name}"):
                if read(f"{a}/{name}") != read(f"{b}/{name}"):
                    return f"tensors/{t}/{name} differs"
                files += 1
    print(f"{len(keys)} keys, {len(tensors)} tensors, {files} data files equal")
    return None


if __name__ == "__main__":
    problem = main(sys.argv[1], sys.argv[2])
    if problem:
        print(problem)
        sys.exit(1)
