#!/usr/bin/env bash
# Runs one S3 bats suite: s3rver behind the signature-checking proxy
# (s3_server.bash), on loopback.
#   usage: run.sh GGML_REF S3_LS GGUF_FS SUITE.bats
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../python.bash
. "$here/../python.bash"
# shellcheck source=../tap.bash
. "$here/../tap.bash"
GGUF_FS_FIXTURES=$("$here/../../scripts/fixtures/ggml-fixtures" "$1")
GGML_REF=$1
S3_LS=$2
GGUF_FS=$3
GGUF_FS_SCRIPTS=$(cd "$here/../../scripts" && pwd)
export GGUF_FS_FIXTURES GGML_REF S3_LS GGUF_FS GGUF_FS_SCRIPTS
# The servers are on loopback: no proxy from the environment gets between,
# and no credentials or endpoint of the user's are used.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION \
    AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE
run_bats "${@:4}"
