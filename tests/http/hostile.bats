#!/usr/bin/env bats
# What a server cannot do (SPEC "What a server cannot do"), against one
# scriptable hostile server (hostile_server.py) run twice per test: HOME,
# where the mount points, and FOREIGN, another origin (localhost and
# another port) where hostile answers send the daemon. Each case asserts
# the contract: exit 1 with one line at mount, or EIO with a log line
# after; done within timeout_s plus a margin; RSS within cache_mb + 64 MB;
# no sanitizer report (teardown); no secret in FOREIGN's log.

bats_require_minimum_version 1.5.0

load ../bats/test_helper
load ../remote_helper

# Long enough for any answer of a server on loopback, however busy the
# machine; the cases that stall or retry wait it out.
TIMEOUT_S=3
MARGIN_S=5
CACHE_MB=64
HF_SECRET=hf_hostile_secret_0123456789
AWS_KEY_ID=AKIAHOSTILE000000001
AWS_SECRET=hostile/secret+key0123456789abcdefghij
AWS_TOKEN=FwoGZXIvHOSTILE+session/token==42
REGISTRY_SECRET=registry_hostile_token_77

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    mkdir -p "$FILES"
    # 4 MiB of tensors after a small header: reads that reach the server.
    python3 "$BATS_TEST_DIRNAME/make_model.py" "$FILES/model.gguf" 1000 2 2 >/dev/null
}

setup() {
    require_fuse
    export HOME="$BATS_TEST_TMPDIR"
    unset HF_TOKEN HF_HUB_OFFLINE AWS_PROFILE AWS_DEFAULT_REGION AWS_ENDPOINT_URL_S3 AWS_SESSION_TOKEN
    export AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_CONFIG_FILE=/nonexistent
    MNT="$BATS_TEST_TMPDIR/mnt"
    start_hostile foreign normal
    FOREIGN_PORT=$PORT
    FOREIGN_LOG=$LOG
    start_hostile home normal
    HOME_PORT=$PORT
    HOME_LOG=$LOG
    HOME_URL="http://127.0.0.1:$HOME_PORT"
    export HF_ENDPOINT=$HOME_URL
}

teardown() {
    exec 5<&- 6<&- 7<&- 8<&- 9<&-
    local status=0
    unmount_all || status=1
    check_daemon_log || status=1
    local pid
    for pid in ${SERVER_PIDS:-}; do
        kill "$pid" 2>/dev/null || true
    done
    return $status
}

# start_hostile NAME MODE: an instance, its port in $PORT, its log in $LOG.
start_hostile() {
    local dir="$BATS_TEST_TMPDIR/$1"
    mkdir -p "$dir"
    echo "$2" >"$dir/mode"
    : >"$dir/log"
    python3 "$BATS_TEST_DIRNAME/hostile_server.py" "$dir/port" "$dir/log" "$dir/mode" "$FILES" \
        "http://localhost:${FOREIGN_PORT:-1}" 3>&- 2>"$dir/err" &
    SERVER_PIDS="${SERVER_PIDS:-} $!"
    PORT=$(wait_port_file "$dir/port")
    LOG="$dir/log"
}

# mode NAME: what HOME answers from now on.
mode() {
    echo "$1" >"$BATS_TEST_TMPDIR/home/mode"
}

# requests LOG: how many requests reached the instance.
requests() {
    wc -l <"$1"
}

# no_secret_abroad: none of the secrets, and no Authorization or
# x-amz-security-token header at all, in FOREIGN's log.
no_secret_abroad() {
    local s
    for s in "$HF_SECRET" "$AWS_KEY_ID" "$AWS_SECRET" "$AWS_TOKEN" "$REGISTRY_SECRET" '"Authorization"' \
        '"X-Amz-Security-Token"' '"x-amz-security-token"' '"authorization"'; do
        if grep -qiF -- "$s" "$FOREIGN_LOG"; then
            echo "FOREIGN got '$s':" >&2
            cat "$FOREIGN_LOG" >&2
            return 1
        fi
    done
}

