#!/usr/bin/env bats
# Folders of models: gguf-fs DIR MNT over a folder laid out as people keep
# models (scripts/fixtures/make-catalog: plain files, a split set, bad
# files, links in and out and in loops, FIFOs, Hugging Face hub caches
# healthy and hostile, an Ollama store).
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
C1=4d1e6f0c2b3a59788a6e0f1d2c3b4a5968778695 # refs/v1, refs/refs/pr/1
C2=9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d # refs/main
C3=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c # other-org/second-GGUF's main
SNAPSHOT=$HF/snapshots/$C1
VIEW=hub/hf/gguf-fs/tiny-GGUF
OLLAMA=.ollama/models/ollama

# same_tree A B: every file under A and B has the same name, size, mode,
# bytes and extended attributes; but `verify`, which names the file and
# what is published where it lies, and whose size is known once read: it
# gives the same digests.
same_tree() {
    local a=$1 b=$2
    diff <(cd "$a" && find . ! -name verify -printf '%p %y %s %m\n' | sort) \
        <(cd "$b" && find . ! -name verify -printf '%p %y %s %m\n' | sort)
    diff -r -x verify "$a" "$b"
    diff <(cd "$a" && getfattr -R -d -m - . 2>/dev/null) <(cd "$b" && getfattr -R -d -m - . 2>/dev/null)
    diff <(cut -s -f 3 "$a/verify") <(cut -s -f 3 "$b/verify")
    [ "$(cut -s -f 3 "$a/verify" | wc -l)" -ge 1 ]
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
    [ "$output" = "$(printf 'bad\nbig-endian\nbroken-hub\nbroken-split\nhub\nlinks\nllama\nmetadata.gguf\nsplit')" ]
    run ls -A "$MNT"
    [ "${lines[0]}" = ".ollama" ]
    run ls "$MNT/llama"
    [ "$output" = "$(printf 'type-q4_K.gguf\ntype-q8_0.gguf')" ]
    [ -d "$MNT/llama/type-q4_K.gguf" ]
    run ls "$MNT/llama/type-q4_K.gguf"
    [ "$output" = "$(printf 'hashes\nheader\nmetadata\nmetadata.json\nmodel.gguf\ntensors\ntensors.tsv\nverify\nwarnings')" ]
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
    # big-endian one, the split set, links/q4.gguf; in hub/, 7 in the
    # snapshots (2 + 3 of tiny-GGUF, second-GGUF's, models--noorg's) and
    # 14 in hf/ (commits 2 + 3, main 3, v1 2, refs/pr/1 2, and
    # second-GGUF's commit and main); in broken-hub/, ok.gguf in its
    # snapshot, 2 through the snapshot that links to llama/, and 3 in hf/
    # (its commit, main, odd<TAB>name); 4 Ollama blobs and 4 Ollama names.
    run --separate-stderr timeout 60 find "$MNT" -name header
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 41 ]
}

