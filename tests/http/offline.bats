#!/usr/bin/env bats
# Offline mounts (-o offline, HF_HUB_OFFLINE=1 for hf://): a URL, an hf://
# file or a split set read once through cache_dir mounts again with
# nothing listening on the server's port, the same tree with the same
# bytes, sizes and times; with the server up, no request reaches it; a
# byte not in cache_dir is EIO with one log line and the mount lives; a
# URL never cached, offline without cache_dir, and a garbled record are
# refused with one line; without offline, a server that cannot be reached
# still refuses the mount.

load ../bats/test_helper
load ../remote_helper
load server

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    mkdir -p "$FILES/split"
    # 7 MiB of tensors after a small header, and the same split in three.
    python3 "$BATS_TEST_DIRNAME/make_model.py" "$FILES/model.gguf" 1000 2 2 3 >/dev/null
    python3 "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 1 "$FILES/model.gguf" "$FILES/split/model"
    cp "$FILES/model.gguf" "$FILES/never.gguf"
    start_servers "$BATS_FILE_TMPDIR/srv" "$FILES"
}

teardown_file() {
    stop_servers
}

setup() {
    require_fuse
    server_reset
    CACHE="$BATS_TEST_TMPDIR/cache"
    ONLINE="$BATS_TEST_TMPDIR/online"
    OFFLINE="$BATS_TEST_TMPDIR/offline"
    LOCAL="$BATS_TEST_TMPDIR/local"
}

# server_gone: nothing listens on the proxy's port (it refuses every
# connection) until the next server_reset; returns once a connection is
# refused.
server_gone() {
    fault refuse
    port_closed 127.0.0.1 "$PROXY_PORT"
}

# read_once SOURCE [OPTIONS...]: an online mount with cache_dir reads every
# byte of SOURCE (model.gguf, then every file, as a user would), and is
# unmounted; its tree's names, sizes and times are kept in
# $BATS_TEST_TMPDIR/online.tree.
read_once() {
    mount_model "$1" "$ONLINE" -o cache_dir="$CACHE" "${@:2}"
    cat "$ONLINE/model.gguf" >/dev/null
    find "$ONLINE" -type f ! -path "$ONLINE/remote" -exec cat {} + >/dev/null
    tree_of "$ONLINE" >"$BATS_TEST_TMPDIR/online.tree"
    fusermount3 -u "$ONLINE"
}

# tree_of MNT: every entry but `remote` with its type, size, mode and time;
# `verify` without its size, which is 0 until it is computed.
tree_of() {
    {
        find "$1" -mindepth 1 ! -path "$1/remote" ! -name verify -printf '%P %y %s %m %T@\n'
        find "$1" -mindepth 1 -name verify -printf '%P %y - %m %T@\n'
    } | sort
}

