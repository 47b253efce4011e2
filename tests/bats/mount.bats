#!/usr/bin/env bats
# The daemon's life: mounting, options, refusals, unmounting by every
# route, several mounts at once.

load test_helper

setup() {
    require_fuse
    MODEL=$(fixture type-q8_0.gguf)
    MNT="$BATS_TEST_TMPDIR/mnt"
    mkdir -p "$MNT"
}

# The mountinfo line of a mount point.
mountinfo_of() {
    awk -v m="$1" '$5 == m' /proc/self/mountinfo
}

# daemon_pids MODEL: pids of gguf-fs processes serving that model on this
# test's mount point. (Other test runs on the machine mount the same
# fixtures: by the model alone, their daemons would be found too.)
daemon_pids() {
    pgrep -f -- "gguf-fs.* $1 $MNT\$" || true
}

@test "the command returns once the tree answers, and fusermount3 -u ends the daemon" {
    # fd 3 closed: a daemon a failed test left behind would keep bats waiting.
    run "$GGUF_FS" "$MODEL" "$MNT" 3>&-
    [ "$status" -eq 0 ]
    local pid
    pid=$(daemon_pids "$MODEL")
    [ -n "$pid" ]
    echo "$pid $MNT" >>"$BATS_TEST_TMPDIR/daemons"
    # No wait: the mount is ready when the command returns.
    run ls "$MNT"
    [ "$output" = "$(printf 'hashes\nheader\nmetadata\nmetadata.json\nmodel.gguf\ntensors\ntensors.tsv\nverify\nwarnings')" ]
    fusermount3 -u "$MNT"
    wait_gone "$pid"
    ! mountpoint -q "$MNT"
}

@test "umount works too" {
    "$GGUF_FS" "$MODEL" "$MNT" 3>&-
    local pid
    pid=$(daemon_pids "$MODEL")
    [ -n "$pid" ]
    echo "$pid $MNT" >>"$BATS_TEST_TMPDIR/daemons"
    umount "$MNT"
    wait_gone "$pid"
    ! mountpoint -q "$MNT"
}

@test "mounts are read-only, nosuid, nodev, default_permissions, with the model as fsname and subtype gguf-fs" {
    mount_model "$MODEL" "$MNT"
    run mountinfo_of "$MNT"
    [[ "$output" == *" ro,nosuid,nodev,"* ]]
    [[ "$output" == *"fuse.gguf-fs $MODEL "* ]]
    [[ "$output" == *default_permissions* ]]
    [[ "$output" != *allow_other* ]]
}

@test "allow_other is set only when asked for" {
    mount_model "$MODEL" "$MNT" -o allow_other
    run mountinfo_of "$MNT"
    [[ "$output" == *allow_other* ]]
}

@test "a model path with commas still becomes the fsname" {
    cp "$MODEL" "$BATS_TEST_TMPDIR/a,b.gguf"
    mount_model "$BATS_TEST_TMPDIR/a,b.gguf" "$MNT"
    run mountinfo_of "$MNT"
    [[ "$output" == *"fuse.gguf-fs $BATS_TEST_TMPDIR/a,b.gguf "* ]]
}

@test "-h prints usage with FUSE's options; -V prints the version" {
    run "$GGUF_FS" -h
    [ "$status" -eq 0 ]
    [[ "$output" == *"SOURCE MOUNTPOINT"* ]]
    [[ "$output" == *"-o allow_other"* ]]
    run "$GGUF_FS" -V
    [ "$status" -eq 0 ]
    [[ "$output" == *"gguf-fs version"* ]]
    [[ "$output" == *"FUSE library version"* ]]
}

