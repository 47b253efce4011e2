#!/usr/bin/env bats
# An edit is atomic for readers: each edit makes new versions of the files
# it changes (model.gguf, metadata.json, header, warnings, the key's file),
# and a reader who opened a version reads it whole, with its size, until it
# closes (a copy, a handle read again, a mapping), while new opens get the
# edit; a load that opens model.gguf several times (llama.cpp) gets one
# version; an old version is let go after its last close; and a copy onto a
# new key that fails leaves no key behind.

load test_helper
load llama_client

teardown_small_disk() {
    if mountpoint -q "$BATS_TEST_TMPDIR/small" 2>/dev/null; then
        umount -l "$BATS_TEST_TMPDIR/small" || true
    fi
}
eval "$(declare -f teardown | sed '1s/^teardown/helper_teardown/')"
teardown() {
    local status=0
    helper_teardown || status=1
    teardown_small_disk
    return $status
}

setup() {
    require_fuse
    MODEL="$BATS_TEST_TMPDIR/model.gguf"
    MNT="$BATS_TEST_TMPDIR/mnt"
    EDITS="$BATS_TEST_TMPDIR/edits.json"
    READERS="$HELPERS/edit_readers.py"
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$MODEL" >/dev/null
}

@test "a copy of model.gguf across an edit, at 20 random points, is the model as it was opened, byte for byte" {
    mount_model "$MODEL" "$MNT" -o edits="$EDITS"
    run "$PYTHON" "$READERS" copy-across "$MNT" 7 20
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "handles opened before an edit re-read and fstat their version; a new open gets the edit" {
    mount_model "$MODEL" "$MNT" -o edit
    run "$PYTHON" "$READERS" held "$MNT"
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "a mapping of model.gguf made before an edit that shortens the header reads the old bytes to its end" {
    mount_model "$MODEL" "$MNT" -o edit
    run "$PYTHON" "$READERS" mapped "$MNT"
    echo "$output"
    [ "$status" -eq 0 ]
}

# bats test_tags=races
@test "jq reads metadata.json in a loop while a writer rewrites general.name: every read is JSON" {
    mount_model "$MODEL" "$MNT" -o edit
    "$PYTHON" "$READERS" name-writer "$MNT" 4 >"$BATS_TEST_TMPDIR/writer.out" &
    local writer=$! reads=0
    local names="$BATS_TEST_TMPDIR/names"
    # At least 20 reads, however slow the machine: reads once the writer
    # ended check the last versions as well.
    while kill -0 "$writer" 2>/dev/null || [ "$reads" -lt 20 ]; do
        jq -e -r '."general.name" | .[-6:]' "$MNT/metadata.json" >>"$names" ||
            { echo "read $reads of metadata.json is no JSON"; kill "$writer"; return 1; }
        reads=$((reads + 1))
    done
    wait "$writer"
    cat "$BATS_TEST_TMPDIR/writer.out"
    echo "$reads reads, $(sort -u "$names" | wc -l) names"
    [ "$reads" -ge 20 ]
    [ "$(sort -u "$names" | wc -l)" -ge 5 ]
}

@test "a copy onto a new key whose value does not fit the type it was given fails with EINVAL and leaves no key" {
    mount_model "$MODEL" "$MNT" -o edits="$EDITS"
    # As cp --preserve=xattr does: create, write, set the type, close.
    run "$PYTHON" - "$MNT/metadata/new.small" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, b"300\n")
os.setxattr(fd, "user.gguf.type", b"u8")
try:
    os.close(fd)
    print("closed")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
    [ "$output" = EINVAL ]
    [ ! -e "$MNT/metadata/new.small" ]
    run ls "$MNT/metadata"
    [[ "$output" != *new.small* ]]
    jq -e 'has("new.small") | not' "$MNT/metadata.json"
    if [ -e "$EDITS" ]; then run ! grep -q new.small "$EDITS"; fi
    # A new key that takes is there, typed, and kept.
    "$PYTHON" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, b"200\n"); os.setxattr(fd, "user.gguf.type", b"u8"); os.close(fd)' "$MNT/metadata/new.small"
    [ "$(cat "$MNT/metadata/new.small")" = 200 ]
    [ "$(xattr user.gguf.type "$MNT/metadata/new.small")" = u8 ]
    grep -q '"new.small"' "$EDITS"
}

@test "cp of a chat template onto a new key with PATH on a full disk fails with ENOSPC and leaves no key, in the mount or PATH" {
    local small="$BATS_TEST_TMPDIR/small"
    mkdir -p "$small"
    mount -t tmpfs -o size=64k tmpfs "$small"
    EDITS="$small/edits.json"
    mount_model "$MODEL" "$MNT" -o edits="$EDITS"
    # A first edit makes PATH; then the disk is filled but for a few KiB.
    printf 'Kept\n' >"$MNT/metadata/general.name"
    head -c 40k /dev/zero >"$small/filler"
    head -c 200000 /dev/urandom | base64 -w 100 >"$BATS_TEST_TMPDIR/template"
    run -1 --separate-stderr cp "$BATS_TEST_TMPDIR/template" "$MNT/metadata/tokenizer.chat_template.tool_use"
    [[ "$stderr" == *"No space left on device"* ]]
    [ ! -e "$MNT/metadata/tokenizer.chat_template.tool_use" ]
    jq -e 'has("tokenizer.chat_template.tool_use") | not' "$MNT/metadata.json"
    run ! grep -q tool_use "$EDITS"
    grep -q Kept "$EDITS"
    # Remounted from PATH, the model has the edit that took and nothing else.
    fusermount3 -u "$MNT"
    wait_gone "$(last_daemon)"
    mount_model "$MODEL" "$MNT" -o edits="$EDITS"
    [ "$(cat "$MNT/metadata/general.name")" = Kept ]
    [ ! -e "$MNT/metadata/tokenizer.chat_template.tool_use" ]
}

