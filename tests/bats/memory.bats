#!/usr/bin/env bats
# memory/CTX and memory.tsv: the memory llama.cpp allocates for a model at a
# context, against llama.cpp itself. make_memory_models.py writes tiny
# models of twelve families with ggml's own gguf writer (cached in the
# fixtures' cache); node-llama-cpp creates contexts of three sizes with f16,
# q8_0 and q4_0 caches and check_memory.py compares what llama.cpp logs with
# the mount's files.

load test_helper
load memory_models
load llama_client

# padded to 512, 1536 and 5120: gemma3's window (700) plus a batch is 1280
# cells, gemma2's (4096, llama.cpp's default) 4608
CONTEXTS=512,1300,5000
FAMILIES=(llama llama_f16 llama_head8 qwen2 qwen3 qwen3moe gemma2 gemma3 deepseek2 mamba mamba2 lfm2)

setup() {
    require_fuse
    memory_models
}

# llama_memory CTX,... MODEL...: memory_client.mjs's lines. Without the
# test runner's MALLOC_PERTURB_, which would have glibc fill every buffer
# llama.cpp allocates (its caches, of no concern here) and make each
# context several times slower. Its runs are kept (client_run).
llama_memory() {
    client_run env -u MALLOC_PERTURB_ NODE_PATH="$LLAMA_CLIENT/node_modules" \
        MEMORY_CLIENT_NO_ESTIMATE="${MEMORY_CLIENT_NO_ESTIMATE:-}" node "$HELPERS/memory_client.mjs" "$@"
}

# field FILE KEY: the value of a `key: value` line.
field() {
    awk -v k="$2" -F ': ' '$1 == k {print $2}' "$1"
}