@test "a missing argument is exit 2, a missing model exit 1 and one line" {
    run -2 "$GGUF_FS" "$MODEL"
    run -1 --separate-stderr "$GGUF_FS" "$BATS_TEST_TMPDIR/absent.gguf" "$MNT"
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "gguf-fs: $BATS_TEST_TMPDIR/absent.gguf: cannot open: No such file or directory" ]]
    # A directory is a catalog (catalog.bats); a device is nothing to mount.
    run -1 --separate-stderr "$GGUF_FS" /dev/null "$MNT"
    [[ "$stderr" == "gguf-fs: /dev/null: cannot open: not a regular file" ]]
    # A FIFO with no writer is refused at once, not waited on.
    mkfifo "$BATS_TEST_TMPDIR/fifo.gguf"
    run -1 --separate-stderr timeout 10 "$GGUF_FS" "$BATS_TEST_TMPDIR/fifo.gguf" "$MNT"
    [[ "$stderr" == "gguf-fs: $BATS_TEST_TMPDIR/fifo.gguf: cannot open: not a regular file" ]]
    ! mountpoint -q "$MNT"
}

@test "a bad model is refused before mounting: exit 1, one line with file and offset" {
    head -c 1000 "$MODEL" >"$BATS_TEST_TMPDIR/cut.gguf"
    run -1 --separate-stderr "$GGUF_FS" "$BATS_TEST_TMPDIR/cut.gguf" "$MNT"
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" =~ ^gguf-fs:\ $BATS_TEST_TMPDIR/cut.gguf:\ offset\ 0x[0-9a-f]+:\ tensor\ \'.*\':\ data\ ends\ at\ [0-9]+,\ past\ end\ of\ file\ \(1000\)$ ]]
    run ! mountpoint -q "$MNT"
    [ -z "$(daemon_pids "$BATS_TEST_TMPDIR/cut.gguf")" ]
}

@test "SIGTERM unmounts cleanly and ends the daemon" {
    mount_model "$MODEL" "$MNT"
    local pid
    pid=$(awk '{print $1}' "$BATS_TEST_TMPDIR/daemons")
    kill -TERM "$pid"
    wait_gone "$pid"
    run ! mountpoint -q "$MNT"
    run ls "$MNT"
    [ -z "$output" ]
}

@test "SIGINT unmounts cleanly too" {
    mount_model "$MODEL" "$MNT"
    local pid
    pid=$(awk '{print $1}' "$BATS_TEST_TMPDIR/daemons")
    kill -INT "$pid"
    wait_gone "$pid"
    ! mountpoint -q "$MNT"
}

@test "two models mounted at once answer independently" {
    local other=$(fixture type-f16.gguf)
    mount_model "$MODEL" "$MNT"
    mount_model "$other" "$BATS_TEST_TMPDIR/mnt2"
    run cat "$MNT/tensors/mat/info" "$BATS_TEST_TMPDIR/mnt2/tensors/mat/info"
    [[ "$output" == *"type: q8_0"* ]]
    [[ "$output" == *"type: f16"* ]]
    cmp "$MNT/tensors/mat/raw" <(tail -c +$(($(sed -n 's/^offset: //p' "$MNT/tensors/mat/info") + 1)) "$MODEL" | head -c "$(stat -c %s "$MNT/tensors/mat/raw")")
}

@test "the same model mounted twice, by two daemons" {
    mount_model "$MODEL" "$MNT"
    mount_model "$MODEL" "$BATS_TEST_TMPDIR/mnt2"
    cmp "$MNT/tensors/cube/f32" "$BATS_TEST_TMPDIR/mnt2/tensors/cube/f32"
}

