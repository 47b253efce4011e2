#!/usr/bin/env bash
# Runs test_parse_text, then has it parse back every key of ggml's fixtures
# and of their v1, v2 and big-endian variants.
#   usage: parse_text.sh TEST_PARSE_TEXT GGML_REF
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$("$here/../../scripts/fixtures/ggml-fixtures" "$2")
shopt -s nullglob
"$1" "$fixtures"/*.gguf "$fixtures"/{v1,v2,be,be-old}/*.gguf
