#!/usr/bin/env python3
"""same_tree.py REMOTE_MNT LOCAL_MNT: the tree of a model mounted by URL
equals the tree of the same model mounted from its local file: the same
names everywhere, the same sizes and modes in stat, the same extended
attributes, the same bytes in every file (header, metadata, info, raw,
f32, model.gguf, ...). Only the `path` lines of shards/* differ (a URL
against a path), and `verify`, whose published digests and verdicts are
each store's own (a local file publishes nothing): its files' names, and
their digests where both lines are of one kind, are the same. The URL mount has `remote` at its root besides. Prints the first difference and exits 1; prints what it
compared and exits 0 when equal."""

import os
import stat
import sys


def xattrs(path):
    return {n: os.getxattr(path, n) for n in sorted(os.listxattr(path))}


def content(path, rel):
    with open(path, "rb") as f:
        data = f.read()
    if rel.startswith("shards/"):
        data = b"".join(l for l in data.splitlines(True) if not l.startswith(b"path: "))
    return data


def verify_lines(data):
    """name, kind and digest of each file's line of a verify text."""
    return [l.split(b"\t")[:3] for l in data.splitlines() if b"\t" in l]


def same_verify(a, b):
    la, lb = verify_lines(a), verify_lines(b)
    if [l[0] for l in la] != [l[0] for l in lb] or not la:
        return False
    return all(x[2] == y[2] for x, y in zip(la, lb) if x[1] == y[1])


def compare(remote, local):
    files = 0
    for dirpath, dirs, names in os.walk(local):
        rel = os.path.relpath(dirpath, local)
        rdir = os.path.join(remote, rel)
        remote_names = sorted(os.listdir(rdir))
        if rel == ".":
            if "remote" not in remote_names:
                return "remote: missing at the root", files
            remote_names.remove("remote")
        if remote_names != sorted(dirs + names):
            return f"{rel}: entries differ", files
        for name in sorted(dirs + names):
            a, b = os.path.join(rdir, name), os.path.join(dirpath, name)
            r = os.path.normpath(os.path.join(rel, name))
            sa, sb = os.stat(a), os.stat(b)
            if stat.S_IMODE(sa.st_mode) != stat.S_IMODE(sb.st_mode) or stat.S_IFMT(sa.st_mode) != stat.S_IFMT(sb.st_mode):
                return f"{r}: mode {oct(sa.st_mode)} vs {oct(sb.st_mode)}", files
            if xattrs(a) != xattrs(b):
                return f"{r}: extended attributes differ", files
            if name in names and name == "verify" and not r.startswith(("metadata/", "tensors/")):
                if not same_verify(content(a, r), content(b, r)):
                    return f"{r}: files or digests differ", files
                files += 1
            elif name in names:
                if not r.startswith("shards/") and sa.st_size != sb.st_size:
                    return f"{r}: size {sa.st_size} vs {sb.st_size}", files
                if content(a, r) != content(b, r):
                    return f"{r}: bytes differ", files
                files += 1
    return None, files


def main():
    problem, files = compare(sys.argv[1], sys.argv[2])
    if problem:
        print(problem)
        return 1
    print(f"{files} files equal")
    return 0 if files > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
