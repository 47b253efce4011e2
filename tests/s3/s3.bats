#!/usr/bin/env bats
# One model from an S3 bucket: s3://BUCKET/KEY.gguf mounted from s3rver
# behind a proxy that checks every request's SigV4 signature with botocore
# (s3_server.bash): the same tree and bytes as the file, with key pairs,
# session tokens and profiles; refusals at mount in S3's words, one line
# naming the bucket and the code; no secret anywhere a user or another
# process can see it; the server gone mid-read (EIO, the mount lives); an
# object changed under the mount (EIO); a real client decoding from it;
# verify against the object's checksum, else its single-part ETag.

load ../bats/test_helper
load ../remote_helper
load ../bats/llama_client
load ../http/server
load s3_server

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    mkdir -p "$FILES"
    cp "$GGUF_FS_FIXTURES/type-q4_K.gguf" "$FILES/"
    # 4 MiB of tensors after the first fetch: reads that must reach the server.
    python3 "$BATS_TEST_DIRNAME/../http/make_model.py" "$FILES/big.gguf" 1000 2 2 >/dev/null
    start_s3 "$BATS_FILE_TMPDIR" models
    s3_put models q4/type-q4_K.gguf "$FILES/type-q4_K.gguf"
    s3_put models big.gguf "$FILES/big.gguf"
    # Uploaded with their SHA-256 checksums: a small object, a large one,
    # and one whose bytes the store changed afterwards (its last byte,
    # tensor data, flipped; the checksum kept).
    cp "$GGUF_FS_FIXTURES/type-f32.gguf" "$FILES/"
    python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[-1] ^= 0xff
open(sys.argv[2], "wb").write(d)' "$FILES/type-f32.gguf" "$FILES/rotten.gguf"
    s3_put_checksum models sum/type-f32.gguf "$FILES/type-f32.gguf"
    s3_put_checksum models sum/big.gguf "$FILES/big.gguf"
    s3_put_checksum models sum/rotten.gguf "$FILES/type-f32.gguf"
    s3_put models sum/rotten.gguf "$FILES/rotten.gguf"
    export S3_DIR S3_PORT S3RVER_PORT S3_CONFIG S3_PROXY_LOG
}

teardown_file() {
    stop_s3
}

setup() {
    require_fuse
    s3_env
    MNT="$BATS_TEST_TMPDIR/mnt"
    : >"$S3_PROXY_LOG"
}

@test "a key mounted from a bucket has the tree and bytes of the file, every request signed" {
    mount_model s3://models/q4/type-q4_K.gguf "$MNT"
    cmp "$MNT/model.gguf" "$FILES/type-q4_K.gguf"
    mount_model "$FILES/type-q4_K.gguf" "$BATS_TEST_TMPDIR/local"
    run "$PYTHON" "$BATS_TEST_DIRNAME/../http/same_tree.py" "$MNT" "$BATS_TEST_TMPDIR/local"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    mount_model s3://models/big.gguf "$BATS_TEST_TMPDIR/big"
    cmp "$BATS_TEST_TMPDIR/big/model.gguf" "$FILES/big.gguf"
    grep -qx 'url: s3://models/big.gguf' "$BATS_TEST_TMPDIR/big/remote"
    # The first request at mount is a ranged GET, and ranges follow.
    head -1 "$S3_PROXY_LOG" | grep -q 'range=bytes=0-'
    all_signed
}

@test "session credentials sign with their token; without it they are refused" {
    export AWS_ACCESS_KEY_ID=$S3_SESSION_ACCESS AWS_SECRET_ACCESS_KEY=$S3_SESSION_SECRET
    export AWS_SESSION_TOKEN=$S3_SESSION_TOKEN
    mount_model s3://models/big.gguf "$MNT"
    cmp "$MNT/model.gguf" "$FILES/big.gguf"
    all_signed
    fusermount3 -u "$MNT"
    unset AWS_SESSION_TOKEN
    refused "^gguf-fs: s3://models/big.gguf: bucket 'models': 403 InvalidToken: " s3://models/big.gguf
}

@test "credentials come from the profile's section of the credentials file, the region from the config file" {
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION
    export AWS_SHARED_CREDENTIALS_FILE="$BATS_TEST_TMPDIR/credentials" AWS_CONFIG_FILE="$BATS_TEST_TMPDIR/config"
    printf '[default]\naws_access_key_id = AKIAWRONG\naws_secret_access_key = wrong\n\n# the one used\n[models]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
        "$S3_ACCESS" "$S3_SECRET" >"$AWS_SHARED_CREDENTIALS_FILE"
    printf '[default]\nregion = us-west-2\n[profile models]\nregion = %s\n' "$S3_REGION" >"$AWS_CONFIG_FILE"
    AWS_PROFILE=models mount_model s3://models/big.gguf "$MNT"
    cmp "$MNT/model.gguf" "$FILES/big.gguf"
    all_signed
    # The default profile's key pair is not one S3 knows.
    refused "^gguf-fs: s3://models/big.gguf: bucket 'models': 403 InvalidAccessKeyId: " s3://models/big.gguf
}