@test "a Hugging Face cache: snapshot names, each the blob it links to; a linked split set is one model" {
    mount_model "$CATALOG" "$MNT"
    run ls "$MNT/$HF"
    [ "$output" = "$(printf 'refs\nsnapshots')" ] # mirrored, but for blobs/
    [ "$(ls -A "$MNT/$HF/refs")" = refs ] # refs/refs/pr/1: a directory, no model
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

@test "a hub cache gains hf/ORG/NAME/ with every ref and commit, each model exactly its single mount" {
    mount_model "$CATALOG" "$MNT"
    run ls "$MNT/hub"
    [ "$output" = "$(printf 'hf\nmodels--gguf-fs--tiny-GGUF\nmodels--noorg\nmodels--other-org--second-GGUF')" ]
    [ "$(ls "$MNT/hub/hf")" = "$(printf 'gguf-fs\nother-org')" ] # models--noorg has no ORG
    [ "$(ls "$MNT/hub/hf/gguf-fs")" = tiny-GGUF ]
    run ls "$MNT/$VIEW"
    [ "$output" = "$(printf '%s\n' "$C1" "$C2" main refs v1)" ]
    [ "$(ls "$MNT/$VIEW/refs")" = pr ] # the ref refs/pr/1, kept as refs/refs/pr/1
    [ "$(ls "$MNT/$VIEW/refs/pr")" = 1 ]
    [ "$(ls "$MNT/$VIEW/main")" = "$(printf 'Q4_K\ntiny-q8_0.gguf\ntiny-split.gguf')" ]
    [ "$(ls "$MNT/$VIEW/v1")" = "$(printf 'tiny-q8_0.gguf\ntiny-split.gguf')" ]
    # Directories, not links; each model as its own mount of the snapshot's file.
    [ -d "$MNT/$VIEW/main" ] && [ ! -L "$MNT/$VIEW/main" ]
    local view file s n=0
    while read -r view file; do
        s=$(single "$CATALOG/$file" "hf$n")
        same_tree "$MNT/$view" "$s"
        n=$((n + 1))
    done <<PAIRS
$VIEW/main/tiny-q8_0.gguf $HF/snapshots/$C2/tiny-q8_0.gguf
$VIEW/$C2/tiny-split.gguf $HF/snapshots/$C2/tiny-split-00002-of-00003.gguf
$VIEW/main/Q4_K/tiny-q4_K.gguf $HF/snapshots/$C2/Q4_K/tiny-q4_K.gguf
$VIEW/v1/tiny-q8_0.gguf $HF/snapshots/$C1/tiny-q8_0.gguf
$VIEW/refs/pr/1/tiny-split.gguf $HF/snapshots/$C1/tiny-split-00001-of-00003.gguf
hub/hf/other-org/second-GGUF/main/second-f16.gguf hub/models--other-org--second-GGUF/snapshots/$C3/second-f16.gguf
PAIRS
    [ "$n" -eq 6 ]
    # The model that changed between the commits, and what stayed.
    cmp "$MNT/$VIEW/main/tiny-q8_0.gguf/model.gguf" "$(fixture type-q6_K.gguf)"
    cmp "$MNT/$VIEW/v1/tiny-q8_0.gguf/model.gguf" "$(fixture type-q8_0.gguf)"
    cmp "$MNT/$VIEW/main/tiny-split.gguf/model.gguf" "$(fixture type-q4_0.gguf)"
    cmp "$MNT/$VIEW/$C1/tiny-split.gguf/model.gguf" "$(fixture type-q4_0.gguf)"
    [ "$(ls "$MNT/$VIEW/main/tiny-split.gguf/shards")" = "$(printf 'tiny-split-0000%s-of-00003.gguf\n' 1 2 3)" ]
    cmp "$MNT/hub/hf/other-org/second-GGUF/$C3/second-f16.gguf/model.gguf" "$(fixture type-f16.gguf)"
    # The snapshots stay mirrored beside the view.
    [ "$(ls "$MNT/$HF/snapshots")" = "$(printf '%s\n' "$C1" "$C2")" ]
    same_tree "$MNT/$HF/snapshots/$C2/Q4_K/tiny-q4_K.gguf" "$MNT/$VIEW/main/Q4_K/tiny-q4_K.gguf"
}

@test "a healthy hub cache has no error anywhere: blobs/ are left out, split sets found by the snapshots' names" {
    mount_model "$CATALOG" "$MNT"
    # Every repository's blobs, and the store of blobs shared by them.
    [ -d "$CATALOG/$HF/blobs" ] && [ -d "$CATALOG/hub/blobs" ]
    run -1 --separate-stderr stat "$MNT/$HF/blobs"
    [[ "$stderr" == *"No such file or directory"* ]]
    run -1 --separate-stderr stat "$MNT/hub/blobs"
    [[ "$stderr" == *"No such file or directory"* ]]
    [ "$(ls "$MNT/hub/models--other-org--second-GGUF")" = "$(printf 'refs\nsnapshots')" ]
    # find prints nothing and complains of nothing.
    run --separate-stderr timeout 60 find "$MNT/hub" -name error
    [ "$status" -eq 0 ]
    [ "$output" = "" ]
    [ "$stderr" = "" ]
    run --separate-stderr timeout 60 find "$MNT/hub" -name header
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 21 ]
    # A hash name appears nowhere: every model is under a snapshot's name.
    run bash -c "find '$MNT/hub' -maxdepth 6 -type d | grep -E '/[0-9a-f]{64}(/|\$)'"
    [ "$status" -eq 1 ]
}

