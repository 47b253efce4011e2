#!/usr/bin/env bats
# Offline mounts of collections (-o offline, HF_HUB_OFFLINE=1 for hf://):
# a Hub repo or author listed once through cache_dir (the Hub emulation of
# hub.bats, hub_emulator.py, in front of nginx for the bytes) and an
# ollama:// model read once (the registry of ollama.bats, registry.bash)
# mount again with their servers gone: the same tree, the same bytes of
# what was read; with the servers up, none of them gets a request. A model
# never opened online is a directory holding `error`; a repo, a folder, an
# author or a registry model never listed is refused at mount with one
# line; no token is ever kept in cache_dir.

bats_require_minimum_version 1.5.0

load ../bats/test_helper
load ../remote_helper
load server
load registry

COMMIT=0123456789abcdef0123456789abcdef01234567

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    local repo="$FILES/org/repo"
    mkdir -p "$repo/sub" "$FILES/org/other" "$FILES/gated/model"
    cp "$GGUF_FS_FIXTURES/type-q4_K.gguf" "$GGUF_FS_FIXTURES/type-q8_0.gguf" "$repo/"
    cp "$GGUF_FS_FIXTURES/metadata.gguf" "$repo/sub/"
    cp "$GGUF_FS_FIXTURES/type-f16.gguf" "$FILES/org/other/"
    cp "$GGUF_FS_FIXTURES/type-q8_0.gguf" "$FILES/gated/model/"
    printf '%s' '{{ .Prompt }}' >"$FILES/template"
    printf '%s' 'You are terse.' >"$FILES/system"
    printf '%s' '{"stop":["<|end|>"],"temperature":0.5}' >"$FILES/params"
    printf '%s' 'MIT License' >"$FILES/license"
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
    export HOME="$BATS_TEST_TMPDIR" # no token file of the user's
    unset HF_TOKEN HF_HUB_OFFLINE
    start_hub
}

teardown() {
    local status=0
    exec 5<&- 6<&- 7<&- 8<&- 9<&-
    unmount_all || status=1
    check_daemon_log || status=1
    [ -z "${HUB_PID:-}" ] || kill "$HUB_PID" 2>/dev/null
    [ -z "${REGISTRY_DIR:-}" ] || stop_registry
    return $status
}

# start_hub: this test's Hub emulation (tree pages of 3 entries), its bytes
# from the fault proxy in front of nginx; HF_ENDPOINT names it.
start_hub() {
    start_hub_emulator "$FILES" "http://localhost:$PROXY_PORT/files" "$HUB_TOKEN" 3
}

# servers_gone: the Hub emulation ended and the proxy in front of nginx
# refusing every connection: nothing answers where the mount would ask.
servers_gone() {
    kill "$HUB_PID"
    HUB_PID=
    port_closed 127.0.0.1 "$HUB_PORT"
    fault refuse
    port_closed 127.0.0.1 "$PROXY_PORT"
    : >"$HUB_LOG"
    clear_log
}

# logs_empty: no request reached the Hub, the proxy or nginx since the
# logs were last emptied (servers_gone, clear_logs).
logs_empty() {
    [ ! -s "$HUB_LOG" ] || { cat "$HUB_LOG"; return 1; }
    [ ! -s "$SERVER_DIR/proxy.log" ] || { cat "$SERVER_DIR/proxy.log"; return 1; }
    [ ! -s "$SERVER_DIR/nginx-access.log" ] || { cat "$SERVER_DIR/nginx-access.log"; return 1; }
}

clear_logs() {
    : >"$HUB_LOG"
    clear_log
}

# snapshot MNT OUT: every entry's path, type, size and mode, then every
# file's bytes (a digest of each; `remote`, which counts requests, left
# out), reading every file: what a user walking the mount sees.
snapshot() {
    (cd "$1" && find . -mindepth 1 ! -name remote -printf '%P %y %s %m\n' | sort &&
        find . -type f ! -name remote -print0 | sort -z | xargs -0 sha256sum) >"$2"
}

