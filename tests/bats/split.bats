#!/usr/bin/env bats
# Split models: a set of shards written as gguf-split lays them out mounts
# as the one model it was split from, with model.gguf its merged file; a
# broken set is refused naming the shard and the offset; a shard cut short
# under the mount gives EIO.

load test_helper

setup() {
    require_fuse
    SETS="$BATS_TEST_TMPDIR/sets"
    mkdir -p "$SETS"
}

# split_set IN PREFIX [OPTIONS...]: a model without tensors still makes a
# set of two, its first shard holding the keys.
split_set() {
    local in=$1 prefix=$2
    shift 2
    local tensors
    tensors=$("$GGML_REF" "$GGML_LIB" dump-tensors "$in" 2>/dev/null | sed -n 's/^#tensor_count\t//p')
    [ "${tensors:-1}" != 0 ] || set -- "$@" --no-tensor-first-split
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" "$@" "$in" "$prefix"
}

first_shard() { # first_shard PREFIX
    ls "$1"-00001-of-*.gguf
}

# check_set ORIGINAL SHARD-TO-MOUNT NAME: the set's tree equals the
# original's, model.gguf is its bytes, and ggml reads model.gguf as it
# read the original.
check_set() {
    local original=$1 shard=$2 name=$3
    local a="$BATS_TEST_TMPDIR/split-$name" b="$BATS_TEST_TMPDIR/single-$name"
    mount_model "$shard" "$a"
    mount_model "$original" "$b"
    run "$PYTHON" "$HELPERS/compare_trees.py" "$a" "$b"
    [ "$status" -eq 0 ] || { echo "$name: $output"; return 1; }
    cmp "$a/model.gguf" "$original" || { echo "$name: model.gguf differs"; return 1; }
    [ "$(stat -c %s "$a/model.gguf")" -eq "$(stat -c %s "$original")" ]
    fusermount3 -u "$a"
    fusermount3 -u "$b"
}

# bats test_tags=every_fixture
@test "every fixture split in shards mounts as its unsplit file, model.gguf byte for byte" {
    local model n=0
    for model in "$GGUF_FS_FIXTURES"/type-*.gguf "$GGUF_FS_FIXTURES"/aligned64.gguf \
                 "$GGUF_FS_FIXTURES"/metadata.gguf; do
        local name=$(basename "$model" .gguf)
        split_set "$model" "$SETS/$name" --tensors-per-shard 2
        # Any shard mounts the set: the last one here.
        local last=$(ls "$SETS/$name"-*.gguf | tail -n 1)
        check_set "$model" "$last" "$name"
        n=$((n + 1))
    done
    [ "$n" -ge 37 ]
}

@test "a first shard without tensors (--no-tensor-first-split) works" {
    local model=$(fixture type-q6_K.gguf)
    split_set "$model" "$SETS/nt" --no-tensor-first-split --tensors-per-shard 3
    run "$PYTHON" -c 'import sys; print(sys.argv[1:])' "$SETS"/nt-*.gguf
    [[ "$output" == *"nt-00001-of-00004.gguf"* ]]
    check_set "$model" "$SETS/nt-00001-of-00004.gguf" nt
}

# bats test_tags=every_fixture
@test "big-endian and version 1 and 2 sets keep their byte order and version in model.gguf" {
    local variant model
    for variant in be be-old v1 v2; do
        for model in "$GGUF_FS_FIXTURES/$variant"/type-q4_K.gguf "$GGUF_FS_FIXTURES/$variant"/type-f16.gguf; do
            local name="$variant-$(basename "$model" .gguf)"
            split_set "$model" "$SETS/$name" --tensors-per-shard 3
            check_set "$model" "$(first_shard "$SETS/$name")" "$name"
        done
    done
}

@test "ggml reads model.gguf of a set with the keys and tensors of the original" {
    local model
    for model in "$(fixture metadata.gguf)" "$(fixture type-q4_K.gguf)" "$(fixture aligned64.gguf)"; do
        local base=${model%.gguf} name=$(basename "$model" .gguf)
        split_set "$model" "$SETS/$name" --tensors-per-shard 2
        local mnt="$BATS_TEST_TMPDIR/g-$name"
        mount_model "$(first_shard "$SETS/$name")" "$mnt"
        diff <("$GGML_REF" "$GGML_LIB" dump-metadata "$mnt/model.gguf") "$base.expected"
        diff <("$GGML_REF" "$GGML_LIB" dump-tensors "$mnt/model.gguf") "$base.tensors"
    done
}