@test "hostile refs and links in a hub cache are errors naming the ref and offset, never paths followed" {
    mount_model "$CATALOG" "$MNT"
    local view=broken-hub/hf/gguf-fs/broken-GGUF repo=broken-hub/models--gguf-fs--broken-GGUF
    local gone=1111111111111111111111111111111111111111 out=e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0
    run timeout 10 ls "$MNT/$view"
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '%s\n' "$C1" garbage gone huge main new line 'odd	name' outside short traversal)" ]
    [ "$(cat "$MNT/$view/garbage/error")" = "$repo/refs/garbage: offset 0x0: byte 0x6e ('n') is not a lower-case hex digit of a commit hash" ]
    [ "$(cat "$MNT/$view/traversal/error")" = "$repo/refs/traversal: offset 0x0: byte 0x2e ('.') is not a lower-case hex digit of a commit hash" ]
    [ "$(cat "$MNT/$view/short/error")" = "$repo/refs/short: offset 0xc: ends after 12 of the 40 hex digits of a commit hash" ]
    [ "$(cat "$MNT/$view/huge/error")" = "$repo/refs/huge: offset 0x40: 1048616 bytes, more than the 64 a ref may have" ]
    [ "$(cat "$MNT/$view/gone/error")" = "$repo/refs/gone: offset 0x0: commit $gone: $repo/snapshots/$gone: No such file or directory" ]
    [ "$(cat "$MNT/$view/outside/error")" = "$repo/refs/outside: offset 0x0: commit $out: $repo/snapshots/$out: leads out of the repository's snapshots" ]
    # One line, whatever the ref's name holds.
    [ "$(cat "$MNT/$view/new"$'\n'"line/error")" = "$repo/refs/new?line: offset 0x0: byte 0x7a ('z') is not a lower-case hex digit of a commit hash" ]
    local e
    for e in garbage traversal short huge gone outside "new"$'\n'"line"; do
        [ "$(ls -A "$MNT/$view/$e")" = error ]
        [ "$(wc -l <"$MNT/$view/$e/error")" -eq 1 ]
    done
    # A good ref, and one whose name holds a tab: the snapshot, whose
    # missing blob, link out of the folder and link loop are left out, and
    # whose split set missing a shard's blob is an error.
    [ "$(ls "$MNT/$view/main")" = "$(printf 'half.gguf\nok.gguf')" ]
    [ "$(ls "$MNT/$view/odd	name")" = "$(printf 'half.gguf\nok.gguf')" ]
    cmp "$MNT/$view/main/ok.gguf/model.gguf" "$(fixture type-q8_0.gguf)"
    [[ "$(cat "$MNT/$view/main/half.gguf/error")" == "$repo/snapshots/$C1/half-00001-of-00003.gguf: offset 0x"*": split.count is 3, but shard 2, half-00002-of-00003.gguf, cannot be read: cannot open: No such file or directory" ]]
    # The snapshot that leads out of snapshots/ is no commit of the view,
    # and FIFOs and links in refs/ that loop or dangle are no refs.
    local name
    for name in "$out" fifo loop dangling; do
        run -1 --separate-stderr timeout 10 stat "$MNT/$view/$name"
        [[ "$stderr" == *"No such file or directory"* ]]
    done
    # Everything broken is found as everything else is: the 7 refs, and
    # half.gguf under the commit, main and odd<TAB>name.
    run --separate-stderr bash -o pipefail -c "find '$MNT/broken-hub/hf' -name error -printf x | wc -c"
    [ "$status" -eq 0 ]
    [ "$output" -eq 10 ]
}

