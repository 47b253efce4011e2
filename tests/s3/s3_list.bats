#!/usr/bin/env bats
# ListObjectsV2 as the source layer does it (s3_ls drives ggfs_s3_list):
# through the signature-checking proxy, at max-keys=2 so that every listing
# takes several pages and continuation tokens; keys and common prefixes
# under a prefix, with sizes and ETags as S3 has them; hostile keys left
# out with a log line each; the cap on entries; refusals in S3's words.

load ../bats/test_helper
load ../http/server
load s3_server

setup_file() {
    export DATA="$BATS_FILE_TMPDIR/data"
    mkdir -p "$DATA"
    local i
    for i in 1 2 3 4 5; do
        head -c $((i * 1000)) /dev/urandom >"$DATA/$i"
    done
    start_s3 "$BATS_FILE_TMPDIR" models
    s3_put models top.gguf "$DATA/1"
    s3_put models dir/a.gguf "$DATA/1"
    s3_put models dir/b.gguf "$DATA/2"
    s3_put models dir/c.txt "$DATA/3"
    s3_put models dir/sub1/x.gguf "$DATA/4"
    s3_put models dir/sub2/y.gguf "$DATA/5"
    s3_put models dir/sub2/z.gguf "$DATA/5"
    s3_put models "dir/odd name+&=?#.gguf" "$DATA/2"
    s3_put models "dir/spaced dir/w.gguf" "$DATA/1"
    s3_put models dir/zz.gguf "$DATA/4"
    export S3_DIR S3_PORT S3RVER_PORT S3_CONFIG S3_PROXY_LOG
}

teardown_file() {
    stop_s3
}

setup() {
    s3_env
    : >"$S3_PROXY_LOG"
}

# The listing s3rver's store gives, as S3 lists it: the lines s3_ls prints.
expected_dir_listing() {
    local md5_1 md5_2 md5_3 md5_4
    md5_1=$(md5sum <"$DATA/1" | cut -d' ' -f1)
    md5_2=$(md5sum <"$DATA/2" | cut -d' ' -f1)
    md5_3=$(md5sum <"$DATA/3" | cut -d' ' -f1)
    md5_4=$(md5sum <"$DATA/4" | cut -d' ' -f1)
    cat <<LIST
obj a.gguf 1000 "$md5_1"
obj b.gguf 2000 "$md5_2"
obj c.txt 3000 "$md5_3"
obj odd%20name+&=?#.gguf 2000 "$md5_2"
obj zz.gguf 4000 "$md5_4"
dir spaced%20dir
dir sub1
dir sub2
LIST
}

@test "a prefix lists its keys and common prefixes, page after page of two, every request signed" {
    run --separate-stderr "$S3_LS" -k 2 s3://models/dir
    [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
    diff <(expected_dir_listing) <(printf '%s\n' "$output")
    # 8 entries, 2 a page: keys and prefixes count alike, none repeats.
    [ "$stderr" = "pages 4 left_out 0 capped 0" ]
    [ "$(grep -c 'list-type=2' "$S3_PROXY_LOG")" -eq 4 ]
    [ "$(grep -c 'continuation-token=' "$S3_PROXY_LOG")" -eq 3 ]
    run grep -v ' signed$' "$S3_PROXY_LOG"
    [ "$status" -eq 1 ]
}

@test "the same prefix with a final '/', in one page, lists the same" {
    run --separate-stderr "$S3_LS" s3://models/dir/
    [ "$status" -eq 0 ]
    diff <(expected_dir_listing) <(printf '%s\n' "$output")
    [ "$stderr" = "pages 1 left_out 0 capped 0" ]
}

@test "the bucket's top and a prefix with spaces list their own level" {
    run --separate-stderr "$S3_LS" -k 2 s3://models
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf 'obj top.gguf 1000 "%s"\ndir dir' "$(md5sum <"$DATA/1" | cut -d' ' -f1)")" ]
    run --separate-stderr "$S3_LS" -k 2 "s3://models/dir/spaced dir"
    [ "$status" -eq 0 ]
    [[ $output == "obj w.gguf 1000 "* ]]
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ]
}

