#!/usr/bin/env bats
# What a folder mount keeps as the kernel looks entries up and forgets
# them: an entry per inode the kernel holds (statfs's file count, `df -i`,
# says how many live), freed when the kernel forgets; entries nobody uses
# forgotten on the daemon's request past 64 per model it may keep open;
# and everything answering right afterwards: models looked up again, files
# held open across it all, a shell sitting in a model's directory.

load test_helper

setup() {
    require_fuse
    MNT="$BATS_TEST_TMPDIR/mnt"
    DIR="$BATS_TEST_TMPDIR/models"
    mkdir -p "$MNT"
}

# models N: DIR holds N models m0000.gguf ... (hard links of one small
# fixture, so that N costs no disk) and three more, each a file of its own.
models() {
    local i
    mkdir -p "$DIR"
    cp "$(fixture type-f32.gguf)" "$DIR/m0000.gguf"
    for ((i = 1; i < $1; i++)); do
        ln "$DIR/m0000.gguf" "$(printf '%s/m%04d.gguf' "$DIR" "$i")"
    done
    cp "$(fixture type-q8_0.gguf)" "$DIR/q8.gguf"
    cp "$(fixture type-q4_K.gguf)" "$DIR/q4.gguf"
    cp "$(fixture type-f16.gguf)" "$DIR/f16.gguf"
}

# live: the entries the daemon keeps now (the folder's own included).
live() {
    stat -f -c %c "$MNT"
}

# at_most N: waits up to 10 s (the daemon forgets on threads of its own,
# slow in a sanitizer build on a busy machine) for live to fall to N or
# below.
at_most() {
    local i
    for i in $(seq 200); do
        [ "$(live)" -le "$1" ] && return 0
        sleep 0.05
    done
    echo "$(live) entries live, expected at most $1" >&2
    return 1
}

# single MODEL: mounts MODEL alone (once) and prints where.
single() {
    local where="$BATS_TEST_TMPDIR/single-${1##*/}"
    mountpoint -q "$where" || mount_model "$1" "$where" >&2
    echo "$where"
}

# same_model M FIXTURE: the catalog's M answers as a single mount of FIXTURE
# (but for the file's name in its verify, where the two differ).
same_model() {
    local s
    s=$(single "$(fixture "$2")")
    cmp "$MNT/$1/model.gguf" "$(fixture "$2")"
    diff -r -x verify "$MNT/$1" "$s"
    diff <(cut -f 2- "$MNT/$1/verify") <(cut -f 2- "$s/verify")
}

# bats test_tags=drop_caches
@test "what the kernel forgets, the daemon frees: after drop_caches only the open models remain" {
    models 100
    mount_model "$DIR" "$MNT" -o max_open=2
    local n
    n=$(cat "$MNT"/*/header | grep -c '^version: 3'; live)
    # Every model looked up is held by the kernel, and kept.
    [ "$(echo "$n" | head -1)" -eq 103 ]
    [ "$(echo "$n" | tail -1)" -ge 104 ]
    sync
    echo 2 >/proc/sys/vm/drop_caches
    # The folder and the two models open.
    at_most 3
    same_model q8.gguf type-q8_0.gguf
    same_model m0042.gguf type-f32.gguf
    [ "$(cat "$MNT"/*/header | grep -c '^version: 3')" -eq 103 ]
}

# bats test_tags=drop_caches
@test "past 64 entries per model kept open that nothing uses, the least recently used are forgotten" {
    models 200
    mount_model "$DIR" "$MNT" -o max_open=1
    [ "$(cat "$MNT"/*/metadata/general.architecture | grep -c -x conformance)" -eq 203 ]
    # 64 idle entries at most (the kernel is asked in bursts, down to 48),
    # the open model, the folder.
    at_most 66
    # A second walk finds every model again.
    [ "$(cat "$MNT"/*/metadata/general.architecture | grep -c -x conformance)" -eq 203 ]
    at_most 66
    # Numbers freed are handed out again, but never two at once: 60 models
    # held together (a file open in each) have 60 different ones, even with
    # the kernel dropping meanwhile all it can, whose numbers the last 30
    # are then given. (What nothing holds, the kernel may forget at any
    # time: a stat of each would not hold them.)
    run "$PYTHON" - "$MNT" <<'EOF'
import glob, os, sys
paths = sorted(glob.glob(sys.argv[1] + "/m01[0-5]?.gguf/header"))
fds = [os.open(p, os.O_RDONLY) for p in paths[:30]]
os.sync()
with open("/proc/sys/vm/drop_caches", "w") as f:
    f.write("2")
fds += [os.open(p, os.O_RDONLY) for p in paths[30:]]
inos = [os.fstat(fd).st_ino for fd in fds]
print(len(inos), "held,", len(set(inos)), "numbers")
EOF
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "60 held, 60 numbers" ]
}