@test "a real entry called hf beside the repositories wins over the view" {
    local dir="$BATS_TEST_TMPDIR/hub"
    mkdir -p "$dir/models--o--n/snapshots/$C1" "$dir/hf"
    # A copy, as the cache holds files where links cannot be made.
    cp "$(fixture type-f32.gguf)" "$dir/models--o--n/snapshots/$C1/a.gguf"
    cp "$(fixture type-q8_0.gguf)" "$dir/hf/mine.gguf"
    mount_model "$dir" "$MNT"
    [ "$(ls "$MNT")" = "$(printf 'hf\nmodels--o--n')" ]
    [ "$(ls "$MNT/hf")" = mine.gguf ]
    cmp "$MNT/hf/mine.gguf/model.gguf" "$(fixture type-q8_0.gguf)"
    # Gone, the view takes its place (at the next listing).
    rm -r "$dir/hf"
    [ "$(ls "$MNT")" = "$(printf 'hf\nmodels--o--n')" ]
    [ "$(ls "$MNT/hf/o/n")" = "$C1" ]
    cmp "$MNT/hf/o/n/$C1/a.gguf/model.gguf" "$(fixture type-f32.gguf)"
}

@test "refs, snapshots and repositories added, changed and removed show in hf/ under the live mount" {
    local dir="$BATS_TEST_TMPDIR/hub" repo="$BATS_TEST_TMPDIR/hub/models--o--n"
    mkdir -p "$repo/snapshots/$C1" "$repo/refs"
    cp "$(fixture type-f32.gguf)" "$repo/snapshots/$C1/a.gguf"
    printf '%s' "$C1" >"$repo/refs/main"
    # Listings never trusted, entries never kept: each change shows in the
    # next lookup, without waiting out the lifetime.
    mount_model "$dir" "$MNT" -o listing_ttl_s=0
    [ "$(ls "$MNT/hf/o/n")" = "$(printf '%s\n' "$C1" main)" ]
    [ "$(ls "$MNT/hf/o/n/main")" = a.gguf ]
    cmp "$MNT/hf/o/n/main/a.gguf/model.gguf" "$(fixture type-f32.gguf)"
    # A new commit, and main moved to it: the next listing and lookup
    # show the new snapshot.
    mkdir -p "$repo/snapshots/$C2"
    cp "$(fixture type-q8_0.gguf)" "$repo/snapshots/$C2/b.gguf"
    printf '%s' "$C2" >"$repo/refs/main"
    [ "$(ls "$MNT/hf/o/n")" = "$(printf '%s\n' "$C1" "$C2" main)" ]
    [ "$(ls "$MNT/hf/o/n/main")" = b.gguf ]
    cmp "$MNT/hf/o/n/main/b.gguf/model.gguf" "$(fixture type-q8_0.gguf)"
    [ ! -e "$MNT/hf/o/n/main/a.gguf" ]
    # A ref added; then its commit removed: the ref is an error.
    printf '%s\n' "$C1" >"$repo/refs/old"
    [ "$(ls "$MNT/hf/o/n")" = "$(printf '%s\n' "$C1" "$C2" main old)" ]
    [ "$(ls "$MNT/hf/o/n/old")" = a.gguf ]
    rm -r "$repo/snapshots/$C1"
    [ "$(ls "$MNT/hf/o/n")" = "$(printf '%s\n' "$C2" main old)" ]
    [ "$(cat "$MNT/hf/o/n/old/error")" = "models--o--n/refs/old: offset 0x0: commit $C1: models--o--n/snapshots/$C1: No such file or directory" ]
    # Another repository, then none: hf/ goes with the last.
    mkdir -p "$dir/models--o--m/snapshots/$C3"
    [ "$(ls "$MNT/hf/o")" = "$(printf 'm\nn')" ]
    rm -r "$repo" "$dir/models--o--m"
    [ "$(ls "$MNT")" = "" ]
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
    # The model's tree, with the Ollama layers (ollama.bats checks those) beside it.
    local a="$MNT/$OLLAMA/tiny:latest" b="$MNT/llama/type-q4_K.gguf"
    diff <(cd "$a" && find . -path ./layers -prune -o ! -name Modelfile ! -name verify -printf '%p %y %s %m\n' | sort) \
        <(cd "$b" && find . ! -name verify -printf '%p %y %s %m\n' | sort)
    diff -r -x Modelfile -x layers -x verify "$a" "$b"
    diff <(cd "$a" && getfattr -R -d -m - . 2>/dev/null) <(cd "$b" && getfattr -R -d -m - . 2>/dev/null)
    [ "$(ls "$a/layers" | tr '\n' ' ')" = "params template " ]
    grep -qx "FROM $(realpath "$CATALOG")/.ollama/models/blobs/sha256-[0-9a-f]*" "$a/Modelfile"
    # A directory, not a symlink.
    [ -d "$MNT/$OLLAMA/tiny:latest" ] && [ ! -L "$MNT/$OLLAMA/tiny:latest" ]
}

