#!/usr/bin/env bats
# Whole Hugging Face repos mounted as folders of models (SPEC "Remote
# collections"): a Hub emulation following the Hub's documented API
# (hub_emulator.py: revision to commit, tree pages of 3 entries with Link
# rel="next", resolve answering 302 to another host with a signed query,
# X-Linked-Size and X-Linked-Etag, 401 for a gated repo, 404, 429 with
# RateLimit) in front of nginx for the bytes (server.bash). Each model of
# a repo mount has the tree of the same file mounted locally; refusals are
# exit 1 and one line; hostile listings never escape the mount nor crash
# it; verify compares each file with what the Hub publishes of it.

bats_require_minimum_version 1.5.0

load ../bats/test_helper
load ../bats/llama_client
load server

COMMIT=0123456789abcdef0123456789abcdef01234567

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    local repo="$FILES/org/repo"
    mkdir -p "$repo/sub" "$repo/split" "$FILES/gated/model" "$FILES/busy/model"
    cp "$GGUF_FS_FIXTURES/type-q4_K.gguf" "$GGUF_FS_FIXTURES/type-q8_0.gguf" "$repo/"
    cp "$GGUF_FS_FIXTURES/metadata.gguf" "$repo/sub/"
    python3 "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 2 "$GGUF_FS_FIXTURES/type-q4_K.gguf" "$repo/split/q4"
    echo "# a model card" >"$repo/README.md"
    head -c 4096 /dev/urandom >"$repo/bad.gguf"
    cp "$GGUF_FS_FIXTURES/type-q8_0.gguf" "$FILES/gated/model/"
    cp "$GGUF_FS_FIXTURES/type-f16.gguf" "$FILES/busy/model/"
    mkdir -p "$FILES/org/sample"
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$FILES/org/sample/sample.gguf" >/dev/null
    # What the Hub publishes of a file told apart from the bytes it serves
    # (hub_emulator.py's .published.json): tampered.gguf served with its
    # last byte (tensor data) flipped, published as the fixture; longer.gguf
    # listed a byte longer than it is; linked.gguf so said by its resolve
    # answer's X-Linked-Size.
    local lies="$FILES/audit/lies" f32="$GGUF_FS_FIXTURES/type-f32.gguf" size
    mkdir -p "$lies"
    python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[-1] ^= 0xff
open(sys.argv[2], "wb").write(d)' "$f32" "$lies/tampered.gguf"
    cp "$f32" "$lies/longer.gguf"
    cp "$f32" "$lies/linked.gguf"
    size=$(stat -c %s "$f32")
    export F32_SUM F32_SIZE=$size
    F32_SUM=$(sha256sum "$f32" | cut -d' ' -f1)
    cat >"$FILES/.published.json" <<JSON
{"audit/lies/tampered.gguf": {"sha256": "$F32_SUM"},
 "audit/lies/longer.gguf": {"tree_size": $((size + 1))},
 "audit/lies/linked.gguf": {"linked_size": $((size + 1))}}
JSON
    start_servers "$BATS_FILE_TMPDIR/srv" "$FILES"
    export HUB_LOG="$BATS_FILE_TMPDIR/hub.log"
    # The files' host is the fault proxy in front of nginx (passing unless told).
    python3 "$BATS_TEST_DIRNAME/hub_emulator.py" "$BATS_FILE_TMPDIR/hub.port" "$HUB_LOG" "$FILES" \
        "http://localhost:$PROXY_PORT/files" "$HUB_TOKEN" 3 3>&- 2>"$BATS_FILE_TMPDIR/hub.err" &
    echo $! >"$BATS_FILE_TMPDIR/hub.pid"
    local i
    for i in $(seq 200); do
        [ -s "$BATS_FILE_TMPDIR/hub.port" ] && break
        sleep 0.05
    done
    export HF_ENDPOINT="http://127.0.0.1:$(cat "$BATS_FILE_TMPDIR/hub.port")"
}

teardown_file() {
    kill "$(cat "$BATS_FILE_TMPDIR/hub.pid")" 2>/dev/null || true
    stop_servers
}

setup() {
    require_fuse
    server_reset
    : >"$HUB_LOG"
    MNT="$BATS_TEST_TMPDIR/mnt"
    LOCAL="$BATS_TEST_TMPDIR/local"
    export HOME="$BATS_TEST_TMPDIR" # no token file of the user's
    unset HF_TOKEN
}

