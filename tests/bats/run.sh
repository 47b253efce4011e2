#!/usr/bin/env bash
# Runs one bats suite against a build of the daemon, with the ggml-made
# fixtures (scripts/fixtures/ggml-fixtures) in GGUF_FS_FIXTURES and the
# ggml tool that makes them, and the sample model, in GGML_REF.
#   usage: run.sh GGML_REF GGUF_FS SUITE.bats
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../python.bash
. "$here/../python.bash"
# shellcheck source=../tap.bash
. "$here/../tap.bash"
GGUF_FS_FIXTURES=$("$here/../../scripts/fixtures/ggml-fixtures" "$1")
GGUF_FS=$2
# ggml itself, for suites that have it read what the mount serves.
GGML_REF=$1
GGML_LIB=$("$here/../../scripts/fixtures/ggml-setup")
GGUF_FS_SCRIPTS=$(cd "$here/../../scripts" && pwd)
export GGUF_FS GGUF_FS_FIXTURES GGML_REF GGML_LIB GGUF_FS_SCRIPTS
run_bats "$3"
