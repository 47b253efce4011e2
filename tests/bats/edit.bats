#!/usr/bin/env bats
# Editing metadata: -o edit and -o edits=PATH make metadata/ writable and
# nothing else; a key's text is read back as the key's type (every type
# round-trips), through shell redirection, cp, sed -i and editors that
# save by renaming; texts that do not fit fail with EINVAL and keep the old
# value; general.alignment and split.* are refused with EPERM; edits in
# PATH survive a remount and SIGKILL; a PATH made garbage refuses the
# mount; hostile writes leave the daemon alive and PATH valid; and
# model.gguf of an edited file, split set or URL equals the copy ggml's own
# writer makes with the same edits, byte for byte, tensors and all.

load test_helper
load llama_client

# The URL test's nginx stops with the test, however it ends.
eval "$(declare -f teardown | sed '1s/^teardown/helper_teardown/')"
teardown() {
    if [ -f "$BATS_TEST_TMPDIR/nginx.pid.ours" ]; then
        fusermount3 -u "$MNT" 2>/dev/null || true
        kill "$(cat "$BATS_TEST_TMPDIR/nginx.pid.ours")" 2>/dev/null || true
    fi
    helper_teardown
}

setup() {
    require_fuse
    MODEL="$BATS_TEST_TMPDIR/model.gguf"
    MNT="$BATS_TEST_TMPDIR/mnt"
    EDITS="$BATS_TEST_TMPDIR/edits.json"
}

# ggml EDIT...: ggml's edited copy of $MODEL (ggml_ref edit-copy), in $REF.
ggml_copy() {
    REF="$BATS_TEST_TMPDIR/ref.gguf"
    "$GGML_REF" "$GGML_LIB" edit-copy "$MODEL" "$REF" "$@"
}

# close_status FILE TEXT [FLAGS]: writes TEXT with one write and prints
# what close(2) said: 0 or the errno's name. Shells do not report a
# failing close of a redirection; Python does.
close_status() {
    "$PYTHON" - "$@" <<'PY'
import errno, os, sys
path, text = sys.argv[1], sys.argv[2].encode("utf-8", "surrogateescape")
try:
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CREAT)
    os.write(fd, text)
    os.close(fd)
    print(0)
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}

# same_as_ggml: ggml reads $MNT/model.gguf with the keys and tensors of
# its own edited copy $REF, and the two files are the same bytes.
same_as_ggml() {
    diff <("$GGML_REF" "$GGML_LIB" dump-metadata "$MNT/model.gguf") <("$GGML_REF" "$GGML_LIB" dump-metadata "$REF")
    diff <("$GGML_REF" "$GGML_LIB" dump-tensors "$MNT/model.gguf") <("$GGML_REF" "$GGML_LIB" dump-tensors "$REF")
    cmp "$MNT/model.gguf" "$REF"
    [ "$(stat -c %s "$MNT/model.gguf")" -eq "$(stat -c %s "$REF")" ]
}

@test "-o edit makes metadata/ owner-writable and the mount rw; everything else stays read-only" {
    cp "$(fixture type-q4_0.gguf)" "$MODEL"
    chmod 0644 "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    [ "$(stat -c %a "$MNT/metadata")" = 755 ]
    [ "$(stat -c %a "$MNT/metadata/general.architecture")" = 644 ]
    [ "$(stat -c %a "$MNT/header")" = 444 ]
    [ "$(stat -c %a "$MNT/model.gguf")" = 444 ]
    [ "$(stat -c %a "$MNT/tensors/mat/raw")" = 444 ]
    [ "$(stat -c %a "$MNT/tensors")" = 555 ]
    run findmnt -n -o OPTIONS "$MNT"
    [[ ",$output," == *",rw,"* ]]
    run -1 --separate-stderr bash -c "echo x > '$MNT/header'"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr touch "$MNT/new"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr mkdir "$MNT/tensors/new"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr rm "$MNT/tensors/mat/raw"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr mv "$MNT/metadata/general.architecture" "$MNT/tensors/x"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr setfattr -n user.gguf.type -v u8 "$MNT/tensors/mat"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr mkdir "$MNT/metadata/dir"
    [[ "$stderr" == *"Operation not permitted"* ]]
    # Unedited, model.gguf is still the file itself.
    cmp "$MNT/model.gguf" "$MODEL"
    cmp "$MODEL" "$(fixture type-q4_0.gguf)"
}

