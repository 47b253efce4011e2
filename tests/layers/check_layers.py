#!/usr/bin/env python3
"""usage: check_layers.py FS_DIR

Checks the daemon's layering from its sources: every file of fs/ lives in
one of the layer folders, every "..." include names its layer
("model/model.h"), no include goes to a higher layer, and no two modules
(a .c and its .h) depend on each other, directly or around a longer
circle. A header X_private.h is the private part of module X (shared by
the files that implement it). Prints each problem and exits 1 when there
is any.
"""
import os
import re
import sys

LAYERS = ["util", "source", "model", "tree", "catalog", "daemon"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Headers from outside fs/ (the parser's public header).
OUTSIDE = {"ggp.h"}


def main():
    root = sys.argv[1]
    problems = []
    deps = {}  # module ("model/model") -> modules it includes
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        if os.path.isfile(path) and entry != "meson.build":
            problems.append(f"fs/{entry}: not in a layer folder")
        elif os.path.isdir(path) and entry not in LAYERS:
            problems.append(f"fs/{entry}/: not a layer ({', '.join(LAYERS)})")
    for layer in LAYERS:
        folder = os.path.join(root, layer)
        if not os.path.isdir(folder):
            problems.append(f"fs/{layer}/: missing")
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            where = f"fs/{layer}/{name}"
            module = module_of(f"{layer}/{name}")
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                if inc in OUTSIDE:
                    continue
                if "/" not in inc:
                    problems.append(f"{where}: includes \"{inc}\" without its layer")
                    continue
                to_layer = inc.split("/", 1)[0]
                if to_layer not in LAYERS or not os.path.isfile(os.path.join(root, inc)):
                    problems.append(f"{where}: includes \"{inc}\", which is no header of fs/")
                    continue
                if LAYERS.index(to_layer) > LAYERS.index(layer):
                    problems.append(f"{where}: includes \"{inc}\" from the higher layer {to_layer}/")
                target = module_of(inc)
                if target != module:
                    deps.setdefault(module, set()).add(target)
    problems += circles(deps)
    for p in problems:
        print(p)
    if not problems and len(deps) < 10:
        print(f"only {len(deps)} modules with includes found under {root}: wrong folder?")
        return 1
    return 1 if problems else 0


def module_of(path):
    """"catalog/catalog_private.h" and "catalog/catalog.c" -> "catalog/catalog"."""
    stem = path[:-2]
    return stem[: -len("_private")] if stem.endswith("_private") else stem


def circles(deps):
    """One line per circle of module dependencies (depth-first search)."""
    found, state, stack = [], {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(deps.get(m, ())):
            if state.get(d) == "open":
                cycle = stack[stack.index(d):] + [d]
                found.append("modules depend on each other: " + " -> ".join(cycle))
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in sorted(deps):
        if m not in state:
            visit(m)
    return found


if __name__ == "__main__":
    sys.exit(main())