# refused NAME PHRASE: mounting NAME exits 1 with one line naming it and PHRASE.
refused() {
    mkdir -p "$MNT"
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f -o timeout_s=10 "$1" "$MNT" 3>&-
    echo "stderr: $stderr"
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
    [[ "$stderr" == "gguf-fs: hf://$2"* ]]
    [[ "$stderr" == *"$3"* ]]
    run ! mountpoint -q "$MNT"
}

@test "an hf://ORG/REPO mount shows the repo's GGUF models at its commit: folders mirrored, a split set once, other files left out" {
    mount_model "hf://org/repo" "$MNT"
    run ls "$MNT"
    [ "$output" = "$(printf '%s\n' bad.gguf remote split sub type-q4_K.gguf type-q8_0.gguf)" ]
    run ls "$MNT/split" "$MNT/sub"
    [ "$output" = "$(printf '%s\n' "$MNT/split:" q4.gguf "" "$MNT/sub:" metadata.gguf)" ]
    [ "$(cat "$MNT/split/q4.gguf/metadata/split.count")" = 4 ]
    # The revision once, then the tree in pages of 3 (12 entries: 4 pages).
    [ "$(grep -c '/revision/main ' "$HUB_LOG")" -eq 1 ]
    [ "$(grep -c "/tree/$COMMIT?recursive=true auth" "$HUB_LOG")" -eq 1 ]
    [ "$(grep -c "/tree/$COMMIT?recursive=true&cursor=" "$HUB_LOG")" -eq 3 ]
    # Listing again asks the Hub nothing: a commit's listing never changes.
    : >"$HUB_LOG"
    ls -R "$MNT" >/dev/null
    run grep -c /api/ "$HUB_LOG"
    [ "$output" -eq 0 ]
}

@test "each model of a repo mount has the tree of the same file mounted locally, its bytes fetched by resolve URLs naming the commit" {
    mount_model "hf://org/repo" "$MNT"
    mount_model "$FILES/org/repo/type-q4_K.gguf" "$LOCAL"
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_tree.py" "$MNT/type-q4_K.gguf" "$LOCAL"
    echo "$output"
    [ "$status" -eq 0 ]
    grep -q "^GET /org/repo/resolve/$COMMIT/type-q4_K.gguf auth=no" "$HUB_LOG"
    run grep -c "/resolve/main/" "$HUB_LOG"
    [ "$output" -eq 0 ]
    # The bytes came from the second host, by the signed URL.
    grep -q "GET /files/org/repo/type-q4_K.gguf?X-Amz-Signature=" "$SERVER_DIR/nginx-access.log"
}

@test "a model of a repo that fails validation is a directory holding error, naming its URL and the offset" {
    mount_model "hf://org/repo" "$MNT"
    run ls "$MNT/bad.gguf"
    [ "$output" = error ]
    run cat "$MNT/bad.gguf/error"
    echo "$output"
    [[ "$output" == "hf://org/repo/bad.gguf@$COMMIT: offset 0x0: "* ]]
    [ "$(cat "$MNT/type-q8_0.gguf/metadata/general.architecture" | wc -c)" -gt 0 ]
}

@test "hf://ORG/REPO/DIR@REVISION mounts one folder of the repo, the revision resolved to its commit" {
    mount_model "hf://org/repo/split@v1.0" "$MNT"
    run ls "$MNT"
    [ "$output" = "$(printf '%s\n' q4.gguf remote)" ]
    grep -q "^GET /api/models/org/repo/revision/v1.0 " "$HUB_LOG"
    grep -q "^GET /api/models/org/repo/tree/$COMMIT/split?recursive=true " "$HUB_LOG"
    [ "$(cat "$MNT/q4.gguf/metadata/split.count")" = 4 ]
}

@test "a missing repo, revision or folder is refused at mount: exit 1, one line naming it and the status" {
    refused "hf://org/nothing" "org/nothing@main" "HTTP 404"
    refused "hf://org/repo@nope" "org/repo@nope" "HTTP 404"
    refused "hf://org/repo/nowhere" "org/repo/nowhere@$COMMIT" "HTTP 404"
    # Names are sent escaped, each part one path segment.
    refused "hf://org/re?po#x" "org/re?po#x@main" "HTTP 404"
    grep -q "^GET /api/models/org/re%3Fpo%23x/revision/main " "$HUB_LOG"
    refused "hf://org/.." "org/..: not an hf://ORG/REPO" "(empty or dot segment)"
}

