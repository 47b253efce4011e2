#!/usr/bin/env python3
"""Compares memory/CTX, read from mounts, with the lines llama.cpp logged
while node-llama-cpp created each context (memory_client.mjs's JSON lines,
on stdin): the padded context (n_ctx), the full-attention and
sliding-window caches' cells and layers (one "llama_kv_cache: size" line
each; the sliding-window one second), the K and V bytes of each cache type
to the 0.01 MiB llama.cpp prints, and the recurrent state's; a context
llama.cpp refuses must read `-` and `warnings` must give llama.cpp's
reason. Also checks
that each context ran with llama.cpp's n_ubatch (512, or the context when
smaller), the condition memory/ is for. Prints each difference; exits 1
if any.

usage: check_memory.py MODEL=MOUNT... < CLIENT_LINES
"""
import json
import re
import sys

KV = re.compile(r"^llama_kv_cache: size = +([\d.]+) MiB \( *(\d+) cells, +(\d+) layers,.*"
                r"K \((\w+)\): +([\d.]+) MiB, V \((\w+)\): +([\d.]+) MiB$")
RECURRENT = re.compile(r"^llama_memory_recurrent: size = +([\d.]+) MiB")
CONTEXT = re.compile(r"^llama_context: n_(ctx|ubatch) += (\d+)$")
MIB = 1024 * 1024


def report(problems, checked, what):
    """Prints each problem, then the summary line the suites read; the
    exit status: 1 if any problem, or nothing was checked."""
    for p in problems:
        print(p)
    print("%d %s checked, %d differences" % (checked, what, len(problems)))
    return 1 if problems or checked == 0 else 0


def memory_file(mount, ctx):
    with open(f"{mount}/memory/{ctx}") as f:
        return {k: v if v == "-" else int(v) for k, v in (line.split(": ") for line in f.read().splitlines())}


def refusal_lines(mount):
    """The warnings lines for refused cache types: llama.cpp's message in each."""
    with open(f"{mount}/warnings") as f:
        return [line for line in f.read().splitlines() if "makes no" in line]


def mib(n):
    return "%.2f" % (n / MIB)


def main():
    mounts = dict(arg.split("=", 1) for arg in sys.argv[1:])
    problems, checked = [], 0
    for line in sys.stdin:
        if not line.strip():
            continue
        run = json.loads(line)
        ours = memory_file(mounts[run["model"]], run["ctx"])
        where = "%s at %d, %s:" % (run["model"], run["ctx"], run["type"])

        def expect(what, got, want):
            if got != want:
                problems.append("%s %s: memory/ says %s, llama.cpp %s" % (where, what, want, got))

        kv = ours["kv_" + run["type"]]
        if run["refused"] or kv == "-":
            # llama.cpp made no context: memory/ must have no figure, and
            # warnings must carry llama.cpp's own reason.
            # (llama.cpp's log arrives late: a line of the context before
            # may come first, hence the type in the filter)
            said = [t.split(": ", 1)[1] for t in run["lines"]
                    if "does not divide" in t and "cache type %s " % run["type"] in t or
                    "quantized V cache requires flash_attn" in t]
            expect("refused", run["refused"] is not None, kv == "-")
            ours_said = [w for w in refusal_lines(mounts[run["model"]]) if "makes no %s " % run["type"] in w]
            expect("reason", bool(said) and len(ours_said) == 1 and said[0] in ours_said[0], True)
            checked += 1
            continue
        caches, recurrent, params = [], [], {}
        for text in run["lines"]:
            if m := KV.match(text):
                caches.append(m.groups())
            elif m := RECURRENT.match(text):
                recurrent.append(m.group(1))
            elif m := CONTEXT.match(text):
                params[m.group(1)] = int(m.group(2))
        expect("n_ubatch", params.get("ubatch"), min(run["ctx"], 512))
        expect("context", params.get("ctx"), ours["context"])
        # With sliding-window layers, two caches: the full-attention one
        # first (even with no layer), then the sliding-window one.
        want = 2 if ours["swa_layers"] else 1 if ours["kv_layers"] else 0
        expect("caches", len(caches), want)
        for name, cache in zip(("kv", "swa"), caches if len(caches) == want else []):
            expect(name + "_layers", int(cache[2]), ours[name + "_layers"])
            if ours[name + "_layers"]:
                expect(name + "_cells", int(cache[1]), ours[name + "_cells"])
            expect("cache types", (cache[3], cache[5]), (run["type"], run["type"]))
        # Each printed size is rounded to 0.01 MiB: one cache must print ours;
        # two must add up to it within their rounding.
        printed = sum(float(c[0]) for c in caches)
        if len(caches) <= 1:
            expect("kv_" + run["type"], "%.2f" % printed, mib(kv))
        elif abs(printed - kv / MIB) > 0.005 * len(caches) + 1e-9:
            expect("kv_" + run["type"], "%.2f" % printed, mib(kv))
        expect("recurrent", recurrent[0] if recurrent else mib(0), mib(ours["recurrent"]))
        expect("total_f16", ours["total_f16"], ours["weights"] + ours["kv_f16"] + ours["recurrent"])
        checked += 1
    return report(problems, checked, "contexts")


if __name__ == "__main__":
    sys.exit(main())