@test "hostile Ollama manifests are errors naming the manifest, never paths followed" {
    mount_model "$CATALOG" "$MNT"
    local lib=.ollama/models/manifests/registry.ollama.ai/library
    [ "$(cat "$MNT/$OLLAMA/broken:latest/error")" = "$lib/broken/latest: offset 0x20: not JSON: ends inside a value" ]
    [ "$(cat "$MNT/$OLLAMA/sneaky:latest/error")" = "$lib/sneaky/latest: layers[0]: digest \"sha256:../../../../../../etc/passwd\" is not sha256:<64 lower-case hex digits>" ]
    [ "$(cat "$MNT/$OLLAMA/lost:latest/error")" = "$lib/lost/latest: model layer .ollama/models/blobs/sha256-$(printf '0%.0s' {1..64}): No such file or directory" ]
    run ls -A "$MNT/$OLLAMA/sneaky:latest"
    [ "$output" = error ]
}

@test "files added to and removed from the folder appear and disappear under the live mount" {
    local dir="$BATS_TEST_TMPDIR/live"
    mkdir -p "$dir/sub"
    cp "$(fixture type-f32.gguf)" "$dir/a.gguf"
    # Listings never trusted, entries never kept (the option's own test
    # is below): each change shows in the next lookup.
    mount_model "$dir" "$MNT" -o listing_ttl_s=0
    [ "$(ls "$MNT")" = "$(printf 'a.gguf\nsub')" ]
    [ "$(ls "$MNT/sub")" = "" ]
    cat "$MNT/a.gguf/header" >/dev/null
    # Added: at once in a listing, and looked up directly.
    cp "$(fixture type-q8_0.gguf)" "$dir/sub/b.gguf"
    [ "$(ls "$MNT/sub")" = b.gguf ]
    cmp "$MNT/sub/b.gguf/model.gguf" "$(fixture type-q8_0.gguf)"
    cp "$(fixture type-f16.gguf)" "$dir/c.gguf"
    cmp "$MNT/c.gguf/model.gguf" "$(fixture type-f16.gguf)"
    # A split set's shards arriving one by one.
    "$PYTHON" "$GGUF_FS_SCRIPTS/tools/gguf-split-set" "$(fixture type-q6_K.gguf)" "$BATS_TEST_TMPDIR/s"
    cp "$BATS_TEST_TMPDIR"/s-0000[12]-of-00003.gguf "$dir/sub/"
    [ "$(ls "$MNT/sub")" = "$(printf 'b.gguf\ns.gguf')" ]
    [ -f "$MNT/sub/s.gguf/error" ]
    # Removed: gone from the listing and from lookups at once.
    rm "$dir/a.gguf"
    [ "$(ls "$MNT")" = "$(printf 'c.gguf\nsub')" ]
    [ ! -e "$MNT/a.gguf" ]
    # Replaced by another model: the new one, never a mix of the two.
    rm "$dir/sub/s-"*.gguf
    cp "$(fixture type-q4_K.gguf)" "$dir/c.gguf.new"
    mv "$dir/c.gguf.new" "$dir/c.gguf"
    cmp "$MNT/c.gguf/model.gguf" "$(fixture type-q4_K.gguf)"
    [ "$(sed -n 3p "$MNT/c.gguf/header")" = "$(sed -n 3p "$(single "$(fixture type-q4_K.gguf)" q4)/header")" ]
    # A directory removed and made again.
    rm -r "$dir/sub"
    mkdir "$dir/sub2"
    cp "$(fixture type-f32.gguf)" "$dir/sub2/d.gguf"
    [ "$(ls "$MNT")" = "$(printf 'c.gguf\nsub2')" ]
    [ "$(ls "$MNT/sub2/d.gguf")" = "$(printf 'hashes\nheader\nmetadata\nmetadata.json\nmodel.gguf\ntensors\ntensors.tsv\nverify\nwarnings')" ]
}

