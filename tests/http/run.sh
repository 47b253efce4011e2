#!/usr/bin/env bash
# Runs one remote-model bats suite: ggml's fixtures
# (scripts/fixtures/ggml-fixtures) are served by nginx on loopback, through
# the fault proxy.
#   usage: run.sh GGML_REF SOURCE_CAT GGUF_FS SUITE.bats
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../python.bash
. "$here/../python.bash"
# shellcheck source=../tap.bash
. "$here/../tap.bash"
GGUF_FS_FIXTURES=$("$here/../../scripts/fixtures/ggml-fixtures" "$1")
SOURCE_CAT=$2
GGUF_FS=$3
GGML_REF=$1
GGML_LIB=$("$here/../../scripts/fixtures/ggml-setup")
GGUF_FS_SCRIPTS=$(cd "$here/../../scripts" && pwd)
export GGUF_FS_FIXTURES SOURCE_CAT GGUF_FS GGML_REF GGML_LIB GGUF_FS_SCRIPTS
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    echo "1..0 # skip nginx is not installed (scripts/setup installs it)"
    exit 0
fi
export PATH="$PATH:/usr/sbin"
# The servers are on loopback: no proxy from the environment gets between.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
run_bats "${@:4}"
