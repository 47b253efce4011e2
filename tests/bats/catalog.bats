#!/usr/bin/env bats
# Folders of models: gguf-fs DIR MNT over a folder laid out as people keep
# models (scripts/fixtures/make-catalog: plain files, a split set, bad
# files, links in and out and in loops, FIFOs, a Hugging Face cache, an
# Ollama store).
# Each model's directory is compared with a single mount of the same file;
# files added and removed under the live mount come and go; grep, find and
# awk run across every model.

load test_helper

setup_file() {
    export CATALOG="$BATS_FILE_TMPDIR/models"
    "$PYTHON" "$GGUF_FS_SCRIPTS/fixtures/make-catalog" "$GGUF_FS_FIXTURES" "$CATALOG"
}

setup() {
    require_fuse
    MNT="$BATS_TEST_TMPDIR/mnt"
    mkdir -p "$MNT"
}

HF=hub/models--gguf-fs--tiny-GGUF
SNAPSHOT=$HF/snapshots/4d1e6f0c2b3a59788a6e0f1d2c3b4a5968778695
OLLAMA=.ollama/models/ollama

# same_tree A B: every file under A and B has the same name, size, mode,
# bytes and extended attributes.
same_tree() {
    local a=$1 b=$2
    diff <(cd "$a" && find . -printf '%p %y %s %m\n' | sort) <(cd "$b" && find . -printf '%p %y %s %m\n' | sort)
    diff -r "$a" "$b"
    diff <(cd "$a" && getfattr -R -d -m - . 2>/dev/null) <(cd "$b" && getfattr -R -d -m - . 2>/dev/null)
}

# single MODEL NAME: mounts MODEL alone and prints where.
single() {
    local where="$BATS_TEST_TMPDIR/single-$2"
    mount_model "$1" "$where" >&2
    echo "$where"
}

# daemon_pid: the pid of the (first) daemon of this test.
daemon_pid() {
    awk 'NR == 1 {print $1}' "$BATS_TEST_TMPDIR/daemons"
}

@test "the folder's structure is mirrored, each model a directory named as its file" {
    mount_model "$CATALOG" "$MNT"
    run ls "$MNT"
    [ "$output" = "$(printf 'bad\nbig-endian\nbroken-split\nhub\nlinks\nllama\nmetadata.gguf\nsplit')" ]
    run ls -A "$MNT"
    [ "${lines[0]}" = ".ollama" ]
    run ls "$MNT/llama"
    [ "$output" = "$(printf 'type-q4_K.gguf\ntype-q8_0.gguf')" ]
    [ -d "$MNT/llama/type-q4_K.gguf" ]
    run ls "$MNT/llama/type-q4_K.gguf"
    [ "$output" = "$(printf 'hashes\nheader\nmetadata\nmetadata.json\nmodel.gguf\ntensors\ntensors.tsv\nwarnings')" ]
    # Directories mirror their folder's owner and times.
    [ "$(stat -c %Y "$MNT/llama")" = "$(stat -c %Y "$CATALOG/llama")" ]
    [ "$(stat -c '%Y %U' "$MNT/llama/type-q8_0.gguf")" = "$(stat -c '%Y %U' "$CATALOG/llama/type-q8_0.gguf")" ]
}

@test "a model in the catalog is exactly its single mount: names, sizes, modes, bytes, attributes" {
    mount_model "$CATALOG" "$MNT"
    local name s
    for name in type-q4_K type-q8_0; do
        s=$(single "$CATALOG/llama/$name.gguf" "$name")
        same_tree "$MNT/llama/$name.gguf" "$s"
    done
    s=$(single "$CATALOG/big-endian/type-f32.gguf" be)
    same_tree "$MNT/big-endian/type-f32.gguf" "$s"
    s=$(single "$CATALOG/metadata.gguf" metadata)
    same_tree "$MNT/metadata.gguf" "$s"
    [ "$(cat "$MNT/big-endian/type-f32.gguf/header" | sed -n 2p)" = "byte_order: big" ]
    # numpy reads a tensor through the catalog as through the single mount.
    "$PYTHON" - "$MNT/llama/type-q4_K.gguf" "$(fixture type-q4_K.ref)" <<'EOF'
import os, sys, numpy as np
m = sys.argv[1]
for t in os.listdir(f"{m}/tensors"):
    a = np.fromfile(f"{m}/tensors/{t}/f32", dtype="<f4")
    info = dict(l.split(": ", 1) for l in open(f"{m}/tensors/{t}/info").read().splitlines())
    assert a.size == int(info["elements"]), t
EOF
}

