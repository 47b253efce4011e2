#!/usr/bin/env bats
# verify: each file of a model digested and compared with what its store
# publishes, for local files: a SHA256SUMS and a FILE.sha256 beside a model
# in a folder, nothing published, a split set (a line a shard, the worst
# line's verdict), a Hugging Face hub cache's blob and an Ollama store's
# blob whose bytes are no longer those their names give (a flipped byte in
# tensor data), through the stores' views and their own paths; a mismatch
# in warnings and the log; readers at once; a stop during a verify of
# 1.65 GB. Every digest is compared with sha256sum's.

load test_helper
load long_pass

C1=4d1e6f0c2b3a59788a6e0f1d2c3b4a5968778695 # a commit of the hub cache

# digest FILE: sha256sum's digest of FILE.
digest() {
    sha256sum "$1" | cut -c1-64
}

# flip_byte FILE: flips the lowest bit of a byte in FILE's first tensor's
# data (where ggml's reading of FILE puts it): the file still opens.
flip_byte() {
    local at byte
    at=$("$GGML_REF" "$GGML_LIB" dump-tensors "$1" | awk -F'\t' '!/^#/ {print $4 + 5; exit}')
    byte=$(od -An -tu1 -j "$at" -N1 "$1" | tr -d ' ')
    # shellcheck disable=SC2059 # the format is the byte
    printf "$(printf '\\%03o' $((byte ^ 1)))" | dd of="$1" bs=1 seek="$at" conv=notrunc status=none
}

# line NAME COMPUTED PUBLISHED VERDICT: one line of verify.
line() {
    printf '%s\tsha256\t%s\t%s\t%s\n' "$@"
}

setup_file() {
    local dir="$BATS_FILE_TMPDIR/models" fx
    fx=$GGUF_FS_FIXTURES
    mkdir -p "$dir"/{sums,single,none,split,split-mixed}
    # sums/: a.gguf intact, b.gguf a flipped byte, SHA256SUMS of the originals.
    cp "$fx/type-q8_0.gguf" "$dir/sums/a.gguf"
    cp "$fx/type-q8_0.gguf" "$dir/sums/b.gguf"
    (cd "$dir/sums" && sha256sum a.gguf b.gguf >SHA256SUMS)
    flip_byte "$dir/sums/b.gguf"
    # single/: c.gguf and its c.gguf.sha256; d.gguf flipped, its .sha256 the original's.
    cp "$fx/type-q4_K.gguf" "$dir/single/c.gguf"
    cp "$fx/type-q4_K.gguf" "$dir/single/d.gguf"
    (cd "$dir/single" && sha256sum c.gguf >c.gguf.sha256 && sha256sum d.gguf >d.gguf.sha256)
    flip_byte "$dir/single/d.gguf"
    # none/: nothing published.
    cp "$fx/type-f16.gguf" "$dir/none/e.gguf"
    # split/: a set of three and a SHA256SUMS of them; split-mixed/: one
    # shard right, one wrong, one missing from its SHA256SUMS.
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" "$fx/type-q6_K.gguf" "$dir/split/set"
    (cd "$dir/split" && sha256sum set-*.gguf >SHA256SUMS)
    cp "$dir"/split/set-*.gguf "$dir/split-mixed/"
    (cd "$dir/split-mixed" && sha256sum set-00001-of-00003.gguf >SHA256SUMS &&
        printf '%064d  set-00002-of-00003.gguf\n' 0 >>SHA256SUMS)
    # A hub cache: the blob named by type-q8_0's digest holds it with a byte flipped.
    local repo="$dir/hub/models--org--name" sum
    sum=$(digest "$fx/type-q8_0.gguf")
    mkdir -p "$repo/blobs" "$repo/snapshots/$C1" "$repo/refs"
    cp "$fx/type-q8_0.gguf" "$repo/blobs/$sum"
    flip_byte "$repo/blobs/$sum"
    ln -s "../../blobs/$sum" "$repo/snapshots/$C1/m.gguf"
    printf '%s' "$C1" >"$repo/refs/main"
    # An Ollama store: tiny:latest's model layer named by type-q4_K's
    # digest, holding it with a byte flipped.
    local store="$dir/.ollama/models"
    sum=$(digest "$fx/type-q4_K.gguf")
    mkdir -p "$store/blobs" "$store/manifests/registry.ollama.ai/library/tiny"
    cp "$fx/type-q4_K.gguf" "$store/blobs/sha256-$sum"
    flip_byte "$store/blobs/sha256-$sum"
    local config='{"model_format":"gguf","model_family":"llama"}'
    printf '%s' "$config" >"$store/blobs/sha256-$(printf '%s' "$config" | sha256sum | cut -c1-64)"
    printf '{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",%s,%s}' \
        "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:$(printf '%s' "$config" | sha256sum | cut -c1-64)\",\"size\":${#config}}" \
        "\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:$sum\",\"size\":$(stat -c %s "$fx/type-q4_K.gguf")}]" \
        >"$store/manifests/registry.ollama.ai/library/tiny/latest"
}