# same_as_online_and_local MNT LOCAL_SOURCE: the offline mount's tree is
# the online one's (names, sizes, modes, times) and, byte for byte, the
# local mount's of the same model (same_tree.py).
same_as_online_and_local() {
    diff "$BATS_TEST_TMPDIR/online.tree" <(tree_of "$1")
    mount_model "$2" "$LOCAL"
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_tree.py" "$1" "$LOCAL"
    fusermount3 -u "$LOCAL"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

# The remote file's field of shard 1.
field() {
    awk -v key="$1" 'index($0, key ": ") == 1 { print substr($0, length(key) + 3); exit }' "$2/remote"
}

@test "a URL read once through cache_dir mounts offline with the server gone: the same tree, bytes and times" {
    read_once "$PROXIED/model.gguf"
    clear_log
    server_gone
    mount_model "$PROXIED/model.gguf" "$OFFLINE" -o cache_dir="$CACHE",offline
    same_as_online_and_local "$OFFLINE" "$FILES/model.gguf"
    [ "$(field url "$OFFLINE")" = "$PROXIED/model.gguf" ]
    [ "$(field size "$OFFLINE")" = "$(stat -c %s "$FILES/model.gguf")" ]
    [ "$(field on_disk "$OFFLINE")" = "$(stat -c %s "$FILES/model.gguf")" ]
    [ "$(field fetched "$OFFLINE")" = 0 ]
    # Nothing got through while the server was gone.
    [ ! -s "$SERVER_DIR/proxy.log" ]
    [ ! -s "$SERVER_DIR/nginx-access.log" ]
}

@test "an offline mount with the server up sends it no request" {
    read_once "$PROXIED/model.gguf"
    # The online mount's requests were seen: the logs can show requests.
    grep -q "GET /files/model.gguf" "$SERVER_DIR/proxy.log"
    grep -q "GET /files/model.gguf" "$SERVER_DIR/nginx-access.log"
    clear_log
    mount_model "$PROXIED/model.gguf" "$OFFLINE" -o cache_dir="$CACHE",offline
    same_as_online_and_local "$OFFLINE" "$FILES/model.gguf"
    cat "$OFFLINE/remote" >/dev/null
    fusermount3 -u "$OFFLINE"
    [ ! -s "$SERVER_DIR/proxy.log" ]
    [ ! -s "$SERVER_DIR/nginx-access.log" ]
}

@test "offline, bytes not in cache_dir fail with EIO and one log line; the mount lives" {
    # Only the header is read online: the last tensor's bytes stay remote.
    mount_model "$PROXIED/model.gguf" "$ONLINE" -o cache_dir="$CACHE"
    cat "$ONLINE/header" "$ONLINE/metadata/general.name" >/dev/null
    fusermount3 -u "$ONLINE"
    clear_log
    mount_model "$PROXIED/model.gguf" "$OFFLINE" -o cache_dir="$CACHE",offline
    run -1 --separate-stderr dd if="$OFFLINE/tensors/t2/raw" of=/dev/null bs=4096 count=1 skip=100
    [[ "$stderr" == *"Input/output error"* ]]
    [ "$(grep -c "not in cache_dir (offline" "$BATS_TEST_TMPDIR/daemon.log")" -eq 1 ]
    grep -q "gguf-fs: $PROXIED/model.gguf: bytes .*: not in cache_dir (offline: no request is made); the read fails with EIO" \
        "$BATS_TEST_TMPDIR/daemon.log"
    # The mount answers, with what the cache holds.
    [ "$(cat "$OFFLINE/metadata/general.name")" = "remote test model" ]
    kill -0 "$(last_daemon)"
    [ ! -s "$SERVER_DIR/proxy.log" ]
}

@test "offline, a URL never cached is refused: exit 1, one line naming it and cache_dir" {
    read_once "$PROXIED/model.gguf"
    clear_log
    mkdir -p "$OFFLINE"
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE",offline "$PROXIED/never.gguf" "$OFFLINE"
    [ "${#stderr_lines[@]}" -eq 1 ]
    [ "$stderr" = "gguf-fs: $PROXIED/never.gguf: offline, and not in cache_dir $CACHE" ]
    # A cache_dir that holds nothing at all.
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$BATS_TEST_TMPDIR/empty",offline "$PROXIED/model.gguf" "$OFFLINE"
    [ "$stderr" = "gguf-fs: $PROXIED/model.gguf: offline, and not in cache_dir $BATS_TEST_TMPDIR/empty" ]
    run ! mountpoint -q "$OFFLINE"
    [ ! -s "$SERVER_DIR/proxy.log" ]
}

@test "-o offline, or HF_HUB_OFFLINE=1 for an hf:// name, without cache_dir is a usage error" {
    mkdir -p "$OFFLINE"
    run -2 --separate-stderr "$GGUF_FS" -f -o offline "$PROXIED/model.gguf" "$OFFLINE"
    [ "$stderr" = "gguf-fs: -o offline: an offline mount reads only what -o cache_dir=PATH holds, and none is given" ]
    HF_ENDPOINT="http://127.0.0.1:$PROXY_PORT" HF_HUB_OFFLINE=1 \
        run -2 --separate-stderr "$GGUF_FS" -f "hf://org/repo/model.gguf" "$OFFLINE"
    [ "$stderr" = "gguf-fs: HF_HUB_OFFLINE: an offline mount reads only what -o cache_dir=PATH holds, and none is given" ]
    [ ! -s "$SERVER_DIR/proxy.log" ]
}

@test "HF_HUB_OFFLINE=1 mounts an hf:// file read once through cache_dir, the Hub gone" {
    export HF_ENDPOINT="http://127.0.0.1:$PROXY_PORT"
    read_once "hf://org/repo/model.gguf@v1"
    # The online mount went through the Hub's resolve URL.
    grep -q "GET /org/repo/resolve/v1/model.gguf" "$SERVER_DIR/proxy.log"
    server_gone
    HF_HUB_OFFLINE=1 mount_model "hf://org/repo/model.gguf@v1" "$OFFLINE" -o cache_dir="$CACHE"
    same_as_online_and_local "$OFFLINE" "$FILES/model.gguf"
    fusermount3 -u "$OFFLINE"
    # Another revision was never mounted: not in the cache.
    HF_HUB_OFFLINE=yes run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE" "hf://org/repo/model.gguf" "$OFFLINE"
    [ "$stderr" = "gguf-fs: hf://org/repo/model.gguf: offline, and not in cache_dir $CACHE" ]
    # Nor is it under another HF_ENDPOINT.
    HF_ENDPOINT="http://localhost:$PROXY_PORT" HF_HUB_OFFLINE=1 \
        run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE" "hf://org/repo/model.gguf@v1" "$OFFLINE"
    [ "$stderr" = "gguf-fs: hf://org/repo/model.gguf@v1: offline, and not in cache_dir $CACHE for this HF_ENDPOINT" ]
}

@test "a split set read once mounts offline from any shard's URL, the server gone" {
    read_once "$PROXIED/split/model-00001-of-00003.gguf"
    server_gone
    mount_model "$PROXIED/split/model-00002-of-00003.gguf" "$OFFLINE" -o cache_dir="$CACHE",offline
    diff "$BATS_TEST_TMPDIR/online.tree" <(tree_of "$OFFLINE")
    mount_model "$FILES/split/model-00001-of-00003.gguf" "$LOCAL"
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_tree.py" "$OFFLINE" "$LOCAL"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    cmp "$OFFLINE/model.gguf" "$FILES/model.gguf"
    # Each shard's own record: a shard never read is not in the cache.
    rm "$CACHE"/gguf-fs-records/url-*
    fusermount3 -u "$OFFLINE"
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE",offline "$PROXIED/split/model-00001-of-00003.gguf" "$OFFLINE"
    [ "$stderr" = "gguf-fs: $PROXIED/split/model-00001-of-00003.gguf: offline, and not in cache_dir $CACHE" ]
}

@test "without offline, a server that cannot be reached refuses the mount, even with every byte in cache_dir" {
    read_once "$PROXIED/model.gguf"
    server_gone
    mkdir -p "$OFFLINE"
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE",timeout_s=1 "$PROXIED/model.gguf" "$OFFLINE"
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "gguf-fs: $PROXIED/model.gguf: cannot open: "*"Couldn't connect to server"* ]]
}

