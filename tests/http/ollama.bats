#!/usr/bin/env bats
# Ollama registry mounts: an OCI distribution registry served by nginx on
# loopback (registry.bash: manifests, blobs by a 307 to a second host that
# serves ranges, a namespace that wants a token from a Bearer challenge).
# ollama+http://HOST/NAMESPACE/NAME:TAG mounts the model layer with the
# tree of the same file mounted locally, with Modelfile and layers/ as
# `ollama show` and the layers say; the token goes to the registry and
# never to the blob host; a bad digest, a missing tag and a registry that
# is not there are refused at mount with one line; node-llama-cpp decodes
# from model.gguf what it decodes from the file.

load ../bats/test_helper
load ../bats/llama_client
load server
load registry

TEMPLATE_TEXT='{{ if .System }}<|system|>{{ .System }}{{ end }}
{{ if eq .Role "user" }}<|user|>{{ .Prompt }}{{ end }}'
SYSTEM_TEXT='You are a "helpful" assistant.'
PARAMS_TEXT='{"stop":["<|end|>","<|user|>"],"temperature":0.7,"num_ctx":4096}'
LICENSE_TEXT='MIT License

Copyright 2026 Nobody'
LICENSE2_TEXT='Apache License 2.0'
MESSAGES_TEXT='[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello there"}]'

# manifest TYPE=FILE...: a Docker image manifest v2 whose layers are FILEs
# (put in the blob store) of media types application/vnd.ollama.image.TYPE.
manifest() {
    local layer type file hex layers=()
    for layer in "$@"; do
        type=${layer%%=*} file=${layer#*=}
        hex=$(add_blob "$file")
        layers+=("application/vnd.ollama.image.$type" "sha256:$hex" "$(stat -c %s "$file")")
    done
    python3 -c 'import json, sys
a = sys.argv[1:]
print(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
    "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:" + "0" * 64, "size": 2},
    "layers": [{"mediaType": a[i], "digest": a[i + 1], "size": int(a[i + 2])} for i in range(0, len(a), 3)]}))' "${layers[@]}"
}

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    mkdir -p "$FILES"
    cp "$GGUF_FS_FIXTURES/type-q4_K.gguf" "$FILES/model.gguf"
    printf '%s' "$TEMPLATE_TEXT" >"$FILES/template"
    printf '%s' "$SYSTEM_TEXT" >"$FILES/system"
    printf '%s' "$PARAMS_TEXT" >"$FILES/params"
    printf '%s' "$LICENSE_TEXT" >"$FILES/license"
    printf '%s' "$LICENSE2_TEXT" >"$FILES/license2"
    printf '%s' "$MESSAGES_TEXT" >"$FILES/messages"
    printf '{"unknown": true}' >"$FILES/other"
    cp "$GGUF_FS_FIXTURES/type-f16.gguf" "$FILES/projector.gguf"
    cp "$GGUF_FS_FIXTURES/type-q8_0.gguf" "$FILES/adapter.gguf"
    printf 'not a GGUF file' >"$FILES/notgguf"
    start_registry "$BATS_FILE_TMPDIR/registry"
    local full
    full=$(manifest model="$FILES/model.gguf" template="$FILES/template" system="$FILES/system" \
        params="$FILES/params" license="$FILES/license" license="$FILES/license2" messages="$FILES/messages" \
        unknown="$FILES/other" projector="$FILES/projector.gguf" adapter="$FILES/adapter.gguf")
    add_manifest library/tiny latest "$full"
    add_manifest library/tiny q4 "$full"
    add_manifest private/tiny latest "$(manifest model="$FILES/model.gguf" system="$FILES/system")"
    add_manifest org/repo Q4_K "$(manifest model="$FILES/model.gguf")"
    # The model layer's digest with its last digit made a G.
    add_manifest library/bad latest "$(manifest model="$FILES/model.gguf" | python3 -c 'import json, sys