@test "a split set shows once, under its name without -00001-of-0000N, as the set's single mount" {
    mount_model "$CATALOG" "$MNT"
    run ls "$MNT/split"
    [ "$output" = "set.gguf" ]
    run ls "$MNT/split/set.gguf/shards"
    [ "$output" = "$(printf 'set-00001-of-00003.gguf\nset-00002-of-00003.gguf\nset-00003-of-00003.gguf')" ]
    local s
    s=$(single "$CATALOG/split/set-00002-of-00003.gguf" set)
    same_tree "$MNT/split/set.gguf" "$s"
    cmp "$MNT/split/set.gguf/model.gguf" "$(fixture type-q6_K.gguf)"
}

@test "a model that fails is a directory with one file, error: one line naming the file, the offset and the problem" {
    mount_model "$CATALOG" "$MNT"
    run ls "$MNT/bad"
    [ "$output" = "$(printf 'empty.gguf\nnot-a-model.gguf\nsha256-badversion\ntruncated.gguf')" ]
    local m
    for m in empty.gguf not-a-model.gguf sha256-badversion truncated.gguf; do
        run ls -A "$MNT/bad/$m"
        [ "$output" = error ] || { echo "$m: $output"; false; }
        [ "$(wc -l <"$MNT/bad/$m/error")" -eq 1 ]
        [ "$(stat -c %s "$MNT/bad/$m/error")" -eq "$(wc -c <"$MNT/bad/$m/error")" ]
    done
    [ "$(cat "$MNT/bad/empty.gguf/error")" = "bad/empty.gguf: offset 0x0: file is 0 bytes, too short for the magic" ]
    [ "$(cat "$MNT/bad/sha256-badversion/error")" = "bad/sha256-badversion: offset 0x4: version is 9, not 1, 2 or 3" ]
    [[ "$(cat "$MNT/bad/truncated.gguf/error")" =~ ^bad/truncated.gguf:\ offset\ 0x[0-9a-f]+:\ tensor\ \'.*\':\ data\ ends\ at\ [0-9]+,\ past\ end\ of\ file\ \(67648\)$ ]]
    # The same words as a single mount's refusal.
    mkdir -p "$BATS_TEST_TMPDIR/x"
    run -1 --separate-stderr "$GGUF_FS" "$CATALOG/bad/truncated.gguf" "$BATS_TEST_TMPDIR/x"
    [ "$stderr" = "gguf-fs: $CATALOG/$(cat "$MNT/bad/truncated.gguf/error")" ]
    run ls "$MNT/broken-split"
    [ "$output" = half.gguf ]
    [[ "$(cat "$MNT/broken-split/half.gguf/error")" == "broken-split/half-00001-of-00003.gguf: offset 0x"*": split.count is 3, but shard 2, half-00002-of-00003.gguf, cannot be read: cannot open: No such file or directory" ]]
    # Nothing else is in an error directory, and it cannot be written.
    run -1 --separate-stderr cat "$MNT/bad/empty.gguf/header"
    [[ "$stderr" == *"No such file or directory"* ]]
    run -1 --separate-stderr touch "$MNT/bad/empty.gguf/error"
    [[ "$stderr" == *"Read-only file system"* ]]
    # One bad file stops nothing: the rest answers.
    [ "$(cat "$MNT/llama/type-q8_0.gguf/metadata/general.architecture")" = conformance ]
}

@test "files without .gguf are models when they start with GGUF or FUGG, and only then" {
    mount_model "$CATALOG" "$MNT"
    [ -d "$MNT/bad/sha256-badversion" ]
    [ ! -e "$MNT/bad/notes.txt" ]
    [ ! -e "$MNT/bad/empty" ]
    # Ollama's blobs: the model layers, not the template, params and config.
    local n
    n=$(ls "$CATALOG/.ollama/models/blobs" | wc -l)
    [ "$n" -eq 7 ]
    run ls "$MNT/.ollama/models/blobs"
    [ "${#lines[@]}" -eq 4 ]
    for b in "${lines[@]}"; do
        [ "$(head -c 4 "$CATALOG/.ollama/models/blobs/$b")" = GGUF ]
        [ -f "$MNT/.ollama/models/blobs/$b/header" ]
    done
}

@test "symlinks are followed inside the folder only; loops, links out, FIFOs are skipped and never hang" {
    mount_model "$CATALOG" "$MNT"
    run timeout 10 ls -A "$MNT/links"
    [ "$status" -eq 0 ]
    [ "$output" = q4.gguf ]
    same_tree "$MNT/links/q4.gguf" "$MNT/llama/type-q4_K.gguf"
    local name
    for name in escape.gguf up.gguf loop-a.gguf loop-b.gguf self top fifo.gguf fifo; do
        run -1 --separate-stderr timeout 10 stat "$MNT/links/$name"
        [[ "$stderr" == *"No such file or directory"* ]]
    done
    # A whole walk of the mount ends (no endless tree through self or top)
    # and finds every model that opens: 2 in llama/, metadata.gguf, the
    # big-endian one, the split set, links/q4.gguf, 2 snapshots and 1 blob
    # of the Hugging Face cache (its split set's blobs are shards whose
    # names do not say so: errors), 4 Ollama blobs and 4 Ollama names.
    run --separate-stderr timeout 60 find "$MNT" -name header
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 17 ]
}

@test "a Hugging Face cache: snapshot names, each the blob it links to; a linked split set is one model" {
    mount_model "$CATALOG" "$MNT"
    run ls "$MNT/$HF"
    [ "$output" = "$(printf 'blobs\nrefs\nsnapshots')" ] # every directory is mirrored
    [ "$(ls -A "$MNT/$HF/refs")" = "" ]
    run ls "$MNT/$SNAPSHOT"
    [ "$output" = "$(printf 'tiny-q8_0.gguf\ntiny-split.gguf')" ]
    cmp "$MNT/$SNAPSHOT/tiny-q8_0.gguf/model.gguf" "$(fixture type-q8_0.gguf)"
    run ls "$MNT/$SNAPSHOT/tiny-split.gguf/shards"
    [ "${#lines[@]}" -eq 3 ]
    cmp "$MNT/$SNAPSHOT/tiny-split.gguf/model.gguf" "$(fixture type-q4_0.gguf)"
    local s
    s=$(single "$CATALOG/$SNAPSHOT/tiny-q8_0.gguf" hf)
    same_tree "$MNT/$SNAPSHOT/tiny-q8_0.gguf" "$s"
}

@test "an Ollama store gains ollama/ with its models named as ollama list names them" {
    mount_model "$CATALOG" "$MNT"
    run ls "$MNT/.ollama/models"
    [ "$output" = "$(printf 'blobs\nmanifests\nollama')" ]
    run ls "$MNT/$OLLAMA"
    [ "$output" = "$(printf 'broken:latest\nhf.co\nlost:latest\nsneaky:latest\nsomeone\ntiny:latest\ntiny:q8')" ]
    [ "$(ls "$MNT/$OLLAMA/someone")" = custom:v1 ]
    [ "$(ls "$MNT/$OLLAMA/hf.co/gguf-fs")" = tiny-GGUF:Q6_K ]
    cmp "$MNT/$OLLAMA/tiny:latest/model.gguf" "$(fixture type-q4_K.gguf)"
    cmp "$MNT/$OLLAMA/tiny:q8/model.gguf" "$(fixture type-q8_0.gguf)"
    cmp "$MNT/$OLLAMA/someone/custom:v1/model.gguf" "$(fixture type-f16.gguf)"
    cmp "$MNT/$OLLAMA/hf.co/gguf-fs/tiny-GGUF:Q6_K/model.gguf" "$(fixture type-q6_K.gguf)"
    same_tree "$MNT/$OLLAMA/tiny:latest" "$MNT/llama/type-q4_K.gguf"
    # A directory, not a symlink.
    [ -d "$MNT/$OLLAMA/tiny:latest" ] && [ ! -L "$MNT/$OLLAMA/tiny:latest" ]
}

@test "hostile Ollama manifests are errors naming the manifest, never paths followed" {
    mount_model "$CATALOG" "$MNT"
    local lib=.ollama/models/manifests/registry.ollama.ai/library
    [ "$(cat "$MNT/$OLLAMA/broken:latest/error")" = "$lib/broken/latest: offset 0x20: not JSON: ends inside a value" ]
    [ "$(cat "$MNT/$OLLAMA/sneaky:latest/error")" = "$lib/sneaky/latest: layers[0]: digest \"sha256:../../../../../../etc/passwd\" is not sha256:<64 hex digits>" ]
    [ "$(cat "$MNT/$OLLAMA/lost:latest/error")" = "$lib/lost/latest: model layer .ollama/models/blobs/sha256-$(printf '0%.0s' {1..64}): No such file or directory" ]
    run ls -A "$MNT/$OLLAMA/sneaky:latest"
    [ "$output" = error ]
}

@test "files added to and removed from the folder appear and disappear under the live mount" {
    local dir="$BATS_TEST_TMPDIR/live"
    mkdir -p "$dir/sub"
    cp "$(fixture type-f32.gguf)" "$dir/a.gguf"
    mount_model "$dir" "$MNT"
    [ "$(ls "$MNT")" = "$(printf 'a.gguf\nsub')" ]
    [ "$(ls "$MNT/sub")" = "" ]
    cat "$MNT/a.gguf/header" >/dev/null
    # Added: at once in a listing, and looked up directly.
    cp "$(fixture type-q8_0.gguf)" "$dir/sub/b.gguf"
    [ "$(ls "$MNT/sub")" = b.gguf ]
    cmp "$MNT/sub/b.gguf/model.gguf" "$(fixture type-q8_0.gguf)"
    cp "$(fixture type-f16.gguf)" "$dir/c.gguf"
    sleep 1.2 # past the second a lookup trusts a listing
    cmp "$MNT/c.gguf/model.gguf" "$(fixture type-f16.gguf)"
    # A split set's shards arriving one by one.
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" "$(fixture type-q6_K.gguf)" "$BATS_TEST_TMPDIR/s"
    cp "$BATS_TEST_TMPDIR"/s-0000[12]-of-00003.gguf "$dir/sub/"
    [ "$(ls "$MNT/sub")" = "$(printf 'b.gguf\ns.gguf')" ]
    [ -f "$MNT/sub/s.gguf/error" ]
    # Removed: gone from the listing at once, and from lookups within seconds.
    rm "$dir/a.gguf"
    [ "$(ls "$MNT")" = "$(printf 'c.gguf\nsub')" ]
    sleep 1.2
    [ ! -e "$MNT/a.gguf" ]
    # Replaced by another model: the new one, never a mix of the two.
    rm "$dir/sub/s-"*.gguf
    cp "$(fixture type-q4_K.gguf)" "$dir/c.gguf.new"
    mv "$dir/c.gguf.new" "$dir/c.gguf"
    sleep 1.2
    cmp "$MNT/c.gguf/model.gguf" "$(fixture type-q4_K.gguf)"
    [ "$(sed -n 3p "$MNT/c.gguf/header")" = "$(sed -n 3p "$(single "$(fixture type-q4_K.gguf)" q4)/header")" ]
    # A directory removed and made again.
    rm -r "$dir/sub"
    mkdir "$dir/sub2"
    cp "$(fixture type-f32.gguf)" "$dir/sub2/d.gguf"
    [ "$(ls "$MNT")" = "$(printf 'c.gguf\nsub2')" ]
    [ "$(ls "$MNT/sub2/d.gguf")" = "$(printf 'hashes\nheader\nmetadata\nmetadata.json\nmodel.gguf\ntensors\ntensors.tsv\nwarnings')" ]
}

@test "a file whose content arrives after its name (a copy in progress) is shown once it is a model" {
    local dir="$BATS_TEST_TMPDIR/live"
    mkdir -p "$dir"
    mount_model "$dir" "$MNT"
    : >"$dir/sha256-partial"
    [ "$(ls "$MNT")" = "" ] # no magic yet
    cat "$(fixture type-f32.gguf)" >"$dir/sha256-partial"
    [ "$(ls "$MNT")" = sha256-partial ]
    cmp "$MNT/sha256-partial/model.gguf" "$(fixture type-f32.gguf)"
}

@test "grep -l, find -path and awk work across every model" {
    mount_model "$CATALOG" "$MNT"
    # Which models hold a tensor named all_bits? (f16, bf16 and i16 fixtures)
    run bash -c "cd '$MNT' && find . -path '*/tensors/all_bits/info' | sort"
    [ "$status" -eq 0 ]
    [[ "$output" == *"./$OLLAMA/someone/custom:v1/tensors/all_bits/info"* ]]
    # grep -l over every model's metadata: the q8_0 models, wherever they are.
    # (The paths grep prints, and its status, not sort's.)
    run --separate-stderr bash -o pipefail -c "cd '$MNT' && grep -rlx q8_0 --include=conformance.type . | sort"
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '%s\n' "./$OLLAMA/tiny:q8/metadata/conformance.type" \
        "./$SNAPSHOT/tiny-q8_0.gguf/metadata/conformance.type" \
        "./.ollama/models/blobs/sha256-$(sha256sum "$(fixture type-q8_0.gguf)" | cut -c1-64)/metadata/conformance.type" \
        "./$HF/blobs/$(sha256sum "$(fixture type-q8_0.gguf)" | cut -c1-64)/metadata/conformance.type" \
        "./llama/type-q8_0.gguf/metadata/conformance.type" | sort)" ]
    # awk over every tensor of every model: bytes per type, as the info files say.
    run bash -c "cd '$MNT' && find . -path '*/tensors/*/info' -print0 | xargs -0 awk '/^type:/ {t=\$2} /^bytes:/ {b[t]+=\$2} END {for (t in b) print t, b[t]}' | sort"
    [ "$status" -eq 0 ]
    [[ "$output" == *"q4_K "* ]]
    [[ "$output" == *"q8_0 "* ]]
    [[ "$output" == *"f16 "* ]]
    # Errors are found the same way: the paths find prints, none of its
    # complaints.
    run --separate-stderr bash -o pipefail -c "cd '$MNT' && find . -name error | sort"
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -ge 8 ]
    run bash -c "cd '$MNT' && cat llama/*/metadata/general.architecture"
    [ "$output" = "$(printf 'conformance\nconformance')" ]
}