@test "no credentials at all: refused before any request, saying where it looked" {
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
    refused "^gguf-fs: s3://models/big.gguf: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" \
        s3://models/big.gguf
    [ ! -s "$S3_PROXY_LOG" ]
}

@test "a wrong secret is refused at mount with the bucket and SignatureDoesNotMatch" {
    AWS_SECRET_ACCESS_KEY=${S3_SECRET}x refused \
        "^gguf-fs: s3://models/big.gguf: bucket 'models': 403 SignatureDoesNotMatch: .*secret key" s3://models/big.gguf
    grep -q 'refused 403 SignatureDoesNotMatch' "$S3_PROXY_LOG"
}

@test "a wrong region is refused at mount naming the bucket's region" {
    AWS_REGION=us-east-1 refused \
        "^gguf-fs: s3://models/big.gguf: bucket 'models': 301 PermanentRedirect: the bucket is in region $S3_REGION \(set AWS_REGION=$S3_REGION\)$" \
        s3://models/big.gguf
}

@test "a clock more than 15 minutes off is refused at mount: RequestTimeTooSkewed, the clock is off" {
    s3_config 'c["skew_s"] = 3600'
    run refused "^gguf-fs: s3://models/big.gguf: bucket 'models': 403 RequestTimeTooSkewed: the clock is off" \
        s3://models/big.gguf
    s3_config 'c["skew_s"] = 0'
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    # Within the limit, it mounts.
    s3_config 'c["skew_s"] = 600'
    mount_model s3://models/big.gguf "$MNT"
    s3_config 'c["skew_s"] = 0'
    cmp "$MNT/model.gguf" "$FILES/big.gguf"
}

@test "a missing key, a missing bucket and a bad name are refused with one line each" {
    refused "^gguf-fs: s3://models/none.gguf: bucket 'models': 404 NoSuchKey: " s3://models/none.gguf
    refused "^gguf-fs: s3://nobucket/big.gguf: bucket 'nobucket': 404 NoSuchBucket: " s3://nobucket/big.gguf
    refused "^gguf-fs: s3:///big.gguf: the bucket's name must be" s3:///big.gguf
}

@test "a public bucket mounts with -o no_sign_request, unsigned; a private one refuses it" {
    unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
    refused "^gguf-fs: s3://models/big.gguf: bucket 'models': 403 AccessDenied: " s3://models/big.gguf -o no_sign_request
    s3_config 'c["public"] = True'
    mount_model s3://models/big.gguf "$MNT" -o no_sign_request
    cmp "$MNT/model.gguf" "$FILES/big.gguf"
    s3_config 'c["public"] = False'
    run grep -c 'signed$' "$S3_PROXY_LOG"
    [ "$output" -ge 2 ]
}

@test "-o endpoint names the store, and wins over AWS_ENDPOINT_URL" {
    export AWS_ENDPOINT_URL=http://127.0.0.1:1 AWS_ENDPOINT_URL_S3=http://127.0.0.1:1
    mount_model s3://models/big.gguf "$MNT" -o "endpoint=http://127.0.0.1:$S3_PORT/"
    cmp "$MNT/model.gguf" "$FILES/big.gguf"
    all_signed
}

@test "503 SlowDown is waited out with backoff, as a 429 is" {
    s3_config 'c["slow_down"] = 3'
    mount_model s3://models/big.gguf "$MNT"
    [ "$(grep -c 'refused 503 SlowDown' "$S3_PROXY_LOG")" -eq 3 ]
    cmp "$MNT/model.gguf" "$FILES/big.gguf"
}

@test "the secret and the session token appear in no log, file, mount listing or command line" {
    export AWS_ACCESS_KEY_ID=$S3_SESSION_ACCESS AWS_SECRET_ACCESS_KEY=$S3_SESSION_SECRET
    export AWS_SESSION_TOKEN=$S3_SESSION_TOKEN
    mount_model s3://models/big.gguf "$MNT" -d -o cache_mb=0
    local pid
    pid=$(last_daemon)
    [ "$(read_at "$MNT/model.gguf" $((2 << 20)))" = ok ]
    # A failing read logs too.
    s3_config 'c["skew_s"] = 3600'
    run read_at "$MNT/model.gguf" $((3 << 20))
    s3_config 'c["skew_s"] = 0'
    [ "$output" = EIO ]
    local seen="$BATS_TEST_TMPDIR/seen"
    {
        tr '\0' '\n' <"/proc/$pid/cmdline"
        mount
        cat /proc/self/mountinfo
        cat "$MNT/remote" "$MNT/warnings"
        cat "$BATS_TEST_TMPDIR/daemon.log"
    } >"$seen"
    grep -q 's3://models/big.gguf' "$seen"
    grep -q 'RequestTimeTooSkewed' "$BATS_TEST_TMPDIR/daemon.log"
    run grep -F -e "$S3_SESSION_SECRET" -e "$S3_SESSION_TOKEN" "$seen"
    [ "$status" -eq 1 ]
}

