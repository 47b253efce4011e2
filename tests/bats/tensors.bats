#!/usr/bin/env bats
# tensors/: info, raw and f32 of every ggml type, checked against ggml's
# own reading and dequantization of files it wrote.

load test_helper

setup() {
    require_fuse
}

# bats test_tags=every_fixture
@test "every type's info, raw and f32 equal ggml's, through cat, numpy and pread" {
    local model checked=0
    for model in "$GGUF_FS_FIXTURES"/type-*.gguf "$GGUF_FS_FIXTURES"/aligned64.gguf; do
        local base=${model%.gguf}
        local mnt="$BATS_TEST_TMPDIR/$(basename "$base")"
        mount_model "$model" "$mnt"
        run "$PYTHON" "$HELPERS/check_tensors.py" "$mnt" "$model" "$base.tensors" "$base.ref"
        [ "$status" -eq 0 ] || { echo "$(basename "$model"): $output"; false; }
        checked=$((checked + 1))
    done
    [ "$checked" -ge 36 ]
}

@test "info has the spec's lines in order, with ggml's type names" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture type-q4_K.gguf)" "$mnt"
    run cat "$mnt/tensors/mat/info"
    [ "${lines[0]}" = "name: mat" ]
    [ "${lines[1]}" = "type: q4_K" ]
    [ "${lines[2]}" = "shape: 512 8" ]
    [ "${lines[3]}" = "elements: 4096" ]
    [ "${lines[4]}" = "bytes: 2304" ]
    [[ "${lines[5]}" =~ ^offset:\ [0-9]+$ ]]
    [ "${#lines[@]}" -eq 6 ]
    run xattr user.gguf.type "$mnt/tensors/mat"
    [ "$output" = "q4_K" ]
    run xattr user.gguf.shape "$mnt/tensors/mat"
    [ "$output" = "512 8" ]
}

@test "awk over info and find -size audit a model" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture type-q6_K.gguf)" "$mnt"
    run awk '/^type:/ {print $2}' "$mnt"/tensors/*/info
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | sort -u)" = "q6_K" ]
    local total
    total=$(awk '/^bytes:/ {s += $2} END {print s}' "$mnt"/tensors/*/info)
    [ "$total" -eq "$(cat "$mnt"/tensors/*/raw | wc -c)" ]
    # Only paths count: a line find printed on stderr must not.
    run -0 --separate-stderr find "$mnt/tensors" -name f32 -size +12k
    [ "${#lines[@]}" -ge 1 ]
}

@test "a tensor of a type id nobody assigned has info but no raw or f32" {
    local mnt="$BATS_TEST_TMPDIR/mnt" corpus="$BATS_TEST_TMPDIR/hostile"
    python3 "$HELPERS/../hostile/make_hostile.py" "$corpus"
    mount_model "$corpus/unknown-type-1000.gguf" "$mnt"
    run ls "$mnt/tensors/odd"
    [ "$output" = "info" ]
    run cat "$mnt/tensors/odd/info"
    [ "${lines[1]}" = "type: unknown(1000)" ]
    [ ! -e "$mnt/tensors/odd/raw" ]
    [ ! -e "$mnt/tensors/odd/f32" ]
}

# bats test_tags=every_fixture
@test "big-endian and version 1 and 2 files give the same f32 as ggml's little-endian original" {
    local variant type checked=0
    for variant in be be-old v1 v2; do
        for type in f32 f16 bf16 i16 q4_0 q8_0 q4_K q6_K mxfp4; do
            local mnt="$BATS_TEST_TMPDIR/$variant-$type"
            mount_model "$GGUF_FS_FIXTURES/$variant/type-$type.gguf" "$mnt"
            run env PYTHONPATH="$HELPERS" "$PYTHON" - "$mnt" "$GGUF_FS_FIXTURES/type-$type" <<'PY'
import os, sys
from spec_render import file_name
mnt, base = sys.argv[1], sys.argv[2]
ref = open(base + ".ref", "rb").read()
pos = 0
for line in open(base + ".tensors"):
    if line.startswith("#"):
        continue
    name, _, ne, _, _ = line.split("\t")
    n = 1
    for d in ne.split():
        n *= int(d)
    path = os.path.join(mnt, "tensors", file_name(name.encode()).decode("utf-8", "surrogateescape"), "f32")
    assert open(path, "rb").read() == ref[pos:pos + 4 * n], path
    pos += 4 * n
assert pos == len(ref)
PY
            [ "$status" -eq 0 ] || { echo "$variant/$type: $output"; false; }
            case $variant in
                be*) grep -qx 'byte_order: big' "$mnt/header" ;;
                v1) grep -qx 'version: 1' "$mnt/header" ;;
            esac
            checked=$((checked + 1))
        done
    done
    [ "$checked" -eq 36 ]
}

@test "a big-endian q5_0 tensor has raw but no f32, and info says why" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$GGUF_FS_FIXTURES/be/type-q5_0.gguf" "$mnt"
    [ -f "$mnt/tensors/mat/raw" ]
    [ ! -e "$mnt/tensors/mat/f32" ]
    run ls "$mnt/tensors/mat"
    [ "$output" = "$(printf 'info\nraw\nsha1\nsha256\nxxh64')" ]
    grep -qx 'f32: none, big-endian layout of this type is not defined' "$mnt/tensors/mat/info"
}