# files_held PID: how many of the catalog's files the daemon holds open.
files_held() {
    find "/proc/$1/fd" -lname "$CATALOG/*" | wc -l
}

@test "at most max_open models are open at once, and every model still answers" {
    mount_model "$CATALOG" "$MNT" -o max_open=2
    local pid=$(daemon_pid) m n=0 held i
    local first="$MNT/llama/type-q4_K.gguf/tensors/vec/info"
    # Held open, the file keeps the kernel's reference on its inode.
    exec 5<"$first"
    local before=$(stat -c %i "$first")
    for m in "$MNT"/llama/*.gguf "$MNT"/big-endian/*.gguf "$MNT"/metadata.gguf "$MNT/$SNAPSHOT"/*.gguf \
             "$MNT/split/set.gguf" "$MNT/$OLLAMA"/tiny:*; do
        cat "$m/header" >/dev/null
        # Open models hold their files: a split set three, the others one.
        # (A model pushed out may still be closing as cat returns: waited
        # for up to 10 s, slow as a sanitizer build on a busy machine is.)
        for i in $(seq 200); do
            held=$(files_held "$pid")
            [ "$held" -le 6 ] && break
            sleep 0.05
        done
        [ "$held" -le 6 ] || { echo "after $m: $held files open"; false; }
        [ "$held" -ge 1 ]
        n=$((n + 1))
    done
    [ "$n" -ge 9 ]
    # Back to the first, closed since: the kernel forgets what it cached
    # but what is open, asks again, and the model opened again has the
    # same inodes while the kernel holds them.
    sync
    echo 2 >/proc/sys/vm/drop_caches
    [ "$(stat -c %i "$first")" = "$before" ]
    [ "$(stat -L -c %i /proc/self/fd/5)" = "$before" ]
    cmp "$MNT/llama/type-q4_K.gguf/model.gguf" "$(fixture type-q4_K.gguf)"
    [ "$(cat <&5)" = "$(cat "$first")" ]
    exec 5<&-
}

@test "readers in parallel over more models than max_open get every byte right" {
    mount_model "$CATALOG" "$MNT" -o max_open=2
    # Each reader walks the models in its own order, so models are closed
    # and opened again under the others' reads all the time.
    local pairs=(
        "llama/type-q4_K.gguf $(fixture type-q4_K.gguf)"
        "llama/type-q8_0.gguf $(fixture type-q8_0.gguf)"
        "big-endian/type-f32.gguf $(fixture be/type-f32.gguf)"
        "metadata.gguf $(fixture metadata.gguf)"
        "split/set.gguf $(fixture type-q6_K.gguf)"
        "$SNAPSHOT/tiny-split.gguf $(fixture type-q4_0.gguf)"
        "$OLLAMA/someone/custom:v1 $(fixture type-f16.gguf)"
    )
    local r
    for r in 1 2 3 4; do
        (
            for round in 1 2 3; do
                printf '%s\n' "${pairs[@]}" | shuf | while read -r m file; do
                    cmp "$MNT/$m/model.gguf" "$file" || exit 1
                    for t in "$MNT/$m"/tensors/*/; do
                        [ ! -e "$t/f32" ] || cat "$t/f32" "$t/info" >/dev/null || exit 1
                    done
                done || exit 1
            done
        ) &
    done
    local failed=0
    for r in 1 2 3 4; do wait -n || failed=1; done
    [ "$failed" -eq 0 ]
    # And a model's tensors through the catalog are ggml's: info, raw, and
    # f32 bit for bit against its to_float.
    local f
    for f in type-q4_K type-q8_0; do
        run "$PYTHON" "$HELPERS/check_tensors.py" "$MNT/llama/$f.gguf" "$(fixture "$f.gguf")" \
            "$(fixture "$f.tensors")" "$(fixture "$f.ref")"
        [ "$status" -eq 0 ] || { echo "$output"; false; }
    done
}

