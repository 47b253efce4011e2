#!/usr/bin/env bats
# The views for tools: metadata.json, tensors.tsv, tensors/NAME/f32.npy,
# tensors/NAME/stats and warnings, read with jq, awk, Python's json and csv,
# and numpy, against ggml's reading of its own fixtures and against the
# rest of the mount; and the files real converters wrote that used to be
# refused (a repeated key), and ik_llama.cpp's types.

load test_helper

setup() {
    require_fuse
}

hostile() {
    local corpus="$BATS_TEST_TMPDIR/hostile"
    [ -d "$corpus" ] || python3 "$HELPERS/../hostile/make_hostile.py" "$corpus" >/dev/null
    echo "$corpus/$1"
}

@test "metadata.json: jq and Python's json read every key, each value equal to its metadata file" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture metadata.gguf)" "$mnt"
    run jq -r '."general.architecture"' "$mnt/metadata.json"
    [ "$output" = "llama" ]
    run jq -r '."tokenizer.ggml.tokens" | length' "$mnt/metadata.json"
    [ "$output" = "5000" ]
    run jq -r '."test.u64.max"' "$mnt/metadata.json"
    [ "$status" -eq 0 ]
    run "$PYTHON" "$HELPERS/check_mount_views.py" metadata "$mnt" "$(fixture metadata.expected)"
    [ "$status" -eq 0 ] || { echo "$output" | head -30; false; }
}

@test "metadata.json of a big-endian and a version 1 file is the same text as of the original" {
    local v
    mount_model "$(fixture metadata.gguf)" "$BATS_TEST_TMPDIR/orig"
    for v in be v1; do
        mount_model "$GGUF_FS_FIXTURES/$v/metadata.gguf" "$BATS_TEST_TMPDIR/$v"
        cmp "$BATS_TEST_TMPDIR/orig/metadata.json" "$BATS_TEST_TMPDIR/$v/metadata.json"
    done
}

# bats test_tags=every_fixture
@test "tensors.tsv, f32.npy and stats of every type agree with info, f32, ggml and numpy" {
    local f base checked=0
    for f in "$GGUF_FS_FIXTURES"/type-*.gguf "$(fixture aligned64.gguf)"; do
        base=${f%.gguf}
        local mnt="$BATS_TEST_TMPDIR/mnt-${base##*/}"
        mount_model "$f" "$mnt"
        run "$PYTHON" "$HELPERS/check_mount_views.py" tensors "$mnt" "$base.tensors" "$base.ref"
        [ "$status" -eq 0 ] || { echo "${base##*/}:"; echo "$output" | head -30; false; }
        checked=$((checked + 1))
        fusermount3 -u "$mnt"
    done
    [ "$checked" -gt 30 ]
}

@test "a scan for broken weights finds the tensor with NaNs, awk reads tensors.tsv" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture type-f32.gguf)" "$mnt"
    # In a shell of its own: this one, left in the mount, would keep it busy
    # past the test.
    run --separate-stderr bash -c 'cd "$1" && grep -l "^nans: [1-9]" */stats' - "$mnt/tensors"
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -ge 1 ]
    local t
    for t in "${lines[@]}"; do
        # The count numpy prints, not a warning it may give on stderr.
        run --separate-stderr "$PYTHON" -c 'import numpy as np, sys; print(int(np.isnan(np.fromfile(sys.argv[1], dtype="<f4")).sum()))' "$mnt/tensors/${t%/stats}/f32"
        [ "$output" -gt 0 ]
    done
    run awk -F '\t' 'NR > 1 && $2 == "f32" {n++} END {print n}' "$mnt/tensors.tsv"
    [ "$output" -eq "$(ls "$mnt/tensors" | wc -l)" ]
}

@test "stats sizes are exact in stat before anything is computed, and the same after" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture type-q4_K.gguf)" "$mnt"
    local before after
    before=$(stat -c %s "$mnt"/tensors/*/stats | tr '\n' ' ')
    after=$(for f in "$mnt"/tensors/*/stats; do wc -c <"$f"; done | tr '\n' ' ')
    [ "$before" = "$after" ]
    [ "$(stat -c %s "$mnt/tensors/mat/stats")" -eq "$(wc -c <"$mnt/tensors/mat/stats")" ]
    # Counts are padded on the right, so a field is a number for awk.
    run awk -F ': ' '$1 == "zeros" {print $2 + 0}' "$mnt/tensors/mat/stats"
    [ "$status" -eq 0 ]
    [[ "$output" =~ ^[0-9]+$ ]]
}

@test "many readers of one stats file at once all read the same text" {
    local mnt="$BATS_TEST_TMPDIR/mnt" i pids=()
    mount_model "$(fixture type-q6_K.gguf)" "$mnt"
    for i in $(seq 8); do
        cat "$mnt/tensors/special_bytes/stats" >"$BATS_TEST_TMPDIR/stats.$i" &
        pids+=($!)
    done
    wait "${pids[@]}"
    for i in $(seq 2 8); do
        cmp "$BATS_TEST_TMPDIR/stats.1" "$BATS_TEST_TMPDIR/stats.$i"
    done
    [ "$(wc -l <"$BATS_TEST_TMPDIR/stats.1")" -eq 8 ]
}

