#!/usr/bin/env bats
# hashes and tensors/NAME/{xxh64,sha1,sha256}: what `llama-gguf-hash --all
# --uuid model.gguf` prints in the mount's root, against the same output
# rebuilt in Python (gguf_hash_ref.py: the header parsed there, each
# tensor's bytes hashed with python3-xxhash and hashlib, the UUIDv5 built
# from its definition) for every fixture, big-endian and old versions, a
# split set and the models of a folder; sizes exact before anything is
# computed; readers at once get one text; a model cut short gives EIO;
# the hashing module and its libraries are loaded by the first hash read;
# a stop (SIGTERM, a forced unmount) during a pass of seconds ends it.

load test_helper
load long_pass

setup() {
    require_fuse
}

# check_hashes MOUNT MODEL [SIZES] [--files-first]
check_hashes() {
    run "$PYTHON" "$HELPERS/gguf_hash_ref.py" check "$@"
    [ "$status" -eq 0 ] || { echo "$2:"; echo "$output" | head -20; return 1; }
}

# bats test_tags=every_fixture
@test "hashes of every fixture are gguf-hash's, with the tensor files read first or after" {
    local f base n=0 order
    for f in "$GGUF_FS_FIXTURES"/type-*.gguf "$(fixture aligned64.gguf)" "$(fixture metadata.gguf)"; do
        base=${f%.gguf}
        local mnt="$BATS_TEST_TMPDIR/mnt-${base##*/}"
        mount_model "$f" "$mnt"
        # Every other model computes each tensor's file alone on a fresh
        # mount; the others have them filled in by the pass of `hashes`.
        order=()
        [ $((n % 2)) -eq 0 ] && order=(--files-first)
        check_hashes "$mnt" "$f" "$base.tensors" "${order[@]}"
        fusermount3 -u "$mnt"
        n=$((n + 1))
    done
    [ "$n" -ge 37 ]
}

# bats test_tags=every_fixture
@test "big-endian and version 1 and 2 files hash their tensors' bytes as stored" {
    local variant type
    for variant in be be-old v1 v2; do
        for type in f32 f16 q4_K q6_K mxfp4; do
            local mnt="$BATS_TEST_TMPDIR/$variant-$type"
            mount_model "$GGUF_FS_FIXTURES/$variant/type-$type.gguf" "$mnt"
            check_hashes "$mnt" "$GGUF_FS_FIXTURES/$variant/type-$type.gguf" "$(fixture "type-$type.tensors")"
            fusermount3 -u "$mnt"
        done
    done
    # Swapped f32 elements hash differently from the little-endian original.
    mount_model "$(fixture type-f32.gguf)" "$BATS_TEST_TMPDIR/le"
    mount_model "$GGUF_FS_FIXTURES/be/type-f32.gguf" "$BATS_TEST_TMPDIR/be"
    run ! cmp -s "$BATS_TEST_TMPDIR/le/tensors/mat/sha256" "$BATS_TEST_TMPDIR/be/tensors/mat/sha256"
}

@test "a split set hashes as its merged model, from any shard" {
    local sets="$BATS_TEST_TMPDIR/sets" type
    mkdir -p "$sets"
    for type in q4_K f16 iq2_xxs; do
        "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 2 "$(fixture "type-$type.gguf")" "$sets/$type"
        local last
        last=$(ls "$sets/$type"-*.gguf | tail -n 1)
        mount_model "$last" "$BATS_TEST_TMPDIR/split-$type"
        check_hashes "$BATS_TEST_TMPDIR/split-$type" "$(fixture "type-$type.gguf")" "$(fixture "type-$type.tensors")"
        mount_model "$(fixture "type-$type.gguf")" "$BATS_TEST_TMPDIR/single-$type"
        cmp "$BATS_TEST_TMPDIR/split-$type/hashes" "$BATS_TEST_TMPDIR/single-$type/hashes"
    done
}