# bounded_mount SOURCE [OPTIONS...]: the mount, run as a user would with
# timeout_s=$TIMEOUT_S and cache_mb=$CACHE_MB, returns within timeout_s
# plus the margin, mounted (status 0) or refused with exactly one line
# (status 1); $status and $stderr say which.
bounded_mount() {
    mkdir -p "$MNT"
    local start=$SECONDS
    env --default-signal=HUP,INT,TERM "$GGUF_FS" -f -o timeout_s=$TIMEOUT_S,cache_mb=$CACHE_MB "${@:2}" "$1" "$MNT" \
        3>&- 5<&- 6<&- 7<&- 8<&- 9<&- 2>>"$BATS_TEST_TMPDIR/daemon.log" &
    local pid=$!
    echo "$pid $MNT" >>"$BATS_TEST_TMPDIR/daemons"
    while kill -0 "$pid" 2>/dev/null && ! mountpoint -q "$MNT"; do
        if [ $((SECONDS - start)) -gt $((TIMEOUT_S + MARGIN_S)) ]; then
            echo "mount of $1 neither up nor refused after $((SECONDS - start)) s" >&2
            return 1
        fi
        sleep 0.1
    done
    if mountpoint -q "$MNT"; then
        status=0
        DAEMON=$pid
        return 0
    fi
    status=0
    wait "$pid" || status=$?
    stderr=$(cat "$BATS_TEST_TMPDIR/daemon.log")
    echo "exit $status: $stderr"
    [ "$status" -eq 1 ] || return 1
    [ "$(grep -cv '^$' "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ] || return 1
    [[ $stderr == "gguf-fs: "* ]]
}

# mounted: the last bounded_mount mounted; else its log says why.
mounted() {
    [ "$status" -eq 0 ] || { echo "not mounted:" >&2; cat "$BATS_TEST_TMPDIR/daemon.log" >&2; return 1; }
}

# rss_bounded: the daemon's VmRSS within cache_mb + 64 MB.
rss_bounded() {
    [ -n "${DAEMON:-}" ] || return 0
    local kb
    kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$DAEMON/status" 2>/dev/null) || return 0
    [ -n "$kb" ] || return 0
    echo "daemon RSS ${kb} kB"
    [ "$kb" -le $(((CACHE_MB + 64) * 1024)) ]
}

# timed SECONDS CMD...: CMD finishes (any status) within SECONDS.
timed() {
    local limit=$1
    shift
    run timeout "$limit" "$@"
    echo "$output" | head -20
    [ "$status" -ne 124 ] || { echo "'$*' still running after $limit s" >&2; return 1; }
}

# eio_with_line CMD...: CMD fails with EIO, and the daemon logged a line.
eio_with_line() {
    run -1 --separate-stderr timeout $((TIMEOUT_S + MARGIN_S + 10)) "$@"
    [[ $stderr == *"Input/output error"* ]] || { echo "$stderr" >&2; return 1; }
    [ -s "$BATS_TEST_TMPDIR/daemon.log" ]
}

# ==== a. secrets ====

@test "secrets: the Hub token does not follow a tree page's Link to another origin" {
    mode hub-link-foreign
    HF_TOKEN=$HF_SECRET bounded_mount "hf://org/repo"
    [ "$(requests "$FOREIGN_LOG")" -gt 0 ] || [ "$status" -eq 1 ]
    no_secret_abroad
}

@test "secrets: the Hub token does not follow an author page's Link to another origin" {
    mode hub-link-foreign
    HF_TOKEN=$HF_SECRET bounded_mount "hf://org"
    no_secret_abroad
}

@test "secrets: the Hub token does not follow a resolve redirect to another origin, on the first read or later" {
    mode hub-resolve-foreign
    HF_TOKEN=$HF_SECRET bounded_mount "hf://org/repo/model.gguf"
    mounted
    cmp "$MNT/model.gguf" "$FILES/model.gguf"
    cat "$MNT/model.gguf" >/dev/null
    [ "$(requests "$FOREIGN_LOG")" -gt 0 ]
    no_secret_abroad
}

@test "secrets: a registry's bearer token does not follow a blob's redirect to another origin" {
    mode registry-blob-foreign
    bounded_mount "ollama+http://127.0.0.1:$HOME_PORT/library/tiny:latest"
    mounted
    cmp "$MNT/model.gguf" "$FILES/model.gguf"
    grep -qF "Bearer $REGISTRY_SECRET" "$HOME_LOG"
    no_secret_abroad
}

@test "secrets: a token from a realm on another origin is not sent back there with the registry's requests" {
    mode registry-realm-foreign
    bounded_mount "ollama+http://127.0.0.1:$HOME_PORT/library/tiny:latest"
    # The realm abroad was asked (with no credential of ours).
    no_secret_abroad
}

