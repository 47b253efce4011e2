#!/usr/bin/env bats
# A bucket, or a prefix of one, mounted as a folder of models
# (s3://BUCKET[/PREFIX]) from s3rver behind the proxy that checks every
# request's SigV4 signature with botocore (s3_server.bash): the same tree
# as a folder mount of the same files, listing pages of two, a key and a
# prefix of the same name, hostile keys left out with their log lines, a
# bad model's error, refusals at mount in S3's words, listings kept for
# listing_ttl_s, the server gone mid-read, a real client decoding from it,
# a key whose size differs from its listing's refused as the model's error.

load ../bats/test_helper
load ../remote_helper
load ../bats/llama_client
load ../http/server
load s3_server

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    local tree="$FILES/tree"
    mkdir -p "$tree/nested/a" "$tree/nested/b/deeper" "$tree/split"
    cp "$GGUF_FS_FIXTURES/type-q4_K.gguf" "$GGUF_FS_FIXTURES/type-q8_0.gguf" "$tree/"
    cp "$GGUF_FS_FIXTURES/metadata.gguf" "$tree/nested/a/"
    cp "$GGUF_FS_FIXTURES/type-f16.gguf" "$tree/nested/b/deeper/"
    python3 "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 2 "$GGUF_FS_FIXTURES/type-q4_K.gguf" \
        "$tree/split/q4" >/dev/null
    # 4 MiB of tensors after the first fetch: reads that must reach the server.
    python3 "$BATS_TEST_DIRNAME/../http/make_model.py" "$FILES/big.gguf" 1000 2 2 >/dev/null
    head -c 4096 /dev/urandom >"$FILES/bad.gguf"
    echo "# not a model" >"$FILES/README.md"
    start_s3 "$BATS_FILE_TMPDIR" models audit
    # A bucket whose listing says a size of one key that is not its own.
    cp "$GGUF_FS_FIXTURES/type-f32.gguf" "$FILES/"
    s3_put_checksum audit type-f32.gguf "$FILES/type-f32.gguf"
    s3_put audit sized.gguf "$FILES/type-f32.gguf"
    s3_config "c[\"list_sizes\"] = {\"audit/sized.gguf\": $(($(stat -c %s "$FILES/type-f32.gguf") + 1))}"
    local f
    for f in $(cd "$FILES" && find tree -type f | sort); do
        s3_put models "$f" "$FILES/$f"
    done
    s3_put models big.gguf "$FILES/big.gguf"
    s3_put models bad.gguf "$FILES/bad.gguf"
    s3_put models README.md "$FILES/README.md"
    # A key and a prefix of the same name: the directory wins.
    s3_put models clash.gguf "$FILES/tree/type-q8_0.gguf"
    s3_put models clash.gguf/inner.gguf "$FILES/tree/type-q4_K.gguf"
    # Keys s3rver cannot store, listed by the proxy beside a good one.
    s3_put models evil/type-q4_K.gguf "$FILES/tree/type-q4_K.gguf"
    s3_config 'c["extra_keys"] = {"models": [["evil/../up.gguf", 10], ["evil/..", 10], ["evil/.", 10],
                                             ["evil//twice.gguf", 10], ["evil/nul\u0000.gguf", 10],
                                             ["evil/hollow/./x.gguf", 10], ["evil/marker/", 0]]}'
    export S3_DIR S3_PORT S3RVER_PORT S3_CONFIG S3_PROXY_LOG
}

teardown_file() {
    stop_s3
}

setup() {
    require_fuse
    s3_env
    MNT="$BATS_TEST_TMPDIR/mnt"
    s3_config 'c["max_keys"] = 1000'
    : >"$S3_PROXY_LOG"
}

# listings PREFIX: how many ListObjectsV2 pages of PREFIX (as sent,
# %-encoded) the proxy was asked for.
listings() {
    awk -v p="list-type=2.*&prefix=$1 range=" '$0 ~ p {n++} END {print n + 0}' "$S3_PROXY_LOG"
}

