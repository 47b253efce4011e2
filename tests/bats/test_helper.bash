# Shared by every bats suite: where the daemon and the models are, mounting
# in the foreground with the daemon's stderr kept, and teardown that
# unmounts, reaps the daemon and fails on any sanitizer report.

bats_require_minimum_version 1.5.0

: "${GGUF_FS:?GGUF_FS must name the gguf-fs binary}"
: "${GGUF_FS_FIXTURES:?GGUF_FS_FIXTURES must name the ggml-made fixture directory}"

# Debian's python3 has numpy; an interpreter earlier on PATH may not.
PYTHON=python3
if ! python3 -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    PYTHON=/usr/bin/python3
fi
HELPERS="$BATS_TEST_DIRNAME"

require_fuse() {
    [ -c /dev/fuse ] || skip "no /dev/fuse on this machine"
}

# mount_model MODEL MOUNTPOINT [OPTIONS...]: runs the daemon in the
# foreground (fd 3 closed, or bats would wait for it; fds 5 to 9 too, which
# tests open on mounts, or the daemon would keep them busy) and returns
# once the mount answers. A background job of a script starts with SIGINT
# ignored, and a suite run under nohup with SIGHUP ignored: the daemon gets
# the exit signals back, as it has them in a terminal.
mount_model() {
    local model=$1 mnt=$2
    shift 2
    mkdir -p "$mnt"
    env --default-signal=HUP,INT,TERM "$GGUF_FS" -f "$@" "$model" "$mnt" 3>&- 5<&- 6<&- 7<&- 8<&- 9<&- \
        2>>"$BATS_TEST_TMPDIR/daemon.log" &
    echo "$! $mnt" >>"$BATS_TEST_TMPDIR/daemons"
    local i
    for i in $(seq 200); do
        if mountpoint -q "$mnt"; then
            return 0
        fi
        kill -0 "$!" 2>/dev/null || break
        sleep 0.05
    done
    echo "mount of $model on $mnt did not come up" >&2
    cat "$BATS_TEST_TMPDIR/daemon.log" >&2
    return 1
}

# last_daemon: the pid of the daemon mount_model started last.
last_daemon() {
    tail -n 1 "$BATS_TEST_TMPDIR/daemons" | cut -d' ' -f1
}

# mapped_libraries PID: the base names of the shared objects a process has
# mapped (libfuse3.so.3.14.0, gguf-fs-digests.so...), one a line.
mapped_libraries() {
    awk '$6 ~ /\.so/ {n = split($6, p, "/"); print p[n]}' "/proc/$1/maps" | sort -u
}

# wait_gone PID [SECONDS]: waits up to SECONDS (10 by default) for a
# process to end; says so when it did not.
wait_gone() {
    local i
    for i in $(seq $((${2:-10} * 20))); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.05
    done
    echo "process $1 still running ${2:-10} s on" >&2
    return 1
}

unmount_all() {
    [ -f "$BATS_TEST_TMPDIR/daemons" ] || return 0
    local pid mnt status=0
    # every mount first, then every daemon: their exits overlap
    while read -r pid mnt; do
        if mountpoint -q "$mnt"; then
            fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
        fi
    done <"$BATS_TEST_TMPDIR/daemons"
    while read -r pid mnt; do
        if ! wait_gone "$pid"; then
            echo "daemon $pid did not exit after unmount" >&2
            kill -9 "$pid" 2>/dev/null || true
            status=1
        fi
    done <"$BATS_TEST_TMPDIR/daemons"
    rm -f "$BATS_TEST_TMPDIR/daemons"
    return $status
}

# Fails when the daemon printed a sanitizer report.
check_daemon_log() {
    local log="$BATS_TEST_TMPDIR/daemon.log"
    [ -f "$log" ] || return 0
    if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error|ThreadSanitizer' "$log"; then
        echo "daemon reported:" >&2
        cat "$log" >&2
        return 1
    fi
}

# Bats calls teardown with errexit off: each check's status is kept by hand,
# or a daemon that outlived its unmount would pass unnoticed.
teardown() {
    # A file a failed test still held open (fds 5 to 9) would keep the
    # mount busy.
    exec 5<&- 6<&- 7<&- 8<&- 9<&-
    local status=0
    unmount_all || status=1
    check_daemon_log || status=1
    return $status
}

# xattr NAME PATH: the attribute's value, nothing else.
xattr() {
    getfattr --absolute-names --only-values -n "$1" "$2"
}

fixture() {
    echo "$GGUF_FS_FIXTURES/$1"
}