@test "a file with a repeated key mounts: the first is metadata/KEY, warnings names the later one" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(hostile duplicate-key.gguf)" "$mnt"
    run ls "$mnt/metadata"
    [ "$output" = "dup" ]
    run cat "$mnt/metadata/dup"
    [ "$output" = "1" ]
    run jq -c . "$mnt/metadata.json"
    [ "$output" = '{"dup":1}' ]
    # The second key starts after the header (24 bytes) and the first
    # key (8 + 3 bytes of name, 4 of type, 1 of value).
    run cat "$mnt/warnings"
    [ "$output" = "offset 40: key 'dup' appears again (first at offset 24): 2" ]
    run grep '^kv_count:' "$mnt/header"
    [ "$output" = "kv_count: 2" ]
}

@test "a repeated array key is in warnings as one line of JSON" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(hostile duplicate-array-key.gguf)" "$mnt"
    run cat "$mnt/metadata/tokens"
    [ "$output" = $'a\nb' ]
    # After the header (24), tokens (14 + 4 + 4 + 8 + 9 + 9) and x (14).
    run cat "$mnt/warnings"
    [ "$output" = 'offset 86: key '"'tokens'"' appears again (first at offset 24): ["c\n","\udcff"]' ]
}

@test "overlapping tensors and trailing bytes are listed in warnings; ggml's own files have none" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(hostile overlapping-tensors.gguf)" "$mnt"
    run cat "$mnt/warnings"
    [[ "$output" =~ ^offset\ [0-9]+:\ tensor\ \'y\'\ data\ \[[0-9]+,\ [0-9]+\)\ overlaps\ tensor\ \'x\'\ data ]]
    [ "${#lines[@]}" -eq 1 ]
    mount_model "$(hostile odd-keys-and-trailing-bytes.gguf)" "$BATS_TEST_TMPDIR/trailing"
    run cat "$BATS_TEST_TMPDIR/trailing/warnings"
    [[ "$output" =~ ^offset\ [0-9]+:\ [0-9]+\ bytes\ after\ the\ end\ of\ the\ header$ ]]
    mount_model "$(fixture type-q4_K.gguf)" "$BATS_TEST_TMPDIR/clean"
    [ "$(stat -c %s "$BATS_TEST_TMPDIR/clean/warnings")" -eq 0 ]
    [ -z "$(cat "$BATS_TEST_TMPDIR/clean/warnings")" ]
}

@test "an ik_llama.cpp type has raw of its size and info saying why there is no f32" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(hostile ik-llama-iq4_ks.gguf)" "$mnt"
    run ls "$mnt/tensors/ik"
    [ "$output" = $'info\nraw\nsha1\nsha256\nxxh64' ]
    run cat "$mnt/tensors/ik/info"
    [ "${lines[1]}" = "type: iq4_ks" ]
    [ "${lines[4]}" = "bytes: 552" ]
    [ "${lines[-1]}" = "f32: none, ik_llama.cpp type, no ggml dequantizer" ]
    [ "$(stat -c %s "$mnt/tensors/ik/raw")" -eq 552 ]
    [ "$(wc -c <"$mnt/tensors/ik/raw")" -eq 552 ]
    run awk -F '\t' '$1 == "ik" {print $2, $3, $5}' "$mnt/tensors.tsv"
    [ "$output" = "iq4_ks 512,2 552" ]
    [ -z "$(cat "$mnt/warnings")" ]
    [ -e "$mnt/tensors/next/f32.npy" ]
}

@test "the root lists the views; they have exact sizes and refuse writes" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture type-q8_0.gguf)" "$mnt"
    run ls "$mnt"
    [ "$output" = $'hashes\nheader\nmetadata\nmetadata.json\nmodel.gguf\ntensors\ntensors.tsv\nverify\nwarnings' ]
    local f
    for f in metadata.json tensors.tsv warnings tensors/mat/f32.npy tensors/mat/stats; do
        [ "$(stat -c %s "$mnt/$f")" -eq "$(wc -c <"$mnt/$f")" ]
        run -1 --separate-stderr bash -c "echo x >>'$mnt/$f'"
        [[ "$stderr" == *"Read-only file system"* ]]
    done
    run ls "$mnt/tensors/mat"
    [ "$output" = $'f32\nf32.npy\ninfo\nraw\nsha1\nsha256\nstats\nxxh64' ]
}

@test "a split set's tensors.tsv gives each tensor's shard, and warnings name the shard file" {
    local sets="$BATS_TEST_TMPDIR/sets" mnt="$BATS_TEST_TMPDIR/mnt"
    mkdir -p "$sets"
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 3 "$(fixture type-q4_K.gguf)" "$sets/s"
    # Bytes past the padding of the second shard's data.
    printf '%040d' 0 >>"$sets/s-00002-of-00003.gguf"
    mount_model "$sets/s-00001-of-00003.gguf" "$mnt"
    run awk -F '\t' 'NR > 1 {print $7}' "$mnt/tensors.tsv"
    [ "$(echo "$output" | tr '\n' ' ')" = "1 1 1 2 2 2 3 " ]
    run "$PYTHON" "$HELPERS/check_mount_views.py" tensors "$mnt" "$(fixture type-q4_K.tensors)" "$(fixture type-q4_K.ref)"
    [ "$status" -eq 0 ] || { echo "$output" | head -20; false; }
    local size
    size=$(stat -c %s "$sets/s-00002-of-00003.gguf")
    run cat "$mnt/warnings"
    [ "$output" = "s-00002-of-00003.gguf: offset $((size - 40)): 40 bytes after the end of the tensor data" ]
}
