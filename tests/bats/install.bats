#!/usr/bin/env bats
# gguf-fs installed and run as a user would: meson install into a staging
# root, the manual page, the modules found where they are installed (and
# named when they are not), mount -t fuse.gguf-fs and fstab lines through
# mount(8) and mount.fuse3, systemd's readiness protocol, every exit
# status, and the Debian package built, installed, used and removed.

load test_helper

SRC=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
BUILD_ROOT=$(cd "$(dirname "$GGUF_FS")/.." && pwd)
PACKAGE_LOCK=/tmp/gguf-fs-package-test.lock

setup_file() {
    : "${GGML_REF:?GGML_REF must name the ggml tool that makes the sample model}"
    [ -f "$BUILD_ROOT/build.ninja" ] || {
        echo "$GGUF_FS is not in a meson build directory" >&2
        return 1
    }
    "$SRC/scripts/fixtures/make-sample" "$GGML_REF" "$BATS_FILE_TMPDIR/sample.gguf" >/dev/null
    meson install -C "$BUILD_ROOT" --no-rebuild --destdir "$BATS_FILE_TMPDIR/stage" >/dev/null
    local prefix
    prefix=$(build_option prefix)
    VERSION=$(meson introspect --projectinfo "$BUILD_ROOT" |
        "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["version"])')
    STAGED=$BATS_FILE_TMPDIR/stage$prefix
    # Relative to the prefix unless the build was configured otherwise.
    BINDIR=$(build_option bindir)
    MODULES=$(build_option libdir)/gguf-fs
    export VERSION STAGED BINDIR MODULES
}

# build_option NAME: the value of a meson option of the build.
build_option() {
    meson introspect --buildoptions "$BUILD_ROOT" |
        "$PYTHON" -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}

setup() {
    require_fuse
    export SAMPLE=$BATS_FILE_TMPDIR/sample.gguf
    export MNT=$BATS_TEST_TMPDIR/mnt
    mkdir -p "$MNT"
}

# Bats calls teardown with errexit off: each check's status is kept by hand.
teardown() {
    local status=0
    end_strays
    remove_package || status=1
    [ -z "${PUBLIC_DIR:-}" ] || rm -rf "$PUBLIC_DIR"
    unmount_all || status=1
    check_daemon_log || status=1
    return $status
}

# ==== helpers ====

# Daemons started through mount(8) are not children of the test: they are
# found by the test's own directory in their command line, and ended by pid.
end_strays() {
    local pid
    for pid in $(pgrep -f -- "$BATS_TEST_TMPDIR/" || true); do
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = gguf-fs ] && kill "$pid" 2>/dev/null
    done
    if mountpoint -q "$MNT"; then
        umount -l "$MNT" || true
    fi
}

# daemon_of MOUNTPOINT: the pid of the gguf-fs serving it.
daemon_of() {
    local pid
    for pid in $(pgrep -f -- "$1" || true); do
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = gguf-fs ] && echo "$pid"
    done
}

# no_daemon_left MOUNTPOINT: waits up to 10 s for its daemon to end.
no_daemon_left() {
    local i
    for i in $(seq 200); do
        [ -z "$(daemon_of "$1")" ] && return 0
        sleep 0.05
    done
    echo "a daemon still serves $1" >&2
    return 1
}

# with_staged_install SCRIPT: runs the bash SCRIPT in a mount namespace of
# its own whose /usr/local/bin is the staged install's bin/. mount(8) runs
# mount.fuse3, which runs gguf-fs, with a fixed PATH: this is how it finds
# a gguf-fs not installed on this machine, the host's /usr/local/bin
# untouched. SCRIPT unmounts what it mounts, or the daemon would keep the
# namespace, and its mount, alive.
with_staged_install() {
    unshare --mount --propagation private \
        bash -c 'mount --bind "$1" /usr/local/bin && exec bash -euo pipefail "$2"' _ "$STAGED/bin" "$1" 3>&-
}

# wait_for FILE REGEX: waits up to 10 s for a line of FILE to match.
wait_for() {
    local i
    for i in $(seq 200); do
        grep -qE -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "no line matching '$2' in $1:" >&2
    cat "$1" >&2 || true
    return 1
}