@test "without -o edit nothing changes: metadata/ is 0444 and the mount ro" {
    cp "$(fixture type-q4_0.gguf)" "$MODEL"
    chmod 0644 "$MODEL"
    mount_model "$MODEL" "$MNT"
    [ "$(stat -c %a "$MNT/metadata")" = 555 ]
    [ "$(stat -c %a "$MNT/metadata/general.architecture")" = 444 ]
    run findmnt -n -o OPTIONS "$MNT"
    [[ ",$output," == *",ro,"* ]]
    run -1 --separate-stderr bash -c "echo x > '$MNT/metadata/general.architecture'"
    [[ "$stderr" == *"Read-only file system"* ]]
}

@test "every key of the metadata fixture, written into a key of its type, reads back the same, in ggml too" {
    cp "$(fixture metadata.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    run --separate-stderr "$PYTHON" "$HELPERS/edit_copies.py" "$MNT"
    echo "$output $stderr"
    [ "$status" -eq 0 ]
    [ "$output" -ge 100 ]
    # ggml's reading of each copy is the original's, bit for bit, but for
    # NaNs: every NaN reads "nan", which is written back as the quiet NaN.
    "$GGML_REF" "$GGML_LIB" dump-metadata "$MNT/model.gguf" >"$BATS_TEST_TMPDIR/dump"
    run "$PYTHON" - "$BATS_TEST_TMPDIR/dump" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    key, kind, value = line.rstrip("\n").split("\t")
    rows[bytes.fromhex(key)] = (kind, value)

def is_nan(kind, v):
    bits = int(v, 16)
    if "f32" in kind:
        return (bits >> 23) & 0xff == 0xff and bits & 0x7fffff
    return (bits >> 52) & 0x7ff == 0x7ff and bits & ((1 << 52) - 1)

bad, compared = [], 0
for key, (kind, value) in rows.items():
    if key.startswith(b"copy."):
        continue
    copy = rows.get(b"copy." + key)
    if copy is None:
        continue
    compared += 1
    if copy == (kind, value):
        continue
    if copy[0] == kind and ("f32" in kind or "f64" in kind):
        a, b = value.split(":")[-1].split(","), copy[1].split(":")[-1].split(",")
        if len(a) == len(b) and all(x == y or (is_nan(kind, x) and is_nan(kind, y)) for x, y in zip(a, b)):
            continue
    bad.append(f"{key!r}: {kind} {value[:60]} != {copy[0]} {copy[1][:60]}")
print("\n".join(bad) or compared)
PY
    echo "$output"
    [[ "$output" =~ ^[0-9]+$ ]]
    [ "$output" -ge 100 ]
}

@test "printf >, cp and sed -i set a key, keep its type, and ggml reads the edited model.gguf" {
    cp "$(fixture type-q4_K.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    printf '%s\n' 'Renamed model' >"$MNT/metadata/general.name"
    [ "$(cat "$MNT/metadata/general.name")" = "Renamed model" ]
    printf '12\n' >"$BATS_TEST_TMPDIR/twelve"
    cp "$BATS_TEST_TMPDIR/twelve" "$MNT/metadata/conformance.type_id"
    [ "$(cat "$MNT/metadata/conformance.type_id")" = 12 ]
    sed -i 's/12/13/' "$MNT/metadata/conformance.type_id"
    [ "$(cat "$MNT/metadata/conformance.type_id")" = 13 ]
    [ "$(xattr user.gguf.type "$MNT/metadata/conformance.type_id")" = u32 ]
    # sed's temporary file is no key, and is gone.
    run ls -A "$MNT/metadata"
    [[ "$output" != *sed* ]]
    run jq -r '."conformance.type_id", ."general.name"' "$MNT/metadata.json"
    [ "$output" = $'13\nRenamed model' ]
    ggml_copy "str:general.name=Renamed model" "u32:conformance.type_id=13"
    same_as_ggml
}

@test "a text that does not parse or fit fails its write or close with EINVAL, keeps the old value and logs why" {
    cp "$(fixture metadata.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    local m="$MNT/metadata" before
    before=$(sha256sum <"$MNT/model.gguf")
    local key text
    while IFS=$'\t' read -r key text; do
        local old
        old=$(cat "$m/$key")
        run close_status "$m/$key" "$(printf '%b' "$text")"
        [ "$output" = EINVAL ] || { echo "$key <- $text: $output"; false; }
        [ "$(cat "$m/$key")" = "$old" ]
    done <<'EOF'
test.u8.max	300\n
test.u32.max	5000000000\n
test.i8.min	-129\n
test.u16.max	abc\n
test.i64.max	9223372036854775808\n
test.bool.true	yes\n
test.f32.one	1e39\n
test.f64.one_third	0x1p3\n
test.u32.min	1\n2\n
test.arr.u8	1\n256\n
EOF
    [ "$(sha256sum <"$MNT/model.gguf")" = "$before" ]
    grep -q "metadata/test.u8.max: offset 0: not a u8 value: line 1: '300' does not fit in u8" "$BATS_TEST_TMPDIR/daemon.log"
    grep -q "metadata/test.arr.u8: offset 2: not a arr\[u8\] value: line 2: '256' does not fit in u8" "$BATS_TEST_TMPDIR/daemon.log"
    # cp says so too.
    printf 'not a number\n' >"$BATS_TEST_TMPDIR/text"
    run -1 --separate-stderr cp "$BATS_TEST_TMPDIR/text" "$m/test.u32.max"
    [[ "$stderr" == *"Invalid argument"* ]]
    [ "$(cat "$m/test.u32.max")" = 4294967295 ]
}

