#!/usr/bin/env bash
# Generates the hostile corpus into a scratch directory and checks the
# parser's verdict on every file of it.
# usage: run.sh TEST_HOSTILE_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
python3 "$here/make_hostile.py" "$corpus"
"$1" "$corpus"
