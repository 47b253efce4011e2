#!/usr/bin/env bats
# A real client on the mount: node-llama-cpp (llama.cpp) loads model.gguf
# of the sample model mounted as a single file and as a split set, mapping
# the file and reading it, and decodes the same 4 greedy tokens, with the
# same name and chat template, as from the file itself. (The same over
# HTTP is in tests/http/client.bats; an edited model.gguf in edit.bats.)

load test_helper
load llama_client

setup_file() {
    export SAMPLE="$BATS_FILE_TMPDIR/sample.gguf"
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$SAMPLE" >/dev/null
}

setup() {
    require_fuse
    require_llama_client
}

@test "node-llama-cpp decodes from a single file's model.gguf what it decodes from the file, mapped and read" {
    same_tokens_mounted "$SAMPLE" "$SAMPLE"
}

@test "node-llama-cpp decodes from a split set's model.gguf what it decodes from the unsplit file, mapped and read" {
    local set="$BATS_TEST_TMPDIR/sample"
    # 5 tensors to a shard: several shards, all under the one mapping of
    # model.gguf.
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 5 "$SAMPLE" "$set"
    [ "$(ls "$set"-*.gguf | wc -l)" -ge 3 ]
    local first
    first=$(ls "$set"-00001-of-*.gguf)
    # llama.cpp loads the shards themselves as the unsplit model: the set
    # is one it takes for its own.
    run --separate-stderr llama_client "$SAMPLE" "$first"
    [ "$status" -eq 0 ] || { echo "$stderr"; false; }
    same_tokens <<<"$output"
    same_tokens_mounted "$SAMPLE" "$first"
}