@test "a gated repo is refused without a token (401) and mounts with one; the token never reaches the second host" {
    refused "hf://gated/model" "gated/model@main" "HTTP 401"
    [ "$(grep -c 'auth=yes' "$HUB_LOG")" -eq 0 ]
    HF_TOKEN=$HUB_TOKEN mount_model "hf://gated/model" "$MNT"
    mount_model "$FILES/gated/model/type-q8_0.gguf" "$LOCAL"
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_tree.py" "$MNT/type-q8_0.gguf" "$LOCAL"
    echo "$output"
    [ "$status" -eq 0 ]
    grep -q "^GET /gated/model/resolve/$COMMIT/type-q8_0.gguf auth=yes" "$HUB_LOG"
    # nginx on the redirect's host (localhost) got requests, none with a token.
    grep -q "host=localhost" "$SERVER_DIR/nginx-access.log"
    run grep "host=localhost" "$SERVER_DIR/nginx-access.log"
    [[ "$output" != *"$HUB_TOKEN"* ]]
    run grep -c "auth=-$" "$SERVER_DIR/nginx-access.log"
    [ "$output" -eq "$(grep -c "host=localhost" "$SERVER_DIR/nginx-access.log")" ]
}

@test "a 429 is waited out for the seconds its RateLimit or Retry-After header gives, within timeout_s" {
    local start end
    start=$(date +%s.%N)
    mount_model "hf://busy/model" "$MNT" -o timeout_s=30
    end=$(date +%s.%N)
    [ "$(grep -c '/api/models/busy/model/revision/main ' "$HUB_LOG")" -eq 3 ]
    # t=1, then Retry-After: 1: two seconds at least.
    python3 -c "import sys; sys.exit(not float(sys.argv[2]) - float(sys.argv[1]) >= 2)" "$start" "$end"
    run ls "$MNT"
    [ "$output" = "$(printf '%s\n' remote type-f16.gguf)" ]
    grep -qx "rate_limit_waits: 2" "$MNT/remote"
}