@test "memory/CTX equals what llama.cpp allocates, twelve families and the sample model at three contexts with f16, q8_0 and q4_0 caches" {
    require_llama_client
    local f name args=() models=()
    # the sample model is the one the demo and the client suites run (kept
    # beside the others, replaced only when it changes: client_run)
    "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$BATS_TEST_TMPDIR/sample.gguf" >/dev/null
    cmp -s "$BATS_TEST_TMPDIR/sample.gguf" "$MODELS/sample.gguf" || cp "$BATS_TEST_TMPDIR/sample.gguf" "$MODELS/sample.gguf"
    for f in "${FAMILIES[@]/#/$MODELS/}" "$MODELS/sample"; do
        name=${f##*/}
        f+=.gguf
        mount_model "$f" "$BATS_TEST_TMPDIR/$name"
        args+=("$f=$BATS_TEST_TMPDIR/$name")
        models+=("$f")
    done
    [ "${#models[@]}" -eq 13 ]
    run --separate-stderr llama_memory "$CONTEXTS" "${models[@]}"
    [ "$status" -eq 0 ] || { echo "node-llama-cpp failed: $stderr"; return 1; }
    [ "$(wc -l <<<"$output")" -eq $((${#models[@]} * 3 * 3)) ]
    run "$PYTHON" "$HELPERS/check_memory.py" "${args[@]}" <<<"$output"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "$((${#models[@]} * 3 * 3)) contexts checked, 0 differences" ]
}

@test "memory/ lists 512 doubling to the trained context, memory.tsv a line for each, any context looks up" {
    local mnt="$BATS_TEST_TMPDIR/mnt" ctx
    mount_model "$MODELS/gemma3.gguf" "$mnt"
    run ls "$mnt"
    [[ "$output" == *$'\nmemory\nmemory.tsv\n'* ]]
    run ls -v "$mnt/memory"
    [ "$output" = $'512\n1024\n2048\n4096\n8192' ]
    [ "$(head -n 1 "$mnt/memory.tsv")" = $'context\tweights\tkv_f16\tkv_q8_0\tkv_q4_0\trecurrent\ttotal_f16' ]
    # each line is its context's file, and every size is exact
    while IFS=$'\t' read -r ctx weights f16 q8 q4 recurrent total; do
        [ "$(field "$mnt/memory/$ctx" context)" = "$ctx" ]
        [ "$(field "$mnt/memory/$ctx" weights)" = "$weights" ]
        [ "$(field "$mnt/memory/$ctx" kv_f16)" = "$f16" ]
        [ "$(field "$mnt/memory/$ctx" kv_q8_0)" = "$q8" ]
        [ "$(field "$mnt/memory/$ctx" kv_q4_0)" = "$q4" ]
        [ "$(field "$mnt/memory/$ctx" recurrent)" = "$recurrent" ]
        [ "$(field "$mnt/memory/$ctx" total_f16)" = "$total" ]
        [ "$(stat -c %s "$mnt/memory/$ctx")" -eq "$(wc -c <"$mnt/memory/$ctx")" ]
    done < <(tail -n +2 "$mnt/memory.tsv")
    [ "$(tail -n +2 "$mnt/memory.tsv" | wc -l)" -eq 5 ]
    [ "$(stat -c %s "$mnt/memory.tsv")" -eq "$(wc -c <"$mnt/memory.tsv")" ]
    # weights: the tensors' bytes, as tensors.tsv lists them
    [ "$(field "$mnt/memory/512" weights)" = "$(awk -F '\t' 'NR > 1 {s += $5} END {print s}' "$mnt/tensors.tsv")" ]
    # any context from 1 to 2^24, padded to 256 cells; the window plus a batch of 512
    [ "$(field "$mnt/memory/1" context)" = 256 ]
    [ "$(field "$mnt/memory/1" swa_cells)" = 256 ]
    [ "$(field "$mnt/memory/100000" context)" = 100096 ]
    [ "$(field "$mnt/memory/100000" swa_cells)" = 1280 ]
    [ "$(field "$mnt/memory/100000" swa_layers)" = 6 ]
    [ "$(field "$mnt/memory/100000" kv_layers)" = 1 ]
    [ "$(field "$mnt/memory/16777216" context)" = 16777216 ]
    for ctx in 0 016 +5 16777217 99999999999 abc 5x; do
        run ! test -e "$mnt/memory/$ctx"
    done
    run -1 --separate-stderr bash -c "echo x >'$mnt/memory/512'"
    [[ "$stderr" == *"Read-only file system"* ]]
}

@test "a recurrent model's memory is its state, whatever the context; an MLA cache keeps no V" {
    mount_model "$MODELS/mamba.gguf" "$BATS_TEST_TMPDIR/mamba"
    mount_model "$MODELS/deepseek2.gguf" "$BATS_TEST_TMPDIR/deepseek2"
    local m="$BATS_TEST_TMPDIR/mamba/memory"
    # 4 layers of (3 x 512) conv and (64 x 512) SSM state, f32
    [ "$(field "$m/512" recurrent)" = $((4 * (3 * 512 + 64 * 512) * 4)) ]
    [ "$(field "$m/512" recurrent)" = "$(field "$m/65536" recurrent)" ]
    [ "$(field "$m/65536" kv_f16)" = 0 ]
    [ "$(field "$m/65536" kv_layers)" = 0 ]
    [ "$(field "$m/65536" kv_cells)" = 0 ]
    # 2 layers of one K row of kv_lora_rank 64 + rope 32, f16
    local d="$BATS_TEST_TMPDIR/deepseek2/memory"
    [ "$(field "$d/1024" kv_f16)" = $((2 * 1024 * 96 * 2)) ]
    [ "$(field "$d/1024" kv_q8_0)" = $((2 * 1024 * 96 / 32 * 34)) ]
}

@test "a model without an architecture whose rules are known has no memory/ nor memory.tsv" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$(fixture type-q8_0.gguf)" "$mnt"
    run ! test -e "$mnt/memory"
    run ! test -e "$mnt/memory.tsv"
    run ls "$mnt"
    [[ "$output" != *memory* ]]
    [ "$(stat -c %h "$mnt")" -eq 4 ]
}

@test "memory/ follows edits of the keys it is computed from" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$MODELS/llama.gguf" "$mnt" -o edit
    # 3 layers of 2 K and 2 V heads of 32, f16
    [ "$(field "$mnt/memory/4096" kv_f16)" = $((3 * 4096 * 2 * 64 * 2)) ]
    printf '3000\n' >"$mnt/metadata/llama.context_length"
    run ls -v "$mnt/memory"
    [ "$output" = $'512\n1024\n2048\n3000' ]
    [ "$(tail -n 1 "$mnt/memory.tsv" | cut -f1)" = 3000 ]
    printf '4\n' >"$mnt/metadata/llama.attention.head_count_kv"
    [ "$(field "$mnt/memory/4096" kv_f16)" = $((3 * 4096 * 4 * 64 * 2)) ]
    [ "$(stat -c %s "$mnt/memory/4096")" -eq "$(wc -c <"$mnt/memory/4096")" ]
    printf 'unknown-arch\n' >"$mnt/metadata/general.architecture"
    run ! test -e "$mnt/memory/4096"
    run ! test -e "$mnt/memory.tsv"
    printf 'llama\n' >"$mnt/metadata/general.architecture"
    [ "$(field "$mnt/memory/4096" kv_layers)" = 3 ]
}

@test "a cache type llama.cpp refuses reads - in memory/ and memory.tsv, and warnings says why" {
    local mnt="$BATS_TEST_TMPDIR/mnt" off
    mount_model "$MODELS/llama_head8.gguf" "$mnt" -o edit
    # heads of 64 / 8 = 8: blocks of 32 do not divide a K row's head
    [ "$(field "$mnt/memory/512" kv_f16)" = $((2 * 512 * 4 * 8 * 2 * 2)) ]
    [ "$(field "$mnt/memory/512" kv_q8_0)" = - ]
    [ "$(field "$mnt/memory/512" kv_q4_0)" = - ]
    [ "$(sed -n 2p "$mnt/memory.tsv" | cut -f 3-5)" = "$(printf '%s\t-\t-' $((2 * 512 * 4 * 8 * 2 * 2)))" ]
    [ "$(stat -c %s "$mnt/memory.tsv")" -eq "$(wc -c <"$mnt/memory.tsv")" ]
    off=$("$PYTHON" "$HELPERS/key_offset.py" "$MODELS/llama_head8.gguf" llama.attention.head_count)
    run grep 'does not divide' "$mnt/warnings"
    [ "${lines[0]}" = "offset $off: llama.attention.head_count: K cache type q8_0 with block size 32 does not divide n_embd_head_k=8: llama.cpp makes no q8_0 KV cache for this model" ]
    [ "${lines[1]}" = "offset $off: llama.attention.head_count: K cache type q4_0 with block size 32 does not divide n_embd_head_k=8: llama.cpp makes no q4_0 KV cache for this model" ]
    [ "${#lines[@]}" -eq 2 ]
    [ "$(stat -c %s "$mnt/warnings")" -eq "$(wc -c <"$mnt/warnings")" ]
    # a key_length of 32 makes K rows whole blocks; V's head is still 8
    touch "$mnt/metadata/llama.attention.key_length" "$mnt/metadata/llama.attention.value_length"
    setfattr -n user.gguf.type -v u32 "$mnt/metadata/llama.attention.key_length"
    setfattr -n user.gguf.type -v u32 "$mnt/metadata/llama.attention.value_length"
    printf '8\n' >"$mnt/metadata/llama.attention.value_length"
    printf '32\n' >"$mnt/metadata/llama.attention.key_length"
    run grep -c 'V cache type q8_0 with block size 32 does not divide n_embd_head_v=8' "$mnt/warnings"
    [ "$output" = 1 ]
    printf '32\n' >"$mnt/metadata/llama.attention.value_length"
    run grep -c 'does not divide' "$mnt/warnings"
    [ "$output" = 0 ]
    [ "$(field "$mnt/memory/512" kv_q8_0)" = $((2 * 512 * 4 * 32 * 2 / 32 * 34)) ]
}

@test "every architecture llama.cpp makes a context for: memory/ equals what it allocates, three contexts, three cache types" {
    require_llama_client
    local arches
    arches=$("$GGUF_FS_SCRIPTS/fixtures/arch-models") || skip "llama.cpp's tiny models could not be made"
    # one mount of the folder: each model in it is its single mount
    # (catalog.bats)
    local f name with=() without=() args=() models=()
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$arches" "$mnt"
    for f in "$arches"/*.gguf; do
        name=$(basename "$f" .gguf)
        if [ -d "$mnt/$name.gguf/memory" ]; then
            with+=("$name")
            args+=("$f=$mnt/$name.gguf")
            models+=("$f")
        else
            without+=("$name")
        fi
    done
    # the architectures whose caches are of other kinds, or that share
    # another context's (doc/SEMANTICS.md)
    [ "${without[*]}" = "deepseek32 deepseek4 dflash dots3note eagle3 gemma4-assistant glm-dsa graniteswitch hy_v4 minimax-m3 nanbeige qwen4exp" ]
    [ "${#with[@]}" -ge 120 ]
    # One client for them all, restarted past the models it crashes on.
    export MEMORY_CLIENT_NO_ESTIMATE=1
    past_crashes 9 llama_memory 512,1300,5000 -- "${models[@]}" >"$BATS_TEST_TMPDIR/kept"
    echo "llama.cpp crashed on: ${CRASHED[*]}"
    run "$PYTHON" "$HELPERS/check_memory.py" "${args[@]}" <"$BATS_TEST_TMPDIR/kept"
    echo "$output" | tail -n 5
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "$(((${#models[@]} - ${#CRASHED[@]}) * 9)) contexts checked, 0 differences" ]
    # the same one every time: plm's tiny model has shapes its graph does
    # not take (make_arch_models.c gives every other graph what it needs)
    [ "${CRASHED[*]}" = "plm" ]
}