@test "secrets: AWS keys and session token do not follow a GetObject 307 to another origin, first and later reads" {
    mode s3-foreign
    export AWS_ACCESS_KEY_ID=$AWS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET AWS_SESSION_TOKEN=$AWS_TOKEN
    export AWS_REGION=us-east-1 AWS_ENDPOINT_URL=$HOME_URL
    bounded_mount "s3://bucket/model.gguf"
    if [ "$status" -eq 0 ]; then
        cat "$MNT/model.gguf" >/dev/null || true
        cat "$MNT/tensors/t1/raw" >/dev/null 2>&1 || true
    fi
    no_secret_abroad
}

# ==== b. numbers ====

@test "numbers: a Content-Range total of 2^64-1 is refused at mount with one line" {
    mode total-max
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
}

@test "numbers: a Content-Range total of 2^62+1 is refused at mount with one line, with cache_dir too" {
    mode total-2p62
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
    : >"$BATS_TEST_TMPDIR/daemon.log"
    bounded_mount "$HOME_URL/files/model.gguf" -o cache_dir="$BATS_TEST_TMPDIR/cache"
    [ "$status" -eq 1 ]
}

@test "numbers: a 429 with RateLimit t=10^20 fails the mount within timeout_s, asking fewer than 100 times" {
    mode ratelimit-huge
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
    [ "$(requests "$HOME_LOG")" -lt 100 ]
}

@test "numbers: a 429 with Retry-After 9999999999 fails the mount within timeout_s, asking fewer than 100 times" {
    mode retry-after-huge
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
    [ "$(requests "$HOME_LOG")" -lt 100 ]
}

@test "numbers: a 429 with a huge wait after mount is EIO within timeout_s plus a margin" {
    bounded_mount "$HOME_URL/files/model.gguf"
    mounted
    mode retry-after-huge
    eio_with_line dd if="$MNT/tensors/t1/raw" of=/dev/null bs=64k count=1
    [ "$(requests "$HOME_LOG")" -lt 100 ]
}

@test "numbers: a negative Content-Length is refused at mount with one line" {
    mode length-negative
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
}

@test "numbers: a Content-Length of 2^63 is refused at mount with one line" {
    mode length-huge
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
    rss_bounded
}

# ==== c. crashes ====

@test "crash: null and wrong-typed fields in tree entries: a repo mount lists, or is refused, and lives" {
    mode hub-null
    bounded_mount "hf://org/repo"
    if [ "$status" -eq 0 ]; then
        timed 30 ls -R "$MNT"
        [ "$status" -eq 0 ]
        kill -0 "$DAEMON"
    fi
}

@test "crash: null and wrong-typed fields in author pages and tree entries: an author mount lists and lives" {
    mode hub-null
    bounded_mount "hf://org"
    if [ "$status" -eq 0 ]; then
        timed 30 ls -R "$MNT"
        [ "$status" -eq 0 ]
        kill -0 "$DAEMON"
    fi
}

# ==== d. loops ====

@test "loops: tree pages empty with a new cursor each time end within timeout_s, bounded" {
    mode hub-empty-pages
    bounded_mount "hf://org/repo"
    [ "$(requests "$HOME_LOG")" -lt 1000 ]
    rss_bounded
}

@test "loops: tree pages repeating one entry end within timeout_s, bounded" {
    mode hub-repeat-pages
    bounded_mount "hf://org/repo"
    [ "$(requests "$HOME_LOG")" -lt 1000 ]
    rss_bounded
}

@test "loops: author pages empty, or repeating one repo, each with a new cursor, end within timeout_s, bounded" {
    mode hub-empty-pages
    bounded_mount "hf://org"
    [ "$(requests "$HOME_LOG")" -lt 1000 ]
    rss_bounded
    unmount_all
    : >"$HOME_LOG"
    : >"$BATS_TEST_TMPDIR/daemon.log"
    mode hub-repeat-pages
    bounded_mount "hf://org"
    [ "$(requests "$HOME_LOG")" -lt 1000 ]
    rss_bounded
}

s3_home() {
    export AWS_ACCESS_KEY_ID=$AWS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET AWS_REGION=us-east-1
    export AWS_ENDPOINT_URL=$HOME_URL
}

