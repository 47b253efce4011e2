# Shared by every suite that mounts from a server (tests/http, tests/s3,
# tests/hostile), loaded after ../bats/test_helper: servers started on
# loopback and waited for, refusals at mount checked one way, the daemon's
# log read one way.
#
#   wait_port_file FILE           waits for a server to write the port it
#                                 listens on to FILE; prints it
#   port_closed HOST PORT         returns once nothing accepts there
#   start_hub_emulator REPOS BYTES_URL TOKEN PAGE
#                                 tests/http/hub_emulator.py for this test:
#                                 $HUB_PID, $HUB_PORT, $HUB_LOG, HF_ENDPOINT
#   refused_mount [ENV=VALUE...] -- GGUF_FS_ARGS... MOUNTPOINT
#                                 the mount exits 1 with exactly one line on
#                                 stderr ($stderr, for the caller to match);
#                                 nothing is mounted
#   daemon_log                    the path of this test's daemon log
#   daemon_log_count PATTERN      how many lines of it hold PATTERN (fixed)

REMOTE_HELPERS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

wait_port_file() {
    local i
    for i in $(seq 200); do
        if [ -s "$1" ]; then
            cat "$1"
            return 0
        fi
        sleep 0.05
    done
    echo "no port written to $1 in 10 s" >&2
    return 1
}

# port_closed HOST PORT: returns once nothing accepts on it (10 s at most).
port_closed() {
    local i
    for i in $(seq 200); do
        python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 0.2)' \
            "$1" "$2" 2>/dev/null || return 0
        sleep 0.05
    done
    echo "$1:$2 still answers" >&2
    return 1
}

# start_hub_emulator REPOS BYTES_URL TOKEN PAGE: the Hub emulation
# (tests/http/hub_emulator.py) of this test, PAGE entries a page, the
# bytes of its resolve redirects at BYTES_URL; HF_ENDPOINT names it.
start_hub_emulator() {
    HUB_LOG="$BATS_TEST_TMPDIR/hub.log"
    python3 "$REMOTE_HELPERS/http/hub_emulator.py" "$BATS_TEST_TMPDIR/hub.port" "$HUB_LOG" "$1" "$2" "$3" "$4" \
        3>&- 2>"$BATS_TEST_TMPDIR/hub.err" &
    HUB_PID=$!
    HUB_PORT=$(wait_port_file "$BATS_TEST_TMPDIR/hub.port") || return 1
    export HF_ENDPOINT="http://127.0.0.1:$HUB_PORT"
}

# refused_mount [ENV=VALUE...] -- GGUF_FS_ARGS... MOUNTPOINT: run as a
# user would (under `timeout 60`, so that a hang fails rather than holds
# the suite), the mount exits 1 with exactly one line on stderr, kept in
# $stderr for the caller's match; nothing is mounted on MOUNTPOINT.
refused_mount() {
    local envs=() mnt
    while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    mnt=${!#}
    mkdir -p "$mnt"
    run -1 --separate-stderr env "${envs[@]}" timeout 60 "$GGUF_FS" -f "$@" 3>&-
    echo "stderr: $stderr"
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
    local line=$stderr
    run ! mountpoint -q "$mnt"
    stderr=$line
}

daemon_log() {
    echo "$BATS_TEST_TMPDIR/daemon.log"
}

daemon_log_count() {
    grep -cF -- "$1" "$BATS_TEST_TMPDIR/daemon.log" || true
}