@test "an old version held open is let go once its last handle closes" {
    mount_model "$MODEL" "$MNT" -o edit -d
    local old
    old=$(stat -c %i "$MNT/model.gguf")
    exec 5<"$MNT/model.gguf"
    printf 'New name\n' >"$MNT/metadata/general.name"
    [ "$(stat -c %i "$MNT/model.gguf")" != "$old" ]
    # Held: the kernel cannot have forgotten it.
    [ "$(stat -L -c %i /proc/self/fd/5)" = "$old" ]
    run ! grep -q "inode $old forgotten" "$BATS_TEST_TMPDIR/daemon.log"
    exec 5<&-
    local i
    for i in $(seq 200); do
        grep -q "inode $old forgotten" "$BATS_TEST_TMPDIR/daemon.log" && break
        sleep 0.05
    done
    grep "inode $old forgotten" "$BATS_TEST_TMPDIR/daemon.log"
}

# bats test_tags=races
@test "node-llama-cpp gives the original's tokens from model.gguf while general.name is edited without pause, and the last name after" {
    require_llama_client
    run --separate-stderr llama_client "$MODEL"
    [ "$status" -eq 0 ]
    local before=$output
    mount_model "$MODEL" "$MNT" -o edit
    local stop="$BATS_TEST_TMPDIR/stop" count="$BATS_TEST_TMPDIR/edits.count"
    # Each edit moves the data (names of 0 to 899 more bytes): a load that
    # read its header from one version and its tensors from another fails
    # or gives other tokens.
    (
        i=0
        while [ ! -e "$stop" ]; do
            printf 'Name %d %s\n' "$i" "$(head -c $((i * 37 % 900)) /dev/zero | tr '\0' x)" >"$MNT/metadata/general.name"
            i=$((i + 1))
            echo "$i" >"$count"
        done
    ) &
    local writer=$!
    run --separate-stderr llama_client --mmap "$MNT/model.gguf" "$MNT/model.gguf" --no-mmap "$MNT/model.gguf" "$MNT/model.gguf"
    touch "$stop"
    wait "$writer"
    [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
    local during=$output
    echo "edits during the loads: $(cat "$count")"
    [ "$(cat "$count")" -ge 20 ]
    printf 'The last name\n' >"$MNT/metadata/general.name"
    run --separate-stderr llama_client "$MNT/model.gguf"
    [ "$status" -eq 0 ]
    run "$PYTHON" -c 'import json, sys
a = json.loads(sys.argv[1])
during = [json.loads(l) for l in sys.argv[2].splitlines()]
last = json.loads(sys.argv[3])
assert len(a["tokens"]) == 4 and len(during) == 4, (a, during)
for d in during:
    assert d["tokens"] == a["tokens"], (d, a)
    assert d["name"] == a["name"] or d["name"].startswith("Name "), d["name"]
assert last["name"] == "The last name" and last["tokens"] == a["tokens"], last
print("same tokens", a["tokens"])' "$before" "$during" "$output"
    echo "$output"
    [ "$status" -eq 0 ]
}

# bats test_tags=races
@test "two writers and two readers for 20 s (5 s under ASan): every copy ggml reads is whole, the daemon lives, PATH stays sound" {
    mount_model "$MODEL" "$MNT" -o edits="$EDITS"
    local daemon
    daemon=$(last_daemon)
    # ThreadSanitizer, which finds the races, gets the full 20 s
    # (tests/meson.build sets GGUF_FS_STRESS_SECONDS per build)
    local seconds=${GGUF_FS_STRESS_SECONDS:-20}
    local pids=() p
    "$PYTHON" "$READERS" random-writer "$MNT" 1 "$seconds" >"$BATS_TEST_TMPDIR/w1" 2>&1 & pids+=($!)
    "$PYTHON" "$READERS" random-writer "$MNT" 2 "$seconds" >"$BATS_TEST_TMPDIR/w2" 2>&1 & pids+=($!)
    for p in 1 2; do
        "$PYTHON" "$READERS" parsing-reader "$MNT" "$seconds" "$GGML_REF" "$GGML_LIB" "$MODEL" \
            "$BATS_TEST_TMPDIR/copy$p" >"$BATS_TEST_TMPDIR/r$p" 2>&1 &
        pids+=($!)
    done
    local failed=0
    for p in "${pids[@]}"; do
        wait "$p" || failed=1
    done
    cat "$BATS_TEST_TMPDIR"/w1 "$BATS_TEST_TMPDIR"/w2 "$BATS_TEST_TMPDIR"/r1 "$BATS_TEST_TMPDIR"/r2
    [ "$failed" -eq 0 ]
    kill -0 "$daemon"
    jq -e . "$EDITS" >/dev/null
    # A remount after SIGKILL reads PATH and serves a model ggml reads.
    local name
    name=$(cat "$MNT/metadata/general.name")
    kill -9 "$daemon"
    wait_gone "$daemon"
    fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
    mount_model "$MODEL" "$MNT" -o edits="$EDITS"
    [ "$(cat "$MNT/metadata/general.name")" = "$name" ]
    "$PYTHON" "$READERS" parsing-reader "$MNT" 0 "$GGML_REF" "$GGML_LIB" "$MODEL" "$BATS_TEST_TMPDIR/copy"
}
