#!/usr/bin/env bats
# The remote source on its own (fs/source/source_http.c through tests/http/source_cat):
# bytes equal to the local file's, Hub names and tokens, refusals, faults
# from the proxy, caches and read-ahead. nginx and the fault proxy run on
# 127.0.0.1 for the whole file.

bats_require_minimum_version 1.5.0
load server

: "${SOURCE_CAT:?SOURCE_CAT must name the source_cat tool}"
: "${GGUF_FS_FIXTURES:?GGUF_FS_FIXTURES must name the fixture directory}"

BLOCK=1048576

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    mkdir -p "$FILES"
    cp "$GGUF_FS_FIXTURES"/metadata.gguf "$GGUF_FS_FIXTURES"/type-q4_K.gguf "$GGUF_FS_FIXTURES"/type-f16.gguf "$FILES/"
    # Nine and a half blocks of random bytes: block edges, a short last block.
    head -c $((9 * BLOCK + BLOCK / 2)) /dev/urandom >"$FILES/random.bin"
    start_servers "$BATS_FILE_TMPDIR/srv" "$FILES"
}

teardown_file() {
    stop_servers
}

setup() {
    server_reset
    OUT="$BATS_TEST_TMPDIR"
}

teardown() {
    # A failed test shows what the proxy saw and what source_cat said.
    if [ -z "${BATS_TEST_COMPLETED:-}" ]; then
        echo "proxy.log:" >&2
        cat "$SERVER_DIR/proxy.log" >&2
        cat "$OUT"/*.err >&2 2>/dev/null || true
    fi
    if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error|ThreadSanitizer' "$OUT"/*.err 2>/dev/null; then
        cat "$OUT"/*.err >&2
        return 1
    fi
}

# A test that faults the server after the open waits for the open's
# first request to reach the proxy (await_request; each test starts with
# its log empty), and has source_cat wait 1.5 s before its reads (-w
# 1500): the fault is then in place however slow the machine.

# cat_range NAME OFF LEN [source_cat options...]: the bytes on stdout.
cat_range() {
    local name=$1 off=$2 len=$3
    shift 3
    "$SOURCE_CAT" "$@" "$name" "$off:$len" 2>>"$OUT/cat.err"
}

# local_range FILE OFF LEN
local_range() {
    tail -c +$(($2 + 1)) "$1" | head -c "$3"
}

size_of() {
    stat -c %s "$1"
}

# Requests the proxy saw with a Range header.
ranges_requested() {
    grep -c 'bytes=' "$SERVER_DIR/proxy.log" || true
}

# ranges_cover_once SIZE: the ranges asked for cover bytes 0 to SIZE - 1,
# each byte once.
ranges_cover_once() {
    awk '{split($3, r, /[=-]/); if (r[1] == "bytes") print r[2], r[3]}' "$SERVER_DIR/proxy.log" |
        sort -n | awk -v size="$1" '
            $1 != next_byte {print "gap or overlap at " next_byte ": " $1 "-" $2; bad = 1}
            {next_byte = $2 + 1}
            END {if (next_byte != size) {print "covered up to " next_byte " of " size; bad = 1}; exit bad}'
}

# range_asked_for_byte OFF: some request's range holds byte OFF.
range_asked_for_byte() {
    awk -v at="$1" '{split($3, r, /[=-]/); if (r[1] == "bytes" && r[2] <= at && at <= r[3]) found = 1}
                    END {exit !found}' "$SERVER_DIR/proxy.log"
}

@test "every fixture reads back byte for byte, whole and in ranges across block edges" {
    local f size
    for f in metadata.gguf type-q4_K.gguf type-f16.gguf random.bin; do
        size=$(size_of "$FILES/$f")
        cat_range "$DIRECT/$f" 0 "$size" -c 131072 >"$OUT/whole"
        cmp "$OUT/whole" "$FILES/$f"
    done
    local off len
    for off in 0 1 $((BLOCK - 3)) $((BLOCK)) $((3 * BLOCK - 100)) $((9 * BLOCK + 1000)); do
        for len in 1 7 $((BLOCK + 5)) $((2 * BLOCK)); do
            size=$(size_of "$FILES/random.bin")
            [ $((off + len)) -le "$size" ] || continue
            cat_range "$DIRECT/random.bin" "$off" "$len" -c 65536 >"$OUT/part"
            cmp "$OUT/part" <(local_range "$FILES/random.bin" "$off" "$len")
        done
    done
}

@test "a read past the end of the file fails, the source stays usable" {
    local size
    size=$(size_of "$FILES/random.bin")
    # The message is on stderr; the bytes of 0:10 on stdout.
    run -1 --separate-stderr "$SOURCE_CAT" "$DIRECT/random.bin" "$((size - 10)):20" 0:10
    [[ "$stderr" == *"passes the end"* ]]
}

@test "opening fetches one block, and with a disk cache one byte" {
    "$SOURCE_CAT" -i "$PROXIED/random.bin" 2>"$OUT/open.err"
    grep -qx "size $(size_of "$FILES/random.bin")" "$OUT/open.err"
    [ "$(ranges_requested)" -eq 1 ]
    grep -q "bytes=0-$((BLOCK - 1)) " "$SERVER_DIR/proxy.log"
    clear_log
    "$SOURCE_CAT" -d "$OUT/cache" "$PROXIED/random.bin" 2>>"$OUT/open.err"
    [ "$(ranges_requested)" -eq 1 ]
    grep -q "bytes=0-0 " "$SERVER_DIR/proxy.log"
}

@test "hf:// names resolve through HF_ENDPOINT, with the revision, following the redirect" {
    local size
    size=$(size_of "$FILES/type-q4_K.gguf")
    HF_ENDPOINT="http://127.0.0.1:$NGINX_PORT" cat_range "hf://org/repo/type-q4_K.gguf" 0 "$size" >"$OUT/hf"
    cmp "$OUT/hf" "$FILES/type-q4_K.gguf"
    grep -q '^GET /org/repo/resolve/main/type-q4_K.gguf ' "$SERVER_DIR/nginx-access.log"
    HF_ENDPOINT="http://127.0.0.1:$NGINX_PORT/" cat_range "hf://org/repo/type-q4_K.gguf@v1.0" 0 100 >"$OUT/hf"
    grep -q '^GET /org/repo/resolve/v1.0/type-q4_K.gguf ' "$SERVER_DIR/nginx-access.log"
    HF_ENDPOINT="http://127.0.0.1:$NGINX_PORT" cat_range "hf://org/repo/type-q4_K.gguf@refs/pr/1" 0 100 >"$OUT/hf"
    grep -q '^GET /org/repo/resolve/refs%2Fpr%2F1/type-q4_K.gguf ' "$SERVER_DIR/nginx-access.log"
}

@test "the Hub token is sent to the endpoint and never to the host a redirect leads to" {
    export HF_ENDPOINT="http://127.0.0.1:$NGINX_PORT"
    export HOME="$BATS_TEST_TMPDIR/home"
    unset HF_HOME HF_TOKEN
    local size
    size=$(size_of "$FILES/random.bin")
    # No token: 401, naming the URL's status.
    run -2 --separate-stderr "$SOURCE_CAT" "hf://org/private/random.bin"
    [[ "$stderr" == *"hf://org/private/random.bin"*"HTTP 401"* ]]
    # HF_TOKEN.
    HF_TOKEN=$HUB_TOKEN cat_range "hf://org/private/random.bin" 0 "$size" >"$OUT/private"
    cmp "$OUT/private" "$FILES/random.bin"
    # The token file.
    mkdir -p "$HOME/.cache/huggingface"
    echo "$HUB_TOKEN" >"$HOME/.cache/huggingface/token"
    cat_range "hf://org/private/random.bin" 0 100 >"$OUT/private"
    cmp "$OUT/private" <(head -c 100 "$FILES/random.bin")
    # The endpoint got it; localhost, where the redirect led, never did.
    grep -q "^GET /org/private/resolve/main/random.bin .* 302 host=127.0.0.1 auth=Bearer $HUB_TOKEN\$" "$SERVER_DIR/nginx-access.log"
    grep -q "^GET /files/random.bin .* 206 host=localhost auth=-\$" "$SERVER_DIR/nginx-access.log"
    run grep "host=localhost auth=[^-]" "$SERVER_DIR/nginx-access.log"
    [ "$status" -eq 1 ]
}

@test "a token is never sent for plain URLs" {
    HF_TOKEN=$HUB_TOKEN cat_range "$DIRECT/random.bin" 0 100 >/dev/null
    run grep "auth=[^-]" "$SERVER_DIR/nginx-access.log"
    [ "$status" -eq 1 ]
}

@test "401, 403, 404, no range support and redirect loops are refused, naming the status" {
    run -2 --separate-stderr "$SOURCE_CAT" "$DIRECT/missing.gguf"
    [[ "$stderr" == "gguf-fs: $DIRECT/missing.gguf: cannot open: HTTP 404"* ]]
    run -2 --separate-stderr "$SOURCE_CAT" "http://127.0.0.1:$NGINX_PORT/forbidden/x.gguf"
    [[ "$stderr" == *"/forbidden/x.gguf: cannot open: HTTP 403"* ]]
    run -2 --separate-stderr "$SOURCE_CAT" "http://127.0.0.1:$NGINX_PORT/norange/random.bin"
    [[ "$stderr" == *"/norange/random.bin: cannot open: the server answered 200 to a range request"* ]]
    run -2 --separate-stderr "$SOURCE_CAT" "http://127.0.0.1:$NGINX_PORT/loop/x.gguf"
    [[ "$stderr" == *"/loop/x.gguf: cannot open: redirect loop"* ]]
    run -2 --separate-stderr "$SOURCE_CAT" "hf://org/only-two"
    [[ "$stderr" == *"not an hf://ORG/REPO/FILE"* ]]
    # None of these transferred a body: the 200 was cut at its first bytes.
    ! grep -q ' 200 ' "$SERVER_DIR/nginx-access.log" || \
        [ "$(awk '$4 == 200' "$SERVER_DIR/nginx-access.log" | wc -l)" -le 1 ]
}

@test "a server down at open is retried until timeout_s, then refused" {
    fault refuse
    local start=$SECONDS
    run -2 --separate-stderr "$SOURCE_CAT" -t 2 "$PROXIED/random.bin"
    [[ "$stderr" == *"cannot open:"*"attempts over"* ]]
    # The margin is wide for the sanitizer builds on a loaded machine; without
    # the timeout the open would retry for the default 30 s.
    [ $((SECONDS - start)) -le 7 ]
}

@test "refused connections, resets mid-body, short bodies and 503s are retried and the read succeeds" {
    local size mode
    size=$(size_of "$FILES/random.bin")
    for mode in "503 x3" "reset x2" "short x2" "refuse x2" "refuse"; do
        fault pass
        clear_log
        # Opened while the server passes; the data requests meet the fault.
        (await_request; fault "$mode"; sleep 2; fault pass) &
        "$SOURCE_CAT" -w 1500 -t 10 "$PROXIED/random.bin" "$BLOCK:$((size - BLOCK))" \
            >"$OUT/got" 2>>"$OUT/cat.err"
        wait
        cmp "$OUT/got" <(tail -c +$((BLOCK + 1)) "$FILES/random.bin")
        grep -q "bytes=$BLOCK-.* ${mode%% *} " "$SERVER_DIR/proxy.log"
    done
}

@test "a request cut short is followed by one for the blocks it did not bring whole" {
    (await_request; fault "short x1") &
    "$SOURCE_CAT" -w 1500 -t 10 -c $((4 * BLOCK)) "$PROXIED/random.bin" "$BLOCK:$((4 * BLOCK))" \
        >"$OUT/got" 2>>"$OUT/cat.err"
    wait
    cmp "$OUT/got" <(local_range "$FILES/random.bin" "$BLOCK" $((4 * BLOCK)))
    # Half the body came (blocks 1 and 2); the second request starts at 3.
    grep -q "bytes=$BLOCK-$((5 * BLOCK - 1)) short " "$SERVER_DIR/proxy.log"
    grep -q "bytes=$((3 * BLOCK))-$((5 * BLOCK - 1)) pass " "$SERVER_DIR/proxy.log"
    [ "$(ranges_requested)" -eq 3 ]
}

@test "a refusing server: EIO after timeout_s plus a margin, one log line naming the bytes" {
    (await_request; fault refuse) &
    local start=$SECONDS
    run -1 --separate-stderr "$SOURCE_CAT" -w 1500 -t 2 "$PROXIED/random.bin" 0:10 "$((5 * BLOCK)):10"
    local took=$((SECONDS - start))
    wait
    fault pass
    [ "$took" -le 9 ] # -w 1500 twice, timeout_s 2, and the margin above
    [ "$(grep -c 'fails with EIO' <<<"$stderr")" -eq 1 ]
    [[ "$stderr" == *"$PROXIED/random.bin: bytes $((5 * BLOCK))-$((5 * BLOCK + 9)): "*"attempts over"* ]]
    [[ "$stderr" == *"range 0 10 0 "* ]]
    [[ "$stderr" == *"range $((5 * BLOCK)) 10 5 "* ]]
}

# bats test_tags=races
@test "a stalled server: EIO after timeout_s, and other ranges keep being read meanwhile" {
    local size
    size=$(size_of "$FILES/random.bin")
    # Requests for bytes in block 6 stall; everything else passes.
    fault stall $((6 * BLOCK))-$((6 * BLOCK + 10))
    run -1 --separate-stderr "$SOURCE_CAT" -j -m 0 -t 3 "$PROXIED/random.bin" \
        "$((6 * BLOCK)):100:$OUT/slow" "$((2 * BLOCK)):$BLOCK:$OUT/fast"
    fault pass
    local slow fast
    slow=$(awk '$1 == "range" && $2 == '$((6 * BLOCK))' {print $4, $5}' <<<"$stderr")
    fast=$(awk '$1 == "range" && $2 == '$((2 * BLOCK))' {print $4, $5}' <<<"$stderr")
    # The stalled read failed with EIO (5) after about 3 s ...
    [ "${slow%% *}" -eq 5 ]
    python3 -c "import sys; t = float(sys.argv[1]); sys.exit(not (2.5 <= t <= 9))" "${slow#* }"
    # ... while the other read finished well before that, with the right bytes.
    [ "${fast%% *}" -eq 0 ]
    python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 2.5)" "${fast#* }"
    cmp "$OUT/fast" <(local_range "$FILES/random.bin" $((2 * BLOCK)) $BLOCK)
}

@test "the kernel's retry of a failed read, page by page, fails at the failed block at once however slow" {
    # Requests for bytes in block 1 stall. Block 0 came with the open; a
    # read across the edge (the first, so no read-ahead runs beside it)
    # fails after timeout_s, and its retry page by page, 0.1 s a page
    # (0.8 s over block 0's 8 pages in it), reaches block 1 past the half
    # second a failure is remembered alone, well within the timeout_s a
    # retry renews it for.
    fault stall $((BLOCK))-$((BLOCK + 10))
    run -1 --separate-stderr "$SOURCE_CAT" -t 3 -k 100 "$PROXIED/random.bin" "$((BLOCK - 32768)):65536"
    fault pass
    echo "$stderr" | grep -E '^(range|retry) ' >&2
    [[ "$stderr" == *"range $((BLOCK - 32768)) 65536 5 "* ]]
    local retry
    retry=$(awk '$1 == "retry" {print $3, $4, $5}' <<<"$stderr")
    # Block 0's 8 pages read, then block 1's first page failed with EIO
    # (5) at once, not after another timeout_s.
    [ "${retry% *}" = "8 5" ]
    python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 0.5)" "${retry##* }"
}

@test "an ETag changed on the server: EIO on data reads from then on, one log line" {
    (await_request; fault etag) &
    run -1 --separate-stderr "$SOURCE_CAT" -w 1500 -i -t 5 -c 4096 "$PROXIED/random.bin" \
        0:10 "$((3 * BLOCK)):10" "$((4 * BLOCK)):10" 0:10
    wait
    [[ "$stderr" == *"range 0 10 0 "* ]]
    [[ "$stderr" == *"range $((3 * BLOCK)) 10 5 "* ]]
    [[ "$stderr" == *"range $((4 * BLOCK)) 10 5 "* ]]
    [[ "$stderr" == *"unchanged 0"* ]]
    [ "$(grep -c 'changed on the server since it was mounted (ETag changed from' <<<"$stderr")" -eq 1 ]
    [ "$(grep -c 'fails with EIO' <<<"$stderr")" -eq 0 ]
}

@test "a server that stops serving ranges gives EIO, not the whole file" {
    (await_request; fault norange) &
    run -1 --separate-stderr "$SOURCE_CAT" -w 1500 -t 3 -c 4096 "$PROXIED/random.bin" 0:10 "$((8 * BLOCK)):10"
    wait
    [[ "$stderr" == *"range $((8 * BLOCK)) 10 5 "* ]]
    [[ "$stderr" == *"answered 200 to a range request"* ]]
}

# bats test_tags=races
@test "sequential readers get read-ahead; random ones do not; a read across blocks is one request" {
    local size
    size=$(size_of "$FILES/random.bin")
    cat_range "$PROXIED/random.bin" 0 "$size" -c 131072 >"$OUT/seq"
    cmp "$OUT/seq" "$FILES/random.bin"
    # Every byte once, a block a request over many connections at first.
    ranges_cover_once "$size"
    clear_log
    # Over one connection, in fewer requests than blocks: read-ahead asks
    # for runs of blocks as its window grows.
    cat_range "$PROXIED/random.bin" 0 "$size" -c 131072 -n 1 >"$OUT/seq"
    cmp "$OUT/seq" "$FILES/random.bin"
    ranges_cover_once "$size"
    [ "$(ranges_requested)" -lt 10 ]
    clear_log
    # Three blocks read in small steps: the blocks after them come too.
    cat_range "$PROXIED/random.bin" 0 $((3 * BLOCK)) -c 131072 -w 300 >"$OUT/seq"
    cmp "$OUT/seq" <(head -c $((3 * BLOCK)) "$FILES/random.bin")
    range_asked_for_byte $((4 * BLOCK))
    clear_log
    # One read of two and a half blocks (past the first, cached at open): one
    # request.
    cat_range "$PROXIED/random.bin" $((BLOCK + 10)) $((5 * BLOCK / 2)) -c $((3 * BLOCK)) >"$OUT/span"
    cmp "$OUT/span" <(local_range "$FILES/random.bin" $((BLOCK + 10)) $((5 * BLOCK / 2)))
    [ "$(ranges_requested)" -eq 2 ]
    grep -q "bytes=$BLOCK-$((4 * BLOCK - 1)) " "$SERVER_DIR/proxy.log"
    clear_log
    # Reads far apart: one request each, of one block, nothing ahead.
    "$SOURCE_CAT" -c 4096 "$PROXIED/random.bin" "$((3 * BLOCK)):100" "$((8 * BLOCK)):100" "$((5 * BLOCK)):100" 2>>"$OUT/cat.err" >/dev/null
    [ "$(ranges_requested)" -eq 4 ]
}

@test "the memory cache serves repeated reads and stays within cache_mb" {
    local size
    size=$(size_of "$FILES/random.bin")
    # Everything fits: the second pass fetches nothing.
    "$SOURCE_CAT" -r 2 -m 64 "$PROXIED/random.bin" "0:$size" >/dev/null 2>>"$OUT/cat.err"
    local big
    big=$(ranges_requested)
    clear_log
    # Two blocks of cache: the second pass fetches again what they cannot hold.
    "$SOURCE_CAT" -r 2 -m 2 "$PROXIED/random.bin" "0:$size" >/dev/null 2>>"$OUT/cat.err"
    local small
    small=$(ranges_requested)
    [ "$big" -le 10 ]
    # Ten blocks in the first pass; in the second, all but the two the
    # cache may hold.
    [ "$small" -ge 18 ]
}

# bats test_tags=races
@test "the disk cache: a second source reads nothing over the network, two at once share it" {
    local size
    size=$(size_of "$FILES/random.bin")
    "$SOURCE_CAT" -d "$OUT/cache" "$PROXIED/random.bin" "0:$size" >"$OUT/first" 2>>"$OUT/cat.err"
    cmp "$OUT/first" "$FILES/random.bin"
    [ "$(find "$OUT/cache" -type f -name '0000000*' | wc -l)" -eq 10 ]
    clear_log
    "$SOURCE_CAT" -d "$OUT/cache" "$PROXIED/random.bin" "0:$size" >"$OUT/second" 2>>"$OUT/cat.err"
    cmp "$OUT/second" "$FILES/random.bin"
    # Only the opening request, for one byte.
    [ "$(ranges_requested)" -eq 1 ]
    grep -q 'bytes=0-0 ' "$SERVER_DIR/proxy.log"
    # Two processes filling a fresh cache at the same time.
    "$SOURCE_CAT" -d "$OUT/shared" -c 65536 "$PROXIED/random.bin" "0:$size" >"$OUT/a" 2>>"$OUT/cat.err" &
    "$SOURCE_CAT" -d "$OUT/shared" -c 100000 "$PROXIED/random.bin" "0:$size" >"$OUT/b" 2>>"$OUT/cat.err"
    wait
    cmp "$OUT/a" "$FILES/random.bin"
    cmp "$OUT/b" "$FILES/random.bin"
    "$SOURCE_CAT" -d "$OUT/shared" "$PROXIED/random.bin" "0:$size" >"$OUT/c" 2>>"$OUT/cat.err"
    cmp "$OUT/c" "$FILES/random.bin"
    # No temporary file is left behind.
    [ -z "$(find "$OUT/shared" -name '*.tmp')" ]
}

@test "a disk cache is keyed by ETag: a changed file never reads the old blocks" {
    cp "$FILES/random.bin" "$FILES/moving.bin"
    "$SOURCE_CAT" -d "$OUT/cache" "$DIRECT/moving.bin" "0:$BLOCK" >/dev/null 2>>"$OUT/cat.err"
    head -c $((3 * BLOCK)) /dev/urandom >"$FILES/moving.bin.new"
    touch -d '2001-01-01' "$FILES/moving.bin.new"
    mv "$FILES/moving.bin.new" "$FILES/moving.bin"
    "$SOURCE_CAT" -d "$OUT/cache" "$DIRECT/moving.bin" "0:$((3 * BLOCK))" >"$OUT/new" 2>>"$OUT/cat.err"
    cmp "$OUT/new" "$FILES/moving.bin"
    [ "$(find "$OUT/cache" -mindepth 2 -maxdepth 2 -type d | wc -l)" -eq 2 ]
}

@test "requests go through http_proxy when it is set" {
    http_proxy="http://127.0.0.1:$PROXY_PORT" cat_range "$DIRECT/type-f16.gguf" 0 1000 >"$OUT/via"
    cmp "$OUT/via" <(head -c 1000 "$FILES/type-f16.gguf")
    grep -q "^GET http://127.0.0.1:$NGINX_PORT/files/type-f16.gguf bytes=0-" "$SERVER_DIR/proxy.log"
}