# listen ADDRESS: starts the stand-in for systemd's notify socket, which
# logs to $BATS_TEST_TMPDIR/notify.log what it receives and what the mount
# answers on READY=1; returns once it listens.
listen() {
    NOTIFY_LOG=$BATS_TEST_TMPDIR/notify.log
    "$PYTHON" "$HELPERS/notify_listen.py" "$1" "$MNT" "$NOTIFY_LOG" 3>&- &
    LISTENER=$!
    wait_for "$NOTIFY_LOG" '^listening$'
}

# start_foreground [ENV=VALUE...] -- ARGS...: the daemon in the foreground,
# registered for teardown; its pid in DAEMON.
start_foreground() {
    local envs=()
    while [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    env "${envs[@]}" "$GGUF_FS" -f "$@" 3>&- 2>>"$BATS_TEST_TMPDIR/daemon.log" &
    DAEMON=$!
    echo "$DAEMON $MNT" >>"$BATS_TEST_TMPDIR/daemons"
}

package_installed() {
    dpkg-query -W -f='${Status}' gguf-fs 2>/dev/null | grep -q 'install ok installed'
}

# dpkg_waiting ARGS...: dpkg, retried while apt or dpkg of someone else
# holds the lock (dpkg itself does not wait).
dpkg_waiting() {
    local i err=$BATS_TEST_TMPDIR/dpkg.err
    for i in $(seq 450); do
        if dpkg "$@" 2>"$err"; then
            return 0
        fi
        grep -q 'lock' "$err" || break
        sleep 2
    done
    cat "$err" >&2
    return 1
}

remove_package() {
    if [ -n "${INSTALLED_PACKAGE:-}" ] && dpkg-query -W gguf-fs >/dev/null 2>&1; then
        dpkg_waiting --purge gguf-fs >/dev/null
    fi
    INSTALLED_PACKAGE=
}

# ==== install and manual ====

@test "meson install puts gguf-fs, gguf-fs(1), README.md, NOTICE and doc/*.md under the prefix" {
    [ -x "$STAGED/bin/gguf-fs" ]
    [ -f "$STAGED/share/man/man1/gguf-fs.1" ]
    local docs=$STAGED/share/doc/gguf-fs
    cmp "$docs/README.md" "$SRC/README.md"
    cmp "$docs/NOTICE" "$SRC/NOTICE"
    # Every document of doc/, and nothing else, beside them in doc/.
    local doc n=0
    for doc in "$SRC"/doc/*.md; do
        cmp "$docs/doc/${doc##*/}" "$doc"
        n=$((n + 1))
    done
    [ "$n" -ge 4 ]
    [ "$(find "$docs/doc" -type f | wc -l)" -eq "$n" ]
    # The README's links into doc/ resolve where it is installed.
    local target targets
    targets=$(grep -o '](doc/[^)#]*' "$docs/README.md" | cut -c3- | sort -u)
    [ -n "$targets" ]
    for target in $targets; do
        [ -f "$docs/$target" ] || { echo "README.md links to $target, which is not installed" >&2; return 1; }
    done
    run --separate-stderr env PATH="$STAGED/bin:$PATH" gguf-fs --version
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "gguf-fs version $VERSION" ]
    # The modules, in the package's own library folder.
    [ -f "$STAGED/$MODULES/gguf-fs-remote.so" ]
    [ -f "$STAGED/$MODULES/gguf-fs-digests.so" ]
}

