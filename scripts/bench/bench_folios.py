#!/usr/bin/python3
"""bench_folios: how the kernel's page cache holds a file.

    bench_folios.py FILE [MiB]

Maps the first MiB (default 64) of FILE, touches each page, and reads the
physical pages behind the mapping from /proc/self/pagemap and their flags
from /proc/kpageflags (both need root). Prints one line: the mean folio
size in pages and the share of pages whose physical successor is the next
page of the file. A warm read's speed follows both: large folios mean
fewer page-cache lookups per byte, physically ordered pages fewer cache
misses on their descriptors.
"""
import mmap
import os
import struct
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")
KPF_COMPOUND_TAIL = 1 << 16
PFN_MASK = (1 << 55) - 1


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: bench_folios.py FILE [MiB]")
    path = sys.argv[1]
    want = (int(sys.argv[2]) if len(sys.argv) == 3 else 64) << 20
    with open(path, "rb") as f:
        size = min(os.fstat(f.fileno()).st_size, want) // PAGE * PAGE
        if size == 0:
            sys.exit(f"{path}: empty")
        with mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) as m:
            for off in range(0, size, PAGE):
                m[off]
            base = address_of(path)
            pfns = read_pfns(base, size // PAGE)
    if 0 in pfns:
        sys.exit("bench_folios: no physical pages visible (needs root)")
    with open("/proc/kpageflags", "rb") as kf:
        folios = 0
        for pfn in pfns:
            kf.seek(pfn * 8)
            if not struct.unpack("Q", kf.read(8))[0] & KPF_COMPOUND_TAIL:
                folios += 1
    ordered = sum(1 for a, b in zip(pfns, pfns[1:]) if b == a + 1)
    print(f"{len(pfns) / folios:.1f} pages per folio, "
          f"{100 * ordered / (len(pfns) - 1):.0f}% of pages physically in order")


def address_of(path):
    """Start of the (only) mapping of path in this process."""
    real = os.path.realpath(path)
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].rstrip("\n") == real:
                return int(fields[0].split("-")[0], 16)
    sys.exit(f"{path}: mapping not found")


def read_pfns(base, pages):
    with open("/proc/self/pagemap", "rb") as pm:
        pm.seek(base // PAGE * 8)
        entries = struct.unpack(f"{pages}Q", pm.read(pages * 8))
    return [e & PFN_MASK for e in entries]


if __name__ == "__main__":
    main()
