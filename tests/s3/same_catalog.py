#!/usr/bin/env python3
"""same_catalog.py BUCKET_MNT FOLDER_MNT: a bucket mounted as a folder of
models shows what a folder mount of the same files shows: the same names
in every directory (the bucket's root has `remote` besides), and each
model the tree of the folder's, file for file (same_tree.py). Prints the
first difference and exits 1; prints what it compared and exits 0."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "http"))
import same_tree  # noqa: E402


def compare(bucket, folder, rel="."):
    models = files = 0
    names = sorted(os.listdir(os.path.join(folder, rel)))
    shown = sorted(os.listdir(os.path.join(bucket, rel)))
    if rel == ".":
        if "remote" not in shown:
            return "remote: missing at the root", models, files
        shown.remove("remote")
    if shown != names:
        return f"{rel}: entries differ: {shown} vs {names}", models, files
    for name in names:
        r = os.path.normpath(os.path.join(rel, name))
        if name.endswith(".gguf"):
            problem, n = same_tree.compare(os.path.join(bucket, r), os.path.join(folder, r))
            files += n
            if problem:
                return f"{r}: {problem}", models, files
            models += 1
        else:
            problem, m, n = compare(bucket, folder, r)
            models, files = models + m, files + n
            if problem:
                return problem, models, files
    return None, models, files


def main():
    problem, models, files = compare(sys.argv[1], sys.argv[2])
    if problem:
        print(problem)
        return 1
    print(f"{models} models, {files} files equal")
    return 0 if models > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