@test "a model or directory that cannot be read is an error or a refusal, never a hang" {
    local dir="$BATS_TEST_TMPDIR/locked"
    mkdir -p "$dir/private"
    cp "$(fixture type-f32.gguf)" "$dir/closed.gguf"
    cp "$(fixture type-f32.gguf)" "$dir/open.gguf"
    cp "$(fixture type-f32.gguf)" "$dir/private/x.gguf"
    cp "$(fixture type-f32.gguf)" "$dir/sha256-closed"
    chmod 000 "$dir/closed.gguf" "$dir/sha256-closed" "$dir/private"
    # Root reads anything: the daemon runs without that privilege here.
    mkdir -p "$MNT"
    setpriv --bounding-set=-dac_override,-dac_read_search "$GGUF_FS" -f "$dir" "$MNT" 3>&- \
        2>>"$BATS_TEST_TMPDIR/daemon.log" &
    echo "$! $MNT" >>"$BATS_TEST_TMPDIR/daemons"
    # Up to 10 s, as mount_model waits.
    local i
    for i in $(seq 200); do mountpoint -q "$MNT" && break; sleep 0.05; done
    mountpoint -q "$MNT" || { cat "$BATS_TEST_TMPDIR/daemon.log"; false; }
    run timeout 10 ls "$MNT"
    [ "$output" = "$(printf 'closed.gguf\nopen.gguf\nprivate')" ] # no magic read from sha256-closed
    [ "$(cat "$MNT/closed.gguf/error")" = "closed.gguf: cannot open: Permission denied" ]
    run --separate-stderr timeout 10 ls "$MNT/private"
    [ "$status" -ne 0 ]
    [[ "$stderr" == *"Permission denied"* ]]
    [ "$(cat "$MNT/open.gguf/metadata/general.architecture")" = conformance ]
    chmod 755 "$dir/private"
}