# read_once SOURCE: an online mount with cache_dir reads every file of
# SOURCE, and is unmounted; its snapshot is $BATS_TEST_TMPDIR/online.snap.
read_once() {
    mount_model "$1" "$ONLINE" -o cache_dir="$CACHE"
    snapshot "$ONLINE" "$BATS_TEST_TMPDIR/online.snap"
    fusermount3 -u "$ONLINE"
}

# same_as_online MNT: MNT's snapshot is the online mount's.
same_as_online() {
    snapshot "$1" "$BATS_TEST_TMPDIR/offline.snap"
    diff "$BATS_TEST_TMPDIR/online.snap" "$BATS_TEST_TMPDIR/offline.snap"
}

# refused SOURCE PHRASE [ENV...]: an offline mount of SOURCE with
# cache_dir exits 1 with one line naming it and PHRASE, and mounts nothing.
refused() {
    refused_mount "${@:3}" -- -o cache_dir="$CACHE",offline "$1" "$OFFLINE"
    [[ "$stderr" == "gguf-fs: "* ]]
    [[ "$stderr" == *"$2"* ]]
}

@test "a repo read once through cache_dir mounts offline with the Hub and nginx gone: the same tree and bytes" {
    read_once "hf://org/repo"
    grep -q "type-q4_K.gguf/metadata/general.architecture" "$BATS_TEST_TMPDIR/online.snap"
    grep -q "sub/metadata.gguf/model.gguf" "$BATS_TEST_TMPDIR/online.snap"
    servers_gone
    mount_model "hf://org/repo" "$OFFLINE" -o cache_dir="$CACHE",offline
    same_as_online "$OFFLINE"
    # A model's tree is the file's, mounted locally.
    mount_model "$FILES/org/repo/type-q4_K.gguf" "$BATS_TEST_TMPDIR/local"
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_tree.py" "$OFFLINE/type-q4_K.gguf" "$BATS_TEST_TMPDIR/local"
    echo "$output"
    [ "$status" -eq 0 ]
    run cat "$OFFLINE/remote"
    grep -qx "listing_requests: 0" <<<"$output"
    grep -qx "last_error: " <<<"$output"
    logs_empty
}

@test "an hf:// file read once through cache_dir still has, offline, the digest its resolve answer published" {
    read_once "hf://org/repo/type-q8_0.gguf"
    servers_gone
    HF_HUB_OFFLINE=1 mount_model "hf://org/repo/type-q8_0.gguf" "$OFFLINE" -o cache_dir="$CACHE"
    same_as_online "$OFFLINE"
    local sum
    sum=$(sha256sum "$FILES/org/repo/type-q8_0.gguf" | cut -d' ' -f1)
    run cat "$OFFLINE/verify"
    [ "$output" = "$(printf 'type-q8_0.gguf\tsha256\t%s\t%s\tok\nverdict: ok' "$sum" "$sum")" ]
    logs_empty
}

@test "an offline repo mount with the Hub and nginx up asks them nothing" {
    read_once "hf://org/repo/sub"
    # The online mount's requests were seen: the logs can show requests.
    grep -q "^GET /api/models/org/repo/tree/$COMMIT/sub?recursive=true " "$HUB_LOG"
    grep -q "GET /files/org/repo/sub/metadata.gguf" "$SERVER_DIR/proxy.log"
    clear_logs
    mount_model "hf://org/repo/sub" "$OFFLINE" -o cache_dir="$CACHE",offline
    same_as_online "$OFFLINE"
    fusermount3 -u "$OFFLINE"
    logs_empty
}

@test "offline, a model never opened online is a directory holding error that says it is not in cache_dir" {
    # Listing the root opens its models ahead; sub/ is never looked into.
    mount_model "hf://org/repo" "$ONLINE" -o cache_dir="$CACHE"
    ls "$ONLINE" >/dev/null
    local arch
    arch=$(cat "$ONLINE/type-q8_0.gguf/metadata/general.architecture")
    [ -n "$arch" ]
    fusermount3 -u "$ONLINE"
    servers_gone
    mount_model "hf://org/repo" "$OFFLINE" -o cache_dir="$CACHE",offline
    run ls "$OFFLINE/sub"
    [ "$output" = metadata.gguf ]
    run ls "$OFFLINE/sub/metadata.gguf"
    [ "$output" = error ]
    run cat "$OFFLINE/sub/metadata.gguf/error"
    echo "$output"
    [[ "$output" == "hf://org/repo/sub/metadata.gguf@$COMMIT: "*"offline, and not in cache_dir $CACHE"* ]]
    # The model opened online reads as it did.
    [ "$(cat "$OFFLINE/type-q8_0.gguf/metadata/general.architecture")" = "$arch" ]
    logs_empty
}

