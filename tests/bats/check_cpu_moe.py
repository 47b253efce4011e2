#!/usr/bin/env python3
"""Compares the --n-cpu-moe lines of offload/CTX, read from mounts, with
what llama.cpp allocated for the model with every layer offloaded and its
--n-cpu-moe overrides (cpu_moe_client's JSON lines, on stdin): for each
model and N, the line of offload/CTX with cache f16, every layer and
cpu_moe N must have gpu_model and host_model equal to llama.cpp's model
buffers on the GPU and on the host, to the 0.01 MiB it prints. Prints each
difference, then a summary; exits 1 if any.

usage: check_cpu_moe.py CTX MODEL=MOUNT... < CLIENT_LINES
"""
import json
import sys

from check_memory import report
from check_offload import MIB, offload_rows, printed


def main():
    ctx, mounts = int(sys.argv[1]), dict(a.split("=", 1) for a in sys.argv[2:])
    problems, checked = [], 0
    for line in sys.stdin:
        run = json.loads(line)
        rows = offload_rows(mounts[run["model"]], ctx)
        everything = max(k[1] for k in rows if k[0] == "f16")
        key = ("f16", everything, run["cpu_moe"])
        where = "%s, --n-cpu-moe %d:" % (run["model"], run["cpu_moe"])
        if key not in rows:
            problems.append("%s no line in offload/%d" % (where, ctx))
            continue
        said = printed(run["lines"])
        for column, device in (("gpu_model", "gpu"), ("host_model", "host")):
            n, mib = said.get(("model", device), (0, 0.0))
            ours = rows[key][column] / MIB
            if abs(mib - ours) > 0.005 * max(n, 1) + 1e-9:
                problems.append("%s %s: offload/ says %.2f MiB, llama.cpp %.2f MiB" % (where, column, ours, mib))
        checked += 1
    return report(problems, checked, "loads")


if __name__ == "__main__":
    sys.exit(main())