@test "hostile names are left out with a log line, names over 255 bytes cut, nothing escapes the mount" {
    mount_model "hf://evil/names" "$MNT"
    run ls -a "$MNT"
    echo "$output"
    local cut
    cut=$(ls "$MNT" | grep '^xxx')
    [ "${#cut}" -eq 255 ]
    [[ "$cut" =~ ~[0-9a-f]{8}$ ]]
    [ "$(ls "$MNT" | grep -v '^xxx')" = "$(printf '%s\n' good.gguf remote sub)" ]
    [ "$(ls "$MNT/sub")" = ok.gguf ]
    [ ! -e "$BATS_TEST_TMPDIR/escape.gguf" ]
    grep -q "'../escape.gguf' left out: it has an empty, '.' or '..' component" "$BATS_TEST_TMPDIR/daemon.log"
    grep -q "'a//b.gguf' left out: it has an empty" "$BATS_TEST_TMPDIR/daemon.log"
    grep -q "'nul' left out: it holds NUL" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "a listing that is not JSON, is cut short, or loops by its Link is refused at mount; a path listed twice shows once" {
    refused "hf://evil/badjson" "evil/badjson@$COMMIT: listing page 1" "offset 0: the answer is not JSON"
    refused "hf://evil/cut" "evil/cut@$COMMIT: listing page 1" "the answer is not JSON (cut short)"
    refused "hf://evil/loop" "evil/loop@$COMMIT: listing" "(a Link loop)"
    mount_model "hf://evil/changed" "$MNT"
    [ "$(ls "$MNT" | tr '\n' ' ')" = "a.gguf b.gguf c.gguf remote " ]
}

@test "a listing past 100,000 entries is cut there with a log line" {
    mount_model "hf://evil/huge" "$MNT"
    [ "$(ls -f "$MNT" | grep -c '\.gguf$')" -eq 100000 ]
    grep -qx "listing_requests: 101" "$MNT/remote"
    grep -q "over 100000 entries: the rest is left out" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "node-llama-cpp decodes from model.gguf of a model in an hf://ORG/REPO mount what it decodes from the file, mapped and read" {
    require_llama_client
    local mapped="$BATS_TEST_TMPDIR/mapped" reading="$BATS_TEST_TMPDIR/reading" plain="$FILES/org/sample/sample.gguf"
    # A mount each way: the kernel keeps model.gguf's pages across opens.
    mount_model "hf://org/sample" "$mapped"
    mount_model "hf://org/sample" "$reading"
    run --separate-stderr llama_client --mmap "$plain" "$mapped/sample.gguf/model.gguf" \
        --no-mmap "$plain" "$reading/sample.gguf/model.gguf"
    [ "$status" -eq 0 ] || { echo "node-llama-cpp failed: $stderr"; return 1; }
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 4 ]
    same_tokens <<<"$output"
}

@test "hf://ORG mounts a directory per repo of the author holding GGUF files, each read when first looked into" {
    mount_model "hf://org" "$MNT"
    run ls "$MNT"
    [ "$output" = "$(printf '%s\n' remote repo sample)" ]
    grep -q "^GET /api/models?author=org&filter=gguf auth=no" "$HUB_LOG"
    run grep -c "/revision/" "$HUB_LOG"
    [ "$output" -eq 0 ]
    run ls "$MNT/repo"
    [ "$output" = "$(printf '%s\n' bad.gguf split sub type-q4_K.gguf type-q8_0.gguf)" ]
    [ -f "$MNT/remote" ]
    [ "$(grep -c "^GET /api/models/org/repo/revision/main " "$HUB_LOG")" -eq 1 ]
    ls "$MNT/repo" "$MNT/repo/split" >/dev/null
    [ "$(grep -c "^GET /api/models/org/repo/revision/main " "$HUB_LOG")" -eq 1 ]
    mount_model "$FILES/org/repo/type-q8_0.gguf" "$LOCAL"
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_tree.py" "$MNT/repo/type-q8_0.gguf" "$LOCAL"
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "an author's repos are listed again once older than listing_ttl_s, a repo's listing kept" {
    mount_model "hf://org" "$MNT" -o listing_ttl_s=1
    ls "$MNT/repo" >/dev/null
    local asked i
    asked=$(grep -c "author=org" "$HUB_LOG")
    for i in $(seq 100); do
        ls "$MNT" >/dev/null
        [ "$(grep -c "author=org" "$HUB_LOG")" -gt "$asked" ] && break
        sleep 0.1
    done
    [ "$(grep -c "author=org" "$HUB_LOG")" -gt "$asked" ]
    [ "$(grep -c "/revision/main " "$HUB_LOG")" -eq 1 ]
}

@test "an author's listing leaves out ids not its own with a log line; a repo that cannot be read lists an error" {
    mount_model "hf://hostile" "$MNT"
    run ls "$MNT"
    [ "$output" = "$(printf '%s\n' broken remote)" ]
    grep -q "listed repo 'other/theirs' is not hostile/NAME: left out" "$BATS_TEST_TMPDIR/daemon.log"
    grep -q "listed repo 'hostile/a/b' is not hostile/NAME: left out" "$BATS_TEST_TMPDIR/daemon.log"
    run ls "$MNT/broken"
    [ "$output" = error ]
    run cat "$MNT/broken/error/error"
    [ "$output" = "hf://hostile/broken@main: not found (HTTP 404)" ]
}

@test "remote at a collection's root sums the mount's requests, in SPEC's order; each model keeps its own remote" {
    mount_model "hf://org/repo" "$MNT"
    run cat "$MNT/remote"
    echo "$output"
    [ "$(printf '%s\n' "$output" | cut -d: -f1 | tr '\n' ' ')" = \
      "listing_requests models_opened header_bytes bytes_fetched in_flight retries rate_limit_waits last_error " ]
    grep -qx "listing_requests: 5" <<<"$output" # the revision, then 4 pages
    grep -qx "last_error: " <<<"$output"
    [ -n "$(cat "$MNT/type-q8_0.gguf/metadata/general.architecture")" ]
    [ -n "$(cat "$MNT/type-q4_K.gguf/metadata/general.architecture")" ]
    run cat "$MNT/remote"
    grep -qx "models_opened: 2" <<<"$output"
    local header fetched
    header=$(awk '$1 == "header_bytes:" {print $2}' <<<"$output")
    fetched=$(awk '$1 == "bytes_fetched:" {print $2}' <<<"$output")
    [ "$header" -gt 0 ]
    [ "$fetched" -ge "$header" ]
    grep -q "^url: hf://org/repo/type-q8_0.gguf@$COMMIT$" "$MNT/type-q8_0.gguf/remote"
    [ "$(stat -c %s "$MNT/remote")" -eq "$(cat "$MNT/remote" | wc -c)" ]
}

# bats test_tags=races
@test "remote at a collection's root read by 8 readers at once, each closing as soon as it has read, gives each the whole text" {
    mount_model "hf://org/repo" "$MNT"
    # A close right after a read's reply sends RELEASE while the daemon's
    # thread may still be in the writev of that reply.
    run python3 - "$MNT/remote" <<'EOF'
import os, sys, threading
path, bad = sys.argv[1], []
def reader():
    for _ in range(300):
        fd = os.open(path, os.O_RDONLY)
        try:
            text = os.read(fd, 65536)
        finally:
            os.close(fd)
        if not (text.startswith(b"listing_requests: 5\n") and text.endswith(b"\nlast_error: \n")):
            bad.append(text)
threads = [threading.Thread(target=reader) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"{len(bad)} of 2400 reads wrong", *bad[:3])
sys.exit(1 if bad else 0)
EOF
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "0 of 2400 reads wrong" ]
}

# bats test_tags=races
@test "listing a directory opens its models ahead, so that reading their headers fetches nothing more" {
    mount_model "hf://org/repo" "$MNT"
    ls "$MNT" >/dev/null
    # The root's three models are opened ahead (bad.gguf fails), none of
    # the folders' below.
    local i
    for i in $(seq 200); do
        grep -qx "models_opened: 2" "$MNT/remote" && grep -q "/resolve/$COMMIT/bad.gguf " "$HUB_LOG" &&
            grep -qx "in_flight: 0" "$MNT/remote" && break
        sleep 0.05
    done
    grep -qx "models_opened: 2" "$MNT/remote"
    run grep -c "/resolve/$COMMIT/s" "$HUB_LOG"
    [ "$output" -eq 0 ]
    local fetched
    fetched=$(awk '$1 == "bytes_fetched:" {print $2}' "$MNT/remote")
    cat "$MNT"/type-*/metadata/general.architecture "$MNT/bad.gguf/error" >/dev/null
    [ "$(awk '$1 == "bytes_fetched:" {print $2}' "$MNT/remote")" -eq "$fetched" ]
    grep -qx "models_opened: 2" "$MNT/remote"
}

@test "a model closed to make room (max_open=1) and opened again fetches nothing more: its blocks are kept by URL and commit" {
    mount_model "hf://org/repo" "$MNT" -o max_open=1
    local m
    for m in type-q8_0 type-q4_K; do
        [ -n "$(cat "$MNT/$m.gguf/metadata/general.architecture")" ]
    done
    local i
    for i in $(seq 200); do
        grep -qx "in_flight: 0" "$MNT/remote" && break
        sleep 0.05
    done
    run cat "$MNT/remote"
    echo "$output"
    local opened fetched resolves
    opened=$(awk '$1 == "models_opened:" {print $2}' <<<"$output")
    fetched=$(awk '$1 == "bytes_fetched:" {print $2}' <<<"$output")
    resolves=$(grep -c "/resolve/$COMMIT/" "$HUB_LOG")
    [ "$fetched" -gt 0 ]
    # Each in turn closes the other: every read opens its model again.
    for m in type-q8_0 type-q4_K type-q8_0 type-q4_K; do
        [ -n "$(cat "$MNT/$m.gguf/metadata/general.architecture")" ]
    done
    run cat "$MNT/remote"
    echo "$output"
    [ "$(awk '$1 == "models_opened:" {print $2}' <<<"$output")" -ge $((opened + 4)) ]
    [ "$(awk '$1 == "bytes_fetched:" {print $2}' <<<"$output")" -eq "$fetched" ]
    [ "$(grep -c "/resolve/$COMMIT/" "$HUB_LOG")" -eq "$resolves" ]
    # And what it reads is the file's.
    mount_model "$FILES/org/repo/type-q8_0.gguf" "$LOCAL"
    diff -r "$MNT/type-q8_0.gguf/metadata" "$LOCAL/metadata"
}

# bats test_tags=races
@test "SIGTERM while a listing's models are read ahead from a stalled server ends the daemon within 3 s" {
    fault stall
    mount_model "hf://org/repo" "$MNT" -o timeout_s=60
    ls "$MNT" >/dev/null
    await_request "/files/org/repo/"
    local pid
    pid=$(awk -v m="$MNT" '$2 == m {print $1}' "$BATS_TEST_TMPDIR/daemons")
    kill -TERM "$pid"
    wait_gone "$pid" 3
    fault pass
}

# verify_line FILE DIGEST PUBLISHED VERDICT: a line of verify, as written.
verify_line() {
    printf '%s\tsha256\t%s\t%s\t%s' "$@"
}

@test "verify of a repo's models compares each file, each shard of a split set, with the lfs.oid its listing publishes" {
    mount_model "hf://org/repo" "$MNT"
    local sum
    sum=$(sha256sum "$FILES/org/repo/type-q8_0.gguf" | cut -d' ' -f1)
    run cat "$MNT/type-q8_0.gguf/verify"
    [ "$output" = "$(verify_line type-q8_0.gguf "$sum" "$sum" ok)"$'\nverdict: ok' ]
    local shard expected=()
    for shard in "$FILES"/org/repo/split/q4-*.gguf; do
        sum=$(sha256sum "$shard" | cut -d' ' -f1)
        expected+=("$(verify_line "${shard##*/}" "$sum" "$sum" ok)")
    done
    [ "${#expected[@]}" -eq 4 ]
    run cat "$MNT/split/q4.gguf/verify"
    [ "$output" = "$(printf '%s\n' "${expected[@]}")"$'\nverdict: ok' ]
    # An author's repo, read when first looked into, publishes the same.
    mount_model "hf://org" "$LOCAL"
    [ "$(tail -1 "$LOCAL/repo/split/q4.gguf/verify")" = "verdict: ok" ]
    [ "$(head -1 "$LOCAL/repo/split/q4.gguf/verify")" = "${expected[0]}" ]
}

@test "verify of an hf:// file compares it with its resolve answer's X-Linked-Etag" {
    mount_model "hf://org/repo/type-q4_K.gguf" "$MNT"
    grep -q "^GET /org/repo/resolve/main/type-q4_K.gguf " "$HUB_LOG"
    local sum
    sum=$(sha256sum "$FILES/org/repo/type-q4_K.gguf" | cut -d' ' -f1)
    run cat "$MNT/verify"
    [ "$output" = "$(verify_line type-q4_K.gguf "$sum" "$sum" ok)"$'\nverdict: ok' ]
}

@test "a file served with a byte flipped is a MISMATCH against what the Hub publishes, and a line of warnings" {
    local served
    served=$(sha256sum "$FILES/audit/lies/tampered.gguf" | cut -d' ' -f1)
    mount_model "hf://audit/lies" "$MNT"
    run cat "$MNT/tampered.gguf/verify"
    [ "$output" = "$(verify_line tampered.gguf "$served" "$F32_SUM" MISMATCH)"$'\nverdict: MISMATCH' ]
    grep -qxF "offset 0: sha256 $served of the file is not the $F32_SUM its store publishes (lfs.oid)" \
        "$MNT/tampered.gguf/warnings"
    mount_model "hf://audit/lies/tampered.gguf" "$LOCAL"
    run cat "$LOCAL/verify"
    [ "$output" = "$(verify_line tampered.gguf "$served" "$F32_SUM" MISMATCH)"$'\nverdict: MISMATCH' ]
    grep -qxF "offset 0: sha256 $served of the file is not the $F32_SUM its store publishes (X-Linked-Etag)" \
        "$LOCAL/warnings"
}

@test "a file whose size differs from what the Hub publishes does not open: the error names it, offset 0 and both sizes" {
    mount_model "hf://audit/lies" "$LOCAL"
    run cat "$LOCAL/longer.gguf/error"
    [ "$output" = "hf://audit/lies/longer.gguf@$COMMIT: offset 0x0: the file has $F32_SIZE bytes, the hf repo's listing says $((F32_SIZE + 1))" ]
    run cat "$LOCAL/linked.gguf/error"
    [ "$output" = "hf://audit/lies/linked.gguf@$COMMIT: offset 0x0: the file has $F32_SIZE bytes, X-Linked-Size says $((F32_SIZE + 1))" ]
    refused "hf://audit/lies/linked.gguf" "audit/lies/linked.gguf: offset 0x0: the file has $F32_SIZE bytes" \
        "X-Linked-Size says $((F32_SIZE + 1))"
}