@test "loops: S3 IsTruncated with the same token each page is refused as a loop within timeout_s" {
    s3_home
    mode s3-same-token
    bounded_mount "s3://bucket/p"
    [ "$(requests "$HOME_LOG")" -lt 100 ]
    if [ "$status" -eq 0 ]; then timed 20 ls "$MNT"; fi
}

@test "loops: S3 pages with a new token and no new key, or the same key, end within timeout_s, bounded" {
    s3_home
    mode s3-new-token
    bounded_mount "s3://bucket/p"
    if [ "$status" -eq 0 ]; then timed 20 ls "$MNT"; fi
    [ "$(requests "$HOME_LOG")" -lt 1000 ]
    rss_bounded
    unmount_all
    : >"$HOME_LOG"
    : >"$BATS_TEST_TMPDIR/daemon.log"
    mode s3-repeat-key
    bounded_mount "s3://bucket/p"
    if [ "$status" -eq 0 ]; then timed 20 ls "$MNT"; fi
    [ "$(requests "$HOME_LOG")" -lt 1000 ]
    rss_bounded
}

@test "loops: an Ollama manifest of 5,000 small text layers mounts within timeout_s, bounded" {
    mode registry-layers
    bounded_mount "ollama+http://127.0.0.1:$HOME_PORT/library/tiny:latest"
    rss_bounded
    [ "$(requests "$HOME_LOG")" -lt 1000 ]
}

# ==== e. validators ====

@test "validators: 206s without the ETag the open recorded, bytes changed: EIO, never a wrong sum" {
    bounded_mount "$HOME_URL/files/model.gguf"
    mounted
    mode unvalidated
    run timeout 30 sha256sum "$MNT/model.gguf"
    if [ "$status" -eq 0 ]; then
        [ "${output%% *}" = "$(sha256sum <"$FILES/model.gguf" | cut -d' ' -f1)" ] || echo "a wrong sum: $output"
    fi
    [ "$status" -ne 0 ]
    [ "$status" -ne 124 ]
    [ -s "$BATS_TEST_TMPDIR/daemon.log" ]
}

# ==== f. names ====

@test "names: an S3 key with / past the prefix (delimiter ignored) lists fine" {
    s3_home
    mode s3-slash
    bounded_mount "s3://bucket/p/"
    mounted
    timed 20 ls -R "$MNT"
    [ "$status" -eq 0 ]
    # The deeper key shows where S3 would have put it: deep/er/model.gguf.
    [ "$(ls "$MNT/deep")" = er ]
    [ -f "$MNT/deep/er/model.gguf/metadata/general.architecture" ]
}

@test "names: an encoding-type=url key 'café model+1.gguf' shows as itself and opens" {
    s3_home
    mode s3-url-names
    bounded_mount "s3://bucket/p/"
    mounted
    ls "$MNT"
    [ -d "$MNT/café model+1.gguf" ]
    cmp "$MNT/café model+1.gguf/model.gguf" "$FILES/model.gguf"
}

@test "names: a prefix of only a folder marker and a/./b.gguf: ls, find and ls -R print no error" {
    s3_home
    mode s3-marker
    bounded_mount "s3://bucket/p/"
    mounted
    run -0 --separate-stderr timeout 20 ls "$MNT"
    [ -z "$stderr" ]
    run -0 --separate-stderr timeout 20 find "$MNT"
    [ -z "$stderr" ]
    run -0 --separate-stderr timeout 20 ls -R "$MNT"
    [ -z "$stderr" ]
}

@test "names: a Hub path dir@x/m.gguf opens and its metadata reads" {
    mode hub-at-name
    bounded_mount "hf://org/repo"
    mounted
    timed 20 ls -R "$MNT"
    [ "$status" -eq 0 ]
    cat "$MNT/dir@x/m.gguf/metadata/general.architecture"
}

@test "names: .., NUL, a 5,000-byte name and RTL marks are left out or cut, never escaping" {
    mode hub-names
    bounded_mount "hf://org/repo"
    mounted
    timed 20 ls -R "$MNT"
    [ "$status" -eq 0 ]
    run -0 find "$MNT" -maxdepth 1 -mindepth 1 -printf '%f\n'
    local n
    while IFS= read -r n; do
        [ "${#n}" -le 255 ] && [ "$n" != .. ]
    done <<<"$output"
    [ ! -e "$BATS_TEST_TMPDIR/up.gguf" ]
}