@test "a prefix of nested folders mounts as a folder mount of the same files shows them, every request signed" {
    mount_model s3://models/tree "$MNT"
    mount_model "$FILES/tree" "$BATS_TEST_TMPDIR/folder"
    run "$PYTHON" "$BATS_TEST_DIRNAME/same_catalog.py" "$MNT" "$BATS_TEST_TMPDIR/folder"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ $output == "5 models, "* ]]
    # The split set once, under its name, with its four shards.
    run ls "$MNT/split"
    [ "$output" = q4.gguf ]
    [ "$(cat "$MNT/split/q4.gguf/metadata/split.count")" = 4 ]
    # The first request at mount was the listing of the prefix.
    head -1 "$S3_PROXY_LOG" | grep -q 'list-type=2.*&prefix=tree%2F range=None signed$'
    all_signed
    # remote at the root sums the mount: its listings and the models opened.
    grep -qx 'models_opened: 5' "$MNT/remote"
    run grep -x 'listing_requests: [0-9]*' "$MNT/remote"
    [ "${output#listing_requests: }" -ge 5 ]
    # A final '/' names the same prefix.
    mount_model s3://models/tree/ "$BATS_TEST_TMPDIR/slash"
    run ls "$BATS_TEST_TMPDIR/slash"
    [ "$output" = "$(printf '%s\n' nested remote split type-q4_K.gguf type-q8_0.gguf)" ]
}

@test "listings come in pages of two, each page asked once, kept for listing_ttl_s" {
    s3_config 'c["max_keys"] = 2'
    mount_model s3://models/tree "$MNT" -o listing_ttl_s=3600
    run ls "$MNT"
    [ "$output" = "$(printf '%s\n' nested remote split type-q4_K.gguf type-q8_0.gguf)" ]
    # nested/ split/ type-q4_K.gguf type-q8_0.gguf: two pages, at mount only.
    [ "$(listings tree%2F)" -eq 2 ]
    grep -q 'continuation-token=' "$S3_PROXY_LOG"
    ls "$MNT/nested" "$MNT/nested/b" >/dev/null
    [ "$(listings tree%2Fnested%2F)" -eq 1 ]
    # A key added shows at no lookup while the listing is kept ...
    s3_put models tree/late.gguf "$FILES/tree/type-q8_0.gguf"
    run ls "$MNT"
    [ "$output" = "$(printf '%s\n' nested remote split type-q4_K.gguf type-q8_0.gguf)" ]
    [ "$(listings tree%2F)" -eq 2 ]
    # ... and at once with listing_ttl_s=0.
    mount_model s3://models/tree "$BATS_TEST_TMPDIR/fresh" -o listing_ttl_s=0
    [ "$(cat "$BATS_TEST_TMPDIR/fresh/late.gguf/metadata/general.architecture")" = \
      "$(cat "$MNT/type-q8_0.gguf/metadata/general.architecture")" ]
    s3_delete models tree/late.gguf
    run ls "$BATS_TEST_TMPDIR/fresh"
    [ "$output" = "$(printf '%s\n' nested remote split type-q4_K.gguf type-q8_0.gguf)" ]
    all_signed
}

# gets KEY: how many GETs of the object KEY the proxy was asked for.
gets() {
    grep -c "^proxy: GET /models/$1 " "$S3_PROXY_LOG" || true
}

# settled MNT: once the listing's read-ahead is over (no request in flight).
settled() {
    local i
    for i in $(seq 100); do
        grep -qx 'in_flight: 0' "$1/remote" && return 0
        sleep 0.1
    done
    return 1
}