@test "the installed program loads its modules from where they are installed, relative to itself" {
    [[ $BINDIR != /* && $MODULES != /* ]] || skip "bindir or libdir outside the prefix: the modules are found by absolute path"
    local pid
    GGUF_FS=$STAGED/$BINDIR/gguf-fs mount_model "$SAMPLE" "$MNT"
    pid=$(last_daemon)
    [ "$(cat "$MNT/tensors/output.weight/sha256")" = "$(sha256sum <"$MNT/tensors/output.weight/raw" | cut -d' ' -f1)" ]
    grep -qF "$STAGED/$MODULES/gguf-fs-digests.so" "/proc/$pid/maps"
    # Nothing listens on port 1: the error is libcurl's, so its module loaded.
    run -1 --separate-stderr "$STAGED/$BINDIR/gguf-fs" -o timeout_s=1 http://127.0.0.1:1/model.gguf "$MNT"
    [[ "$stderr" == "gguf-fs: http://127.0.0.1:1/model.gguf: cannot open: "* ]]
    [[ "$stderr" != *"cannot load"* ]]
}

@test "without its modules the program mounts local models, and names the module it cannot load" {
    [[ $BINDIR != /* && $MODULES != /* ]] || skip "bindir or libdir outside the prefix: the modules are found by absolute path"
    local bare=$BATS_TEST_TMPDIR/bare
    mkdir -p "$bare/$BINDIR"
    cp "$GGUF_FS" "$bare/$BINDIR/gguf-fs"
    local missing="cannot open shared object file: No such file or directory"
    # A URL: refused in one line, before anything is mounted.
    run -1 --separate-stderr "$bare/$BINDIR/gguf-fs" -o timeout_s=1 http://127.0.0.1:1/model.gguf "$MNT"
    [ "$stderr" = "gguf-fs: http://127.0.0.1:1/model.gguf: cannot load the module $bare/$MODULES/gguf-fs-remote.so: $missing" ]
    # 32: a directory, not a mount point (1 would be mountpoint's own failure).
    run -32 mountpoint -q "$MNT"
    # A local model: the tree answers; its hashes fail, said once in the log.
    GGUF_FS=$bare/$BINDIR/gguf-fs mount_model "$SAMPLE" "$MNT"
    [ "$(cat "$MNT/metadata/general.architecture")" = llama ]
    run -1 --separate-stderr cat "$MNT/tensors/output.weight/sha256"
    [[ "$stderr" == *"Input/output error"* ]]
    run -1 --separate-stderr cat "$MNT/hashes"
    [[ "$stderr" == *"Input/output error"* ]]
    run -0 grep -c "cannot load the module" "$BATS_TEST_TMPDIR/daemon.log"
    [ "$output" -eq 1 ]
    grep -qxF "gguf-fs: hashes: cannot load the module $bare/$MODULES/gguf-fs-digests.so: $missing; reads of hashes fail with EIO" \
        "$BATS_TEST_TMPDIR/daemon.log"
}

@test "man renders gguf-fs(1) without a warning, with the sections, sources, tree and variables" {
    run --separate-stderr env MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$STAGED/share/man/man1/gguf-fs.1"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    local want
    for want in NAME SYNOPSIS DESCRIPTION SOURCES OPTIONS "THE TREE" "EXIT STATUS" ENVIRONMENT FILES \
        EXAMPLES "SEE ALSO"; do
        grep -qx "$want" <<<"$output" || { echo "no section $want" >&2; return 1; }
    done
    [[ "${lines[-1]}" == "gguf-fs $VERSION "*"GGUF-FS(1)" ]]
    for want in FILE.gguf -of-0000N.gguf DIRECTORY http:// https:// hf://ORG/REPO/FILE.gguf header warnings \
        model.gguf metadata.json tensors.tsv metadata/KEY tensors/NAME/info tensors/NAME/raw \
        tensors/NAME/f32 tensors/NAME/f32.npy tensors/NAME/stats hashes 'llama-gguf-hash --all --uuid' \
        tensors/NAME/xxh64 tensors/NAME/sha256 shards/SHARD tokenizer/vocab.tsv tokenizer/special \
        user.gguf.name HF_ENDPOINT \
        HF_TOKEN CURL_CA_BUNDLE NOTIFY_SOCKET '~/.cache/huggingface/token' /etc/fuse.conf fuse.gguf-fs /etc/fstab \
        Type=notify; do
        grep -qF -- "$want" <<<"$output" || { echo "the manual never says $want" >&2; return 1; }
    done
    run -0 --separate-stderr env MANPATH="$STAGED/share/man" man -w gguf-fs
    [ "$output" = "$STAGED/share/man/man1/gguf-fs.1" ]
}

@test "--help lists each option once with its default; the manual and the README describe each alike" {
    "$GGUF_FS" --help >"$BATS_TEST_TMPDIR/help"
    MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$STAGED/share/man/man1/gguf-fs.1" >"$BATS_TEST_TMPDIR/manual"
    run "$PYTHON" "$HELPERS/check_options.py" "$BATS_TEST_TMPDIR/help" "$BATS_TEST_TMPDIR/manual" "$SRC/README.md"
    echo "$output"
    [ "$status" -eq 0 ]
    # Help and version do not count as usage errors.
    run -0 "$GGUF_FS" -h
    run -0 "$GGUF_FS" -V
}

@test "every mount option --help lists is taken by a mount" {
    local opt
    for opt in max_threads=2 max_idle_threads=1 clone_fd allow_other allow_root auto_unmount \
        readahead_kb=256 cache_mb=16 cache_dir="$BATS_TEST_TMPDIR" timeout_s=5 debug; do
        mount_model "$SAMPLE" "$MNT" -o "$opt"
        [ -s "$MNT/metadata/general.architecture" ]
        unmount_all
    done
    mount_model "$SAMPLE" "$MNT" -s
    [ -s "$MNT/header" ]
}

# ==== mount(8), fstab, options from elsewhere ====

@test "mount -t fuse.gguf-fs runs the installed gguf-fs: fuse.gguf-fs, read-only, one warning for rw" {
    cat >"$BATS_TEST_TMPDIR/script" <<'EOF'
trap 'umount "$MNT" 2>/dev/null || true' EXIT
mount -t fuse.gguf-fs "$SAMPLE" "$MNT" 2>"$MNT.err"
findmnt -n -r -o FSTYPE,SOURCE,VFS-OPTIONS "$MNT"
cat "$MNT/metadata/general.architecture"
cat "$MNT.err"
umount "$MNT"
EOF
    # The script prints what is checked, mount's stderr included; its own
    # stderr (a shell's locale warning, say) is not part of it.
    run --separate-stderr with_staged_install "$BATS_TEST_TMPDIR/script"
    echo "$output"
    echo "$stderr" >&2
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "fuse.gguf-fs $SAMPLE ro,nosuid,nodev,"* ]]
    [ "${lines[1]}" = llama ]
    # mount(8) asks for rw unless told ro: the one warning.
    [ "${lines[2]}" = "gguf-fs: the mount is read-only: ignoring rw" ]
    [ "${#lines[@]}" -eq 3 ]
    no_daemon_left "$MNT"
}

@test "fstab lines with the options of mount(8), fuse and systemd mount with mount -T, rw with one warning" {
    cat >"$BATS_TEST_TMPDIR/script" <<'EOF'
trap 'umount "$MNT" 2>/dev/null || true' EXIT
opts=ro,noauto,allow_other,_netdev,user,nofail,comment=models,x-systemd.automount
opts=$opts,x-systemd.idle-timeout=60,x-systemd.requires=network-online.target,relatime
printf '# models\n%s %s fuse.gguf-fs %s 0 0\n' "$SAMPLE" "$MNT" "$opts" >"$MNT.fstab"
mount -T "$MNT.fstab" "$MNT" 2>"$MNT.err"
findmnt -n -r -o FSTYPE,SOURCE,VFS-OPTIONS,FS-OPTIONS "$MNT"
ls "$MNT/tensors" | grep -x output.weight
umount "$MNT"
echo "errors: $(cat "$MNT.err")"
printf '%s %s fuse.gguf-fs rw,dev,suid,exec,auto 0 0\n' "$SAMPLE" "$MNT" >"$MNT.fstab"
mount -T "$MNT.fstab" "$MNT" 2>"$MNT.err"
cat "$MNT.err"
findmnt -n -r -o FSTYPE,VFS-OPTIONS "$MNT"
umount "$MNT"
EOF
    # The script prints what is checked, mount's stderr included; its own
    # stderr (a shell's locale warning, say) is not part of it.
    run --separate-stderr with_staged_install "$BATS_TEST_TMPDIR/script"
    echo "$output"
    echo "$stderr" >&2
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "fuse.gguf-fs $SAMPLE ro,nosuid,nodev,"*" "*allow_other* ]]
    [ "${lines[1]}" = output.weight ]
    [ "${lines[2]}" = "errors: " ]
    [ "${lines[3]}" = "gguf-fs: the mount is read-only: ignoring rw" ]
    [[ "${lines[4]}" == "fuse.gguf-fs ro,nosuid,nodev,"* ]]
    [ "${#lines[@]}" -eq 5 ]
    no_daemon_left "$MNT"
}

@test "gguf-fs given an fstab line's options by hand mounts read-only, with one warning for rw" {
    run --separate-stderr "$GGUF_FS" -o rw,dev,suid,noauto,_netdev,user,nofail,x-systemd.automount \
        -o rw,X-mount.mkdir,comment=x,relatime,nodiratime,lazytime,defaults "$SAMPLE" "$MNT" 3>&-
    [ "$status" -eq 0 ]
    echo "$(daemon_of "$MNT") $MNT" >>"$BATS_TEST_TMPDIR/daemons"
    [ "$stderr" = "gguf-fs: the mount is read-only: ignoring rw" ]
    run findmnt -n -r -o VFS-OPTIONS "$MNT"
    [[ "$output" == ro,nosuid,nodev,* ]]
    [ -s "$MNT/header" ]
}

# ==== systemd's readiness protocol ====

@test "under Type=notify, READY=1 comes once the mount answers, STOPPING=1 on unmount, then exit 0" {
    listen "$BATS_TEST_TMPDIR/notify"
    start_foreground NOTIFY_SOCKET="$BATS_TEST_TMPDIR/notify" -- "$SAMPLE" "$MNT"
    wait_for "$NOTIFY_LOG" '^answers:'
    run cat "$NOTIFY_LOG"
    [ "${lines[1]}" = READY=1 ]
    # What a client listing the mount saw when the daemon said it was ready.
    [[ "${lines[2]}" == "answers: "*header*metadata*tensors* ]]
    fusermount3 -u "$MNT"
    wait "$LISTENER"
    wait "$DAEMON"
    run cat "$NOTIFY_LOG"
    [ "${lines[3]}" = STOPPING=1 ]
    [ "${#lines[@]}" -eq 4 ]
}

@test "READY=1 reaches an abstract socket from a daemon that went to the background; SIGTERM stops it" {
    local address=@gguf-fs-test-$$-$BATS_TEST_NUMBER
    listen "$address"
    run -0 env NOTIFY_SOCKET="$address" "$GGUF_FS" "$SAMPLE" "$MNT" 3>&-
    local pid
    pid=$(daemon_of "$MNT")
    [ -n "$pid" ]
    wait_for "$NOTIFY_LOG" '^answers:'
    run cat "$NOTIFY_LOG"
    [ "${lines[1]}" = READY=1 ]
    [[ "${lines[2]}" == "answers: "*header* ]]
    kill -TERM "$pid"
    wait "$LISTENER"
    wait_gone "$pid"
    run ! mountpoint -q "$MNT"
    run cat "$NOTIFY_LOG"
    [ "${lines[3]}" = STOPPING=1 ]
}

@test "SIGTERM, as systemctl stop sends it, and SIGHUP end a foreground daemon with status 0" {
    local signal pid
    for signal in TERM HUP; do
        mount_model "$SAMPLE" "$MNT"
        pid=$(tail -n 1 "$BATS_TEST_TMPDIR/daemons" | cut -d' ' -f1)
        kill -"$signal" "$pid"
        wait "$pid" # fails the test unless 0
        run ! mountpoint -q "$MNT"
    done
}

# ==== exit statuses ====

@test "exit status 0: the mount answers when the command returns" {
    run -0 "$GGUF_FS" "$SAMPLE" "$MNT" 3>&-
    echo "$(daemon_of "$MNT") $MNT" >>"$BATS_TEST_TMPDIR/daemons"
    [ "$(cat "$MNT/metadata/general.architecture")" = llama ]
}

@test "exit status 2: a usage error, found before the source is read" {
    run -2 --separate-stderr "$GGUF_FS"
    [ "$stderr" = "usage: gguf-fs [options] SOURCE MOUNTPOINT (see gguf-fs --help)" ]
    run -2 "$GGUF_FS" "$SAMPLE"
    run -2 --separate-stderr "$GGUF_FS" "$SAMPLE" "$MNT" extra
    [ "${stderr_lines[0]}" = "gguf-fs: unexpected argument 'extra'" ]
    run -2 --separate-stderr "$GGUF_FS" -o no_such_option "$SAMPLE" "$MNT"
    [[ "$stderr" == *"unknown option"*no_such_option* ]]
    # The command line is judged first, even with a source that is absent.
    run -2 --separate-stderr "$GGUF_FS" --no-such-flag "$BATS_TEST_TMPDIR/absent.gguf" "$MNT"
    [[ "$stderr" == *"unknown option"*--no-such-flag* ]]
    run -2 --separate-stderr "$GGUF_FS" -o readahead_kb=lots "$SAMPLE" "$MNT"
    [ "$stderr" = "gguf-fs: -o readahead_kb=lots: not a whole number from 0 to 4294967295" ]
    local opt
    for opt in cache_mb=-1 timeout_s=1e3 cache_mb=99999999999 max_threads=x cache_dir=; do
        run -2 "$GGUF_FS" -o "$opt" "$SAMPLE" "$MNT"
    done
    ! mountpoint -q "$MNT"
}

@test "exit status 1: the source is refused, in one line naming it" {
    head -c 1000 "$SAMPLE" >"$BATS_TEST_TMPDIR/cut.gguf"
    run -1 --separate-stderr "$GGUF_FS" "$BATS_TEST_TMPDIR/cut.gguf" "$MNT"
    [[ "$stderr" == "gguf-fs: $BATS_TEST_TMPDIR/cut.gguf: offset 0x"* ]]
    run -1 --separate-stderr "$GGUF_FS" "$BATS_TEST_TMPDIR/absent.gguf" "$MNT"
    [ "$stderr" = "gguf-fs: $BATS_TEST_TMPDIR/absent.gguf: cannot open: No such file or directory" ]
    # Nothing listens on port 1.
    run -1 --separate-stderr "$GGUF_FS" -o timeout_s=1 http://127.0.0.1:1/model.gguf "$MNT"
    [[ "$stderr" == "gguf-fs: http://127.0.0.1:1/model.gguf: "* ]]
    [ "${#stderr_lines[@]}" -eq 1 ]
    ! mountpoint -q "$MNT"
}

@test "exit status 3: the mount point is missing or a file, permission is denied, /dev/fuse unusable" {
    run -3 --separate-stderr "$GGUF_FS" "$SAMPLE" "$BATS_TEST_TMPDIR/absent"
    [ "$stderr" = "gguf-fs: $BATS_TEST_TMPDIR/absent: bad mount point: No such file or directory" ]
    touch "$BATS_TEST_TMPDIR/file"
    run -3 --separate-stderr "$GGUF_FS" "$SAMPLE" "$BATS_TEST_TMPDIR/file"
    [ "$stderr" = "gguf-fs: $BATS_TEST_TMPDIR/file: bad mount point: not a directory" ]

    # A user who may read the model but not mount on root's directory.
    PUBLIC_DIR=$(mktemp -d /tmp/gguf-fs-install.XXXXXX)
    chmod 755 "$PUBLIC_DIR"
    install -m 644 "$SAMPLE" "$PUBLIC_DIR/sample.gguf"
    install -m 755 "$GGUF_FS" "$PUBLIC_DIR/gguf-fs"
    mkdir -m 755 "$PUBLIC_DIR/mnt"
    run -3 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$PUBLIC_DIR/gguf-fs" "$PUBLIC_DIR/sample.gguf" "$PUBLIC_DIR/mnt"
    [[ "$stderr" == *"Permission denied"* || "$stderr" == *"no write access"* ]]
    [ "${stderr_lines[-1]}" = "gguf-fs: $PUBLIC_DIR/sample.gguf: cannot mount on $PUBLIC_DIR/mnt" ]
    run ! mountpoint -q "$PUBLIC_DIR/mnt"

    # /dev/fuse is /dev/null in a mount namespace of its own.
    run -3 --separate-stderr unshare --mount --propagation private \
        bash -c 'mount --bind /dev/null /dev/fuse && exec "$@"' _ "$GGUF_FS" "$SAMPLE" "$MNT"
    [ "${stderr_lines[-1]}" = "gguf-fs: $SAMPLE: cannot mount on $MNT" ]
    ! mountpoint -q "$MNT"
}

# ==== the Debian package ====

@test "scripts/package builds gguf-fs_VERSION_ARCH.deb: binary, manual, README, NOTICE, doc/*.md; depends on fuse3 and its libraries" {
    # The path is on stdout; meson, ninja or dpkg may warn on stderr.
    run --separate-stderr "$SRC/scripts/package" "$BATS_TEST_TMPDIR/dist"
    echo "$stderr" >&2
    [ "$status" -eq 0 ]
    local deb=$output
    [ "$deb" = "$BATS_TEST_TMPDIR/dist/gguf-fs_${VERSION}_$(dpkg --print-architecture).deb" ]
    run -0 --separate-stderr dpkg-deb -f "$deb" Package Version Depends
    [ "${lines[0]}" = "Package: gguf-fs" ]
    [ "${lines[1]}" = "Version: $VERSION" ]
    [[ "${lines[2]}" =~ ^Depends:\ fuse3,\ .*libc6\ \(\>=\ [0-9.]+\).*libfuse3-3\ \(\>=\ 3\.1[2-9] ]]
    # What the modules link counts as much as what the binary does.
    local lib
    for lib in libcurl4 libssl3 libxxhash0; do
        [[ "${lines[2]}" == *" $lib ("* ]] || { echo "the package does not depend on $lib" >&2; return 1; }
    done
    run -0 --separate-stderr dpkg-deb -c "$deb"
    local file doc docs=()
    for doc in "$SRC"/doc/*.md; do
        docs+=("./usr/share/doc/gguf-fs/doc/${doc##*/}.gz")
    done
    for file in ./usr/bin/gguf-fs ./usr/share/man/man1/gguf-fs.1.gz ./usr/share/doc/gguf-fs/README.md.gz \
        ./usr/share/doc/gguf-fs/NOTICE "${docs[@]}"; do
        grep -q " root/root .* $file\$" <<<"$output" || { echo "no $file (root-owned) in the package" >&2; return 1; }
    done
    local triplet
    triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
    for file in gguf-fs-remote.so gguf-fs-digests.so; do
        grep -q "^-rw-r--r-- root/root .* ./usr/lib/$triplet/gguf-fs/$file\$" <<<"$output" ||
            { echo "no $file (root-owned, 0644) in the package" >&2; return 1; }
    done
    # The manual and the documents in the package are the ones in the tree.
    local x=$BATS_TEST_TMPDIR/x
    dpkg-deb -x "$deb" "$x"
    zcat "$x/usr/share/man/man1/gguf-fs.1.gz" | cmp - "$STAGED/share/man/man1/gguf-fs.1"
    zcat "$x/usr/share/doc/gguf-fs/README.md.gz" | cmp - "$SRC/README.md"
    cmp "$x/usr/share/doc/gguf-fs/NOTICE" "$SRC/NOTICE"
    for doc in "$SRC"/doc/*.md; do
        zcat "$x/usr/share/doc/gguf-fs/doc/${doc##*/}.gz" | cmp - "$doc"
    done
}