m = json.load(sys.stdin)
m["layers"][0]["digest"] = m["layers"][0]["digest"][:-1] + "G"
print(json.dumps(m))')"
    add_manifest library/badprojector latest "$(manifest model="$FILES/model.gguf" projector="$FILES/notgguf")"
    # A blob served with its last byte (tensor data) flipped under the
    # digest of the file it was; a manifest that says a byte more than
    # the blob has.
    local hex
    cp "$GGUF_FS_FIXTURES/type-f32.gguf" "$FILES/f32.gguf"
    add_manifest library/tampered latest "$(manifest model="$FILES/f32.gguf")"
    hex=$(sha256sum "$FILES/f32.gguf" | cut -d' ' -f1)
    python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[-1] ^= 0xff
open(sys.argv[1], "wb").write(d)' "$REGISTRY_DIR/blobs/sha256-$hex"
    add_manifest library/longer latest "$(manifest model="$FILES/model.gguf" | python3 -c 'import json, sys
m = json.load(sys.stdin)
m["layers"][0]["size"] += 1
print(json.dumps(m))')"
    add_manifest library/notjson latest '{"layers": [{"mediaType": "application/vnd.ollama.image.model",'
}

teardown_file() {
    stop_registry
}

setup() {
    require_fuse
    MNT="$BATS_TEST_TMPDIR/mnt"
    mkdir -p "$MNT"
    REGISTRY="127.0.0.1:$REGISTRY_PORT"
    : >"$REGISTRY_DIR/registry.log"
    : >"$REGISTRY_DIR/blobs.log"
}

# The fault proxies a test started end with it, passed or failed.
teardown() {
    local pid status=0
    if [ -f "$BATS_TEST_TMPDIR/proxies" ]; then
        while read -r pid _; do
            kill "$pid" 2>/dev/null
        done <"$BATS_TEST_TMPDIR/proxies"
    fi
    exec 5<&- 6<&- 7<&- 8<&- 9<&-
    unmount_all || status=1
    check_daemon_log || status=1
    return $status
}

@test "an ollama+http:// mount has the model layer's tree, as the file mounted locally" {
    mount_model "ollama+http://$REGISTRY/library/tiny:latest" "$MNT"
    mount_model "$FILES/model.gguf" "$BATS_TEST_TMPDIR/local"
    cmp "$MNT/model.gguf" "$FILES/model.gguf"
    local f
    for f in header metadata.json tensors.tsv warnings; do
        cmp "$MNT/$f" "$BATS_TEST_TMPDIR/local/$f"
    done
    diff -r "$MNT/metadata" "$BATS_TEST_TMPDIR/local/metadata"
    diff -r "$MNT/tensors" "$BATS_TEST_TMPDIR/local/tensors"
    # Fetched through the registry's redirect to the blob host, with ranges.
    grep -q "^GET /v2/library/tiny/manifests/latest .* 200 " "$REGISTRY_DIR/registry.log"
    grep -q "^GET /v2/library/tiny/blobs/sha256:[0-9a-f]* .* 307 " "$REGISTRY_DIR/registry.log"
    grep -q "^GET /blobs/sha256-[0-9a-f]* bytes=[0-9]*-[0-9]* 206 " "$REGISTRY_DIR/blobs.log"
    grep -q "^url: http://$REGISTRY/v2/library/tiny/blobs/sha256:" "$MNT/remote"
}

@test "Modelfile is the model as ollama show --modelfile writes it, its adapter and projector by their blob URLs" {
    mount_model "ollama+http://$REGISTRY/library/tiny:latest" "$MNT"
    local expected="$BATS_TEST_TMPDIR/Modelfile"
    cat >"$expected" <<END
# Modelfile generated by "ollama show"
# To build a new Modelfile based on this, replace FROM with:
# FROM $REGISTRY/library/tiny:latest

FROM $REGISTRY/library/tiny:latest
ADAPTER http://$REGISTRY/v2/library/tiny/blobs/sha256:$(sha256sum "$FILES/adapter.gguf" | cut -d' ' -f1)
FROM http://$REGISTRY/v2/library/tiny/blobs/sha256:$(sha256sum "$FILES/projector.gguf" | cut -d' ' -f1)
TEMPLATE """$TEMPLATE_TEXT"""
SYSTEM $SYSTEM_TEXT
PARAMETER stop <|end|>
PARAMETER stop <|user|>
PARAMETER temperature 0.7
PARAMETER num_ctx 4096
LICENSE "$LICENSE_TEXT"
LICENSE $LICENSE2_TEXT
MESSAGE user Hi
MESSAGE assistant Hello there
END
    diff "$expected" "$MNT/Modelfile"
    [ "$(stat -c %s "$MNT/Modelfile")" -eq "$(stat -c %s "$expected")" ]
}

