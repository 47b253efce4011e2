#!/usr/bin/env python3
"""Compares offload/CTX, read from mounts, with what llama.cpp allocated on
a real GPU device (offload_client.mjs's JSON lines, on stdin): for each
model, -ngl, context and cache type, the line of offload/CTX with that
cache, gpu_layers and cpu_moe 0 must have

- gpu_model and host_model equal to the byte to what node-llama-cpp's
  getMemoryBreakdown() gives for the model (llama.cpp's own buffer sizes);
- gpu_kv and host_kv (K, V and recurrent state) and host_output equal to
  what llama.cpp prints for each device's buffers, to its 0.01 MiB;
- host_compute, and gpu_compute with every layer offloaded, within 10% of
  the compute buffers llama.cpp prints, and host_total and gpu_total then
  within 2% of the device's sum, for the families named with --compute
  (every error is printed; the GPU's compute buffer with layers left on
  the host is printed, not checked: doc/SEMANTICS.md says how far off it
  is). Before the summary, a line counts the families whose compute
  buffers are within 10% on the host at every -ngl, and on the GPU with
  every layer offloaded.

A context llama.cpp refused must have no line. Prints each difference,
then a summary; exits 1 if any.

usage: check_offload.py [--compute FAMILY,...] MODEL=MOUNT... < CLIENT_LINES
"""
import json
import os
import re
import sys

from check_memory import report

MIB = 1024 * 1024
BUFFER = re.compile(r"^\w+: +(\S+) +(model|KV|RS|compute|output) buffer size = +([\d.]+) MiB$")
COLUMNS = ("cache gpu_layers cpu_moe gpu_model gpu_kv gpu_compute host_model host_kv host_compute "
           "host_output gpu_total host_total").split()


def offload_rows(mount, ctx):
    with open(f"{mount}/offload/{ctx}") as f:
        lines = f.read().splitlines()
    if lines[0].split("\t") != COLUMNS:
        raise SystemExit("%s/offload/%d: header %r" % (mount, ctx, lines[0]))
    rows = {}
    for line in lines[1:]:
        fields = line.split("\t")
        row = dict(zip(COLUMNS, [fields[0]] + [int(v) for v in fields[1:]]))
        rows[(row["cache"], row["gpu_layers"], row["cpu_moe"])] = row
    return rows


def printed(lines):
    """Per (what, device): the MiB llama.cpp printed, summed over its lines."""
    out = {}
    for text in lines:
        if m := BUFFER.match(text):
            device, what, mib = m.groups()
            what = "kv" if what in ("KV", "RS") else what
            where = "host" if device in ("CPU", "CPU_Mapped", "Vulkan_Host", "CPU_REPACK") else "gpu"
            key = (what, where)
            n, total = out.get(key, (0, 0.0))
            out[key] = (n + 1, total + float(mib))
    return out


def main():
    args = sys.argv[1:]
    families = set()
    if args and args[0] == "--compute":
        families = set(args[1].split(","))
        args = args[2:]
    mounts = dict(a.split("=", 1) for a in args)
    problems, notes, checked = [], [], 0
    worst = {}  # (family, "host" | "gpu"): the largest compute error checked as --compute would
    for line in sys.stdin:
        run = json.loads(line)
        family = os.path.basename(run["model"]).removesuffix(".gguf")
        rows = offload_rows(mounts[run["model"]], run["ctx"])
        key = (run["type"], run["ngl"], 0)
        where = "%s at %d, %s, -ngl %d:" % (family, run["ctx"], run["type"], run["ngl"])
        if run["refused"]:
            if key in rows:
                problems.append("%s llama.cpp refused the context, offload/ has a line" % where)
            checked += 1
            continue
        if key not in rows:
            problems.append("%s no line in offload/" % where)
            continue
        ours = rows[key]

        def expect(what, got, want):
            if got != want:
                problems.append("%s %s: offload/ says %s, llama.cpp %s" % (where, what, want, got))

        model = run["breakdown"]["model"]
        expect("gpu_model", model["gpuVram"], ours["gpu_model"])
        expect("host_model", model["cpuRam"], ours["host_model"])
        said = printed(run["lines"])
        for what, where_ in (("kv", "gpu"), ("kv", "host"), ("output", "host")):
            n, mib = said.get((what, where_), (0, 0.0))
            column = "%s_%s" % (where_, what)
            if abs(mib - ours[column] / MIB) > 0.005 * max(n, 1) + 1e-9:
                expect(column, "%.2f MiB" % mib, "%.2f MiB" % (ours[column] / MIB))
        context = run["breakdown"]["context"]
        totals = {"gpu": model["gpuVram"] + context["gpuVram"],
                  "host": model["cpuRam"] + context["cpuRam"] + ours["host_output"]}
        for where_ in ("gpu", "host"):
            n, mib = said.get(("compute", where_), (0, 0.0))
            mine = ours["%s_compute" % where_] / MIB
            error = (mine - mib) / mib if mib else (0.0 if mine == 0 else float("inf"))
            total_error = (ours["%s_total" % where_] - totals[where_]) / totals[where_] if totals[where_] else 0.0
            notes.append("%s %s_compute %.2f MiB, llama.cpp %.2f MiB (%+.1f%%); %s_total %+.2f%%"
                         % (where, where_, mine, mib, 100 * error, where_, 100 * total_error))
            full = run["ngl"] == max(k[1] for k in rows if k[2] == 0)
            if where_ == "host" or full:
                worst[(family, where_)] = max(worst.get((family, where_), 0.0), abs(error))
            if family in families and (where_ == "host" or full):
                if abs(error) > 0.10:
                    problems.append("%s %s_compute off by %+.1f%%" % (where, where_, 100 * error))
                if abs(total_error) > 0.02:
                    problems.append("%s %s_total off by %+.2f%%" % (where, where_, 100 * total_error))
        checked += 1
    for n in notes:
        print(n)
    names = {f for f, _ in worst}
    print("compute within 10%%: host %d of %d families at every -ngl, gpu %d with every layer offloaded"
          % (sum(worst.get((f, "host"), 1) <= 0.10 for f in names), len(names),
             sum(worst.get((f, "gpu"), 1) <= 0.10 for f in names)))
    return report(problems, checked, "contexts")


if __name__ == "__main__":
    sys.exit(main())