@test "concurrent readers of every file get the same bytes as a lone reader" {
    mount_model "$MODEL" "$MNT"
    local f i pids=()
    for f in "$MNT"/tensors/*/f32 "$MNT"/tensors/*/raw "$MNT"/metadata/*; do
        sha256sum "$f"
    done >"$BATS_TEST_TMPDIR/want"
    for i in 1 2 3 4 5 6 7 8; do
        (for f in "$MNT"/tensors/*/f32 "$MNT"/tensors/*/raw "$MNT"/metadata/*; do sha256sum "$f"; done \
            >"$BATS_TEST_TMPDIR/got.$i") &
        pids+=($!)
    done
    # Not a bare wait: the daemon is a background job of this shell too.
    wait "${pids[@]}"
    for i in 1 2 3 4 5 6 7 8; do
        cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got.$i"
    done
}

@test "the mount's read-ahead is 1 MiB unless -o readahead_kb says otherwise" {
    bdi_readahead() {
        cat "/sys/class/bdi/$(awk -v m="$1" '$5 == m {print $3}' /proc/self/mountinfo)/read_ahead_kb"
    }
    mount_model "$MODEL" "$MNT"
    [ "$(bdi_readahead "$MNT")" -eq 1024 ]
    mount_model "$MODEL" "$BATS_TEST_TMPDIR/mnt2" -o readahead_kb=4096
    [ "$(bdi_readahead "$BATS_TEST_TMPDIR/mnt2")" -eq 4096 ]
    mount_model "$MODEL" "$BATS_TEST_TMPDIR/mnt3" -o readahead_kb=0
    [ "$(bdi_readahead "$BATS_TEST_TMPDIR/mnt3")" -eq 128 ]
    cmp "$MNT/tensors/mat/f32" "$BATS_TEST_TMPDIR/mnt2/tensors/mat/f32"
}

@test "a local mount loads nothing of remote sources or hashes: no libcurl, OpenSSL or libxxhash" {
    mount_model "$MODEL" "$MNT"
    local pid
    pid=$(last_daemon)
    cat "$MNT/header" "$MNT/metadata.json" "$MNT/tensors.tsv" "$MNT/warnings" "$MNT/model.gguf" \
        "$MNT/tensors/mat/f32" "$MNT/tensors/mat/stats" >/dev/null
    ls -lR "$MNT" >/dev/null
    run -0 mapped_libraries "$pid"
    echo "$output"
    grep -q '^libfuse3\.so' <<<"$output"
    run ! grep -E '^(libcurl|libssl|libcrypto|libxxhash|libnghttp2|gguf-fs-)' <<<"$output"
}

@test "a header read in rounds past 4 MiB, with bytes after it, gives every token and merge as in the file" {
    local model="$BATS_TEST_TMPDIR/vocab.gguf"
    "$PYTHON" "$GGUF_FS_SCRIPTS/fixtures/make-vocab-model" "$model" 200000 400000
    [ "$(stat -c %s "$model")" -gt $((8 << 20)) ]
    head -c 1048576 /dev/urandom >>"$model"
    # The arrays as the file holds them, one string a line.
    "$PYTHON" - "$model" "$BATS_TEST_TMPDIR" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
at = 4 + 4 + 8 + 8
def take(fmt):
    global at
    v = struct.unpack_from(fmt, data, at)
    at += struct.calcsize(fmt)
    return v[0] if len(v) == 1 else v
def string():
    global at
    n = take('<Q')
    at += n
    return data[at - n:at]
for _ in range(struct.unpack_from('<Q', data, 16)[0]):
    key, vtype = string().decode(), take('<I')
    if vtype == 8:
        string()
        continue
    etype, count = take('<IQ')
    if etype == 8:
        with open(f'{sys.argv[2]}/{key}', 'wb') as out:
            out.writelines(string() + b'\n' for _ in range(count))
    else:
        at += 4 * count
PY
    mount_model "$model" "$MNT"
    cmp "$BATS_TEST_TMPDIR/tokenizer.ggml.tokens" "$MNT/metadata/tokenizer.ggml.tokens"
    cmp "$BATS_TEST_TMPDIR/tokenizer.ggml.merges" "$MNT/metadata/tokenizer.ggml.merges"
    [ "$(wc -l <"$MNT/metadata/tokenizer.ggml.token_type")" -eq 200000 ]
}
