#!/usr/bin/env bash
# Runs test_shape over ggml's fixtures: one of each tensor type, a split
# set's first shard and the metadata fixture.
#   usage: shape.sh TEST_SHAPE GGML_REF
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$("$here/../../scripts/fixtures/ggml-fixtures" "$2")
"$1" "$fixtures"/*.gguf