@test "-o listing_ttl_s: lookups trust a listing and the kernel an entry that long; 0 trusts none" {
    local dir="$BATS_TEST_TMPDIR/live"
    mkdir -p "$dir"
    cp "$(fixture type-f32.gguf)" "$dir/a.gguf"
    mount_model "$dir" "$MNT" -o listing_ttl_s=3600
    # This lookup reads the folder; for the next hour lookups answer from
    # what it read, and the kernel keeps what they answered.
    [ -d "$MNT/a.gguf" ]
    cp "$(fixture type-q8_0.gguf)" "$dir/b.gguf"
    rm "$dir/a.gguf"
    [ ! -e "$MNT/b.gguf" ]
    [ -d "$MNT/a.gguf" ]
    # A listing reads the folder afresh, and lookups then answer from it.
    [ "$(ls "$MNT")" = b.gguf ]
    cmp "$MNT/b.gguf/model.gguf" "$(fixture type-q8_0.gguf)"
    fusermount3 -u "$MNT"
    # 0: every lookup reads the folder, and the kernel asks at every use.
    cp "$(fixture type-f32.gguf)" "$dir/a.gguf"
    mount_model "$dir" "$MNT" -o listing_ttl_s=0
    [ -d "$MNT/a.gguf" ]
    cp "$(fixture type-f16.gguf)" "$dir/c.gguf"
    rm "$dir/a.gguf"
    cmp "$MNT/c.gguf/model.gguf" "$(fixture type-f16.gguf)"
    [ ! -e "$MNT/a.gguf" ]
    [ "$(ls "$MNT")" = "$(printf 'b.gguf\nc.gguf')" ]
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
        "./$VIEW/$C1/tiny-q8_0.gguf/metadata/conformance.type" \
        "./$VIEW/v1/tiny-q8_0.gguf/metadata/conformance.type" \
        "./$VIEW/refs/pr/1/tiny-q8_0.gguf/metadata/conformance.type" \
        "./broken-hub/models--gguf-fs--broken-GGUF/snapshots/$C1/ok.gguf/metadata/conformance.type" \
        "./broken-hub/hf/gguf-fs/broken-GGUF/$C1/ok.gguf/metadata/conformance.type" \
        "./broken-hub/hf/gguf-fs/broken-GGUF/main/ok.gguf/metadata/conformance.type" \
        "./broken-hub/hf/gguf-fs/broken-GGUF/odd	name/ok.gguf/metadata/conformance.type" \
        "./broken-hub/models--gguf-fs--broken-GGUF/snapshots/e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0/type-q8_0.gguf/metadata/conformance.type" \
        "./.ollama/models/blobs/sha256-$(sha256sum "$(fixture type-q8_0.gguf)" | cut -c1-64)/metadata/conformance.type" \
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

# bats test_tags=drop_caches
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
