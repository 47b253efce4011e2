#!/usr/bin/env bash
# The fuzz target in the suite: replays the known crash inputs and the
# seeds through this build (sanitized in the sanitizer build), then fuzzes
# for a short, bounded time with libFuzzer when clang has it.
#   usage: run.sh FUZZ_REPLAY GGML_REF
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$("$here/../../scripts/fixtures/ggml-fixtures" "$2")
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
python3 "$here/../hostile/make_hostile.py" "$seeds" >/dev/null
rm -f "$seeds/manifest.tsv"
"$1" "$seeds"/* $(find "$here/regressions" "$fixtures" -name '*.gguf' -size -64k)
"$here/../../scripts/fuzz" "${GGUF_FS_FUZZ_SECONDS:-30}" "$fixtures"