@test "a write fails at once when the text can no longer be a value: the shell sees it, dd bs=1 still works" {
    cp "$(fixture metadata.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    local m="$MNT/metadata" key bad good reads old
    # Every scalar type: a text refused as soon as it is written (the
    # shell reports the write and exits non-zero, the value stays), then
    # a good one written a byte at a time (every start of it let through),
    # which reads back as `reads`.
    while IFS=$'\t' read -r key bad good reads; do
        old=$(cat "$m/$key")
        run -1 --separate-stderr bash -c 'printf "%b" "$1" >"$2"' _ "$bad" "$m/$key"
        [[ "$stderr" == *"write error: Invalid argument"* ]] || { echo "$key <- $bad: $stderr"; false; }
        [ "$(cat "$m/$key")" = "$old" ]
        printf '%b' "$good" | dd of="$m/$key" bs=1 status=none
        [ "$(cat "$m/$key")" = "$reads" ] || { echo "$key <- $good"; false; }
    done <<'LIST'
test.u8.max	abc\n	-0\n	0
test.i8.min	-1x\n	-128\n	-128
test.u16.max	-1\n	0065535\n	65535
test.i16.min	-32769\n	-32768\n	-32768
test.u32.max	5000000000\n	4294967294\n	4294967294
test.i32.min	2147483648\n	-2147483647\n	-2147483647
test.u64.max	18446744073709551616\n	18446744073709551614\n	18446744073709551614
test.i64.max	1 2\n	-9223372036854775808\n	-9223372036854775808
test.f32.one	0x1p3\n	-1E-5\n	-1e-05
test.f64.one_third	1e309\n	-Infinity\n	-inf
test.bool.true	yes\n	false\n	false
test.f32.pi	1\n2\n	.5e+1\n	5
LIST
    # The log names the key, the offset and the problem.
    grep -q "metadata/test.u32.max: offset 0: not a u32 value: line 1: '5000000000' does not fit in u32 (0 to 4294967295); the write is refused" \
        "$BATS_TEST_TMPDIR/daemon.log"
    grep -q "metadata/test.f32.one: offset 0: not a f32 value: line 1: '0x1p3' is not a f32" "$BATS_TEST_TMPDIR/daemon.log"
    # A start that can still become a value is written; the close refuses it.
    run --separate-stderr bash -c 'printf 1e >"$1" && echo written' _ "$m/test.f32.one"
    [ "$output" = written ]
    [ "$(cat "$m/test.f32.one")" = -1e-05 ]
    # Arrays and strings, written a byte at a time; an array refused at
    # the first line that can be no element, and kept as it was.
    printf '1\n2\n255\n' | dd of="$m/test.arr.u8" bs=1 status=none
    [ "$(cat "$m/test.arr.u8")" = $'1\n2\n255' ]
    printf 'a\\tb\n\\x41\n' | dd of="$m/test.arr.str" bs=1 status=none
    [ "$(sed -n 2p "$m/test.arr.str")" = A ]
    printf 'any\n\x01 text\n' | dd of="$m/general.name" bs=1 status=none
    cmp <(printf 'any\n\x01 text\n') "$m/general.name"
    run -1 --separate-stderr dd of="$m/test.arr.u8" bs=1 status=none <<<$'7\n8\n-1'
    [[ "$stderr" == *"Invalid argument"* ]]
    [ "$(cat "$m/test.arr.u8")" = $'1\n2\n255' ]
    grep -q "metadata/test.arr.u8: offset 4: not a arr\[u8\] value: line 3: '-1' does not fit in u8" \
        "$BATS_TEST_TMPDIR/daemon.log"
}