@test "an author mount listed once through cache_dir mounts offline with the Hub gone; a repo never looked into lists its error" {
    mount_model "hf://org" "$ONLINE" -o cache_dir="$CACHE"
    run ls "$ONLINE"
    [ "$output" = "$(printf '%s\n' other remote repo)" ]
    snapshot "$ONLINE/repo" "$BATS_TEST_TMPDIR/online.snap"
    fusermount3 -u "$ONLINE"
    servers_gone
    mount_model "hf://org" "$OFFLINE" -o cache_dir="$CACHE",offline
    run ls "$OFFLINE"
    [ "$output" = "$(printf '%s\n' other remote repo)" ]
    same_as_online "$OFFLINE/repo"
    run ls "$OFFLINE/other"
    [ "$output" = error ]
    run cat "$OFFLINE/other/error/error"
    echo "$output"
    [ "$output" = "hf://org/other@main: offline, and not in cache_dir $CACHE" ]
    logs_empty
}

@test "offline, a repo, a folder or an author never listed with that cache_dir is refused with one line" {
    refused "hf://org/repo" "hf://org/repo@main: offline, and not in cache_dir $CACHE"
    refused "hf://org" "hf://org: listing page 1: offline, and not in cache_dir $CACHE"
    # Listed whole, the repo is not listed folder by folder.
    read_once "hf://org/repo"
    clear_logs
    refused "hf://org/repo/sub" "hf://org/repo/sub@$COMMIT: listing page 1: offline, and not in cache_dir $CACHE"
    # Another revision, or another HF_ENDPOINT, is another repo.
    refused "hf://org/repo@v1.0" "hf://org/repo@v1.0: offline, and not in cache_dir $CACHE"
    refused "hf://org/repo" "hf://org/repo@main: offline, and not in cache_dir $CACHE" HF_ENDPOINT=http://127.0.0.1:9
    logs_empty
}

@test "offline, a kept Hub answer cut short is refused with its file under cache_dir and the offset" {
    read_once "hf://org/repo"
    local f
    for f in "$CACHE"/gguf-fs-records/hf-api-*; do
        truncate -s -1 "$f"
    done
    refused "hf://org/repo" "hf://org/repo@main: offline: in cache_dir, gguf-fs-records/hf-api-"
    [[ "$stderr" == *": offset "* ]]
}

@test "HF_HUB_OFFLINE=1 mounts a repo as -o offline does: no request, the same tree; never listed, refused" {
    read_once "hf://org/repo"
    clear_logs
    HF_HUB_OFFLINE=1 mount_model "hf://org/repo" "$OFFLINE" -o cache_dir="$CACHE"
    same_as_online "$OFFLINE"
    fusermount3 -u "$OFFLINE"
    logs_empty
    mkdir -p "$BATS_TEST_TMPDIR/empty"
    run -1 --separate-stderr env HF_HUB_OFFLINE=1 timeout 60 "$GGUF_FS" -f -o cache_dir="$BATS_TEST_TMPDIR/empty" \
        "hf://org/repo" "$OFFLINE" 3>&-
    echo "stderr: $stderr"
    [ "$stderr" = "gguf-fs: hf://org/repo@main: offline, and not in cache_dir $BATS_TEST_TMPDIR/empty" ]
    logs_empty
}

