#!/usr/bin/env bash
# The fuzz test in the suite: replays every harness's seeds and known
# crash inputs (seeds/NAME, regressions/NAME; for gguf also the hostile
# corpus and ggml's small fixtures) through this build's replay binaries
# (sanitized in the sanitizer build), then fuzzes each harness for a
# short, bounded time with libFuzzer when clang has it (scripts/fuzz).
#   usage: run.sh GGML_REF FUZZ_REPLAY_NAME...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$("$here/../../scripts/fixtures/ggml-fixtures" "$1")
shift
hostile=$(mktemp -d)
corpus=$(mktemp -d)
trap 'rm -rf "$hostile" "$corpus"' EXIT
python3 "$here/../hostile/make_hostile.py" "$hostile" >/dev/null
rm -f "$hostile/manifest.tsv"
for replay in "$@"; do
    name=${replay##*/fuzz_replay_}
    inputs=$(find "$here/seeds/$name" "$here/regressions/$name" -type f ! -name .keep 2>/dev/null)
    if [ "$name" = gguf ]; then
        inputs="$inputs $hostile/* $(find "$fixtures" -name '*.gguf' -size -64k)"
    fi
    echo -n "$name: "
    # shellcheck disable=SC2086 # one word a file
    "$replay" $inputs
done
# Each harness at most 3 s (scripts/fuzz's least) or 2,000 inputs, and the
# build of the libFuzzer binaries and their runs together at most 100 s: a
# smoke run of every harness from its seeds, in a scratch corpus, the same
# work at every run and in the suite's time (the long runs, and the
# corpora they grow in the cache, are scripts/fuzz's).
GGUF_FS_FUZZ_BUDGET=${GGUF_FS_FUZZ_BUDGET:-100} GGUF_FS_FUZZ_CORPUS=$corpus \
    GGUF_FS_FUZZ_RUNS=${GGUF_FS_FUZZ_RUNS:-2000} "$here/../../scripts/fuzz" "${GGUF_FS_FUZZ_SECONDS:-3}" "$fixtures"