# rewrite_record GOOD OUT DATA: OUT is the record GOOD (same name) holding
# DATA instead, with its lengths and checksum right (cache_records.h).
rewrite_record() {
    python3 - "$@" <<'PY'
import struct, sys
good, out, data = open(sys.argv[1], "rb").read(), sys.argv[2], sys.argv[3].encode()
magic = b"gguf-fs record 1\n"
name_len = struct.unpack_from("<I", good, len(magic))[0]
name = good[len(magic) + 16:len(magic) + 16 + name_len]
h = 14695981039346656037
for byte in name + data:
    h = ((h ^ byte) * 1099511628211) % 2**64
open(out, "wb").write(magic + struct.pack("<IIQ", len(name), len(data), h) + name + data)
PY
}

@test "offline, a record cut short or garbled in cache_dir is refused with its file and offset" {
    read_once "$PROXIED/model.gguf"
    local record
    record=$(echo "$CACHE"/gguf-fs-records/url-*)
    [ -f "$record" ]
    cp "$record" "$BATS_TEST_TMPDIR/good"
    mkdir -p "$OFFLINE"
    # Cut inside the data: the lengths no longer add up.
    head -c -5 "$BATS_TEST_TMPDIR/good" >"$record"
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE",offline "$PROXIED/model.gguf" "$OFFLINE"
    [ "${#stderr_lines[@]}" -eq 1 ]
    [[ "$stderr" == "gguf-fs: $PROXIED/model.gguf: offline: in cache_dir, gguf-fs-records/url-"*": offset 21: data length is not what the file holds after the name" ]]
    # A byte of the data changed: the checksum says so.
    python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-3] ^= 1; open(sys.argv[2], "wb").write(b)' \
        "$BATS_TEST_TMPDIR/good" "$record"
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE",offline "$PROXIED/model.gguf" "$OFFLINE"
    [[ "$stderr" == *"gguf-fs-records/url-"*": offset 25: checksum does not match the name and data" ]]
    # Whole records (the format written here from its description) whose
    # JSON is cut short, or lacks the size.
    rewrite_record "$BATS_TEST_TMPDIR/good" "$record" '{"url": "x", "size": '
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE",offline "$PROXIED/model.gguf" "$OFFLINE"
    [[ "$stderr" == *"gguf-fs-records/url-"*": offset "*": not JSON" ]]
    rewrite_record "$BATS_TEST_TMPDIR/good" "$record" '{"url": "x", "etag": "\"1\"", "mtime": 1}'
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE",offline "$PROXIED/model.gguf" "$OFFLINE"
    [[ "$stderr" == *"gguf-fs-records/url-"*": no size" ]]
    rewrite_record "$BATS_TEST_TMPDIR/good" "$record" '{"url": "x", "size": 18446744073709551615, "etag": "\"1\"", "mtime": 1}'
    run -1 --separate-stderr "$GGUF_FS" -f -o cache_dir="$CACHE",offline "$PROXIED/model.gguf" "$OFFLINE"
    [[ "$stderr" == *"gguf-fs-records/url-"*": size out of range" ]]
    run ! mountpoint -q "$OFFLINE"
    # Put back whole, it mounts.
    cp "$BATS_TEST_TMPDIR/good" "$record"
    mount_model "$PROXIED/model.gguf" "$OFFLINE" -o cache_dir="$CACHE",offline
    cmp "$OFFLINE/model.gguf" "$FILES/model.gguf"
}

@test "two daemons filling one cache_dir at once leave records an offline mount reads" {
    mount_model "$PROXIED/model.gguf" "$ONLINE" -o cache_dir="$CACHE"
    mount_model "$PROXIED/model.gguf" "$LOCAL" -o cache_dir="$CACHE"
    cat "$ONLINE/model.gguf" >"$BATS_TEST_TMPDIR/a" &
    local a=$!
    cmp "$LOCAL/model.gguf" "$FILES/model.gguf"
    wait "$a"
    cmp "$BATS_TEST_TMPDIR/a" "$FILES/model.gguf"
    fusermount3 -u "$ONLINE"
    fusermount3 -u "$LOCAL"
    # One record, whole; no temporary left beside it.
    [ "$(ls -A "$CACHE/gguf-fs-records" | wc -l)" -eq 1 ]
    server_gone
    mount_model "$PROXIED/model.gguf" "$OFFLINE" -o cache_dir="$CACHE",offline
    cmp "$OFFLINE/model.gguf" "$FILES/model.gguf"
}