@test "layers/ has the manifest's small layers as stored, licenses numbered, nothing of other media types" {
    mount_model "ollama+http://$REGISTRY/library/tiny:q4" "$MNT"
    [ "$(ls "$MNT/layers" | tr '\n' ' ')" = "adapter license license.2 params projector system template " ]
    cmp "$MNT/layers/template" "$FILES/template"
    cmp "$MNT/layers/system" "$FILES/system"
    cmp "$MNT/layers/params" "$FILES/params"
    cmp "$MNT/layers/license" "$FILES/license"
    cmp "$MNT/layers/license.2" "$FILES/license2"
    [ "$(stat -c %s "$MNT/layers/params")" -eq "$(stat -c %s "$FILES/params")" ]
    [ "$(jq -r '.stop[1]' "$MNT/layers/params")" = "<|user|>" ]
    run ! ls "$MNT/layers/messages"
    run ! ls "$MNT/layers/unknown"
    # A model with no layer but the model's has an empty layers/.
    mount_model "ollama+http://$REGISTRY/org/repo:Q4_K" "$BATS_TEST_TMPDIR/bare"
    [ -z "$(ls "$BATS_TEST_TMPDIR/bare/layers")" ]
    grep -qx "FROM $REGISTRY/org/repo:Q4_K" "$BATS_TEST_TMPDIR/bare/Modelfile"
    run ! grep -q '^TEMPLATE\|^PARAMETER\|^LICENSE' "$BATS_TEST_TMPDIR/bare/Modelfile"
}

# same_model DIR FILE: DIR is the tree of FILE mounted alone.
same_model() {
    local local="$BATS_TEST_TMPDIR/alone-$(basename "$2")" f
    mount_model "$2" "$local"
    cmp "$1/model.gguf" "$2"
    for f in header metadata.json tensors.tsv warnings; do
        cmp "$1/$f" "$local/$f"
    done
    diff -r "$1/metadata" "$local/metadata"
    diff -r "$1/tensors" "$local/tensors"
    [ "$(stat -c %s "$1/model.gguf")" -eq "$(stat -c %s "$2")" ]
    [ "$(getfattr -d --absolute-names "$1/tensors/$(ls "$1/tensors" | head -n 1)" | sed 1d)" = \
        "$(getfattr -d --absolute-names "$local/tensors/$(ls "$local/tensors" | head -n 1)" | sed 1d)" ]
    fusermount3 -u "$local"
}

@test "layers/projector and layers/adapter are the trees of the projector and adapter layers" {
    mount_model "ollama+http://$REGISTRY/library/tiny:latest" "$MNT"
    [ -d "$MNT/layers/projector" ] && [ -d "$MNT/layers/adapter" ]
    same_model "$MNT/layers/projector" "$FILES/projector.gguf"
    same_model "$MNT/layers/adapter" "$FILES/adapter.gguf"
    # The model's own tree is unchanged beside them.
    cmp "$MNT/model.gguf" "$FILES/model.gguf"
    [ "$(stat -c %h "$MNT/layers")" -eq 4 ]
    # Each read with ranges from its own blob.
    grep -q "^GET /blobs/sha256-$(sha256sum "$FILES/projector.gguf" | cut -d' ' -f1) bytes=" "$REGISTRY_DIR/blobs.log"
    # A projector layer that is not a GGUF file refuses the mount, naming it.
    mkdir -p "$BATS_TEST_TMPDIR/bad"
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f "ollama+http://$REGISTRY/library/badprojector" "$BATS_TEST_TMPDIR/bad"
    [ "$(wc -l <<<"$stderr")" -eq 1 ]
    [[ "$stderr" == "gguf-fs: ollama+http://$REGISTRY/library/badprojector: projector layer http://$REGISTRY/v2/library/badprojector/blobs/sha256:"* ]]
}