# ==== g. a rate limit holds its host ====

@test "rate limit: a 429 with Retry-After: 2 holds every request to that host for 2 s" {
    # A wait is kept only when it ends within timeout_s: room for 2 s.
    TIMEOUT_S=5 bounded_mount "$HOME_URL/files/model.gguf"
    mounted
    mode retry-after-two
    timed 30 cmp -s "$MNT/model.gguf" "$FILES/model.gguf"
    # The first request after the switch got the 429 (others already in
    # flight may come with it); its range asked again, or any request
    # arriving from 0.2 s on, comes 2 s after it at the earliest.
    python3 - "$HOME_LOG" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
reqs = [r for r in reqs if r["mode"] == "retry-after-two"]
assert len(reqs) >= 2, "no request after the 429"
t0, rng = reqs[0]["t"], reqs[0]["headers"].get("Range")
for r in reqs[1:]:
    gap = r["t"] - t0
    again = r["headers"].get("Range") == rng
    print("%.2f s after the 429: %s%s" % (gap, r["headers"].get("Range"), " (the same range)" if again else ""))
    assert gap >= 1.8 or (gap < 0.2 and not again), "a request %.2f s after a 429 with Retry-After: 2" % gap
PY
}

# ==== h. Ollama ====

@test "ollama: a manifest with an adapter layer gives a Modelfile with an ADAPTER line" {
    mode registry-adapter
    bounded_mount "ollama+http://127.0.0.1:$HOME_PORT/library/tiny:latest"
    mounted
    ls "$MNT"
    grep -q '^ADAPTER ' "$MNT/Modelfile"
}

# ==== i. what held ====

@test "held: a redirect loop is refused at mount with one line" {
    mode redirect-loop
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
    [ "$(requests "$HOME_LOG")" -lt 100 ]
}

@test "held: a redirect to file:// is refused at mount with one line" {
    mode redirect-file
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
}

@test "held: a gzip bomb is refused at mount, the daemon within cache_mb + 64 MB" {
    mode gzip-bomb
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
}

@test "held: a 401 challenge on every request is refused at mount, asking fewer than 100 times" {
    mode auth-loop
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
    [ "$(requests "$HOME_LOG")" -lt 100 ]
}

@test "held: 206s sent chunked past their Content-Range are refused at mount with one line" {
    mode chunked-overrun
    bounded_mount "$HOME_URL/files/model.gguf"
    [ "$status" -eq 1 ]
    [[ $stderr == *"more body than"* ]]
}

@test "held: JSON nested 100,000 deep and a page over 16 MiB are refused at mount with one line" {
    mode hub-deep-json
    bounded_mount "hf://org/repo"
    [ "$status" -eq 1 ]
    [[ $stderr == *"not JSON"* ]]
    : >"$BATS_TEST_TMPDIR/daemon.log"
    mode hub-big-page
    bounded_mount "hf://org/repo"
    [ "$status" -eq 1 ]
    [[ $stderr == *"over 16 MiB"* ]]
}

@test "held: a page that stops halfway is no answer: refused with the transfer's cause, its part never parsed" {
    mode hub-stall-page
    bounded_mount "hf://org/repo"
    [ "$status" -eq 1 ]
    [[ $stderr != *"not JSON"* ]]
}

@test "held: billion laughs and an external entity in S3's XML are refused or ignored, never expanded" {
    s3_home
    mode s3-laughs
    bounded_mount "s3://bucket/p/"
    [ "$status" -eq 1 ]
    unmount_all
    : >"$BATS_TEST_TMPDIR/daemon.log"
    mode s3-external
    bounded_mount "s3://bucket/p/"
    if [ "$status" -eq 0 ]; then
        timed 20 ls -R "$MNT"
        [ "$status" -eq 0 ]
        [[ $output != *root:* ]]
    fi
    ! grep -q "root:" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "held: a 100 MB template layer is not kept whole, the daemon within cache_mb + 64 MB" {
    mode registry-big-template
    bounded_mount "ollama+http://127.0.0.1:$HOME_PORT/library/tiny:latest"
    rss_bounded
    if [ "$status" -eq 0 ]; then
        [ "$(stat -c %s "$MNT/layers/template" 2>/dev/null || echo 0)" -lt $((16 << 20)) ]
    fi
}
