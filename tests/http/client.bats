#!/usr/bin/env bats
# A real client on a URL mount: node-llama-cpp (llama.cpp) loads model.gguf
# of the sample model mounted by its URL and by the URL of a split set's
# first shard, served by nginx on loopback, mapping the file and reading
# it, and decodes the same 4 greedy tokens, with the same name and chat
# template, as from the file itself.

load ../bats/test_helper
load ../bats/llama_client
load server

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    mkdir -p "$FILES/split"
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$FILES/sample.gguf" >/dev/null
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 5 "$FILES/sample.gguf" "$FILES/split/sample"
    start_servers "$BATS_FILE_TMPDIR/srv" "$FILES"
}

teardown_file() {
    stop_servers
}

setup() {
    require_fuse
    require_llama_client
    DIRECT="http://127.0.0.1:$NGINX_PORT/files"
}

@test "node-llama-cpp decodes from a URL mount's model.gguf what it decodes from the file, mapped and read" {
    same_tokens_mounted "$FILES/sample.gguf" "$DIRECT/sample.gguf"
    # With cache_mb=0 too, where blocks are fetched one at a time and none
    # ahead of the reads.
    same_tokens_mounted "$FILES/sample.gguf" "$DIRECT/sample.gguf" -o cache_mb=0
}

@test "node-llama-cpp decodes from a split set mounted by its first shard's URL what it decodes from the unsplit file, mapped and read" {
    [ "$(ls "$FILES"/split/sample-*.gguf | wc -l)" -ge 3 ]
    local first
    first=$(basename "$(ls "$FILES"/split/sample-00001-of-*.gguf)")
    same_tokens_mounted "$FILES/sample.gguf" "$DIRECT/split/$first"
}
