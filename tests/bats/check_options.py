#!/usr/bin/env python3
"""Checks the one list of options (gguf-fs --help) against its descriptions.

usage: check_options.py HELP MANUAL README

HELP is the output of `gguf-fs --help`, MANUAL the manual page as `man`
renders it (80 columns), README the README.md. Each option line of the
help is `    -x, -o name=N   text (default D)`. Checks that no option is
listed twice; that the manual's OPTIONS section has an entry for each,
whose text names the same default; that the README's table has a row for
each with the same default. Prints what is wrong and exits 1, else prints
the options checked.
"""
import re
import sys

OPTION_LINE = re.compile(r"^    (-\S.*?)(?:\s{2,}(.*))?$")
DEFAULT = re.compile(r"\(default:? ([^;)]+)")


def help_options(text):
    """[(aliases, description)] in help order; continuation lines joined."""
    options = []
    for line in text.splitlines():
        m = OPTION_LINE.match(line)
        if m:
            aliases = [a.strip() for a in m.group(1).split(",")]
            options.append((aliases, m.group(2) or ""))
        elif options and line.startswith("     ") and line.strip():
            options[-1] = (options[-1][0], options[-1][1] + " " + line.strip())
        elif not line.strip():
            pass
    return options


def manual_entries(text):
    """{tag line: description} of the rendered OPTIONS section."""
    section = text.split("\nOPTIONS\n", 1)[1].split("\nTHE TREE\n", 1)[0]
    entries, tag = {}, None
    for line in section.splitlines():
        if re.match(r"^ {7}-", line):
            # A short tag and its text share a line: "-f     Stay in..."
            tag, _, rest = line.strip().partition("  ")
            entries[tag] = rest.strip()
        elif tag and line.startswith(" " * 14):
            entries[tag] += " " + line.strip()
        elif not line.strip():
            continue
        else:
            tag = None
    return {t: " ".join(d.split()) for t, d in entries.items()}


def main():
    help_text, manual, readme = (open(p, encoding="utf-8").read() for p in sys.argv[1:4])
    problems = []
    options = help_options(help_text)
    seen = set()
    for aliases, _ in options:
        for a in aliases:
            if a in seen:
                problems.append(f"--help lists {a} twice")
            seen.add(a)
    entries = manual_entries(manual)
    readme_rows = [l for l in readme.splitlines() if l.startswith("| `-")]
    for aliases, text in options:
        default = DEFAULT.search(text)
        tag = ", ".join(aliases)
        if tag not in entries:
            problems.append(f"the manual's OPTIONS have no entry '{tag}'")
        elif default and f"default {default.group(1)}" not in entries[tag].replace("default:", "default"):
            problems.append(f"the manual gives '{tag}' another default than (default {default.group(1)})")
        row = [r for r in readme_rows if r.startswith("| " + ", ".join(f"`{a}`" for a in aliases) + " |")]
        if not row:
            problems.append(f"README.md's table has no row for {tag}")
        elif default and f"default {default.group(1)}" not in row[0].replace("default:", "default"):
            problems.append(f"README.md gives {tag} another default than (default {default.group(1)})")
    if not options:
        problems.append("no options found in the help")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(" ".join(", ".join(a) for a, _ in options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