@test "the mount point may lie inside the folder: it is not listed" {
    local dir="$BATS_TEST_TMPDIR/inside"
    mkdir -p "$dir/mnt"
    cp "$(fixture type-f32.gguf)" "$dir/a.gguf"
    mount_model "$dir" "$dir/mnt"
    run timeout 10 ls "$dir/mnt"
    [ "$output" = a.gguf ]
    run timeout 30 find "$dir/mnt"
    [ "$status" -eq 0 ]
}

@test "the catalog is read-only: no file or directory can be made, changed or removed" {
    mount_model "$CATALOG" "$MNT"
    run -1 --separate-stderr mkdir "$MNT/new"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr touch "$MNT/llama/new.gguf"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr rm -r "$MNT/llama/type-q8_0.gguf"
    [[ "$stderr" == *"Read-only file system"* ]]
    run -1 --separate-stderr mv "$MNT/llama" "$MNT/llama2"
    [[ "$stderr" == *"Read-only file system"* ]]
    [ -d "$MNT/llama/type-q8_0.gguf" ]
}

@test "mounting a folder reads no model: a folder of bad files mounts, and a missing folder is refused" {
    local dir="$BATS_TEST_TMPDIR/bad"
    mkdir -p "$dir"
    printf 'nonsense' >"$dir/x.gguf"
    mount_model "$dir" "$MNT"
    [ "$(ls "$MNT")" = x.gguf ]
    fusermount3 -u "$MNT"
    run -1 --separate-stderr "$GGUF_FS" "$BATS_TEST_TMPDIR/absent/" "$MNT"
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "gguf-fs: $BATS_TEST_TMPDIR/absent/: cannot open: No such file or directory" ]]
}