@test "a local mount has neither Modelfile nor layers/" {
    mount_model "$FILES/model.gguf" "$MNT"
    run ! ls "$MNT/Modelfile"
    run ! ls "$MNT/layers"
    run ! grep -qx 'Modelfile\|layers' < <(ls "$MNT")
}

@test "a registry's Bearer challenge is answered with its token, which never goes to the blob host" {
    mount_model "ollama+http://$REGISTRY/private/tiny" "$MNT"
    cmp "$MNT/model.gguf" "$FILES/model.gguf"
    cmp "$MNT/layers/system" "$FILES/system"
    # The first request was refused and asked for the token flow.
    grep -q "^GET /v2/private/tiny/manifests/latest .* 401 host=.* auth=-$" "$REGISTRY_DIR/registry.log"
    grep -q "^GET /token?service=test-registry&scope=repository%3Aprivate%2Ftiny%3Apull .* 200 " "$REGISTRY_DIR/registry.log"
    grep -q "^GET /v2/private/tiny/manifests/latest .* 200 host=.* auth=Bearer $REGISTRY_TOKEN\$" "$REGISTRY_DIR/registry.log"
    grep -q "^GET /v2/private/tiny/blobs/sha256:.* 307 host=.* auth=Bearer $REGISTRY_TOKEN\$" "$REGISTRY_DIR/registry.log"
    # The blob host got requests, and no token with any.
    grep -q "^GET /blobs/sha256-" "$REGISTRY_DIR/blobs.log"
    run ! grep -v 'auth=-$' "$REGISTRY_DIR/blobs.log"
    run ! grep -q "$REGISTRY_TOKEN" "$BATS_TEST_TMPDIR/daemon.log"
}

@test "a manifest whose digest is not sha256 and 64 lower-case hex digits is refused at mount with one line" {
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f "ollama+http://$REGISTRY/library/bad" "$MNT"
    [ "$(wc -l <<<"$stderr")" -eq 1 ]
    [[ "$stderr" == *"ollama+http://$REGISTRY/library/bad: "*"/v2/library/bad/manifests/latest: layers[0]: digest \"sha256:"*"G\" is not sha256:<64 lower-case hex digits>"* ]]
    run ! grep -q "/blobs/" "$REGISTRY_DIR/registry.log"
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f "ollama+http://$REGISTRY/library/notjson" "$MNT"
    [ "$(wc -l <<<"$stderr")" -eq 1 ]
    [[ "$stderr" == *"/v2/library/notjson/manifests/latest: offset 0x"*": not JSON"* ]]
}

@test "a missing tag or model, a 401 without a challenge and an unreachable registry are refused at mount with one line naming the model and the status" {
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f "ollama+http://$REGISTRY/library/tiny:nope" "$MNT"
    [ "$(wc -l <<<"$stderr")" -eq 1 ]
    [[ "$stderr" == "gguf-fs: ollama+http://$REGISTRY/library/tiny:nope: manifest: "*"HTTP 404" ]]
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f "ollama+http://$REGISTRY/nobody/none" "$MNT"
    [[ "$stderr" == *"nobody/none"*"HTTP 404" ]]
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f "ollama+http://$REGISTRY/locked/tiny" "$MNT"
    [ "$(wc -l <<<"$stderr")" -eq 1 ]
    [[ "$stderr" == "gguf-fs: ollama+http://$REGISTRY/locked/tiny: manifest: "*"/v2/locked/tiny/manifests/latest: HTTP 401" ]]
    local port
    port=$(free_port)
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f -o timeout_s=2 "ollama+http://127.0.0.1:$port/library/tiny" "$MNT"
    [ "$(wc -l <<<"$stderr")" -eq 1 ]
    [[ "$stderr" == *"ollama+http://127.0.0.1:$port/library/tiny: manifest: "*"127.0.0.1"* ]]
    run ! mountpoint -q "$MNT"
}