@test "dpkg -i installs the package: mount -t, fstab and the README's systemd unit work; dpkg -r removes it" {
    exec {lock}>"$PACKAGE_LOCK"
    flock -w 900 "$lock" # one test run at a time installs the package
    if package_installed; then
        skip "a gguf-fs package is installed on this machine already; not touching it"
    fi
    local deb
    deb=$("$SRC/scripts/package" "$BATS_TEST_TMPDIR/dist")
    INSTALLED_PACKAGE=1
    dpkg_waiting -i "$deb" >/dev/null
    package_installed
    [ -x /usr/bin/gguf-fs ]
    run -0 --separate-stderr /usr/bin/gguf-fs --version
    [ "${lines[0]}" = "gguf-fs version $VERSION" ]
    if ! grep -rqs 'path-exclude=*/usr/share/man' /etc/dpkg/dpkg.cfg.d; then
        [ "$(man -w gguf-fs)" = /usr/share/man/man1/gguf-fs.1.gz ]
    fi

    # mount(8) finds it with nothing but the package.
    mount -t fuse.gguf-fs -o ro "$SAMPLE" "$MNT"
    [ "$(cat "$MNT/metadata/general.architecture")" = llama ]
    run findmnt -n -r -o FSTYPE "$MNT"
    [ "$output" = fuse.gguf-fs ]
    umount "$MNT"
    no_daemon_left "$MNT"
    printf '%s %s fuse.gguf-fs ro,noauto,allow_other 0 0\n' "$SAMPLE" "$MNT" >"$BATS_TEST_TMPDIR/fstab"
    mount -T "$BATS_TEST_TMPDIR/fstab" "$MNT"
    [ -s "$MNT/tensors/output.weight/f32" ]
    # The hashes' module, from the package's library folder.
    [ "$(cat "$MNT/tensors/output.weight/sha256")" = "$(sha256sum <"$MNT/tensors/output.weight/raw" | cut -d' ' -f1)" ]
    umount "$MNT"
    no_daemon_left "$MNT"
    # The remote engine's module: libcurl's error, not the loader's.
    run -1 --separate-stderr /usr/bin/gguf-fs -o timeout_s=1 http://127.0.0.1:1/model.gguf "$MNT"
    [[ "$stderr" == "gguf-fs: http://127.0.0.1:1/model.gguf: cannot open: "* ]]
    [[ "$stderr" != *"cannot load"* ]]

    # The README's unit, with this test's model and mount point.
    local unit=$BATS_TEST_TMPDIR/units/llama-model.service
    mkdir -p "${unit%/*}"
    awk '/^```ini$/ {on = 1; next} on && /^```$/ {exit} on' "$SRC/README.md" |
        sed -e "s|/srv/models/llama.gguf|$SAMPLE|g" -e "s|/mnt/llama|$MNT.unit|g" >"$unit"
    grep -qx 'Type=notify' "$unit"
    run systemd-analyze verify "$unit"
    echo "$output"
    [ "$status" -eq 0 ]
    # Run as systemd runs it: ExecStartPre, then ExecStart with
    # NOTIFY_SOCKET, started once READY=1 comes; stopped with SIGTERM.
    local pre start
    pre=$(sed -n 's/^ExecStartPre=//p' "$unit")
    start=$(sed -n 's/^ExecStart=//p' "$unit")
    [[ "$start" == "/usr/bin/gguf-fs -f "* ]]
    $pre
    MNT=$MNT.unit
    listen "$BATS_TEST_TMPDIR/notify"
    NOTIFY_SOCKET=$BATS_TEST_TMPDIR/notify $start 3>&- 2>>"$BATS_TEST_TMPDIR/daemon.log" &
    local pid=$!
    echo "$pid $MNT" >>"$BATS_TEST_TMPDIR/daemons"
    wait_for "$NOTIFY_LOG" '^answers:'
    [ "$(sed -n 2p "$NOTIFY_LOG")" = READY=1 ]
    [[ "$(sed -n 3p "$NOTIFY_LOG")" == "answers: "*tensors* ]]
    kill -TERM "$pid"
    wait "$pid"
    wait "$LISTENER"
    [ "$(sed -n 4p "$NOTIFY_LOG")" = STOPPING=1 ]
    run ! mountpoint -q "$MNT"

    dpkg_waiting -r gguf-fs >/dev/null
    run ! package_installed
    [ ! -e /usr/bin/gguf-fs ]
    [ ! -e /usr/share/man/man1/gguf-fs.1.gz ]
    [ ! -e /usr/share/doc/gguf-fs ]
    [ ! -e "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/gguf-fs" ]
}