@test "every model of a folder has the hashes of its file, a split set those of its merged model" {
    local dir="$BATS_TEST_TMPDIR/models" mnt="$BATS_TEST_TMPDIR/mnt"
    mkdir -p "$dir/llama" "$dir/split"
    cp "$(fixture type-q4_K.gguf)" "$(fixture type-q8_0.gguf)" "$dir/llama/"
    cp "$(fixture metadata.gguf)" "$dir/"
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 3 "$(fixture type-q6_K.gguf)" "$dir/split/q6"
    mount_model "$dir" "$mnt"
    check_hashes "$mnt/llama/type-q4_K.gguf" "$(fixture type-q4_K.gguf)" "$(fixture type-q4_K.tensors)" --files-first
    check_hashes "$mnt/llama/type-q8_0.gguf" "$(fixture type-q8_0.gguf)" "$(fixture type-q8_0.tensors)"
    check_hashes "$mnt/metadata.gguf" "$(fixture metadata.gguf)" "$(fixture metadata.tensors)"
    check_hashes "$mnt/split/q6.gguf" "$(fixture type-q6_K.gguf)" "$(fixture type-q6_K.tensors)"
}

@test "the sizes of hashes and the tensor files are exact in stat before anything is computed" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture type-q5_K.gguf)" "$mnt"
    local before
    before=$(stat -c %s "$mnt/hashes")
    [ "$(stat -c %s "$mnt/tensors/mat/xxh64")" -eq 17 ]
    [ "$(stat -c %s "$mnt/tensors/mat/sha1")" -eq 41 ]
    [ "$(stat -c %s "$mnt/tensors/mat/sha256")" -eq 65 ]
    [ "$(wc -c <"$mnt/hashes")" -eq "$before" ]
    [ "$(stat -c %s "$mnt/hashes")" -eq "$before" ]
    # Four lines per tensor, then the model's four and its UUID.
    local tensors
    tensors=$(ls "$mnt/tensors" | wc -l)
    [ "$(wc -l <"$mnt/hashes")" -eq $((4 * tensors + 5)) ]
    run -0 --separate-stderr awk '{print $1}' "$mnt/hashes"
    [ "$(printf '%s\n' "${lines[@]:0:4}" | tr '\n' ' ')" = "xxh64 xxh3 sha1 sha256 " ]
    [ "$(printf '%s\n' "${lines[@]: -5}" | tr '\n' ' ')" = "xxh64 xxh3 sha1 sha256 uuid " ]
    run ls "$mnt/tensors/mat"
    [ "$output" = $'f32\nf32.npy\ninfo\nraw\nsha1\nsha256\nstats\nxxh64' ]
    run -1 --separate-stderr bash -c "echo x >>'$mnt/hashes'"
    [[ "$stderr" == *"Read-only file system"* ]]
}

