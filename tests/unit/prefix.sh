#!/usr/bin/env bash
# Runs test_prefix over ggml's fixtures with their v1, v2 and big-endian
# variants, and over the hostile corpus.
#   usage: prefix.sh TEST_PREFIX GGML_REF
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$("$here/../../scripts/fixtures/ggml-fixtures" "$2")
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
python3 "$here/../hostile/make_hostile.py" "$corpus"
"$1" "$fixtures" "$fixtures/v1" "$fixtures/v2" "$fixtures/be" "$fixtures/be-old" "$corpus"