@test "keys with '.' or '..' components, empty components, a final '/' or NUL, or named as a prefix, are left out, each with a log line" {
    s3_config 'c["extra_keys"] = {"models": [["dir/../up.gguf", 5], ["dir/..", 5], ["dir/.", 5], ["dir//twice.gguf", 5], ["dir/nul\u0000.gguf", 5], ["dir/", 0], ["dir/sub1/", 0], ["dir/sub2", 7]]}'
    run --separate-stderr "$S3_LS" -k 2 s3://models/dir
    s3_config 'c["extra_keys"] = {}'
    [ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
    diff <(expected_dir_listing) <(printf '%s\n' "$output")
    echo "$stderr"
    # dir/../ and dir// are common prefixes; dir/.. , dir/. and the NUL key
    # keys; dir/ is the prefix's own marker (no line); dir/sub1/ is inside sub1.
    [[ $stderr == *"s3://models: key 'dir/../' left out of the listing: it has an empty, '.' or '..' component"* ]]
    [[ $stderr == *"s3://models: key 'dir//' left out of the listing: its name is empty"* ]]
    [[ $stderr == *"key 'dir/..' left out of the listing: it has an empty, '.' or '..' component"* ]]
    [[ $stderr == *"key 'dir/.' left out of the listing: it has an empty, '.' or '..' component"* ]]
    [[ $stderr == *"s3://models: key 'dir/nul?.gguf' left out of the listing: it holds NUL"* ]]
    # A key named as a prefix: the directory wins.
    [[ $stderr == *"s3://models: key 'dir/sub2' left out of the listing: a prefix of the same name is listed (the directory wins)"* ]]
    # 15 entries in S3's listing, the marker and the six left out included.
    [[ $stderr == *"pages 8 left_out 7 capped 0" ]]
}

@test "a listing stops at the cap on entries, with a log line" {
    run --separate-stderr "$S3_LS" -k 2 -c 3 s3://models/dir
    [ "$status" -eq 0 ]
    [ "$output" = "$(expected_dir_listing | head -3)" ]
    [[ $stderr == *"s3://models/dir/: more than 3 entries: listing the first 3 only"* ]]
    [[ $stderr == *"capped 1" ]]
}

@test "a wrong secret, an unknown bucket and a skewed clock fail the listing in S3's words" {
    AWS_SECRET_ACCESS_KEY=wrong run -2 --separate-stderr "$S3_LS" -k 2 s3://models/dir
    [ "$stderr" = "gguf-fs: s3://models/dir: bucket 'models': 403 SignatureDoesNotMatch: the signature does not match: is the secret key right?" ]
    run -2 --separate-stderr "$S3_LS" s3://nobucket/
    [[ $stderr == "gguf-fs: s3://nobucket/: bucket 'nobucket': 404 NoSuchBucket: "* ]]
    s3_config 'c["skew_s"] = -3600'
    run -2 --separate-stderr "$S3_LS" s3://models/
    s3_config 'c["skew_s"] = 0'
    [[ $stderr == *"403 RequestTimeTooSkewed: the clock is off"* ]]
}

# list_answer XML: the proxy answers every listing with the page
# <ListBucketResult>XML</ListBucketResult> (XML given as is when it starts
# with '!': the whole body).
list_answer() {
    LIST_ANSWER=$1 s3_config 'import os
a = os.environ["LIST_ANSWER"]
c["list_answer"] = a[1:] if a.startswith("!") else "<?xml version=\"1.0\"?><ListBucketResult>" + a + "</ListBucketResult>"'
}

@test "a listing S3 would never send is refused with why, or its bad keys left out, never half taken" {
    list_answer '!<ListBucketResult><Contents><Key>a.gguf</Key><Size>1</Size></Contents'
    run -2 --separate-stderr "$S3_LS" s3://models/
    [[ $stderr == "gguf-fs: s3://models/: bucket 'models': the listing is not well-formed XML: byte "*": "* ]]
    [ -z "$output" ]
    list_answer '<Contents><Key>a.gguf</Key><Size>12x</Size></Contents>'
    run -2 --separate-stderr "$S3_LS" s3://models/
    [ "$stderr" = "gguf-fs: s3://models/: bucket 'models': S3 sent a <Size> that is no number" ]
    list_answer '<IsTruncated>true</IsTruncated>'
    run -2 --separate-stderr "$S3_LS" s3://models/
    [ "$stderr" = "gguf-fs: s3://models/: bucket 'models': a truncated page without a continuation token" ]
    list_answer "<Contents><Key>$(head -c 5000 /dev/zero | tr '\0' k)</Key></Contents>"
    run -2 --separate-stderr "$S3_LS" s3://models/
    [ "$stderr" = "gguf-fs: s3://models/: bucket 'models': S3 sent a value longer than S3 allows" ]
    list_answer '<EncodingType>url</EncodingType><Contents><Key>bad%zz.gguf</Key><Size>1</Size></Contents><Contents><Key>ok.gguf</Key><Size>2</Size><ETag>"e"</ETag></Contents>'
    run --separate-stderr "$S3_LS" s3://models/
    s3_config 'c["list_answer"] = None'
    [ "$status" -eq 0 ]
    [ "$output" = 'obj ok.gguf 2 "e"' ]
    [[ $stderr == *"key 'bad%zz.gguf' left out of the listing: S3 sent a bad %-escape"* ]]
}