@test "a model closed to make room and looked into again within listing_ttl_s asks the server nothing; past it, once" {
    mount_model s3://models/tree "$MNT" -o max_open=1
    settled "$MNT"
    local a b i
    a=$(cat "$MNT/type-q4_K.gguf/metadata/general.architecture")
    b=$(cat "$MNT/type-q8_0.gguf/metadata/general.architecture")
    local q4 q8
    q4=$(gets tree/type-q4_K.gguf) q8=$(gets tree/type-q8_0.gguf)
    [ "$q4" -ge 1 ] && [ "$q8" -ge 1 ]
    # Four more opens of each (max_open=1: each closes the other).
    for i in 1 2 3 4; do
        [ "$(cat "$MNT/type-q4_K.gguf/metadata/general.architecture")" = "$a" ]
        [ "$(cat "$MNT/type-q8_0.gguf/metadata/general.architecture")" = "$b" ]
    done
    run grep -x 'models_opened: [0-9]*' "$MNT/remote"
    [ "${output#models_opened: }" -ge 10 ]
    [ "$(gets tree/type-q4_K.gguf)" -eq "$q4" ]
    [ "$(gets tree/type-q8_0.gguf)" -eq "$q8" ]
    # Trusted for no time: each reopen asks the object's validators again.
    mount_model s3://models/tree "$BATS_TEST_TMPDIR/fresh" -o max_open=1,listing_ttl_s=0
    settled "$BATS_TEST_TMPDIR/fresh"
    q4=$(gets tree/type-q4_K.gguf)
    for i in 1 2 3; do
        cat "$BATS_TEST_TMPDIR/fresh/type-q4_K.gguf/metadata/general.architecture" \
            "$BATS_TEST_TMPDIR/fresh/type-q8_0.gguf/metadata/general.architecture" >/dev/null
    done
    # (the first of the three may find it still open from the read-ahead)
    [ "$(gets tree/type-q4_K.gguf)" -ge $((q4 + 2)) ]
    all_signed
}

@test "the bucket's top: other files left out, a key and a prefix of the same name show the directory, a bad model its error" {
    mount_model s3://models "$MNT"
    run ls "$MNT"
    [ "$output" = "$(printf '%s\n' bad.gguf big.gguf clash.gguf evil remote tree)" ]
    run ls "$MNT/clash.gguf"
    [ "$output" = inner.gguf ]
    grep -q "s3://models: key 'clash.gguf' left out of the listing: a prefix of the same name is listed (the directory wins)" \
        "$BATS_TEST_TMPDIR/daemon.log"
    [ -n "$(cat "$MNT/clash.gguf/inner.gguf/metadata/general.architecture")" ]
    run ls "$MNT/bad.gguf"
    [ "$output" = error ]
    run cat "$MNT/bad.gguf/error"
    echo "$output"
    [[ $output == "s3://models/bad.gguf: offset 0x0: "* ]]
    run cat "$MNT/bad.gguf/metadata/general.architecture"
    [ "$status" -ne 0 ]
    cmp "$MNT/big.gguf/model.gguf" "$FILES/big.gguf"
}

@test "hostile keys are left out, each with a log line; the mount shows the good one, a prefix of left-out keys empty" {
    mount_model s3://models/evil "$MNT"
    run ls -a "$MNT"
    [ "$output" = "$(printf '%s\n' . .. hollow marker remote type-q4_K.gguf)" ]
    # Prefixes whose every key was left out list empty, never ENOENT.
    [ -z "$(ls "$MNT/hollow")" ] && [ -z "$(ls "$MNT/marker")" ]
    ls -R "$MNT" >/dev/null
    local log="$BATS_TEST_TMPDIR/daemon.log"
    cat "$log"
    grep -q "s3://models: key 'evil/\.\./' left out of the listing: it has an empty, '.' or '..' component" "$log"
    grep -q "s3://models: key 'evil/\.\.' left out of the listing: it has an empty, '.' or '..' component" "$log"
    grep -q "s3://models: key 'evil/\.' left out of the listing: it has an empty, '.' or '..' component" "$log"
    grep -q "s3://models: key 'evil//' left out of the listing: its name is empty" "$log"
    grep -q "s3://models: key 'evil/nul?.gguf' left out of the listing: it holds NUL" "$log"
    [ -n "$(cat "$MNT/type-q4_K.gguf/metadata/general.architecture")" ]
}