@test "a registry that answers 503 is asked again; one that refuses connections is refused once timeout_s is over" {
    local port control="$BATS_TEST_TMPDIR/control" log="$BATS_TEST_TMPDIR/proxy.log"
    port=$(free_port)
    echo "503 x2" >"$control"
    python3 "$BATS_TEST_DIRNAME/fault_proxy.py" "$port" "$REGISTRY_PORT" "$control" "$log" 3>&- \
        2>"$BATS_TEST_TMPDIR/proxy-error.log" &
    echo "$! $BATS_TEST_TMPDIR" >>"$BATS_TEST_TMPDIR/proxies"
    wait_port "$port"
    mount_model "ollama+http://127.0.0.1:$port/library/tiny" "$MNT"
    cmp "$MNT/model.gguf" "$FILES/model.gguf"
    [ "$(grep -c '^GET /v2/library/tiny/manifests/latest - 503' "$log")" -eq 2 ]
    grep -q '^GET /v2/library/tiny/manifests/latest - pass' "$log"
    # One that never answers right is refused once timeout_s is over.
    echo "refuse" >"$control"
    mkdir -p "$BATS_TEST_TMPDIR/refused"
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f -o timeout_s=2 "ollama+http://127.0.0.1:$port/library/tiny" \
        "$BATS_TEST_TMPDIR/refused"
    [ "$(wc -l <<<"$stderr")" -eq 1 ]
    [[ "$stderr" == "gguf-fs: ollama+http://127.0.0.1:$port/library/tiny: manifest: "* ]]
}

@test "names that are not Ollama names are refused with one line" {
    local name
    for name in "ollama+http://$REGISTRY/../x" "ollama://a/b/c/d" "ollama+http://tiny" "ollama://" \
        "ollama://library/ti%2fny"; do
        run -1 --separate-stderr timeout 60 "$GGUF_FS" -f "$name" "$MNT"
        [ "$(wc -l <<<"$stderr")" -eq 1 ]
        [[ "$stderr" == "gguf-fs: $name: "* ]]
    done
    run ! grep -q . "$REGISTRY_DIR/registry.log"
}

@test "node-llama-cpp decodes from an ollama mount's model.gguf what it decodes from the file" {
    require_llama_client
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$BATS_TEST_TMPDIR/sample.gguf" >/dev/null
    add_manifest library/sample latest "$(manifest model="$BATS_TEST_TMPDIR/sample.gguf" template="$FILES/template")"
    same_tokens_mounted "$BATS_TEST_TMPDIR/sample.gguf" "ollama+http://$REGISTRY/library/sample"
}

# local_store DIR: an Ollama store (manifests/, blobs/) of the same
# layers as the registry's library/tiny:latest, and ns/bare:v1 with the
# model layer alone.
local_store() {
    local dir=$1 f hex
    mkdir -p "$dir/blobs" "$dir/manifests/registry.ollama.ai/library/tiny" "$dir/manifests/registry.ollama.ai/ns/bare"
    for f in "$REGISTRY_DIR"/blobs/sha256-*; do
        cp "$f" "$dir/blobs/"
    done
    cp "$REGISTRY_DIR/store/v2/library/tiny/manifests/latest" "$dir/manifests/registry.ollama.ai/library/tiny/latest"
    cp "$REGISTRY_DIR/store/v2/org/repo/manifests/Q4_K" "$dir/manifests/registry.ollama.ai/ns/bare/v1"
}

