#!/usr/bin/env bash
#
# Conformance against the real ggml: the parser's reading of every fixture
# (scripts/fixtures/ggml-fixtures) and of its v1, v2 and big-endian
# variants, against ggml's reading and to_float of the originals. The
# originals are read a second time with --scalar, so that both the SIMD
# dequantizers (the default where the CPU has them) and the scalar ones are
# measured against ggml.
#
#   usage: run.sh GGML_REF CONFORMANCE
#
# Exits non-zero on any failure.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 GGML_REF CONFORMANCE" >&2
    exit 2
fi
ggml_ref=$1
conformance=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fixtures=$("$here/../../scripts/fixtures/ggml-fixtures" "$ggml_ref")

# name, conformance options
variants=(
    "v1|--version 1 --byte-order little"
    "v2|--version 2 --byte-order little"
    "be|--version 3 --byte-order big"
    "be-old|--version 3 --byte-order big"
)

status=0
"$conformance" "$fixtures" || status=1
"$conformance" --scalar "$fixtures" || status=1
for entry in "${variants[@]}"; do
    IFS='|' read -r name copt <<<"$entry"
    # shellcheck disable=SC2086
    "$conformance" --ref "$fixtures" $copt "$fixtures/$name" || status=1
done
exit $status
