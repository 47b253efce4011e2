#!/usr/bin/env bats
# metadata/: one file per key, holding the value as SPEC.md renders it.
# The model is ggml's own metadata.gguf (every value type, hostile
# strings, a 5000-token vocabulary); what each file must hold is rendered
# from ggml's reading of it by spec_render.py, independently of the daemon.

load test_helper

setup() {
    require_fuse
    MNT="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture metadata.gguf)" "$MNT"
}

@test "every key's file holds exactly the value ggml reads, rendered as the spec says" {
    "$PYTHON" "$HELPERS/spec_render.py" "$(fixture metadata.expected)" "$BATS_TEST_TMPDIR/want"
    run diff -r "$BATS_TEST_TMPDIR/want/metadata" "$MNT/metadata"
    [ "$status" -eq 0 ] || { echo "$output" | head -40; false; }
}

@test "user.gguf.type names each key's value type" {
    "$PYTHON" "$HELPERS/spec_render.py" "$(fixture metadata.expected)" "$BATS_TEST_TMPDIR/want"
    local name type checked=0
    while IFS=$'\t' read -r type name; do
        run xattr user.gguf.type "$MNT/metadata/$name"
        [ "$status" -eq 0 ]
        [ "$output" = "$type" ] || { echo "$name: $output, expected $type"; false; }
        checked=$((checked + 1))
    done <"$BATS_TEST_TMPDIR/want/types.tsv"
    [ "$checked" -gt 50 ]
}

@test "user.gguf.name is the full key, even for names that had to be cut or escaped" {
    run xattr user.gguf.name "$MNT/metadata/test%2Fslash%25percent"
    [ "$output" = "test/slash%percent" ]
    run xattr user.gguf.name "$MNT/metadata/%2E%2E"
    [ "$output" = ".." ]
    local long
    long=$(ls "$MNT/metadata" | grep '^test\.long_key')
    [ "${#long}" -le 255 ]
    [[ "$long" =~ ~[0-9a-f]{8}$ ]]
    run xattr user.gguf.name "$MNT/metadata/$long"
    [ "${#output}" -eq 300 ]
}

@test "wc -l counts the vocabulary and sed -n picks a token by id" {
    run wc -l <"$MNT/metadata/tokenizer.ggml.tokens"
    [ "$output" -eq 5000 ]
    run sed -n 101p "$MNT/metadata/tokenizer.ggml.tokens"
    [ "$output" = "<0x64>" ]
    run wc -l <"$MNT/metadata/tokenizer.ggml.scores"
    [ "$output" -eq 5000 ]
}

@test "scalars are one line; empty arrays are empty files" {
    run cat "$MNT/metadata/test.u64.max"
    [ "$output" = "18446744073709551615" ]
    run cat "$MNT/metadata/test.f32.1e-05"
    [ "$output" = "1e-05" ]
    run cat "$MNT/metadata/test.f32.10000"
    [ "$output" = "10000" ]
    run cat "$MNT/metadata/test.bool.true"
    [ "$output" = "true" ]
    [ ! -s "$MNT/metadata/test.arr_empty.str" ]
    [ "$(stat -c %s "$MNT/metadata/test.arr_empty.u8")" -eq 0 ]
}

@test "stat sizes equal the bytes cat returns, for every key" {
    local f
    for f in "$MNT"/metadata/*; do
        [ "$(stat -c %s "$f")" -eq "$(cat "$f" | wc -c)" ] || { echo "$f"; false; }
    done
}

@test "grep -l finds keys by value across the tree" {
    run grep -l -x llama -r "$MNT/metadata"
    [ "$status" -eq 0 ]
    [[ "$output" == *general.architecture* ]]
    [[ "$output" == *tokenizer.ggml.model* ]]
}

@test "header lists version, byte order, counts, alignment, data offset and size" {
    local tensors model
    model=$(fixture metadata.gguf)
    run cat "$MNT/header"
    [ "${lines[0]}" = "version: 3" ]
    [ "${lines[1]}" = "byte_order: little" ]
    [ "${lines[2]}" = "tensor_count: $(sed -n 's/^#tensor_count\t//p' "$(fixture metadata.tensors)")" ]
    [ "${lines[3]}" = "kv_count: $(sed -n 's/^#kv_count\t//p' "$(fixture metadata.tensors)")" ]
    [ "${lines[4]}" = "alignment: 32" ]
    [ "${lines[5]}" = "data_offset: $(sed -n 's/^#data_offset\t//p' "$(fixture metadata.tensors)")" ]
    [ "${lines[6]}" = "file_size: $(stat -c %s "$model")" ]
    [ "${#lines[@]}" -eq 7 ]
}