@test "a folder mount of a local store has Modelfile and layers/ in ollama/NAME:TAG, FROM naming the blob" {
    local store="$BATS_TEST_TMPDIR/store"
    local_store "$store"
    mount_model "$store" "$MNT"
    local model="$MNT/ollama/tiny:latest" hex
    cmp "$model/model.gguf" "$FILES/model.gguf"
    [ "$(ls "$model/layers" | tr '\n' ' ')" = "adapter license license.2 params projector system template " ]
    same_model "$model/layers/projector" "$FILES/projector.gguf"
    same_model "$model/layers/adapter" "$FILES/adapter.gguf"
    cmp "$model/layers/template" "$FILES/template"
    cmp "$model/layers/license.2" "$FILES/license2"
    cmp "$model/layers/params" "$FILES/params"
    hex=$(sha256sum "$FILES/model.gguf" | cut -d' ' -f1)
    # The registry mount's Modelfile, but for the blobs and the comment.
    mount_model "ollama+http://$REGISTRY/library/tiny:latest" "$BATS_TEST_TMPDIR/registry"
    diff <(sed 1,7d "$model/Modelfile") <(sed 1,7d "$BATS_TEST_TMPDIR/registry/Modelfile")
    [ "$(sed -n 3p "$model/Modelfile")" = "# FROM tiny:latest" ]
    [ "$(sed -n 5p "$model/Modelfile")" = "FROM $(realpath "$store")/blobs/sha256-$hex" ]
    # The adapter, then the projector as another FROM, as Ollama writes them.
    [ "$(sed -n 6p "$model/Modelfile")" = "ADAPTER $(realpath "$store")/blobs/sha256-$(sha256sum "$FILES/adapter.gguf" | cut -d' ' -f1)" ]
    [ "$(sed -n 7p "$model/Modelfile")" = "FROM $(realpath "$store")/blobs/sha256-$(sha256sum "$FILES/projector.gguf" | cut -d' ' -f1)" ]
    [ "$(stat -c %s "$model/Modelfile")" -eq "$(wc -c <"$model/Modelfile")" ]
    # A namespace's model, with no layer but the model's.
    [ -z "$(ls "$MNT/ollama/ns/bare:v1/layers")" ]
    [ "$(sed -n 3p "$MNT/ollama/ns/bare:v1/Modelfile")" = "# FROM ns/bare:v1" ]
    # The store's own files, and models by their blob names, have none.
    run ! ls "$MNT/blobs/sha256-$hex/Modelfile"
    run ! ls "$MNT/blobs/sha256-$hex/layers"
}

@test "verify of a registry model compares each blob with the manifest's digest: ok, and a flipped byte a MISMATCH in warnings" {
    mount_model "ollama+http://$REGISTRY/library/tiny:latest" "$MNT"
    local hex
    hex=$(sha256sum "$FILES/model.gguf" | cut -d' ' -f1)
    run cat "$MNT/verify"
    [ "$output" = "$(printf 'sha256:%s\tsha256\t%s\t%s\tok\nverdict: ok' "$hex" "$hex" "$hex")" ]
    hex=$(sha256sum "$FILES/projector.gguf" | cut -d' ' -f1)
    [ "$(cat "$MNT/layers/projector/verify")" = "$(printf 'sha256:%s\tsha256\t%s\t%s\tok\nverdict: ok' "$hex" "$hex" "$hex")" ]
    local served
    hex=$(sha256sum "$FILES/f32.gguf" | cut -d' ' -f1)
    served=$(sha256sum "$REGISTRY_DIR/blobs/sha256-$hex" | cut -d' ' -f1)
    mount_model "ollama+http://$REGISTRY/library/tampered" "$BATS_TEST_TMPDIR/tampered"
    run cat "$BATS_TEST_TMPDIR/tampered/verify"
    [ "$output" = "$(printf 'sha256:%s\tsha256\t%s\t%s\tMISMATCH\nverdict: MISMATCH' "$hex" "$served" "$hex")" ]
    grep -qxF "offset 0: sha256 $served of the file is not the $hex its store publishes (manifest)" \
        "$BATS_TEST_TMPDIR/tampered/warnings"
}

@test "a model layer whose blob's size differs from the manifest's is refused at mount, naming the blob, offset 0 and both sizes" {
    local size hex
    size=$(stat -c %s "$FILES/model.gguf")
    hex=$(sha256sum "$FILES/model.gguf" | cut -d' ' -f1)
    run -1 --separate-stderr timeout 60 "$GGUF_FS" -f "ollama+http://$REGISTRY/library/longer" "$MNT"
    echo "$stderr"
    [ "$stderr" = "gguf-fs: ollama+http://$REGISTRY/library/longer: model layer http://$REGISTRY/v2/library/longer/blobs/sha256:$hex: offset 0x0: the file has $size bytes, the manifest says $((size + 1))" ]
    run ! mountpoint -q "$MNT"
}