@test "header counts the set, info names the shard, shards/ holds each shard's header and path" {
    local model=$(fixture type-q8_0.gguf)
    split_set "$model" "$SETS/h" --tensors-per-shard 3
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$SETS/h-00002-of-00003.gguf" "$mnt"
    run cat "$mnt/header"
    [[ "$output" == *"tensor_count: 7"* ]]
    [[ "$output" == *"kv_count: 6"* ]]
    local total=$(cat "$SETS"/h-*.gguf | wc -c)
    [[ "$output" == *"file_size: $total"* ]]
    [ "${lines[7]}" = "shards: 3" ]
    run ls "$mnt/shards"
    [ "$output" = "$(printf 'h-00001-of-00003.gguf\nh-00002-of-00003.gguf\nh-00003-of-00003.gguf')" ]
    run cat "$mnt/shards/h-00003-of-00003.gguf"
    [[ "$output" == *"tensor_count: 1"* ]]
    [[ "$output" == *"kv_count: 3"* ]]
    [[ "$output" == *"file_size: $(stat -c %s "$SETS/h-00003-of-00003.gguf")"* ]]
    [ "${lines[7]}" = "path: $SETS/h-00003-of-00003.gguf" ]
    # The seventh tensor is the third shard's first: its offset is in that shard.
    local last=$(ls "$mnt/tensors" | sed -n 7p)
    local seventh
    seventh=$(python3 -c 'import sys; print(sys.argv[1])' "$(ls -U "$mnt/tensors" | sed -n 7p)")
    run cat "$mnt/tensors/$seventh/info"
    [ "${lines[6]}" = "shard: 3" ]
    local offset=$(sed -n 's/^offset: //p' "$mnt/tensors/$seventh/info")
    local bytes=$(sed -n 's/^bytes: //p' "$mnt/tensors/$seventh/info")
    cmp "$mnt/tensors/$seventh/raw" <(tail -c +$((offset + 1)) "$SETS/h-00003-of-00003.gguf" | head -c "$bytes")
    # A plain file has no shards/ and no shard: line.
    mount_model "$model" "$BATS_TEST_TMPDIR/plain"
    [ ! -e "$BATS_TEST_TMPDIR/plain/shards" ]
    ! grep -q '^shard' "$BATS_TEST_TMPDIR/plain/tensors/mat/info" "$BATS_TEST_TMPDIR/plain/header"
}

# refused FILE PATTERN: exit 1, one line matching PATTERN, nothing mounted.
refused() {
    local mnt="$BATS_TEST_TMPDIR/refused"
    mkdir -p "$mnt"
    run -1 --separate-stderr "$GGUF_FS" "$1" "$mnt"
    [ "${#stderr_lines[@]}" -eq 1 ] || { echo "$stderr"; return 1; }
    [[ "$stderr" =~ $2 ]] || { echo "got: $stderr"; echo "want: $2"; return 1; }
    ! mountpoint -q "$mnt"
}

@test "a set with a missing shard is refused, naming the shard and the offset of split.count" {
    split_set "$(fixture type-q4_0.gguf)" "$SETS/m" --tensors-per-shard 2
    rm "$SETS/m-00003-of-00004.gguf"
    refused "$SETS/m-00002-of-00004.gguf" \
        "^gguf-fs: $SETS/m-00002-of-00004.gguf: offset 0x[0-9a-f]+: split.count is 4, but shard 3, m-00003-of-00004.gguf, cannot be read: cannot open: No such file or directory$"
}

@test "two shards with the same split.no are refused" {
    split_set "$(fixture type-q4_0.gguf)" "$SETS/d" --tensors-per-shard 3 --tamper no:3:1
    refused "$SETS/d-00001-of-00003.gguf" \
        "^gguf-fs: $SETS/d-00003-of-00003.gguf: offset 0x[0-9a-f]+: split.no is 1, the same as in d-00002-of-00003.gguf$"
    split_set "$(fixture type-q4_0.gguf)" "$SETS/e" --tensors-per-shard 3 --tamper no:2:7
    refused "$SETS/e-00001-of-00003.gguf" \
        "^gguf-fs: $SETS/e-00002-of-00003.gguf: offset 0x[0-9a-f]+: split.no is 7, but the file name makes it shard 2 \(split.no 1\)$"
}

@test "a split.count that differs between shards is refused" {
    split_set "$(fixture type-q4_0.gguf)" "$SETS/c" --tensors-per-shard 3 --tamper count:2:5
    refused "$SETS/c-00001-of-00003.gguf" \
        "^gguf-fs: $SETS/c-00002-of-00003.gguf: offset 0x[0-9a-f]+: split.count is 5, but shard 1 says 3$"
    # Mounted by the shard that disagrees with its own name.
    refused "$SETS/c-00002-of-00003.gguf" \
        "^gguf-fs: $SETS/c-00002-of-00003.gguf: offset 0x[0-9a-f]+: split.count is 5, but the file name says 3 shards$"
}