@test "a wrong secret, a wrong region, a skewed clock and a missing bucket are refused at mount with S3's code" {
    AWS_SECRET_ACCESS_KEY=${S3_SECRET}x refused \
        "^gguf-fs: s3://models/tree: bucket 'models': 403 SignatureDoesNotMatch: " s3://models/tree
    AWS_REGION=us-east-1 refused \
        "^gguf-fs: s3://models: bucket 'models': 301 PermanentRedirect: the bucket is in region $S3_REGION \(set AWS_REGION=$S3_REGION\)$" \
        s3://models
    s3_config 'c["skew_s"] = 3600'
    run refused "^gguf-fs: s3://models/tree: bucket 'models': 403 RequestTimeTooSkewed: the clock is off" s3://models/tree
    s3_config 'c["skew_s"] = 0'
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    refused "^gguf-fs: s3://nobucket: bucket 'nobucket': 404 NoSuchBucket: " s3://nobucket
    refused "^gguf-fs: s3://nobucket/some/prefix: bucket 'nobucket': 404 NoSuchBucket: " s3://nobucket/some/prefix/
    # Each refusal was the mount's first request: a listing.
    run grep -c 'list-type=2' "$S3_PROXY_LOG"
    [ "$output" -eq 5 ]
}

@test "the server gone mid-read fails that read, and a listing, with EIO; the mount lives and reads again once it is back" {
    mount_model s3://models "$MNT" -o timeout_s=2 -o cache_mb=0
    mount_model s3://models "$BATS_TEST_TMPDIR/relist" -o timeout_s=2 -o listing_ttl_s=0
    [ "$(read_at "$MNT/big.gguf/model.gguf" 0)" = ok ]
    s3_proxy_stop
    local read listed
    read=$(read_at "$MNT/big.gguf/model.gguf" $((3 << 20)))
    run -2 --separate-stderr ls "$BATS_TEST_TMPDIR/relist/tree"
    listed=$stderr
    s3_proxy_start
    [ "$read" = EIO ]
    [[ $listed == *"Input/output error"* ]]
    # The lookup of tree/ listed the root again, and said why it could not.
    grep -q "^gguf-fs: s3://models: bucket 'models': Failed to connect" "$BATS_TEST_TMPDIR/daemon.log"
    mountpoint -q "$MNT"
    kill -0 "$(last_daemon)"
    local i
    for i in $(seq 50); do
        [ "$(read_at "$MNT/big.gguf/model.gguf" $((3 << 20)))" = ok ] && break
        sleep 0.1
    done
    cmp "$MNT/big.gguf/model.gguf" "$FILES/big.gguf"
    [ -n "$(cat "$MNT/tree/type-q8_0.gguf/metadata/general.architecture")" ]
}

@test "node-llama-cpp decodes from a model inside a bucket mount what it decodes from the file" {
    require_llama_client
    local plain="$BATS_TEST_TMPDIR/sample.gguf" mapped="$BATS_TEST_TMPDIR/mapped" reading="$BATS_TEST_TMPDIR/reading"
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$plain" >/dev/null
    s3_put models client/sample.gguf "$plain"
    # Each way has a mount of its own (the kernel keeps model.gguf's pages).
    mount_model s3://models/client "$mapped"
    mount_model s3://models/client "$reading"
    run --separate-stderr llama_client --mmap "$plain" "$mapped/sample.gguf/model.gguf" \
        --no-mmap "$plain" "$reading/sample.gguf/model.gguf"
    [ "$status" -eq 0 ] || { echo "node-llama-cpp failed: $stderr"; return 1; }
    same_tokens <<<"$output"
    all_signed
}

@test "a key whose size differs from its listing's is the model's error, naming it, offset 0 and both sizes" {
    local size sum
    size=$(stat -c %s "$FILES/type-f32.gguf")
    sum=$(sha256sum "$FILES/type-f32.gguf" | cut -d' ' -f1)
    mount_model s3://audit "$MNT"
    run cat "$MNT/sized.gguf/error"
    [ "$output" = "s3://audit/sized.gguf: offset 0x0: the file has $size bytes, the s3 bucket's listing says $((size + 1))" ]
    run cat "$MNT/type-f32.gguf/verify"
    [ "$output" = "$(printf 'type-f32.gguf\tsha256\t%s\t%s\tok\nverdict: ok' "$sum" "$sum")" ]
    all_signed
}