@test "no token is kept in cache_dir: a gated repo mounted with one lists offline without it" {
    HF_TOKEN=$HUB_TOKEN mount_model "hf://gated/model" "$ONLINE" -o cache_dir="$CACHE"
    snapshot "$ONLINE" "$BATS_TEST_TMPDIR/online.snap"
    fusermount3 -u "$ONLINE"
    grep -q "auth=yes" "$HUB_LOG"
    run grep -rlF "$HUB_TOKEN" "$CACHE"
    [ "$status" -eq 1 ]
    servers_gone
    mount_model "hf://gated/model" "$OFFLINE" -o cache_dir="$CACHE",offline
    same_as_online "$OFFLINE"
}

# ==== Ollama registry mounts ====

# ollama_model NS/NAME TAG: a manifest of the model and its text layers in
# this test's registry (started here); NAME is its ollama+http:// name.
ollama_model() {
    start_registry "$BATS_TEST_TMPDIR/registry"
    local layers=() type hex
    for type in model template system params license; do
        local file="$FILES/$type"
        [ "$type" = model ] && file="$FILES/org/repo/type-q4_K.gguf"
        hex=$(add_blob "$file")
        layers+=("application/vnd.ollama.image.$type" "sha256:$hex" "$(stat -c %s "$file")")
    done
    add_manifest "$1" "$2" "$(python3 -c 'import json, sys
a = sys.argv[1:]
print(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
    "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:" + "0" * 64, "size": 2},
    "layers": [{"mediaType": a[i], "digest": a[i + 1], "size": int(a[i + 2])} for i in range(0, len(a), 3)]}))' "${layers[@]}")"
    NAME="ollama+http://127.0.0.1:$REGISTRY_PORT/$1:$2"
}

registry_logs_empty() {
    [ ! -s "$REGISTRY_DIR/registry.log" ] || { cat "$REGISTRY_DIR/registry.log"; return 1; }
    [ ! -s "$REGISTRY_DIR/blobs.log" ] || { cat "$REGISTRY_DIR/blobs.log"; return 1; }
}

@test "an ollama:// model read once through cache_dir mounts offline with the registry gone: Modelfile, layers/ and the model the same" {
    ollama_model private/tiny latest
    local name=$NAME
    read_once "$name"
    grep -q "^Modelfile f " "$BATS_TEST_TMPDIR/online.snap"
    grep -q "^layers/template f " "$BATS_TEST_TMPDIR/online.snap"
    grep -q "^model.gguf f " "$BATS_TEST_TMPDIR/online.snap"
    # The registry's token went with the online requests, and is not kept.
    grep -q "auth=Bearer $REGISTRY_TOKEN" "$REGISTRY_DIR/registry.log"
    run grep -rlF "$REGISTRY_TOKEN" "$CACHE"
    [ "$status" -eq 1 ]
    # With the registry up, an offline mount asks it nothing.
    : >"$REGISTRY_DIR/registry.log"
    : >"$REGISTRY_DIR/blobs.log"
    mount_model "$name" "$OFFLINE" -o cache_dir="$CACHE",offline
    same_as_online "$OFFLINE"
    cmp "$OFFLINE/layers/system" "$FILES/system"
    cmp "$OFFLINE/model.gguf" "$FILES/org/repo/type-q4_K.gguf"
    fusermount3 -u "$OFFLINE"
    registry_logs_empty
    # With it gone, the same.
    stop_registry
    port_closed 127.0.0.1 "$REGISTRY_PORT"
    mount_model "$name" "$OFFLINE" -o cache_dir="$CACHE",offline
    same_as_online "$OFFLINE"
}

@test "offline, a registry model never mounted with that cache_dir is refused with one line" {
    ollama_model library/tiny latest
    local name=$NAME
    refused "$name" "$name: manifest: http://127.0.0.1:$REGISTRY_PORT/v2/library/tiny/manifests/latest: offline, and not in cache_dir $CACHE"
    registry_logs_empty
    read_once "$name"
    : >"$REGISTRY_DIR/registry.log"
    : >"$REGISTRY_DIR/blobs.log"
    refused "${name%latest}q4" "${name%latest}q4: manifest: http://127.0.0.1:$REGISTRY_PORT/v2/library/tiny/manifests/q4: offline, and not in cache_dir $CACHE"
    registry_logs_empty
}