@test "general.alignment and split.* are refused with EPERM: write, rename, rm, setfattr, create" {
    cp "$(fixture aligned64.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    local m="$MNT/metadata"
    run close_status "$m/general.alignment" $'32\n'
    [ "$output" = EPERM ]
    run -1 --separate-stderr rm "$m/general.alignment"
    [[ "$stderr" == *"Operation not permitted"* ]]
    run -1 --separate-stderr mv "$m/general.alignment" "$m/general.x"
    [[ "$stderr" == *"Operation not permitted"* ]]
    run -1 --separate-stderr mv "$m/general.name" "$m/general.alignment"
    [[ "$stderr" == *"Operation not permitted"* ]]
    run -1 --separate-stderr setfattr -n user.gguf.type -v u64 "$m/general.alignment"
    [[ "$stderr" == *"Operation not permitted"* ]]
    run close_status "$m/split.count" $'2\n'
    [ "$output" = EPERM ]
    [ "$(cat "$m/general.alignment")" = 64 ]
    [ ! -e "$m/split.count" ]
    cmp "$MNT/model.gguf" "$MODEL"
}

@test "split.* keys of a split set are refused with EPERM" {
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 2 "$(fixture type-q8_0.gguf)" "$BATS_TEST_TMPDIR/s"
    mount_model "$(ls "$BATS_TEST_TMPDIR"/s-00001-of-*.gguf)" "$MNT" -o edit
    local m="$MNT/metadata"
    run close_status "$m/split.count" $'3\n'
    [ "$output" = EPERM ]
    run -1 --separate-stderr rm "$m/split.no"
    [[ "$stderr" == *"Operation not permitted"* ]]
    run -1 --separate-stderr setfattr -n user.gguf.type -v u32 "$m/split.tensors.count"
    [[ "$stderr" == *"Operation not permitted"* ]]
    [ "$(cat "$m/split.count")" = "$(ls "$BATS_TEST_TMPDIR"/s-*.gguf | wc -l)" ]
}

@test "rm deletes a key; made again it comes back where it was, with its type" {
    cp "$(fixture metadata.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    local m="$MNT/metadata"
    local order
    order=$(jq -r 'keys_unsorted | join(" ")' "$MNT/metadata.json")
    rm "$m/test.u16.max"
    [ ! -e "$m/test.u16.max" ]
    run jq 'has("test.u16.max")' "$MNT/metadata.json"
    [ "$output" = false ]
    [ "$(sed -n 's/^kv_count: //p' "$MNT/header")" -eq "$(jq length "$MNT/metadata.json")" ]
    printf '77\n' >"$m/test.u16.max"
    [ "$(xattr user.gguf.type "$m/test.u16.max")" = u16 ]
    [ "$(cat "$m/test.u16.max")" = 77 ]
    [ "$(jq -r 'keys_unsorted | join(" ")' "$MNT/metadata.json")" = "$order" ]
}

@test "a new file is a string key, or of the type set with user.gguf.type; getfattr gives every key's type" {
    cp "$(fixture type-f16.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    local m="$MNT/metadata"
    printf 'hello\n' >"$m/my.text"
    [ "$(xattr user.gguf.type "$m/my.text")" = str ]
    touch "$m/my.count"
    setfattr -n user.gguf.type -v u64 "$m/my.count"
    [ "$(cat "$m/my.count")" = 0 ]
    printf '5000000000\n' >"$m/my.count"
    touch "$m/my.list"
    setfattr -n user.gguf.type -v 'array[f32]' "$m/my.list"
    printf '0.5\n-inf\n1e-05\n' >"$m/my.list"
    touch "$m/my.flag"
    setfattr -n user.gguf.type -v bool "$m/my.flag"
    [ "$(cat "$m/my.flag")" = false ]
    [ "$(xattr user.gguf.type "$m/my.count")" = u64 ]
    [ "$(xattr user.gguf.type "$m/my.list")" = 'arr[f32]' ]
    # A key's value is read again as the type it is given.
    setfattr -n user.gguf.type -v u8 "$m/conformance.type_id"
    [ "$(xattr user.gguf.type "$m/conformance.type_id")" = u8 ]
    run -1 --separate-stderr setfattr -n user.gguf.type -v i8 "$m/my.count"
    [[ "$stderr" == *"Invalid argument"* ]]
    run -1 --separate-stderr setfattr -n user.gguf.type -v u7 "$m/my.count"
    [[ "$stderr" == *"Invalid argument"* ]]
    [ "$(xattr user.gguf.type "$m/my.count")" = u64 ]
    # (jq would turn -Infinity into a number.)
    run "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(json.dumps([d[k] for k in ("my.text", "my.count", "my.list", "my.flag", "conformance.type_id")]))' "$MNT/metadata.json"
    [ "$output" = '["hello", 5000000000, [0.5, -Infinity, 1e-05], false, 1]' ]
    ggml_copy "str:my.text=hello" "u64:my.count=5000000000" "arr-f32:my.list=@$m/my.list" \
        "bool:my.flag=false" "u8:conformance.type_id=1"
    same_as_ggml
}

