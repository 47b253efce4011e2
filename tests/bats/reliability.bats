#!/usr/bin/env bats
# Faults and load: the model changing under a live mount, unmounting with
# files open, SIGTERM while readers run, many readers over several mounts.

load test_helper

setup() {
    require_fuse
    MODEL="$BATS_TEST_TMPDIR/model.gguf"
    cp "$(fixture type-q4_K.gguf)" "$MODEL"
    MNT="$BATS_TEST_TMPDIR/mnt"
}

daemon_pid() {
    awk 'NR == 1 {print $1}' "$BATS_TEST_TMPDIR/daemons"
}

# The mount still answers for everything that is not tensor data.
tree_still_answers() {
    ls "$MNT/tensors" >/dev/null
    cat "$MNT/header" "$MNT/tensors/mat/info" "$MNT"/metadata/* >/dev/null
    kill -0 "$(daemon_pid)"
}

@test "a model truncated under the mount: data reads are EIO, the tree answers, one log line" {
    mount_model "$MODEL" "$MNT"
    cat "$MNT/tensors/mat/f32" >/dev/null
    cp "$MODEL" "$BATS_TEST_TMPDIR/before.gguf"
    truncate -s 0 "$MODEL"
    run -1 --separate-stderr cat "$MNT/tensors/cube/f32"
    [[ "$stderr" == *"Input/output error"* ]]
    run -1 --separate-stderr cat "$MNT/tensors/cube/raw"
    [[ "$stderr" == *"Input/output error"* ]]
    tree_still_answers
    # The keys, read for the first time now, come from the daemon's copy
    # of the header: the file's bytes are gone.
    mkdir "$BATS_TEST_TMPDIR/before"
    mount_model "$BATS_TEST_TMPDIR/before.gguf" "$BATS_TEST_TMPDIR/before"
    local keys
    keys=$(cd "$BATS_TEST_TMPDIR/before/metadata" && grep -r . | sort)
    [ -n "$keys" ]
    [ "$(cd "$MNT/metadata" && grep -r . | sort)" == "$keys" ]
    [ "$(grep -c "$MODEL" "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ]
    grep -q 'since it was mounted' "$BATS_TEST_TMPDIR/daemon.log"
}

@test "a model rewritten in place: data reads are EIO, never other bytes" {
    mount_model "$MODEL" "$MNT"
    local size
    size=$(stat -c %s "$MODEL")
    touch -d '2001-01-01' "$MODEL"  # a rewrite changes the mtime
    run -1 --separate-stderr cat "$MNT/tensors/vec/f32"
    [[ "$stderr" == *"Input/output error"* ]]
    tree_still_answers
    [ "$(stat -c %s "$MODEL")" -eq "$size" ]
}

@test "a model replaced by rename: data reads are EIO within a second" {
    mount_model "$MODEL" "$MNT"
    cp "$(fixture type-q6_K.gguf)" "$BATS_TEST_TMPDIR/other.gguf"
    mv "$BATS_TEST_TMPDIR/other.gguf" "$MODEL"
    sleep 1.1
    run -1 --separate-stderr cat "$MNT/tensors/vec/raw"
    [[ "$stderr" == *"Input/output error"* ]]
    tree_still_answers
}

@test "a lazy unmount with files open ends the daemon once they close" {
    mount_model "$MODEL" "$MNT"
    local pid
    pid=$(daemon_pid)
    # Held open by this shell, not by a background job that may not have
    # opened it yet, or may have closed it already, when fusermount3 runs.
    exec 5<"$MNT/tensors/mat/f32"
    run --separate-stderr fusermount3 -u "$MNT"
    [ "$status" -ne 0 ]                      # busy: a file is open
    [[ "$stderr" == *"Device or resource busy"* ]]
    fusermount3 -u -z "$MNT"
    run ! mountpoint -q "$MNT"
    # Detached, the daemon still serves the open file, until it is closed.
    kill -0 "$pid"
    cat <&5 >/dev/null
    exec 5<&-
    wait_gone "$pid"
    # An unmount is a clean end, also when it cut short a request the
    # daemon was reading (which libfuse reports as an error).
    local status=0
    wait "$pid" || status=$?
    [ "$status" -eq 0 ]
}

# bats test_tags=races
@test "SIGTERM under load: the daemon ends, the mount goes, readers stop with errors" {
    mount_model "$MODEL" "$MNT"
    local pid readers=() i
    pid=$(daemon_pid)
    for i in 1 2 3 4; do
        (while cat "$MNT/tensors/mat/f32" "$MNT/tensors/cube/raw" >/dev/null 2>&1; do :; done) &
        readers+=($!)
    done
    sleep 1
    kill -TERM "$pid"
    wait_gone "$pid"
    run ! mountpoint -q "$MNT"
    for i in "${readers[@]}"; do
        timeout 10 tail --pid="$i" -f /dev/null
    done
}

# run_load MODELS...: three load readers per mounted model at once; fails
# with their output when any disagrees with ggml.
run_load() {
    local m i pids=() status=0
    for m in "$@"; do
        for i in 1 2 3; do
            "$PYTHON" "$HELPERS/load_reader.py" "$BATS_TEST_TMPDIR/$m" "$(fixture "$m")" "$i" 8 \
                >"$BATS_TEST_TMPDIR/load.$m.$i" 2>&1 &
            pids+=($!)
        done
    done
    for i in "${pids[@]}"; do
        wait "$i" || status=1
    done
    [ "$status" -eq 0 ] || { cat "$BATS_TEST_TMPDIR"/load.*; return 1; }
}

# bats test_tags=races
@test "many readers over several mounts: cat, dd at random offsets and numpy.memmap agree with ggml" {
    local models=(type-q4_K type-q6_K type-iq2_xs type-f16) m
    for m in "${models[@]}"; do
        mount_model "$(fixture "$m.gguf")" "$BATS_TEST_TMPDIR/$m"
    done
    # Warm: every file read once and a first round of load, so that every
    # loop thread holds its read buffer; then the memory is measured
    # across a second round.
    for m in "${models[@]}"; do
        find "$BATS_TEST_TMPDIR/$m" -type f -exec cat {} + >/dev/null
    done
    run_load "${models[@]}"
    local before
    before=$(awk '/^RssAnon/ {print $2}' "/proc/$(daemon_pid)/status")
    run_load "${models[@]}"
    local after
    after=$(awk '/^RssAnon/ {print $2}' "/proc/$(daemon_pid)/status")
    # Flat: the first daemon's anonymous memory grew by less than 2 MiB
    # across the second round. A sanitizer's own bookkeeping (ASan's quarantine of freed
    # memory, TSan's shadow) grows by design, so only plain builds say.
    if ! ldd "$GGUF_FS" | grep -qE 'lib(a|t)san'; then
        [ $((after - before)) -lt 2048 ] || { echo "RssAnon $before kB -> $after kB"; false; }
    fi
}