@test "a model looked up again after its entry was freed gives its own content" {
    models 200
    mount_model "$DIR" "$MNT" -o max_open=1
    same_model q8.gguf type-q8_0.gguf
    same_model q4.gguf type-q4_K.gguf
    # Every other model goes through: q8 and q4 are closed and forgotten,
    # their numbers handed to others.
    cat "$MNT"/m*/header >/dev/null
    at_most 66
    same_model q4.gguf type-q4_K.gguf
    same_model q8.gguf type-q8_0.gguf
    same_model f16.gguf type-f16.gguf
    # numpy reads a tensor of each as ggml wrote it.
    local f
    for f in q8:type-q8_0 q4:type-q4_K; do
        run "$PYTHON" "$HELPERS/check_tensors.py" "$MNT/${f%%:*}.gguf" "$(fixture "${f#*:}.gguf")" \
            "$(fixture "${f#*:}.tensors")" "$(fixture "${f#*:}.ref")"
        [ "$status" -eq 0 ] || { echo "$output"; false; }
    done
}

@test "a file held open while its model is closed and its entry forgotten reads right, with the same inode" {
    models 200
    mount_model "$DIR" "$MNT" -o max_open=1
    local s tsv="$MNT/q8.gguf/tensors.tsv" raw
    s=$(single "$(fixture type-q8_0.gguf)")
    raw=$(ls -d "$MNT"/q4.gguf/tensors/*/ | head -1)raw
    exec 5<"$tsv" 6<"$raw"
    local ino5 ino6
    ino5=$(stat -c %i "$tsv")
    ino6=$(stat -c %i "$raw")
    [ "$(stat -L -c %i /proc/self/fd/5)" = "$ino5" ]
    cat "$MNT"/m*/header >/dev/null
    at_most 68 # the two held stay
    # The same inodes, by the descriptors and by the paths, and the bytes.
    [ "$(stat -L -c %i /proc/self/fd/5)" = "$ino5" ]
    [ "$(stat -L -c %i /proc/self/fd/6)" = "$ino6" ]
    [ "$(stat -c %i "$tsv")" = "$ino5" ]
    [ "$(stat -c %i "$raw")" = "$ino6" ]
    cmp <(cat <&5) "$s/tensors.tsv"
    local name=${raw%/raw}
    cmp <(cat <&6) "$(single "$(fixture type-q4_K.gguf)")/tensors/${name##*/}/raw"
    exec 5<&- 6<&-
}

@test "a shell in a model's directory keeps working while the entry is forgotten: paths, inodes, getcwd" {
    models 200
    mount_model "$DIR" "$MNT" -o max_open=1
    # In a subshell, so that the test's own directory never is the mount.
    # Only what the script prints is compared: a warning on stderr (from
    # Python, say) would shift the lines.
    run --separate-stderr bash -c '
        cd "$1/q4.gguf" || exit 1
        before=$(stat -c %i .)
        cat "$1"/m*/header >/dev/null
        # The forgetting is done once the daemon keeps few entries: this
        # one went in the first burst (the oldest), was kept and put back,
        # and is left alone for ten seconds. Its putting back may still be
        # under way.
        for i in $(seq 200); do
            [ "$(stat -f -c %c "$1")" -le 66 ] && break
            sleep 0.05
        done
        for i in $(seq 100); do
            [ "$(readlink /proc/self/cwd)" = "$1/q4.gguf" ] && break
            sleep 0.1
        done
        echo "cwd $(readlink /proc/self/cwd)"
        echo "inode $((before - $(stat -c %i .)))"
        cat metadata/general.architecture
        echo "tensors $(ls tensors | wc -l)"
        echo "getcwd $("$2" -c "import os; print(os.getcwd())")"
        cd .. && echo "models $(ls | wc -l)"
    ' - "$MNT" "$PYTHON"
    echo "$stderr" >&2
    # The kernel was asked to forget the entry; being in use, it stayed,
    # and was looked up again so that its path is its own (not
    # "(deleted)", where getcwd fails).
    [ "${lines[0]}" = "cwd $MNT/q4.gguf" ]
    [ "${lines[1]}" = "inode 0" ]
    [ "${lines[2]}" = conformance ]
    [ "${lines[3]}" = "tensors $(ls "$MNT/q4.gguf/tensors" | wc -l)" ]
    [ "${lines[4]}" = "getcwd $MNT/q4.gguf" ]
    [ "${lines[5]}" = "models 203" ]
    same_model q4.gguf type-q4_K.gguf
}

@test "ls -l of a folder larger than the entries kept shows every entry's attributes" {
    models 200
    touch -d '2001-02-03 04:05:06' "$DIR/q8.gguf"
    mount_model "$DIR" "$MNT" -o max_open=1
    # Past the room for idle entries a listing hands out names and
    # attributes without inodes; ls -l then looks those entries up.
    diff <(cd "$DIR" && stat -c '%n %Y %U %G' *) <(cd "$MNT" && stat -c '%n %Y %U %G' *)
    [ "$(ls -l "$MNT" | grep -c '^dr-xr-xr-x')" -eq 203 ]
    [ "$(ls -l --time-style=+%Y "$MNT" | awk '$NF == "q8.gguf" {print $6}')" = 2001 ]
    at_most 66
}

# bats test_tags=races
@test "readers in parallel over a folder whose entries come and go get every byte right" {
    models 200
    mount_model "$DIR" "$MNT" -o max_open=1
    # Four readers at once, each listing the folder and reading every
    # model.gguf in an order of its own, twice, against its file: one
    # process a reader, not one cmp a model.
    local r failed=0
    for r in 1 2 3 4; do
        "$PYTHON" - "$MNT" "$(fixture type-q8_0.gguf)" "$(fixture type-q4_K.gguf)" "$(fixture type-f16.gguf)" \
            "$(fixture type-f32.gguf)" <<'PY' &
import os, random, sys
mnt, q8, q4, f16, f32 = sys.argv[1:]
files = {"q8.gguf": q8, "q4.gguf": q4, "f16.gguf": f16}
want = {path: open(path, "rb").read() for path in (q8, q4, f16, f32)}
for _ in range(2):
    names = os.listdir(mnt)
    random.shuffle(names)
    for m in names:
        with open(os.path.join(mnt, m, "model.gguf"), "rb") as f:
            got = f.read()
        if got != want[files.get(m, f32)]:
            sys.exit("%s/model.gguf differs from %s" % (m, files.get(m, f32)))
PY
    done
    for r in 1 2 3 4; do wait -n || failed=1; done
    [ "$failed" -eq 0 ]
    at_most 66
}

# bats test_tags=races
@test "SIGTERM, SIGINT and SIGHUP while walks keep the kernel forgetting end the daemon and the walkers" {
    models 200
    local round sig pid walker status i
    for round in 1 2 3 4; do
        for sig in TERM INT HUP; do
            mount_model "$DIR" "$MNT" -o max_open=1
            pid=$(awk 'END {print $1}' "$BATS_TEST_TMPDIR/daemons")
            # Each walk has the daemon ask the kernel to forget, in bursts;
            # four at once keep listings and lookups in flight as the loop
            # ends. (They read model.gguf: a text file still open as the
            # daemon ends keeps its rendered text, which LeakSanitizer would
            # report.)
            (
                for i in 1 2 3 4; do
                    (for j in 1 2 3 4 5 6; do cat "$MNT"/m*/model.gguf >/dev/null 2>&1; done) &
                done
                wait
            ) &
            walker=$!
            sleep "0.$((RANDOM % 5 + 1))"
            kill -"$sig" "$pid"
            wait_gone "$pid" || { echo "round $round: SIG$sig did not end the daemon"; false; }
            status=0
            wait "$pid" || status=$?
            [ "$status" -eq 0 ] || { echo "round $round: SIG$sig: status $status"; false; }
            run ! mountpoint -q "$MNT"
            wait_gone "$walker" || { echo "round $round: SIG$sig: the walker hangs"; false; }
        done
    done
}
