#!/usr/bin/env bash
# Checks the views for tools (tests/views/check_views.py) over the fixtures
# that the real ggml wrote (scripts/fixtures/ggml-fixtures).
#   usage: run.sh GGML_REF VIEWS_DUMP
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$("$here/../../scripts/fixtures/ggml-fixtures" "$1")
# Debian's python3 has numpy; an interpreter earlier on PATH may not.
py=/usr/bin/python3
[[ -x $py ]] || py=python3
exec "$py" "$here/check_views.py" "$2" "$fixtures"