@test "temporary files are no keys; renamed over a key they set it; mv renames a key to the end" {
    cp "$(fixture type-q4_0.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    local m="$MNT/metadata" before
    before=$(cat "$MNT/metadata.json")
    printf 'draft\n' >"$m/.general.name.swp"
    printf 'draft\n' >"$m/general.name~"
    printf 'draft\n' >"$m/sedAb12Cd"
    [ "$(cat "$m/.general.name.swp")" = draft ]
    [ "$(cat "$MNT/metadata.json")" = "$before" ]
    run ls -A "$m"
    [[ "$output" == *"general.name~"* ]]
    rm "$m/general.name~" "$m/sedAb12Cd"
    # An editor saving by renaming: the text is read as the key's type.
    printf '99\n' >"$m/.conformance.type_id.tmp"
    mv "$m/.conformance.type_id.tmp" "$m/conformance.type_id"
    [ "$(cat "$m/conformance.type_id")" = 99 ]
    [ "$(xattr user.gguf.type "$m/conformance.type_id")" = u32 ]
    printf 'x\n' >"$m/.bad.tmp"
    # rename(2) fails with EINVAL, which mv words as a move into itself.
    run -1 --separate-stderr mv "$m/.bad.tmp" "$m/conformance.type_id"
    [[ "$stderr" == *"cannot move"* ]]
    run "$PYTHON" -c 'import os, sys
try:
    os.rename(sys.argv[1], sys.argv[2])
except OSError as e:
    print(e.strerror)' "$m/.bad.tmp" "$m/conformance.type_id"
    [ "$output" = "Invalid argument" ]
    [ "$(cat "$m/conformance.type_id")" = 99 ]
    # vim's way: the key to KEY~, a new KEY written, KEY~ removed.
    mv "$m/conformance.type_id" "$m/conformance.type_id~"
    printf '100\n' >"$m/conformance.type_id"
    rm "$m/conformance.type_id~" "$m/.bad.tmp" "$m/.general.name.swp"
    [ "$(xattr user.gguf.type "$m/conformance.type_id")" = u32 ]
    mv "$m/conformance.type" "$m/conformance.kind"
    [ "$(jq -r 'keys_unsorted | join(" ")' "$MNT/metadata.json")" = \
      "general.architecture conformance.type_id conformance.kind" ]
    run ls -A "$m"
    [ "$output" = $'conformance.kind\nconformance.type_id\ngeneral.architecture' ]
    ggml_copy "u32:conformance.type_id=100" del:conformance.type "str:conformance.kind=q4_0"
    same_as_ggml
}

@test "header, metadata.json, warnings and every size follow an edit at once" {
    cp "$(fixture type-q6_K.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    local template
    template=$(printf '{%% for m in messages %%}%.0s' {1..200})
    # stat before, so that the kernel holds the old sizes.
    stat "$MNT/model.gguf" "$MNT/header" "$MNT/metadata.json" >/dev/null
    cat "$MNT/model.gguf" "$MNT/header" >/dev/null
    printf '%s\n' "$template" >"$MNT/metadata/tokenizer.chat_template"
    ggml_copy "str:tokenizer.chat_template=$template"
    same_as_ggml
    "$GGML_REF" "$GGML_LIB" dump-tensors "$REF" >"$BATS_TEST_TMPDIR/tensors"
    [ "$(sed -n 's/^data_offset: //p' "$MNT/header")" = "$(sed -n 's/^#data_offset\t//p' "$BATS_TEST_TMPDIR/tensors")" ]
    [ "$(sed -n 's/^kv_count: //p' "$MNT/header")" = "$(sed -n 's/^#kv_count\t//p' "$BATS_TEST_TMPDIR/tensors")" ]
    [ "$(sed -n 's/^file_size: //p' "$MNT/header")" = "$(stat -c %s "$REF")" ]
    [ "$(jq -r '."tokenizer.chat_template"' "$MNT/metadata.json")" = "$template" ]
    [ -z "$(cat "$MNT/warnings")" ]
    local f
    for f in model.gguf header metadata.json warnings metadata/tokenizer.chat_template; do
        [ "$(stat -c %s "$MNT/$f")" -eq "$(wc -c <"$MNT/$f")" ] || { echo "$f"; false; }
    done
    # tensors/ is the source's: offsets and bytes unchanged.
    local offset bytes
    offset=$(sed -n 's/^offset: //p' "$MNT/tensors/mat/info")
    bytes=$(sed -n 's/^bytes: //p' "$MNT/tensors/mat/info")
    [ "$offset" = "$(tensor_offset "$MODEL" mat)" ]
    cmp "$MNT/tensors/mat/raw" <(tail -c +$((offset + 1)) "$MODEL" | head -c "$bytes")
}