setup() {
    require_fuse
    DIR="$BATS_FILE_TMPDIR/models"
    MNT="$BATS_TEST_TMPDIR/mnt"
}

@test "a model with its line in a SHA256SUMS beside it is ok: sha256sum's digest, and the same published" {
    mount_model "$DIR" "$MNT"
    local sum
    sum=$(digest "$DIR/sums/a.gguf")
    [ "$(cat "$MNT/sums/a.gguf/verify")" = "$(line a.gguf "$sum" "$sum" ok)
verdict: ok" ]
    run ! grep -q 'its store publishes' "$MNT/sums/a.gguf/warnings"
    # A mount of the file alone finds the same.
    mount_model "$DIR/sums/a.gguf" "$BATS_TEST_TMPDIR/single"
    [ "$(cat "$BATS_TEST_TMPDIR/single/verify")" = "$(cat "$MNT/sums/a.gguf/verify")" ]
}

@test "a flipped byte under a SHA256SUMS of the original is a MISMATCH, a warnings line once known, and a log line" {
    mount_model "$DIR" "$MNT"
    local sum published
    sum=$(digest "$DIR/sums/b.gguf")
    published=$(digest "$GGUF_FS_FIXTURES/type-q8_0.gguf")
    [ "$sum" != "$published" ]
    run ! grep -q 'its store publishes' "$MNT/sums/b.gguf/warnings" # not computed yet
    [ "$(cat "$MNT/sums/b.gguf/verify")" = "$(line b.gguf "$sum" "$published" MISMATCH)
verdict: MISMATCH" ]
    grep -Fx "offset 0: sha256 $sum of the file is not the $published its store publishes (SHA256SUMS)" \
        "$MNT/sums/b.gguf/warnings"
    # warnings' size follows its text.
    [ "$(stat -c %s "$MNT/sums/b.gguf/warnings")" -eq "$(cat "$MNT/sums/b.gguf/warnings" | wc -c)" ]
    grep -Fx "gguf-fs: $(realpath "$DIR")/sums/b.gguf: verify: sha256 $sum, its store publishes $published (SHA256SUMS)" \
        "$BATS_TEST_TMPDIR/daemon.log"
}

@test "a FILE.sha256 beside a model is what is published, and a mismatch names it" {
    mount_model "$DIR" "$MNT"
    local c d published
    c=$(digest "$DIR/single/c.gguf")
    d=$(digest "$DIR/single/d.gguf")
    published=$(digest "$GGUF_FS_FIXTURES/type-q4_K.gguf")
    [ "$c" = "$published" ] && [ "$d" != "$published" ]
    [ "$(cat "$MNT/single/c.gguf/verify")" = "$(line c.gguf "$c" "$c" ok)
verdict: ok" ]
    [ "$(cat "$MNT/single/d.gguf/verify")" = "$(line d.gguf "$d" "$published" MISMATCH)
verdict: MISMATCH" ]
    grep -Fx "offset 0: sha256 $d of the file is not the $published its store publishes (d.gguf.sha256)" \
        "$MNT/single/d.gguf/warnings"
}

@test "a model with nothing published beside it is unpublished" {
    mount_model "$DIR" "$MNT"
    local sum
    sum=$(digest "$DIR/none/e.gguf")
    [ "$(cat "$MNT/none/e.gguf/verify")" = "$(line e.gguf "$sum" - unpublished)
verdict: unpublished" ]
    run ! grep -q 'its store publishes' "$MNT/none/e.gguf/warnings"
}

@test "a SHA256SUMS written after the mount is found by the first verify" {
    local dir="$BATS_TEST_TMPDIR/late"
    mkdir -p "$dir"
    cp "$DIR/none/e.gguf" "$dir/e.gguf"
    mount_model "$dir" "$MNT"
    [ -d "$MNT/e.gguf" ]
    (cd "$dir" && sha256sum e.gguf >SHA256SUMS)
    local sum
    sum=$(digest "$dir/e.gguf")
    [ "$(cat "$MNT/e.gguf/verify")" = "$(line e.gguf "$sum" "$sum" ok)
verdict: ok" ]
}

@test "a split set has a line per shard, each against its SHA256SUMS line, in a folder and mounted by a shard" {
    mount_model "$DIR" "$MNT"
    local k f expected=""
    for k in 1 2 3; do
        f=set-0000$k-of-00003.gguf
        expected+="$(line "$f" "$(digest "$DIR/split/$f")" "$(digest "$DIR/split/$f")" ok)"$'\n'
    done
    expected+="verdict: ok"
    [ "$(cat "$MNT/split/set.gguf/verify")" = "$expected" ]
    mount_model "$DIR/split/set-00002-of-00003.gguf" "$BATS_TEST_TMPDIR/shard"
    [ "$(cat "$BATS_TEST_TMPDIR/shard/verify")" = "$expected" ]
}

@test "the verdict is the worst line's: a set with a shard ok, one MISMATCH and one unpublished is a MISMATCH" {
    mount_model "$DIR" "$MNT"
    local zero s1 s2 s3
    zero=$(printf '%064d' 0)
    s1=$(digest "$DIR/split-mixed/set-00001-of-00003.gguf")
    s2=$(digest "$DIR/split-mixed/set-00002-of-00003.gguf")
    s3=$(digest "$DIR/split-mixed/set-00003-of-00003.gguf")
    [ "$(cat "$MNT/split-mixed/set.gguf/verify")" = "$(line set-00001-of-00003.gguf "$s1" "$s1" ok)
$(line set-00002-of-00003.gguf "$s2" "$zero" MISMATCH)
$(line set-00003-of-00003.gguf "$s3" - unpublished)
verdict: MISMATCH" ]
    # A split set's warnings line names the shard.
    grep -Fx "set-00002-of-00003.gguf: offset 0: sha256 $s2 of the file is not the $zero its store publishes (SHA256SUMS)" \
        "$MNT/split-mixed/set.gguf/warnings"
    # Mounted by a shard, the same.
    mount_model "$DIR/split-mixed/set-00003-of-00003.gguf" "$BATS_TEST_TMPDIR/set"
    [ "$(cat "$BATS_TEST_TMPDIR/set/verify")" = "$(cat "$MNT/split-mixed/set.gguf/verify")" ]
    # Lines ok and unpublished: unpublished.
    local dir="$BATS_TEST_TMPDIR/half"
    mkdir -p "$dir"
    cp "$DIR"/split-mixed/set-*.gguf "$dir/"
    (cd "$dir" && sha256sum set-00001-of-00003.gguf >SHA256SUMS)
    mount_model "$dir/set-00001-of-00003.gguf" "$BATS_TEST_TMPDIR/half-mnt"
    run -0 cut -f5 "$BATS_TEST_TMPDIR/half-mnt/verify"
    [ "$output" = "$(printf 'ok\nunpublished\nunpublished\nverdict: unpublished')" ]
}

@test "a hub cache blob with a flipped byte is a MISMATCH against its name, through hf/, its snapshot, and a mount of the snapshot's file" {
    mount_model "$DIR" "$MNT"
    local blob published sum expected
    published=$(digest "$GGUF_FS_FIXTURES/type-q8_0.gguf")
    blob="$DIR/hub/models--org--name/blobs/$published"
    sum=$(digest "$blob")
    [ "$sum" != "$published" ]
    expected="$(line m.gguf "$sum" "$published" MISMATCH)
verdict: MISMATCH"
    [ "$(cat "$MNT/hub/hf/org/name/main/m.gguf/verify")" = "$expected" ]
    [ "$(cat "$MNT/hub/hf/org/name/$C1/m.gguf/verify")" = "$expected" ]
    [ "$(cat "$MNT/hub/models--org--name/snapshots/$C1/m.gguf/verify")" = "$expected" ]
    grep -Fx "offset 0: sha256 $sum of the file is not the $published its store publishes (blob name)" \
        "$MNT/hub/hf/org/name/main/m.gguf/warnings"
    mount_model "$DIR/hub/models--org--name/snapshots/$C1/m.gguf" "$BATS_TEST_TMPDIR/snap"
    [ "$(cat "$BATS_TEST_TMPDIR/snap/verify")" = "$expected" ]
}

@test "an Ollama blob with a flipped byte is a MISMATCH against the digest its name and manifest give, through ollama/" {
    mount_model "$DIR" "$MNT"
    local published sum
    published=$(digest "$GGUF_FS_FIXTURES/type-q4_K.gguf")
    grep -q "\"sha256:$published\"" "$DIR/.ollama/models/manifests/registry.ollama.ai/library/tiny/latest"
    sum=$(digest "$DIR/.ollama/models/blobs/sha256-$published")
    [ "$sum" != "$published" ]
    [ "$(cat "$MNT/.ollama/models/ollama/tiny:latest/verify")" = "$(line "sha256-$published" "$sum" "$published" MISMATCH)
verdict: MISMATCH" ]
    grep -Fx "offset 0: sha256 $sum of the file is not the $published its store publishes (blob name)" \
        "$MNT/.ollama/models/ollama/tiny:latest/warnings"
    [ "$(cat "$MNT/.ollama/models/blobs/sha256-$published/verify")" = "$(cat "$MNT/.ollama/models/ollama/tiny:latest/verify")" ]
}

@test "a model mounted by a relative name in the background finds its FILE.sha256 after the daemon leaves its directory" {
    local exe
    exe=$(realpath "$GGUF_FS")
    mkdir -p "$MNT"
    (cd "$DIR/single" && env --default-signal=HUP,INT,TERM "$exe" c.gguf "$MNT" 3>&- 5<&- 6<&- 7<&- 8<&- 9<&-)
    mountpoint -q "$MNT"
    local sum
    sum=$(digest "$DIR/single/c.gguf")
    local text
    text=$(cat "$MNT/verify") || { fusermount3 -u "$MNT"; return 1; }
    fusermount3 -u "$MNT"
    [ "$text" = "$(line c.gguf "$sum" "$sum" ok)
verdict: ok" ]
}

# The long-pass model's digest, kept beside it in the cache under a name
# no lookup reads (sha256sum takes many seconds over 1.65 GB), made again
# when the model is newer.
long_pass_digest() {
    local model sums
    model=$(long_pass_model)
    sums=${model%.gguf}.sha256sum
    if [ ! -s "$sums" ] || [ "$model" -nt "$sums" ]; then
        sha256sum "$model" | cut -c1-64 >"$sums.tmp" && mv "$sums.tmp" "$sums"
    fi
    cat "$sums"
}

# long_folder: a folder of the long-pass model (a link) and a SHA256SUMS for it.
long_folder() {
    local dir="$BATS_TEST_TMPDIR/long" sum
    sum=$(long_pass_digest)
    mkdir -p "$dir"
    ln "$(long_pass_model)" "$dir/long.gguf" 2>/dev/null || ln -s "$(long_pass_model)" "$dir/long.gguf"
    printf '%s  long.gguf\n' "$sum" >"$dir/SHA256SUMS"
    echo "$dir"
}

@test "two readers at once of a 1.65 GB model's verify get the same text, sha256sum's digest and ok" {
    local dir sum
    dir=$(long_folder)
    sum=$(long_pass_digest)
    mount_model "$dir" "$MNT"
    cat "$MNT/long.gguf/verify" >"$BATS_TEST_TMPDIR/one" &
    local one=$!
    cat "$MNT/long.gguf/verify" >"$BATS_TEST_TMPDIR/two" &
    local two=$!
    wait "$one"
    wait "$two"
    [ "$(cat "$BATS_TEST_TMPDIR/one")" = "$(line long.gguf "$sum" "$sum" ok)
verdict: ok" ]
    cmp "$BATS_TEST_TMPDIR/one" "$BATS_TEST_TMPDIR/two"
}

# wait_digesting: waits up to 10 s until the daemon has loaded its digests'
# module, which the pass loads on its first bytes.
wait_digesting() {
    local i
    for i in $(seq 200); do
        mapped_libraries "$daemon" | grep -qx 'gguf-fs-digests\.so' && return 0
        sleep 0.05
    done
    echo "the daemon never loaded its digests' module" >&2
    return 1
}

@test "SIGINT while a 1.65 GB model is verified ends the daemon within a second, status 0, unmounted" {
    start_long_pass "$(long_pass_model)" "$MNT" verify
    wait_digesting
    kill -INT "$daemon"
    stopped_cleanly 1
    run ! mountpoint -q "$MNT"
}

@test "a forced unmount while a folder's 1.65 GB model is verified ends the daemon within a second" {
    [ "$(id -u)" -eq 0 ] || skip "umount -f needs root"
    start_long_pass "$(long_folder)" "$MNT" long.gguf/verify
    wait_digesting
    # -f cuts the connection first, which ends the session; the unmount
    # itself may still be refused busy, so its status is not tested.
    run umount -f "$MNT"
    stopped_cleanly 1
    [[ "$(cat "$BATS_TEST_TMPDIR/reader.err")" == *"connection abort"* ]]
    # Refused busy, the mount stays, its connection cut (mountpoint cannot
    # stat it): with the reader gone, it goes.
    if awk -v m="$MNT" '$5 == m {found = 1} END {exit !found}' /proc/self/mountinfo; then
        umount "$MNT"
    fi
}
