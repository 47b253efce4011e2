#!/usr/bin/env bats
# What stat and the xattr calls say, and that nothing can be written.

load test_helper

setup() {
    require_fuse
    MODEL="$BATS_TEST_TMPDIR/model.gguf"
    cp "$(fixture type-q4_0.gguf)" "$MODEL"
    MNT="$BATS_TEST_TMPDIR/mnt"
}

@test "directories are 0555 and files 0444, masked by the model's permission bits" {
    chmod 0640 "$MODEL"
    mount_model "$MODEL" "$MNT"
    [ "$(stat -c %a "$MNT")" = 550 ]
    [ "$(stat -c %a "$MNT/metadata")" = 550 ]
    [ "$(stat -c %a "$MNT/tensors/mat")" = 550 ]
    [ "$(stat -c %a "$MNT/header")" = 440 ]
    [ "$(stat -c %a "$MNT/tensors/mat/f32")" = 440 ]
    [ "$(stat -c %a "$MNT/metadata/general.architecture")" = 440 ]
}

@test "a world-readable model gives world-readable files" {
    chmod 0644 "$MODEL"
    mount_model "$MODEL" "$MNT"
    [ "$(stat -c %a "$MNT/tensors")" = 555 ]
    [ "$(stat -c %a "$MNT/tensors/mat/raw")" = 444 ]
}

@test "owner, group and times are the model's" {
    chown 1234:5678 "$MODEL"
    touch -d '2020-02-02 20:20:20' "$MODEL"
    mount_model "$MODEL" "$MNT"
    local f
    for f in "$MNT" "$MNT/header" "$MNT/metadata" "$MNT/tensors/vec" "$MNT/tensors/vec/f32"; do
        [ "$(stat -c '%u:%g %Y' "$f")" = "1234:5678 $(stat -c %Y "$MODEL")" ]
    done
}

@test "sizes in stat are exact for every file" {
    mount_model "$MODEL" "$MNT"
    local f
    while IFS= read -r -d '' f; do
        [ "$(stat -c %s "$f")" -eq "$(wc -c <"$f")" ] || { echo "$f"; false; }
    done < <(find "$MNT" -type f ! -name verify -print0)
    # verify's size is known once it is computed (0 before, read with
    # direct I/O); then stat gives it exactly.
    [ "$(stat -c %s "$MNT/verify")" -eq 0 ]
    local text
    text=$(cat "$MNT/verify")
    [ "$(stat -c %s "$MNT/verify")" -eq "$(( ${#text} + 1 ))" ]
    [ "$(wc -c <"$MNT/verify")" -eq "$(( ${#text} + 1 ))" ]
    local elements
    elements=$(sed -n 's/^elements: //p' "$MNT/tensors/mat/info")
    run du -b -s "$MNT/tensors/mat/f32"
    [ "${output%%[[:space:]]*}" -eq $((elements * 4)) ]
}

@test "every kind of write fails with EROFS" {
    mount_model "$MODEL" "$MNT"
    run -1 --separate-stderr bash -c "echo x > '$MNT/header'"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr bash -c "echo x >> '$MNT/tensors/mat/raw'"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr touch "$MNT/new"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr mkdir "$MNT/tensors/new"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr rm "$MNT/header"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr rmdir "$MNT/tensors/mat"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr mv "$MNT/tensors/mat" "$MNT/tensors/tam"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr ln -s x "$MNT/link"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr chmod 777 "$MNT/header"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr truncate -s 0 "$MNT/tensors/mat/f32"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr setfattr -n user.x -v 1 "$MNT/header"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr "$PYTHON" -c "import os; os.open('$MNT/tensors/mat/f32', os.O_RDWR)"
    [[ "$stderr" == *"Read-only file system"* ]]
    cmp "$MODEL" "$(fixture type-q4_0.gguf)"
}

@test "xattrs: name and type on keys; name, type and shape on tensor directories; name on their files" {
    mount_model "$MODEL" "$MNT"
    run getfattr --absolute-names -d -m - "$MNT/metadata/general.architecture"
    [[ "$output" == *'user.gguf.name="general.architecture"'* ]]
    [[ "$output" == *'user.gguf.type="str"'* ]]
    run getfattr --absolute-names -d -m - "$MNT/tensors/cube"
    [[ "$output" == *'user.gguf.name="cube"'* ]]
    [[ "$output" == *'user.gguf.type="q4_0"'* ]]
    [[ "$output" == *"user.gguf.shape=\"$(sed -n 's/^shape: //p' "$MNT/tensors/cube/info")\""* ]]
    run xattr user.gguf.name "$MNT/tensors/cube/f32"
    [ "$output" = cube ]
    run -1 --separate-stderr xattr user.gguf.nothing "$MNT/tensors/cube"
    [[ "$stderr" == *"No such attribute"* ]]
}

@test "numpy.memmap and mmap work on f32 and raw" {
    mount_model "$MODEL" "$MNT"
    # What the script prints, not a warning numpy may give on stderr.
    run --separate-stderr "$PYTHON" - "$MNT" <<'PY'
import mmap, sys, numpy as np
mnt = sys.argv[1]
info = dict(l.split(": ", 1) for l in open(f"{mnt}/tensors/cube/info").read().splitlines())
shape = [int(x) for x in info["shape"].split()][::-1]
a = np.memmap(f"{mnt}/tensors/cube/f32", dtype="<f4", mode="r").reshape(shape)
b = np.fromfile(f"{mnt}/tensors/cube/f32", dtype="<f4").reshape(shape)
assert len(shape) == 3 and a.tobytes() == b.tobytes()
with open(f"{mnt}/tensors/cube/raw", "rb") as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    assert m[:] == f.read()
print("ok")
PY
    echo "$stderr" >&2
    [ "$status" -eq 0 ]
    [ "$output" = ok ]
}