# tensor_offset FILE TENSOR: the tensor's absolute offset in FILE, as ggml
# reads it.
tensor_offset() {
    "$GGML_REF" "$GGML_LIB" dump-tensors "$1" | awk -F'\t' -v t="$2" '$1 == t { print $4 }'
}

@test "a split set's model.gguf, edited, equals ggml's edited copy of the merged model; shards/ stay the originals" {
    cp "$(fixture type-q4_K.gguf)" "$MODEL"
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 2 "$MODEL" "$BATS_TEST_TMPDIR/s"
    local shard1="$BATS_TEST_TMPDIR/s-00001-of-00004.gguf"
    mount_model "$shard1" "$MNT" -o edit
    local shard_before
    shard_before=$(cat "$MNT/shards/s-00001-of-00004.gguf")
    printf 'Split and fixed\n' >"$MNT/metadata/general.name"
    rm "$MNT/metadata/conformance.type"
    printf '7\n' >"$MNT/metadata/extra.key"
    ggml_copy "str:general.name=Split and fixed" del:conformance.type "str:extra.key=7"
    same_as_ggml
    [ "$(cat "$MNT/shards/s-00001-of-00004.gguf")" = "$shard_before" ]
    [ "$(sed -n 's/^shards: //p' "$MNT/header")" = 4 ]
    [ "$(cat "$MNT/metadata/split.count")" = 4 ]
    run jq -r '."split.count"' "$MNT/metadata.json"
    [ "$output" = 4 ]
}

@test "edits=PATH keeps the edits across a remount, as readable JSON" {
    cp "$(fixture type-q4_0.gguf)" "$MODEL"
    # An empty PATH is no edits yet; rewritten, it keeps its mode.
    touch "$EDITS"
    chmod 0640 "$EDITS"
    mount_model "$MODEL" "$MNT" -o "edits=$EDITS"
    cmp "$MNT/model.gguf" "$MODEL"
    printf 'Kept\n' >"$MNT/metadata/general.name"
    printf 'a\nb c\n' >"$MNT/metadata/my.tags"
    touch "$MNT/metadata/my.tags.n"
    setfattr -n user.gguf.type -v 'arr[str]' "$MNT/metadata/my.tags.n"
    printf 'x\\ny\n\n' >"$MNT/metadata/my.tags.n"
    rm "$MNT/metadata/conformance.type"
    setfattr -n user.gguf.type -v u64 "$MNT/metadata/conformance.type_id"
    run jq -c '.keys, .deleted' "$EDITS"
    [ "${lines[0]}" = '[{"key":"conformance.type_id","type":"u64","was":"u32","value":2},{"key":"general.name","type":"str","value":"Kept"},{"key":"my.tags","type":"str","value":"a\nb c"},{"key":"my.tags.n","type":"arr[str]","value":["x\ny",""]}]' ]
    [ "${lines[1]}" = '["conformance.type"]' ]
    [ "$(stat -c %a "$EDITS")" = 640 ]
    local json
    json=$(cat "$MNT/metadata.json")
    cp "$MNT/model.gguf" "$BATS_TEST_TMPDIR/before.gguf"
    fusermount3 -u "$MNT"
    mount_model "$MODEL" "$MNT" -o "edits=$EDITS"
    [ "$(cat "$MNT/metadata.json")" = "$json" ]
    cmp "$MNT/model.gguf" "$BATS_TEST_TMPDIR/before.gguf"
    [ "$(xattr user.gguf.type "$MNT/metadata/my.tags.n")" = 'arr[str]' ]
}

@test "SIGKILL right after a close leaves PATH holding that edit" {
    cp "$(fixture type-q4_0.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o "edits=$EDITS"
    local pid
    pid=$(awk -v m="$MNT" '$2 == m { print $1 }' "$BATS_TEST_TMPDIR/daemons")
    run close_status "$MNT/metadata/general.name" $'Survives\n'
    [ "$output" = 0 ]
    kill -9 "$pid"
    wait_gone "$pid"
    umount -l "$MNT"
    run jq -r '.keys[] | select(.key == "general.name") | .value' "$EDITS"
    [ "$output" = Survives ]
    # No temporary file is left beside PATH when a save completed.
    run ls -A "$BATS_TEST_TMPDIR"
    [[ "$output" != *".edits.json."* ]]
    mount_model "$MODEL" "$MNT" -o "edits=$EDITS"
    [ "$(cat "$MNT/metadata/general.name")" = Survives ]
}

