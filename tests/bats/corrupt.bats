#!/usr/bin/env bats
# The hostile corpus (tests/hostile/make_hostile.py) through the real
# daemon: every file either refused before mounting, with one line naming
# the file and the offset, or mounted with every file readable. Each case
# runs under a time limit: a hang fails it.

load test_helper

setup_file() {
    export CORPUS="$BATS_FILE_TMPDIR/corpus"
    python3 "$BATS_TEST_DIRNAME/../hostile/make_hostile.py" "$CORPUS"
}

setup() {
    require_fuse
    MNT="$BATS_TEST_TMPDIR/mnt"
    mkdir -p "$MNT"
}

# check_refusals EVERY: the daemon refuses each file of the corpus it
# should: exit 1, one line on stderr naming the file, the offset (or at
# most the offset the manifest gives) and the problem, nothing mounted. Of
# the truncations, one in EVERY is tried, leak-checked (LeakSanitizer's
# check at exit takes about 70 ms a process in the ASan build); every
# other file always, with its leaks checked.
check_refusals() {
    local every=$1 file verdict offset phrase n=0 truncations=0 status at err="$BATS_TEST_TMPDIR/stderr"
    local -a said mounts
    while IFS=$'\t' read -r file verdict offset phrase; do
        [ "$verdict" = refuse ] || continue
        if [[ $file == truncate-* ]]; then
            ((truncations++ % every == 0)) || continue
        fi
        # (the daemon alone in each turn, no `run` nor other processes:
        # over the corpus, their starts were most of this test's time)
        status=0
        ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=1" timeout 10 "$GGUF_FS" "$CORPUS/$file" "$MNT" \
            2>"$err" || status=$?
        mapfile -t said <"$err"
        [ "$status" -eq 1 ] || { echo "$file: exit $status: ${said[*]}"; false; }
        [ "${#said[@]}" -eq 1 ] || { echo "$file: ${said[*]}"; false; }
        [[ "${said[0]}" =~ ^gguf-fs:\ "$CORPUS/$file":\ offset\ 0x([0-9a-f]+):\ .+ ]] || { echo "$file: ${said[0]}"; false; }
        at=$((16#${BASH_REMATCH[1]}))
        case $offset in
            max:*) [ "$at" -le "${offset#max:}" ] || { echo "$file: ${said[0]}"; false; } ;;
            *) [ "$at" -eq "$offset" ] || { echo "$file: offset $at, expected $offset: ${said[0]}"; false; } ;;
        esac
        [ "$phrase" = - ] || [[ "${said[0]}" == *"$phrase"* ]] || { echo "$file: ${said[0]}"; false; }
        # nothing mounted: no line of the mount table names MNT
        mapfile -t mounts </proc/self/mounts
        [[ "${mounts[*]}" != *" $MNT "* ]] || { echo "$file: left mounted"; false; }
        n=$((n + 1))
    done <"$CORPUS/manifest.tsv"
    echo "$n files refused" >&2
    [ "$n" -gt $((30 + 190 / every)) ]
}

# Every file, file after file on one path of the daemon: run on the
# optimized build (tests/meson.build); the parser's code on each of them
# runs under ASan+UBSan in the unit tests hostile and prefix, the whole
# corpus in one process each, and the daemon's refusal in the next test.
# bats test_tags=every_fixture
@test "every refused file: exit 1, one line with the file, the offset and the problem, nothing mounted" {
    check_refusals 1
}

@test "refused files under the sanitizers: each rule's file and one truncation in 16, leaks checked" {
    check_refusals 16
}

@test "every accepted file mounts and every file in it reads in full" {
    local file verdict offset phrase n=0
    while IFS=$'\t' read -r file verdict offset phrase; do
        [ "$verdict" = accept ] || continue
        mount_model "$CORPUS/$file" "$MNT"
        run timeout 10 find "$MNT" -type f -exec cat {} +
        [ "$status" -eq 0 ] || { echo "$file: $output"; false; }
        # Each file's size in stat is the bytes it reads (one process for
        # them all; wc -c would take the size from stat).
        run "$PYTHON" -c 'import os, sys
for d, _, names in os.walk(os.fsencode(sys.argv[1])):
    for n in names:
        p = os.path.join(d, n)
        with open(p, "rb") as f:
            got = len(f.read())
        if os.stat(p).st_size != got:
            print(p, os.stat(p).st_size, got)' "$MNT"
        [ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$file: sizes: $output"; false; }
        unmount_all
        n=$((n + 1))
    done <"$CORPUS/manifest.tsv"
    [ "$n" -ge 8 ]
}

@test "hostile names map to safe, reversible file names inside the tree" {
    mount_model "$CORPUS/odd-keys-and-trailing-bytes.gguf" "$MNT"
    run ls -A "$MNT/metadata"
    [ "${#lines[@]}" -eq 3 ]
    [ -f "$MNT/metadata/a%2Fb" ]
    [ -f "$MNT/metadata/%2E%2E" ]
    [ "$(xattr user.gguf.name "$MNT/metadata/a%2Fb")" = "a/b" ]
    [ "$(xattr user.gguf.name "$MNT/metadata/%2E%2E")" = ".." ]
    [ "$(xattr user.gguf.name "$MNT/metadata/Not.Snake-Case")" = "Not.Snake-Case" ]
    # The value holds a NUL and invalid UTF-8: cat gives the exact bytes.
    printf '\xff\xfe invalid utf-8 \x00 nul\n' | cmp - "$MNT/metadata/Not.Snake-Case"
    # Nothing escaped the tree: ".." resolves to the parent as always.
    [ "$(stat -c %i "$MNT/metadata/..")" = "$(stat -c %i "$MNT")" ]
}

@test "arrays nested eight deep render as JSON lines" {
    mount_model "$CORPUS/nesting-depth-8.gguf" "$MNT"
    run cat "$MNT/metadata/nested"
    [ "$output" = "[[[[[[[7]]]]]]]" ]
}

@test "hostile tensor names: distinct, safe file names whose xattr gives the full name back" {
    mount_model "$CORPUS/hostile-tensor-names.gguf" "$MNT"
    run ls -A "$MNT/tensors"
    [ "${#lines[@]}" -eq 10 ]
    local d n=0
    for d in "$MNT"/tensors/*; do
        [ "${#d}" -le $((${#MNT} + 9 + 255)) ]
        [ -f "$d/info" ]
        [ -f "$d/f32" ]
        [ "$(stat -c %s "$d/f32")" -eq 32 ]
        xattr user.gguf.name "$d" >/dev/null
        n=$((n + 1))
    done
    [ "$n" -eq 10 ]
    [ "$(xattr user.gguf.name "$MNT/tensors/a%2Fb")" = "a/b" ]
    [ "$(xattr user.gguf.name "$MNT/tensors/%2E")" = "." ]
    [ "$(xattr user.gguf.name "$MNT/tensors/%252F")" = "%2F" ]
    # Two 301-byte names equal in their first 300 bytes stay two directories.
    run bash -c "ls '$MNT/tensors' | grep -c '^x*~[0-9a-f]\{8\}$'"
    [ "$output" -eq 2 ]
    run bash -c "for d in '$MNT'/tensors/x*; do getfattr --absolute-names --only-values -n user.gguf.name \"\$d\"; echo; done | sort"
    [ "${lines[0]}" = "$(printf 'x%.0s' $(seq 300))1" ]
    [ "${lines[1]}" = "$(printf 'x%.0s' $(seq 300))2" ]
}
