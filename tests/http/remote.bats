#!/usr/bin/env bats
# Remote models through the mount: a model mounted by URL (or hf://, or by
# a shard's URL) has the tree of the same file mounted locally, byte for
# byte; mounting fetches the header and little more; refusals name the URL
# and the status; faults from the proxy give what SPEC says within the
# timeout, the daemon alive and later reads right; a stalled tensor does not
# hold up the others; a second mount with the disk cache fetches nothing.

load ../bats/test_helper
load server
load in_flight

BLOCK=1048576

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    mkdir -p "$FILES/be" "$FILES/split"
    cp "$GGUF_FS_FIXTURES"/*.gguf "$FILES/"
    cp "$GGUF_FS_FIXTURES"/be/*.gguf "$FILES/be/"
    # A header of about 2.3 MB (more than one fetch) before 7 MiB of tensors.
    python3 "$BATS_TEST_DIRNAME/make_model.py" "$FILES/big.gguf" 100000 2 2 3 >"$BATS_FILE_TMPDIR/big.header_end"
    python3 "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 1 "$FILES/big.gguf" "$FILES/split/big"
    python3 "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 2 "$FILES/type-q4_K.gguf" "$FILES/split/q4"
    start_servers "$BATS_FILE_TMPDIR/srv" "$FILES"
}

teardown_file() {
    stop_servers
}

setup() {
    require_fuse
    server_reset
    REMOTE="$BATS_TEST_TMPDIR/remote"
    LOCAL="$BATS_TEST_TMPDIR/local"
}

# same_as_local URL FILE: mounts both, compares the trees, unmounts both.
same_as_local() {
    mount_model "$1" "$REMOTE" "${@:3}"
    mount_model "$2" "$LOCAL"
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_tree.py" "$REMOTE" "$LOCAL"
    fusermount3 -u "$REMOTE"
    fusermount3 -u "$LOCAL"
    [ "$status" -eq 0 ] || { echo "$1: $output"; return 1; }
}

# The bytes the proxy was asked for since the last clear_log.
bytes_requested() {
    awk '{split($3, r, /[=-]/); if (r[1] == "bytes") n += r[3] - r[2] + 1} END {print n + 0}' "$SERVER_DIR/proxy.log"
}

# within SECONDS COMMAND...: runs COMMAND, fails unless it ended in time.
elapsed_below() {
    python3 -c "import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))" "$1" "$2"
}

now() {
    date +%s.%N
}

# bats test_tags=every_fixture
@test "every fixture mounted by URL has the local mount's tree, byte for byte" {
    local f n=0
    for f in "$FILES"/*.gguf "$FILES"/be/*.gguf; do
        same_as_local "$DIRECT/${f#"$FILES"/}" "$f"
        n=$((n + 1))
    done
    [ "$n" -ge 75 ]
}

@test "a split set mounted by any shard's URL has the local set's tree" {
    same_as_local "$DIRECT/split/big-00001-of-00003.gguf" "$FILES/split/big-00001-of-00003.gguf"
    same_as_local "$DIRECT/split/big-00003-of-00003.gguf" "$FILES/split/big-00002-of-00003.gguf"
    local last
    last=$(basename "$(ls "$FILES"/split/q4-*.gguf | tail -n 1)")
    same_as_local "$DIRECT/split/$last" "$FILES/type-q4_K.gguf" 2>/dev/null ||
        same_as_local "$DIRECT/split/$last" "$FILES/split/$last"
    # model.gguf of the remote set is the unsplit file.
    mount_model "$DIRECT/split/big-00002-of-00003.gguf" "$REMOTE"
    cmp "$REMOTE/model.gguf" "$FILES/big.gguf"
    grep -q "^path: $DIRECT/split/big-00003-of-00003.gguf\$" "$REMOTE/shards/big-00003-of-00003.gguf"
}

@test "hashes by URL are gguf-hash's over what the caches fetch; a lasting fault gives EIO, retried later" {
    local ref="$BATS_TEST_DIRNAME/../bats/gguf_hash_ref.py"
    mount_model "$DIRECT/type-q4_K.gguf" "$REMOTE"
    run "$PYTHON" "$ref" check "$REMOTE" "$FILES/type-q4_K.gguf" "$GGUF_FS_FIXTURES/type-q4_K.tensors" --files-first
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    fusermount3 -u "$REMOTE"
    # 7 MiB of tensors, read in several requests; a split set by a shard's URL.
    mount_model "$DIRECT/big.gguf" "$REMOTE" -o cache_mb=1
    run "$PYTHON" "$ref" check "$REMOTE" "$FILES/big.gguf"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    fusermount3 -u "$REMOTE"
    mount_model "$DIRECT/split/big-00002-of-00003.gguf" "$REMOTE"
    run "$PYTHON" "$ref" check "$REMOTE" "$FILES/big.gguf" --files-first
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    fusermount3 -u "$REMOTE"
    mount_model "$PROXIED/big.gguf" "$REMOTE" -o timeout_s=2
    fault refuse
    run -1 --separate-stderr cat "$REMOTE/hashes"
    [[ "$stderr" == *"Input/output error"* ]]
    run -1 --separate-stderr cat "$REMOTE/tensors/t1/sha256"
    [[ "$stderr" == *"Input/output error"* ]]
    daemon_alive
    fault pass
    sleep 1
    run "$PYTHON" "$ref" check "$REMOTE" "$FILES/big.gguf" --files-first
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "a URL mount loads the remote engine's module and libcurl; the hashes' module waits for a hash" {
    mount_model "$DIRECT/type-q4_K.gguf" "$REMOTE"
    local pid
    pid=$(last_daemon)
    run -0 mapped_libraries "$pid"
    echo "$output"
    grep -qx 'gguf-fs-remote\.so' <<<"$output"
    grep -q '^libcurl\.so' <<<"$output"
    run ! grep -E '^(gguf-fs-digests|libxxhash)' <<<"$output"
    [ "$(cat "$REMOTE/tensors/mat/sha256")" = "$(sha256sum <"$REMOTE/tensors/mat/raw" | cut -d' ' -f1)" ]
    run -0 mapped_libraries "$pid"
    grep -qx 'gguf-fs-digests\.so' <<<"$output"
    grep -q '^libxxhash\.so' <<<"$output"
}

@test "a split set missing a shard on the server is refused naming it" {
    cp "$FILES/split/big-00001-of-00003.gguf" "$FILES/split/lone-00001-of-00003.gguf"
    mkdir -p "$BATS_TEST_TMPDIR/mnt"
    run -1 --separate-stderr "$GGUF_FS" -f "$DIRECT/split/lone-00001-of-00003.gguf" "$BATS_TEST_TMPDIR/mnt"
    [[ "$stderr" == *"lone-00002-of-00003.gguf"*"HTTP 404"* ]]
}

@test "hf:// names through HF_ENDPOINT mount the same tree; the token reaches only the endpoint" {
    export HF_ENDPOINT="http://127.0.0.1:$NGINX_PORT"
    same_as_local "hf://org/repo/type-q6_K.gguf" "$FILES/type-q6_K.gguf"
    same_as_local "hf://org/repo/split/big-00001-of-00003.gguf@main" "$FILES/split/big-00001-of-00003.gguf"
    grep -q "^GET /org/repo/resolve/main/split/big-00003-of-00003.gguf " "$SERVER_DIR/nginx-access.log"
    # The private repository wants the token.
    mkdir -p "$BATS_TEST_TMPDIR/mnt"
    run -1 --separate-stderr env -u HF_TOKEN HOME="$BATS_TEST_TMPDIR" "$GGUF_FS" -f "hf://org/private/type-q8_0.gguf" "$BATS_TEST_TMPDIR/mnt"
    [[ "$stderr" == "gguf-fs: hf://org/private/type-q8_0.gguf: cannot open: HTTP 401"* ]]
    HF_TOKEN=$HUB_TOKEN same_as_local "hf://org/private/type-q8_0.gguf" "$FILES/type-q8_0.gguf"
    grep -q "^GET /org/private/resolve/main/type-q8_0.gguf .* 302 host=127.0.0.1 auth=Bearer $HUB_TOKEN\$" "$SERVER_DIR/nginx-access.log"
    grep -q "^GET /files/type-q8_0.gguf .* host=localhost auth=-\$" "$SERVER_DIR/nginx-access.log"
    run grep "host=localhost auth=[^-]" "$SERVER_DIR/nginx-access.log"
    [ "$status" -eq 1 ]
}

@test "an https:// URL mounts the local mount's tree, its certificate checked against CURL_CA_BUNDLE" {
    local tls="https://127.0.0.1:$TLS_PORT/files" f
    for f in big.gguf type-q4_K.gguf be/type-q6_K.gguf; do
        CURL_CA_BUNDLE="$SERVER_DIR/tls.pem" same_as_local "$tls/$f" "$FILES/$f"
    done
    # The bytes came over TLS: the HTTPS server answered the ranges.
    [ "$(grep -c '^GET /files/big.gguf bytes=.* 206 ' "$SERVER_DIR/nginx-tls-access.log")" -ge 3 ]
    run grep -c '^GET /files/big.gguf ' "$SERVER_DIR/nginx-access.log"
    [ "$output" -eq 0 ]
}

@test "an https:// URL whose certificate is not trusted is refused before mounting, naming the URL" {
    local mnt="$BATS_TEST_TMPDIR/mnt" url="https://127.0.0.1:$TLS_PORT/files/type-q4_K.gguf" start
    mkdir -p "$mnt"
    # The system's authorities do not know the self-signed certificate.
    start=$(now)
    run -1 --separate-stderr env -u CURL_CA_BUNDLE "$GGUF_FS" -f -o timeout_s=20 "$url" "$mnt"
    [[ "$stderr" == "gguf-fs: $url: cannot open: "*"certificate"*"(checked against the system's authorities; CURL_CA_BUNDLE names others)" ]]
    [ "${#stderr_lines[@]}" -eq 1 ]
    run ! mountpoint -q "$mnt"
    # Refused at once, not retried as a failure that may pass.
    elapsed_below "$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(now)")" 5
    # Nor does another authority vouch for it.
    make_certificate "$BATS_TEST_TMPDIR"
    run -1 --separate-stderr env CURL_CA_BUNDLE="$BATS_TEST_TMPDIR/tls.pem" "$GGUF_FS" -f "$url" "$mnt"
    [[ "$stderr" == "gguf-fs: $url: cannot open: "*"certificate"*"(checked against CURL_CA_BUNDLE=$BATS_TEST_TMPDIR/tls.pem)" ]]
    ! mountpoint -q "$mnt"
}

@test "mounting fetches the header in growing ranges, no more than the header plus 1 MiB" {
    local header_end
    header_end=$(cat "$BATS_FILE_TMPDIR/big.header_end")
    [ "$header_end" -gt "$BLOCK" ]
    mount_model "$PROXIED/big.gguf" "$REMOTE"
    ls "$REMOTE/tensors" >/dev/null
    [ "$(cat "$REMOTE/metadata/general.name")" = "remote test model" ]
    local fetched
    fetched=$(bytes_requested)
    echo "header $header_end, fetched $fetched" >&2
    [ "$fetched" -ge "$header_end" ]
    [ "$fetched" -le $((header_end + BLOCK)) ]
    [ "$(grep -c 'bytes=' "$SERVER_DIR/proxy.log")" -ge 2 ]
    # And a tensor read fetches its bytes, not the file.
    clear_log
    head -c 1000 "$REMOTE/tensors/t2/raw" >/dev/null
    [ "$(bytes_requested)" -le $((2 * BLOCK)) ]
}

@test "a tensor read in order is read ahead up to its end, and its f32 then comes from the cache" {
    mount_model "$PROXIED/big.gguf" "$REMOTE"
    mount_model "$FILES/big.gguf" "$LOCAL"
    local off bytes end_block
    off=$(sed -n 's/^offset: //p' "$LOCAL/tensors/t1/info")
    bytes=$(sed -n 's/^bytes: //p' "$LOCAL/tensors/t1/info")
    end_block=$(((off + bytes + BLOCK - 1) / BLOCK * BLOCK))
    [ "$(stat -c %s "$FILES/big.gguf")" -gt $((end_block + 2 * BLOCK)) ]
    clear_log
    cmp "$REMOTE/tensors/t1/raw" "$LOCAL/tensors/t1/raw"
    # Read-ahead past the end would have been queued by the reads, and
    # asked for by the time nothing is in flight.
    await_idle "$REMOTE"
    local past
    past=$(awk -v end="$end_block" '{split($3, r, /[=-]/); if (r[1] == "bytes" && r[3] >= end) print}' \
        "$SERVER_DIR/proxy.log")
    [ -z "$past" ] || { echo "asked for bytes past t1's last block: $past"; return 1; }
    [ "$(bytes_requested)" -ge $((bytes / BLOCK * BLOCK - BLOCK)) ]
    # The blocks stay in the memory cache: f32 needs no request.
    clear_log
    cmp "$REMOTE/tensors/t1/f32" "$LOCAL/tensors/t1/f32"
    [ "$(grep -c 'bytes=' "$SERVER_DIR/proxy.log")" -eq 0 ]
}

@test "401, 403, 404, a server without ranges and a redirect loop are refused before mounting" {
    local mnt="$BATS_TEST_TMPDIR/mnt" url
    mkdir -p "$mnt"
    for url in "$DIRECT/missing.gguf|HTTP 404" "http://127.0.0.1:$NGINX_PORT/forbidden/type-f32.gguf|HTTP 403" \
               "http://127.0.0.1:$NGINX_PORT/norange/type-f32.gguf|answered 200 to a range request" \
               "http://127.0.0.1:$NGINX_PORT/loop/type-f32.gguf|redirect loop"; do
        run -1 --separate-stderr "$GGUF_FS" -f "${url%%|*}" "$mnt"
        [[ "$stderr" == "gguf-fs: ${url%%|*}: cannot open: "*"${url#*|}"* ]]
        [ "${#stderr_lines[@]}" -eq 1 ]
        run ! mountpoint -q "$mnt"
    done
}

# fresh_mounts [OPTIONS...]: big.gguf through the proxy (mounted while it
# passes) on $REMOTE, and from its file on $LOCAL. A fresh mount has an
# empty page cache, so each round's reads reach the daemon.
fresh_mounts() {
    fault pass
    if mountpoint -q "$REMOTE"; then fusermount3 -u "$REMOTE"; fi
    mountpoint -q "$LOCAL" || mount_model "$FILES/big.gguf" "$LOCAL"
    mount_model "$PROXIED/big.gguf" "$REMOTE" "$@"
}

daemon_alive() {
    local pid
    pid=$(awk -v m="$REMOTE" '$2 == m {p = $1} END {print p}' "$BATS_TEST_TMPDIR/daemons")
    kill -0 "$pid"
    ls "$REMOTE/tensors" >/dev/null
    cat "$REMOTE/header" "$REMOTE/tensors/t1/info" "$REMOTE/metadata/general.name" >/dev/null
}

@test "faults that pass: refused connections, resets, short bodies and 503s are retried, reads are right" {
    local mode
    for mode in "503 x3" "reset x2" "short x2" "refuse x2"; do
        fresh_mounts -o timeout_s=15
        clear_log
        fault "$mode"
        cmp "$REMOTE/tensors/t1/raw" "$LOCAL/tensors/t1/raw"
        cmp "$REMOTE/tensors/t2/f32" "$LOCAL/tensors/t2/f32"
        grep -q " ${mode%% *} " "$SERVER_DIR/proxy.log"
    done
}

@test "faults that last: EIO within timeout_s plus a margin, the daemon alive, later reads right" {
    local mode start took
    for mode in refuse reset short stall 503 norange; do
        fresh_mounts -o timeout_s=3
        fault "$mode"
        start=$(now)
        run -1 --separate-stderr cat "$REMOTE/tensors/t1/raw"
        took=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(now)")
        echo "$mode: EIO after $took s" >&2
        [[ "$stderr" == *"Input/output error"* ]]
        elapsed_below "$took" 7 || { tail -5 "$BATS_TEST_TMPDIR/daemon.log" >&2; return 1; }
        run -1 --separate-stderr cat "$REMOTE/tensors/t0/f32"
        [[ "$stderr" == *"Input/output error"* ]]
        daemon_alive
        grep -q "gguf-fs: $PROXIED/big.gguf: bytes .*; the read fails with EIO" "$BATS_TEST_TMPDIR/daemon.log"
        fault pass
        # A block whose fetch failed fails again, quietly, for 0.5 s, and a
        # fetch the fault still holds (a read-ahead's) fails only as it is
        # lifted: past both, with room.
        sleep 1
        cmp "$REMOTE/tensors/t1/raw" "$LOCAL/tensors/t1/raw"
        cmp "$REMOTE/tensors/t0/f32" "$LOCAL/tensors/t0/f32"
    done
}

@test "an ETag changed on the server: EIO on data reads for good, one log line, the tree answers" {
    fresh_mounts -o timeout_s=3
    fault etag
    run -1 --separate-stderr cat "$REMOTE/tensors/t1/raw"
    [[ "$stderr" == *"Input/output error"* ]]
    run -1 --separate-stderr cat "$REMOTE/tensors/t2/f32"
    [[ "$stderr" == *"Input/output error"* ]]
    fault pass
    run -1 --separate-stderr cat "$REMOTE/tensors/t0/raw"
    [[ "$stderr" == *"Input/output error"* ]]
    daemon_alive
    [ "$(grep -c 'changed on the server since it was mounted (ETag changed from' "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ]
}

@test "a stalled tensor does not hold up reads of the others" {
    fresh_mounts -o timeout_s=5
    # Requests for the middle of t0 stall; requests that do not touch it
    # pass (a request for a block shared with t1 would stall too).
    local t0 mid
    t0=$(sed -n 's/^offset: //p' "$LOCAL/tensors/t0/info")
    mid=$((t0 + BLOCK))
    fault stall "$mid-$mid"
    local start=$(now)
    ( if cat "$REMOTE/tensors/t0/raw" >/dev/null 2>&1; then echo 0; else echo 1; fi >"$BATS_TEST_TMPDIR/slow.status"
      now >"$BATS_TEST_TMPDIR/slow.end" ) 3>&- &
    # The reader is held once its request for the middle of t0 stalls.
    await_request " stall "
    local fast_start=$(now)
    cmp "$REMOTE/tensors/t2/raw" "$LOCAL/tensors/t2/raw"
    cmp "$REMOTE/tensors/t1/f32" "$LOCAL/tensors/t1/f32"
    ls -l "$REMOTE/tensors" >/dev/null
    cat "$REMOTE/metadata/general.name" >/dev/null
    local fast_took
    fast_took=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$fast_start" "$(now)")
    echo "other tensors read in $fast_took s while t0 stalls" >&2
    elapsed_below "$fast_took" 2
    # The stalled one is still waiting, then fails.
    [ ! -f "$BATS_TEST_TMPDIR/slow.end" ]
    local i
    for i in $(seq 300); do
        [ -s "$BATS_TEST_TMPDIR/slow.end" ] && break
        sleep 0.05
    done
    [ "$(cat "$BATS_TEST_TMPDIR/slow.status")" -ne 0 ]
    elapsed_below "$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$start" "$(cat "$BATS_TEST_TMPDIR/slow.end")")" 9
    fault pass
    # Past the 0.5 s a failed block fails again, counted from the fetches
    # the stall still held (a read-ahead's), which fail only now.
    sleep 1
    cmp "$REMOTE/tensors/t0/raw" "$LOCAL/tensors/t0/raw"
}

@test "a second mount with the disk cache reads every tensor without fetching it again" {
    local cache="$BATS_TEST_TMPDIR/cache"
    mount_model "$PROXIED/big.gguf" "$REMOTE" -o cache_dir="$cache"
    mount_model "$FILES/big.gguf" "$LOCAL"
    local t
    for t in t0 t1 t2; do
        cmp "$REMOTE/tensors/$t/raw" "$LOCAL/tensors/$t/raw"
    done
    fusermount3 -u "$REMOTE"
    clear_log
    mount_model "$PROXIED/big.gguf" "$REMOTE" -o cache_dir="$cache",cache_mb=16
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_tree.py" "$REMOTE" "$LOCAL"
    [ "$status" -eq 0 ]
    # One request, for one byte: the size and ETag, checked at mount.
    [ "$(grep -c 'bytes=' "$SERVER_DIR/proxy.log")" -eq 1 ]
    grep -q 'bytes=0-0 ' "$SERVER_DIR/proxy.log"
}

@test "a small memory cache (cache_mb=0) still reads every byte right" {
    same_as_local "$PROXIED/big.gguf" "$FILES/big.gguf" -o cache_mb=0
    same_as_local "$PROXIED/type-q4_K.gguf" "$FILES/type-q4_K.gguf" -o cache_mb=0
}