@test "the server gone mid-read fails that read with EIO; the mount lives and reads again once it is back" {
    mount_model s3://models/big.gguf "$MNT" -o timeout_s=2 -o cache_mb=0
    [ "$(read_at "$MNT/model.gguf" 0)" = ok ]
    s3_proxy_stop
    run read_at "$MNT/model.gguf" $((3 << 20))
    s3_proxy_start
    [ "$output" = EIO ]
    mountpoint -q "$MNT"
    kill -0 "$(last_daemon)"
    # Back: a read succeeds within a few seconds (a failed block fails
    # again at once for half a second).
    local i
    for i in $(seq 50); do
        [ "$(read_at "$MNT/model.gguf" $((3 << 20)))" = ok ] && break
        sleep 0.1
    done
    [ "$(read_at "$MNT/model.gguf" $((3 << 20)))" = ok ]
    cmp "$MNT/model.gguf" "$FILES/big.gguf"
}

@test "an object replaced under the mount fails reads of what was not fetched with EIO, saying it changed" {
    s3_put models changing.gguf "$FILES/big.gguf"
    mount_model s3://models/changing.gguf "$MNT" -o cache_mb=0
    cp "$FILES/big.gguf" "$BATS_TEST_TMPDIR/other.gguf"
    printf 'x' | dd of="$BATS_TEST_TMPDIR/other.gguf" bs=1 seek=$((3 << 20)) conv=notrunc 2>/dev/null
    s3_put models changing.gguf "$BATS_TEST_TMPDIR/other.gguf"
    run read_at "$MNT/model.gguf" $((3 << 20))
    [ "$output" = EIO ]
    grep -q 's3://models/changing.gguf: changed on the server since it was mounted (ETag changed' \
        "$BATS_TEST_TMPDIR/daemon.log"
}

@test "node-llama-cpp decodes from a bucket's model what it decodes from the file" {
    require_llama_client
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$BATS_TEST_TMPDIR/sample.gguf" >/dev/null
    s3_put models sample.gguf "$BATS_TEST_TMPDIR/sample.gguf"
    same_tokens_mounted "$BATS_TEST_TMPDIR/sample.gguf" s3://models/sample.gguf
    all_signed
}

# verify_is DIR FILE KIND DIGEST PUBLISHED VERDICT: DIR/verify is that
# one line and its verdict.
verify_is() {
    run cat "$1/verify"
    [ "$output" = "$(printf '%s\t%s\t%s\t%s\t%s\nverdict: %s' "$2" "$3" "$4" "$5" "$6" "$6")" ] ||
        { echo "$output"; return 1; }
}

@test "verify compares an object with the x-amz-checksum-sha256 it was uploaded with, else with its single-part ETag's MD5" {
    local sum
    sum=$(sha256sum "$FILES/type-f32.gguf" | cut -d' ' -f1)
    mount_model s3://models/sum/type-f32.gguf "$MNT"
    verify_is "$MNT" type-f32.gguf sha256 "$sum" "$sum" ok
    sum=$(md5sum "$FILES/type-q4_K.gguf" | cut -d' ' -f1)
    mount_model s3://models/q4/type-q4_K.gguf "$BATS_TEST_TMPDIR/q4"
    verify_is "$BATS_TEST_TMPDIR/q4" type-q4_K.gguf md5 "$sum" "$sum" ok
    # S3 sends no checksum of the whole with a part of an object: one
    # larger than the open's first request is compared by its ETag.
    sum=$(md5sum "$FILES/big.gguf" | cut -d' ' -f1)
    mount_model s3://models/sum/big.gguf "$BATS_TEST_TMPDIR/big"
    verify_is "$BATS_TEST_TMPDIR/big" big.gguf md5 "$sum" "$sum" ok
    # x-amz-checksum-mode went signed, as every x-amz-* header must.
    all_signed
}

@test "an object whose bytes changed after its checksummed upload is a MISMATCH, and a line of warnings" {
    local sum served
    sum=$(sha256sum "$FILES/type-f32.gguf" | cut -d' ' -f1)
    served=$(sha256sum "$FILES/rotten.gguf" | cut -d' ' -f1)
    mount_model s3://models/sum/rotten.gguf "$MNT"
    verify_is "$MNT" rotten.gguf sha256 "$served" "$sum" MISMATCH
    grep -qxF "offset 0: sha256 $served of the file is not the $sum its store publishes (x-amz-checksum-sha256)" \
        "$MNT/warnings"
}