@test "a total tensor count that differs from split.tensors.count is refused" {
    split_set "$(fixture type-q4_0.gguf)" "$SETS/t" --tensors-per-shard 3 --tamper total:1:8
    refused "$SETS/t-00003-of-00003.gguf" \
        "^gguf-fs: $SETS/t-00001-of-00003.gguf: offset 0x[0-9a-f]+: split.tensors.count is 8, but the 3 shards hold 7 tensors$"
}

@test "a tensor name in two shards is refused" {
    split_set "$(fixture type-q4_0.gguf)" "$SETS/r" --tensors-per-shard 3 --repeat-tensor
    refused "$SETS/r-00001-of-00003.gguf" \
        "^gguf-fs: $SETS/r-00003-of-00003.gguf: offset 0x[0-9a-f]+: tensor '[^']+' is also in r-00001-of-00003.gguf$"
}

@test "a bad shard is refused with its own file, offset and problem" {
    split_set "$(fixture type-q4_0.gguf)" "$SETS/b" --tensors-per-shard 3
    truncate -s 300 "$SETS/b-00002-of-00003.gguf"
    refused "$SETS/b-00001-of-00003.gguf" \
        "^gguf-fs: $SETS/b-00002-of-00003.gguf: offset 0x[0-9a-f]+: tensor '[^']+': data ends at [0-9]+, past end of file \(300\)$"
}

@test "a file with split.count over 1 and a name outside the pattern is refused, saying so" {
    split_set "$(fixture type-q4_0.gguf)" "$SETS/n" --tensors-per-shard 3
    cp "$SETS/n-00001-of-00003.gguf" "$SETS/renamed.gguf"
    refused "$SETS/renamed.gguf" \
        "^gguf-fs: $SETS/renamed.gguf: offset 0x[0-9a-f]+: split.count is 3, but the file name does not end in -KKKKK-of-NNNNN.gguf$"
}

@test "a shard cut short under the mount: its data reads are EIO, other shards still read, one log line" {
    split_set "$(fixture type-q4_K.gguf)" "$SETS/x" --tensors-per-shard 4
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$SETS/x-00001-of-00002.gguf" "$mnt"
    local first second
    first=$(ls -U "$mnt/tensors" | sed -n 1p)
    second=$(ls -U "$mnt/tensors" | sed -n 5p)
    grep -qx 'shard: 2' "$mnt/tensors/$second/info"
    truncate -s 1000 "$SETS/x-00002-of-00002.gguf"
    run -1 --separate-stderr cat "$mnt/tensors/$second/raw"
    [[ "$stderr" == *"Input/output error"* ]]
    run -1 --separate-stderr cat "$mnt/tensors/$second/f32"
    [[ "$stderr" == *"Input/output error"* ]]
    run -1 --separate-stderr cat "$mnt/model.gguf"
    [[ "$stderr" == *"Input/output error"* ]]
    cat "$mnt/tensors/$first/raw" "$mnt/tensors/$first/f32" >/dev/null
    cat "$mnt/header" "$mnt/tensors/$second/info" >/dev/null
    [ "$(grep -c "x-00002-of-00002.gguf: " "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ]
}

@test "a read of model.gguf spanning hundreds of small tensors of a set is whole and exact" {
    # 300 tensors of 64 bytes: a 128 KiB read of model.gguf crosses more
    # pieces than one gathered reply holds, and is copied instead.
    local model="$BATS_TEST_TMPDIR/many.gguf"
    "$GGML_REF" "$GGML_LIB" make-model "$model" --blocks 1 --embd 256 --ff 256 --vocab 300 \
        --merges 10 --extra-tensors 300
    split_set "$model" "$SETS/many" --tensors-per-shard 100
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(first_shard "$SETS/many")" "$mnt"
    cmp "$mnt/model.gguf" "$model"
    # The same through reads at odd offsets and lengths.
    "$PYTHON" - "$mnt/model.gguf" "$model" <<'PY'
import os, random, sys
b = open(sys.argv[2], "rb").read()
fd = os.open(sys.argv[1], os.O_RDONLY)
rng = random.Random(7)
for _ in range(300):
    off = rng.randrange(len(b))
    n = rng.randrange(1, 200000)
    assert os.pread(fd, n, off) == b[off:off + n], (off, n)
PY
}