@test "a PATH edited into garbage or made for another model refuses the mount with one line" {
    cp "$(fixture type-q4_0.gguf)" "$MODEL"
    mkdir -p "$MNT"
    local case text want
    while IFS='|' read -r case text want; do
        printf '%s' "$text" >"$EDITS"
        run --separate-stderr "$GGUF_FS" -f -o "edits=$EDITS" "$MODEL" "$MNT"
        [ "$status" -eq 1 ] || { echo "$case: status $status"; false; }
        [ "${#stderr_lines[@]}" -eq 1 ] || { echo "$case: $stderr"; false; }
        [[ "$stderr" == "gguf-fs: $EDITS: "*"$want"* ]] || { echo "$case: $stderr"; false; }
    done <<'EOF'
cut short|{"format": "gguf-fs edits 1", "keys": [|offset 39: not JSON
not edits|{"keys": []}|not a file of edits
type clash|{"format": "gguf-fs edits 1", "keys": [{"key": "general.architecture", "type": "u32", "value": 1}]}|key 'general.architecture': the model's key is str, the edits were made for u32
too big|{"format": "gguf-fs edits 1", "keys": [{"key": "conformance.type_id", "type": "u32", "value": 5000000000}]}|key 'conformance.type_id': the value does not fit its type
no such key|{"format": "gguf-fs edits 1", "deleted": ["general.nothing"]}|key 'general.nothing': deleted, but the model has no such key
alignment|{"format": "gguf-fs edits 1", "keys": [{"key": "general.alignment", "type": "u32", "value": 64}]}|key 'general.alignment': set, but the model's layout depends on it
split|{"format": "gguf-fs edits 1", "deleted": ["split.count"]}|key 'split.count': deleted, but the model's layout depends on it
wrong kind|{"format": "gguf-fs edits 1", "keys": [{"key": "x.y", "type": "arr[u8]", "value": "text"}]}|key 'x.y': the value is no arr[u8]
EOF
    run ! mountpoint -q "$MNT"
}

@test "hostile writes (huge values, bad names, a thousand keys) leave the daemon alive and PATH valid" {
    cp "$(fixture type-q4_0.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o "edits=$EDITS"
    local m="$MNT/metadata"
    # One value past 16 MiB: the write past it fails with EFBIG; the key
    # keeps its value.
    run "$PYTHON" - "$m/general.architecture" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
written = 0
try:
    while written < 17 << 20:
        written += os.write(fd, b"x" * (1 << 20))
    print("written")
except OSError as e:
    print(errno.errorcode[e.errno], written >> 20)
try:
    os.close(fd)  # 16 MiB of text: its encoding is longer still
except OSError as e:
    print(errno.errorcode[e.errno])
PY
    [ "$output" = $'EFBIG 16\nEFBIG' ]
    [ "$(cat "$m/general.architecture")" = conformance ]
    # 64 MiB in all: the fifth 15 MiB value is refused with ENOSPC.
    run "$PYTHON" - "$m" <<'PY'
import errno, os, sys
out = []
for i in range(5):
    try:
        with open(os.path.join(sys.argv[1], f"big.{i}"), "wb") as f:
            f.write(b"y" * (15 << 20))
        out.append("ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
print(" ".join(out))
PY
    [ "$output" = "ok ok ok ok ENOSPC" ]
    rm "$m"/big.*
    # Names: too long for a file name, cut names, bytes that are not UTF-8.
    run -1 --separate-stderr touch "$m/$(printf 'k%.0s' {1..300})"
    [[ "$stderr" == *"name too long"* ]]
    # (a 255-byte name ending as cut names do stands for a longer key)
    run -1 --separate-stderr touch "$m/$(printf 'k%.0s' {1..246})~0123abcd"
    [[ "$stderr" == *"Invalid argument"* ]]
    printf 'v\xff\x01\n' >"$m/$(printf 'bad\xfe')"
    printf 'line\x00nul\xc3\n' >"$m/general.name"
    # A thousand keys, each committed as its file closes (PATH rewritten
    # whole and synced each time).
    "$PYTHON" - "$m" <<'PY'
import os, sys
for i in range(1000):
    with open(os.path.join(sys.argv[1], f"many.{i:05d}"), "w") as f:
        f.write(f"{i}\n")
PY
    [ "$(jq '[keys[] | select(startswith("many."))] | length' "$MNT/metadata.json")" -eq 1000 ]
    kill -0 "$(awk -v m="$MNT" '$2 == m { print $1 }' "$BATS_TEST_TMPDIR/daemons")"
    # PATH is JSON that Python reads, and mounts again to the same keys.
    "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["keys"]) >= 1002' "$EDITS"
    local json
    json=$(cat "$MNT/metadata.json")
    fusermount3 -u "$MNT"
    mount_model "$MODEL" "$MNT" -o "edits=$EDITS"
    [ "$(cat "$MNT/metadata.json")" = "$json" ]
    cmp <(printf 'line\x00nul\xc3\n') "$m/general.name"
}

@test "concurrent edits and reads of model.gguf and metadata.json keep the daemon alive and end right" {
    cp "$(fixture type-q4_K.gguf)" "$MODEL"
    mount_model "$MODEL" "$MNT" -o edit
    local m="$MNT/metadata"
    (for i in $(seq 200); do printf 'name %d\n' "$i" >"$m/general.name"; done) &
    local writer=$!
    (for i in $(seq 200); do printf '%d\n' "$i" >"$m/edit.counter.$((i % 7))"; rm -f "$m/edit.counter.$(((i + 3) % 7))"; done) &
    local churner=$!
    for i in $(seq 100); do
        cat "$MNT/model.gguf" "$MNT/metadata.json" "$MNT/header" "$MNT/warnings" >/dev/null
        # (a file ls lists may be gone when it stats it)
        ls -l "$m" >/dev/null 2>&1 || true
    done
    wait "$writer"
    wait "$churner"
    [ "$(cat "$m/general.name")" = "name 200" ]
    ggml_copy "str:general.name=name 200" $(for k in $(ls "$m" | grep '^edit\.counter\.'); do echo "str:$k=$(cat "$m/$k")"; done)
    # The added keys are in the order they were made: compare by ggml's
    # reading rather than by bytes.
    "$GGML_REF" "$GGML_LIB" dump-metadata "$MNT/model.gguf" | sort >"$BATS_TEST_TMPDIR/a"
    "$GGML_REF" "$GGML_LIB" dump-metadata "$REF" | sort >"$BATS_TEST_TMPDIR/b"
    diff "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
    diff <("$GGML_REF" "$GGML_LIB" dump-tensors "$MNT/model.gguf" | grep -v '^#') <("$GGML_REF" "$GGML_LIB" dump-tensors "$REF" | grep -v '^#')
}

@test "node-llama-cpp loads the edited model.gguf: the edited name and template, the same 4 greedy tokens" {
    require_llama_client
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$MODEL" >/dev/null
    run --separate-stderr llama_client "$MODEL"
    [ "$status" -eq 0 ]
    local before=$output
    mount_model "$MODEL" "$MNT" -o edit
    printf 'Renamed by gguf-fs\n' >"$MNT/metadata/general.name"
    printf '%s\n' '{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}' \
        >"$MNT/metadata/tokenizer.chat_template"
    run --separate-stderr llama_client "$MNT/model.gguf"
    [ "$status" -eq 0 ]
    run "$PYTHON" -c 'import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert b["name"] == "Renamed by gguf-fs", b["name"]
assert b["template"] == "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", b["template"]
assert a["name"] != b["name"] and a["template"] != b["template"]
assert len(a["tokens"]) == 4 and a["tokens"] == b["tokens"], (a["tokens"], b["tokens"])
print("same tokens", b["tokens"])' "$before" "$output"
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "a folder of models refuses -o edit" {
    mkdir -p "$BATS_TEST_TMPDIR/folder"
    cp "$(fixture type-q4_0.gguf)" "$BATS_TEST_TMPDIR/folder/"
    run --separate-stderr "$GGUF_FS" -f -o edit "$BATS_TEST_TMPDIR/folder" "$BATS_TEST_TMPDIR"
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"a folder of models cannot be edited"* ]]
}

@test "a URL mount's model.gguf, edited, equals ggml's edited copy" {
    local nginx
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    [ -x "$nginx" ] || skip "nginx is not installed (scripts/setup installs it)"
    unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
    # The remote suites' nginx (tests/http/server.bash), plain HTTP only.
    load ../http/server
    local srv="$BATS_TEST_TMPDIR/srv" files="$BATS_TEST_TMPDIR/files"
    mkdir -p "$srv" "$files"
    cp "$(fixture type-q5_K.gguf)" "$files/model.gguf"
    MODEL="$files/model.gguf"
    read -r NGINX_PORT < <(free_ports 1)
    TLS_PORT='' write_nginx_conf "$srv" "$files"
    "$nginx" -c "$srv/nginx.conf" -p "$srv" 3>&- &
    echo $! >"$BATS_TEST_TMPDIR/nginx.pid.ours"
    wait_port "$NGINX_PORT"
    mount_model "http://127.0.0.1:$NGINX_PORT/files/model.gguf" "$MNT" -o edit
    printf 'Remote and fixed\n' >"$MNT/metadata/general.name"
    rm "$MNT/metadata/conformance.type_id"
    ggml_copy "str:general.name=Remote and fixed" del:conformance.type_id
    same_as_ggml
}
