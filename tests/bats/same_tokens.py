#!/usr/bin/env python3
"""same_tokens.py < LINES: the client's JSON lines (llama_client.mjs), the
first from the plain file: every model after it must report the same
general.name and chat template and decode the same 4 greedy tokens.
Prints one line per model; exits 1 on the first that differs."""
import json
import sys

lines = [json.loads(line) for line in sys.stdin if line.strip()]
if len(lines) < 2:
    sys.exit(f"expected the plain file and at least one model, got {len(lines)} line(s)")
plain = lines[0]
if len(plain["tokens"]) != 4 or not plain["name"]:
    sys.exit(f"{plain['model']}: no name or not 4 tokens: {plain}")
status = 0
for line in lines:
    way = "mmap" if line["mmap"] else "read"
    differs = [k for k in ("name", "template", "tokens") if line[k] != plain[k]]
    if differs:
        print(f"{line['model']} ({way}): {', '.join(differs)} differ: "
              f"{[line[k] for k in differs]} != {[plain[k] for k in differs]}")
        status = 1
    else:
        print(f"{line['model']} ({way}): tokens {line['tokens']}")
sys.exit(status)