@test "each tensor file is the hash of its raw file, as sha256sum, sha1sum and xxh64sum give it" {
    local mnt="$BATS_TEST_TMPDIR/mnt" t
    mount_model "$(fixture type-iq3_s.gguf)" "$mnt"
    for t in "$mnt"/tensors/*; do
        [ "$(cat "$t/sha256")" = "$(sha256sum <"$t/raw" | cut -d' ' -f1)" ]
        [ "$(cat "$t/sha1")" = "$(sha1sum <"$t/raw" | cut -d' ' -f1)" ]
        [ "$(cat "$t/xxh64")" = "$(xxh64sum <"$t/raw" | cut -d' ' -f1)" ]
    done
    # The model's hashes are over every tensor's bytes in file order.
    run -0 --separate-stderr awk '$3 == "model.gguf" {print $1, $2}' "$mnt/hashes"
    local all="$BATS_TEST_TMPDIR/all"
    awk -F '\t' 'NR > 1 {print $1}' "$mnt/tensors.tsv" | while read -r t; do cat "$mnt/tensors/$t/raw"; done >"$all"
    [ "${lines[0]}" = "xxh64 $(xxh64sum <"$all" | cut -d' ' -f1)" ]
    [ "${lines[2]}" = "sha1 $(sha1sum <"$all" | cut -d' ' -f1)" ]
    [ "${lines[3]}" = "sha256 $(sha256sum <"$all" | cut -d' ' -f1)" ]
}

# bats test_tags=races
@test "many readers of one tensor's sha256 at once all read the same text, and so of hashes" {
    local mnt="$BATS_TEST_TMPDIR/mnt" i pids=()
    mount_model "$(fixture type-f32.gguf)" "$mnt"
    for i in $(seq 8); do
        cat "$mnt/tensors/special_bytes/sha256" >"$BATS_TEST_TMPDIR/sha.$i" &
        pids+=($!)
        cat "$mnt/hashes" >"$BATS_TEST_TMPDIR/hashes.$i" &
        pids+=($!)
    done
    wait "${pids[@]}"
    for i in $(seq 2 8); do
        cmp "$BATS_TEST_TMPDIR/sha.1" "$BATS_TEST_TMPDIR/sha.$i"
        cmp "$BATS_TEST_TMPDIR/hashes.1" "$BATS_TEST_TMPDIR/hashes.$i"
    done
    [ "$(cat "$BATS_TEST_TMPDIR/sha.1")" = "$(sha256sum <"$mnt/tensors/special_bytes/raw" | cut -d' ' -f1)" ]
    check_hashes "$mnt" "$(fixture type-f32.gguf)" "$(fixture type-f32.tensors)"
}

@test "empty tensors hash as empty input; a tensor of unknown size leaves the model without hashes" {
    local corpus="$BATS_TEST_TMPDIR/hostile"
    python3 "$HELPERS/../hostile/make_hostile.py" "$corpus" >/dev/null
    mount_model "$corpus/zero-sized-and-scalar.gguf" "$BATS_TEST_TMPDIR/zero"
    check_hashes "$BATS_TEST_TMPDIR/zero" "$corpus/zero-sized-and-scalar.gguf"
    [ "$(cat "$BATS_TEST_TMPDIR/zero/tensors/empty/sha256")" = "$(sha256sum </dev/null | cut -d' ' -f1)" ]
    # ggml refuses a file with a type it does not know, so gguf-hash prints
    # nothing: no hashes, and no hash files where there is no raw.
    mount_model "$corpus/unknown-type-1000.gguf" "$BATS_TEST_TMPDIR/unknown"
    [ ! -e "$BATS_TEST_TMPDIR/unknown/hashes" ]
    run ls "$BATS_TEST_TMPDIR/unknown"
    [[ "$output" != *hashes* ]]
    run ls "$BATS_TEST_TMPDIR/unknown/tensors/odd"
    [ "$output" = "info" ]
    # An ik_llama.cpp type has a known size: its raw is hashed.
    mount_model "$corpus/ik-llama-iq4_ks.gguf" "$BATS_TEST_TMPDIR/ik"
    run -0 --separate-stderr grep ' model.gguf:ik$' "$BATS_TEST_TMPDIR/ik/hashes"
    [ "${lines[3]}" = "sha256    $(sha256sum <"$BATS_TEST_TMPDIR/ik/tensors/ik/raw" | cut -d' ' -f1)  model.gguf:ik" ]
}

@test "a model cut short under the mount gives EIO on its hashes, and the mount keeps answering" {
    local model="$BATS_TEST_TMPDIR/m.gguf" mnt="$BATS_TEST_TMPDIR/mnt"
    cp "$(fixture type-q8_0.gguf)" "$model"
    mount_model "$model" "$mnt"
    cat "$mnt/tensors/vec/sha1" >/dev/null
    truncate -s 1000 "$model"
    run -1 --separate-stderr cat "$mnt/tensors/mat/sha256"
    [[ "$stderr" == *"Input/output error"* ]]
    run -1 --separate-stderr cat "$mnt/hashes"
    [[ "$stderr" == *"Input/output error"* ]]
    # What was computed before the change stays; the tree answers.
    [ "$(wc -c <"$mnt/tensors/vec/sha1")" -eq 41 ]
    run -0 cat "$mnt/metadata/general.architecture"
    grep -q 'since it was mounted' "$BATS_TEST_TMPDIR/daemon.log"
}

@test "the first hash read loads the hashes' module with libxxhash and libcrypto, and nothing of URLs" {
    local mnt="$BATS_TEST_TMPDIR/mnt" pid
    mount_model "$(fixture type-q8_0.gguf)" "$mnt"
    pid=$(last_daemon)
    run -0 mapped_libraries "$pid"
    grep -q '^libfuse3\.so' <<<"$output"
    run ! grep -E '^(gguf-fs-digests|libxxhash|libcrypto)' <<<"$output"
    [ "$(cat "$mnt/tensors/mat/xxh64")" = "$(xxh64sum <"$mnt/tensors/mat/raw" | cut -d' ' -f1)" ]
    [ "$(cat "$mnt/tensors/mat/sha1")" = "$(sha1sum <"$mnt/tensors/mat/raw" | cut -d' ' -f1)" ]
    run -0 mapped_libraries "$pid"
    echo "$output"
    grep -qx 'gguf-fs-digests\.so' <<<"$output"
    grep -q '^libxxhash\.so' <<<"$output"
    grep -q '^libcrypto\.so' <<<"$output"
    run ! grep -E '^(libcurl|libssl|gguf-fs-remote)' <<<"$output"
}

# ==== A stop during a long computation ====

# bats test_tags=races
@test "SIGTERM while hashes are computed stops the computation: the daemon exits within 3 s, status 0, unmounted" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    start_long_pass "$(long_pass_model)" "$mnt" hashes
    # The pass has begun: the hashes' module is loaded on its first hash.
    local i
    for i in $(seq 200); do
        mapped_libraries "$daemon" | grep -qx 'gguf-fs-digests\.so' && break
        sleep 0.05
    done
    mapped_libraries "$daemon" | grep -qx 'gguf-fs-digests\.so'
    kill -TERM "$daemon"
    stopped_cleanly
    run ! mountpoint -q "$mnt"
}

# bats test_tags=races
@test "SIGTERM while a big tensor's stats are computed stops the computation: the daemon exits within 3 s, status 0" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    start_long_pass "$(long_pass_model)" "$mnt" tensors/token_embd.weight/stats
    kill -TERM "$daemon"
    stopped_cleanly
    run ! mountpoint -q "$mnt"
}

# bats test_tags=races
@test "a forced unmount while hashes are computed stops the computation: the daemon exits within 3 s, status 0" {
    [ "$(id -u)" -eq 0 ] || skip "umount -f needs root"
    local mnt="$BATS_TEST_TMPDIR/mnt"
    start_long_pass "$(long_pass_model)" "$mnt" hashes
    # A plain unmount is refused while the reader's open is in the mount
    # (busy); -f cuts the connection first, which ends the session. The
    # unmount itself may still be refused busy, so its status is not
    # what is tested: the daemon's end is.
    run umount -f "$mnt"
    stopped_cleanly
    [[ "$(cat "$BATS_TEST_TMPDIR/reader.err")" == *"connection abort"* ]]
}

# bats test_tags=races
@test "SIGTERM while a folder's model computes its hashes stops the computation: the daemon exits within 3 s, status 0" {
    local dir="$BATS_TEST_TMPDIR/models" mnt="$BATS_TEST_TMPDIR/mnt"
    mkdir -p "$dir"
    ln "$(long_pass_model)" "$dir/long.gguf" 2>/dev/null || cp "$(long_pass_model)" "$dir/long.gguf"
    start_long_pass "$dir" "$mnt" long.gguf/hashes
    kill -TERM "$daemon"
    stopped_cleanly
    run ! mountpoint -q "$mnt"
}
