#!/usr/bin/env python3
"""Compares offload/'s compute buffers with the bytes ggml reserved for
them, to the byte: the graphs' log the offload client's shim kept
(scripts/tools/compute_graph_log.c, "# MODEL ngl N ctx C type T" before
each context's graphs), whose largest size per buffer is what ggml
reserved, against the f16 line for that -ngl in each mount's
offload/CTX. Prints a line per figure that differs, then

  exact: N of M architectures: NAME...

and exits 1 when an architecture named with --exact is not among them.

usage: check_compute_exact.py [--exact ARCH,...] LOG MODEL=MOUNT...
"""
import os
import sys


def reserved(path):
    """(model, ngl, ctx, device) -> the bytes ggml reserved: each graph's
    buffer sizes, the largest for a context."""
    sizes, buffers, context, galloc = {}, {}, None, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "#":
                context = (w[1], int(w[3]), int(w[5]))
            elif w[0] == "BUFT":
                buffers.setdefault(w[1], {})[int(w[2])] = w[3]
            elif w[0] == "GRAPH":
                galloc = w[1]
            elif w[0] == "SIZE" and context:
                device = "gpu" if buffers[galloc][int(w[1])].startswith("Vulkan0") else "host"
                key = context + (device,)
                sizes[key] = max(sizes.get(key, 0), int(w[2]))
    return sizes


def main():
    args = sys.argv[1:]
    must = set()
    if args and args[0] == "--exact":
        must = set(args[1].split(","))
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    mounts = dict(a.split("=", 1) for a in args[1:])
    exact, seen = set(), set()
    inexact = set()
    for (model, ngl, ctx, device), want in sorted(reserved(args[0]).items()):
        if model not in mounts:
            continue
        arch = os.path.basename(model)[:-len(".gguf")]
        seen.add(arch)
        with open(os.path.join(mounts[model], "offload", str(ctx))) as f:
            rows = [line.rstrip("\n").split("\t") for line in f]
        col = rows[0].index(device + "_compute")
        got = [int(r[col]) for r in rows[1:] if r[0] == "f16" and int(r[1]) == ngl and int(r[2]) == 0]
        if got != [want]:
            inexact.add(arch)
            print("%s -ngl %d at %d: %s_compute %s, ggml %d" % (arch, ngl, ctx, device, got, want))
    exact = sorted(seen - inexact)
    print("exact: %d of %d architectures: %s" % (len(exact), len(seen), " ".join(exact)))
    return 1 if must - set(exact) else 0


if __name__ == "__main__":
    sys.exit(main())
