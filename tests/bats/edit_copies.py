#!/usr/bin/env python3
"""Every key of a mount written into a new key of the same type.

usage: edit_copies.py MOUNTPOINT

For each key K of MOUNTPOINT/metadata (as metadata.json lists them), makes
metadata/copy.K with the type getfattr gives K (touch, setfattr
user.gguf.type, then the text of K written with one write and a close that
must succeed), then checks that copy.K reads back as K's text and has K's
type. Prints one line per key whose copy differs and exits 1 when any
does; else prints the number of keys copied. The caller then compares the
copies' values as ggml reads them.
"""
import json
import os
import sys


def file_name(name):
    """A key's file name, as SPEC "metadata/KEY" says."""
    if name in (b".", b".."):
        return b"%2E" if name == b"." else b"%2E%2E"
    return name.replace(b"%", b"%25").replace(b"/", b"%2F").replace(b"\0", b"%00")


def main():
    mnt = sys.argv[1]
    meta = os.path.join(mnt, "metadata")
    keys = list(json.load(open(os.path.join(mnt, "metadata.json"), encoding="utf-8",
                               errors="surrogateescape")).keys())
    problems = []
    for key in keys:
        raw = key.encode("utf-8", "surrogateescape")
        if len(file_name(b"copy." + raw)) > 255:
            continue  # a long name's file name is cut: no file can make it
        src = os.path.join(meta.encode(), file_name(raw))
        dst = os.path.join(meta.encode(), file_name(b"copy." + raw))
        text = open(src, "rb").read()
        kind = os.getxattr(src, "user.gguf.type")
        open(dst, "wb").close()
        os.setxattr(dst, "user.gguf.type", kind)
        fd = os.open(dst, os.O_WRONLY | os.O_TRUNC)
        os.write(fd, text)
        os.close(fd)  # raises on EINVAL: the text did not parse
        back = open(dst, "rb").read()
        if back != text or os.getxattr(dst, "user.gguf.type") != kind:
            problems.append(f"{key!r}: copy reads {back[:60]!r} ({os.getxattr(dst, 'user.gguf.type')!r}), "
                            f"the key {text[:60]!r} ({kind!r})")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(len(keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
