#!/usr/bin/env bats
# offload/CTX: what llama.cpp allocates on a GPU and on the host for each
# -ngl and cache type, against llama.cpp itself really offloading:
# node-llama-cpp's Vulkan build on a Vulkan device (Mesa's llvmpipe, a
# Vulkan device on the CPU, where the machine has no GPU) loads the memory
# suite's models (make_memory_models.py) with -ngl 0, half the layers and
# all of them, and creates contexts of two sizes with f16, q8_0 and q4_0
# caches; check_offload.py compares what it allocates with the mounts.

load test_helper
load memory_models

# The architectures whose graph offload/ builds (a row each in
# fs/model/llm_arches.c), which must be exact to the byte.
graph_arches() {
    grep -o '^    ROW("[^"]*"' "$GGUF_FS_SCRIPTS/../fs/model/llm_arches.c" | cut -d'"' -f2 | paste -sd,
}

setup() {
    require_fuse
    memory_models
}

# require_vulkan_client: $VULKAN_CLIENT names the directory whose
# node_modules hold node-llama-cpp's Vulkan build, and a Vulkan device is
# there; the test skips, saying why, otherwise.
require_vulkan_client() {
    VULKAN_CLIENT=$("$GGUF_FS_SCRIPTS/fixtures/llama-client-setup" vulkan 2>/dev/null) ||
        skip "node-llama-cpp's Vulkan build is not installed (scripts/setup installs it)"
    [ -n "$(ls /usr/share/vulkan/icd.d/ 2>/dev/null)" ] ||
        skip "no Vulkan driver (scripts/setup installs Mesa's mesa-vulkan-drivers)"
}

# offload_client CTX,... NGL,... MODEL...: offload_client.mjs's lines;
# with llama.cpp's graphs logged where OFFLOAD_CLIENT_GRAPHS names
# (compute-graph's shim preloaded, its log kept with the run).
offload_client() {
    mkdir -p -m 700 "$BATS_TEST_TMPDIR/xdg"
    local preload=() shim CLIENT_RUN_SIDE=
    if [ -n "${OFFLOAD_CLIENT_GRAPHS:-}" ]; then
        shim=$("$GGUF_FS_SCRIPTS/tools/compute-graph" --shim) || return 1
        preload=("LD_PRELOAD=$shim")
        CLIENT_RUN_SIDE=COMPUTE_GRAPH_LOG:$OFFLOAD_CLIENT_GRAPHS
    fi
    # (without the runner's MALLOC_PERTURB_: llama.cpp's buffers are no concern here)
    # (its runs kept: client_run; the runtime folder is no part of them)
    XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" client_run env -u MALLOC_PERTURB_ "${preload[@]}" \
        NODE_PATH="$VULKAN_CLIENT/node_modules" GGML_VK_VISIBLE_DEVICES=0 \
        OFFLOAD_CLIENT_TYPES="${OFFLOAD_CLIENT_TYPES:-}" node "$HELPERS/offload_client.mjs" "$@"
}

@test "offload/CTX equals what llama.cpp allocates on a Vulkan device and the host: -ngl 0, half and all, two contexts, three cache types" {
    require_vulkan_client
    # mamba's scan runs on no Vulkan device, so llvmpipe keeps its weights
    # on the host whatever -ngl says: a device's gap, not llama.cpp's rule
    local families=(llama llama_f16 llama_head8 qwen2 qwen3 qwen3moe gemma2 gemma3 deepseek2 mamba2 lfm2)
    local f args=() models=()
    for f in "${families[@]}"; do
        mount_model "$MODELS/$f.gguf" "$BATS_TEST_TMPDIR/$f"
        args+=("$MODELS/$f.gguf=$BATS_TEST_TMPDIR/$f")
        models+=("$MODELS/$f.gguf")
    done
    run --separate-stderr offload_client 512,4096 0,half,all "${models[@]}"
    [ "$status" -eq 0 ] || { echo "node-llama-cpp failed: $stderr"; return 1; }
    [ "$(wc -l <<<"$output")" -eq $((${#models[@]} * 3 * 2 * 3)) ]
    # compute buffers are checked for the families the model holds within
    # 10% on the host and with every layer offloaded (the others' errors
    # are printed: doc/SEMANTICS.md says how far off)
    run "$PYTHON" "$HELPERS/check_offload.py" \
        --compute llama,llama_head8,qwen2,qwen3moe,gemma2,gemma3,deepseek2 \
        "${args[@]}" <<<"$output"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "$((${#models[@]} * 3 * 2 * 3)) contexts checked, 0 differences" ]
}

@test "every architecture llama.cpp makes a context for: offload/ places weights, KV and output as llama.cpp does on a Vulkan device, -ngl 0, half and all, two contexts; compute buffers to the byte where it builds the graph" {
    require_vulkan_client
    local arches
    arches=$("$GGUF_FS_SCRIPTS/fixtures/arch-models") || skip "llama.cpp's tiny models could not be made"
    # one mount of the folder: each model in it is its single mount
    # (catalog.bats)
    local f args=() models=() mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$arches" "$mnt"
    for f in "$arches"/*.gguf; do
        if [ -d "$mnt/${f##*/}/offload" ]; then
            args+=("$f=$mnt/${f##*/}")
            models+=("$f")
        fi
    done
    [ "${#models[@]}" -ge 120 ]
    # the cache types are memory.bats's concern: f16 here
    export OFFLOAD_CLIENT_TYPES=F16 OFFLOAD_CLIENT_GRAPHS="$BATS_TEST_TMPDIR/graphs"
    past_crashes 6 offload_client 512,4096 0,half,all -- "${models[@]}" >"$BATS_TEST_TMPDIR/kept"
    echo "llama.cpp crashed on: ${CRASHED[*]}"
    # ggml's graph allocator as offload/ replays it (fs/model/galloc.c)
    # reserves, for every graph llama.cpp reserved compute buffers for,
    # what ggml reserved, to the byte, on both devices (at least the graph
    # of a full ubatch for each context)
    run "$GGUF_FS_GALLOC_REPLAY" --check "$BATS_TEST_TMPDIR/graphs"
    echo "$output" | tail -n 20
    [ "$status" -eq 0 ]
    [[ "${lines[-1]}" =~ ^([0-9]+)\ graphs,\ ([0-9]+)\ buffers,\ 0\ differences$ ]]
    [ "${BASH_REMATCH[1]}" -ge $(((${#models[@]} - ${#CRASHED[@]}) * 6)) ]
    # the architectures whose graph offload/ builds (fs/model/llm_graph.c):
    # their compute buffers are the bytes ggml reserved, on both devices
    local exact
    exact=$(graph_arches)
    [ "$(tr , '\n' <<<"$exact" | wc -l)" -ge 137 ]
    run "$PYTHON" "$HELPERS/check_compute_exact.py" --exact "$exact" "$BATS_TEST_TMPDIR/graphs" "${args[@]}"
    echo "$output" | tail -n 30
    [ "$status" -eq 0 ]
    run "$PYTHON" "$HELPERS/check_offload.py" "${args[@]}" <"$BATS_TEST_TMPDIR/kept"
    echo "$output" | grep -v _compute
    [[ "${lines[-1]}" == "$(((${#models[@]} - ${#CRASHED[@]}) * 6)) contexts checked, "* ]]
    # Every architecture's compute buffers within 10% on both devices (all
    # of them exact, when written: a graph that fails falls back to the
    # model of doc/SEMANTICS.md)
    local within
    within=$(grep '^compute within 10%: ' <<<"$output")
    echo "$within"
    [[ "$within" =~ host\ ([0-9]+)\ of\ ([0-9]+)\ families\ at\ every\ -ngl,\ gpu\ ([0-9]+)\  ]]
    [ "${BASH_REMATCH[1]}" -eq "${BASH_REMATCH[2]}" ]
    [ "${BASH_REMATCH[3]}" -eq "${BASH_REMATCH[2]}" ]
    # Model, KV and output buffers as llama.cpp has them on every line,
    # the weights whose op the device cannot run kept on the host (the
    # Mamba-1 scans' A, rwkv6's time_mix_first)
    [[ "${lines[-1]}" == *" 0 differences" ]]
    [ -z "$(grep -v _compute <<<"$output" | awk '/ at [0-9]+, / {print $1}')" ]
    # the same one every time: plm's tiny model has shapes its graph does
    # not take (make_arch_models.c gives every other graph what it needs)
    [ "${CRASHED[*]}" = "plm" ]
}

@test "offload/ lists memory/'s contexts; a line per cache type and -ngl from 0 to every layer and the output; stat sizes exact" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$MODELS/llama.gguf" "$mnt"
    [ "$(ls -v "$mnt/offload")" = "$(ls -v "$mnt/memory")" ]
    local f=$mnt/offload/4096
    [ "$(head -n 1 "$f")" = "$(printf 'cache\tgpu_layers\tcpu_moe\tgpu_model\tgpu_kv\tgpu_compute\thost_model\thost_kv\thost_compute\thost_output\tgpu_total\thost_total')" ]
    # 3 layers and the output: -ngl 0 to 4, for each of 3 cache types
    [ "$(tail -n +2 "$f" | cut -f 1,2,3 | tr '\t' ' ' | paste -sd ';')" = "f16 0 0;f16 1 0;f16 2 0;f16 3 0;f16 4 0;q8_0 0 0;q8_0 1 0;q8_0 2 0;q8_0 3 0;q8_0 4 0;q4_0 0 0;q4_0 1 0;q4_0 2 0;q4_0 3 0;q4_0 4 0" ]
    [ "$(stat -c %s "$f")" -eq "$(wc -c <"$f")" ]
    # every line: the KV on both sides is memory/'s, the totals their sums;
    # -ngl 1 puts the output layer alone on the GPU, all of it the rest
    # but the token embeddings
    local kv weights embd
    weights=$(awk -F ': ' '$1 == "weights" {print $2}' "$mnt/memory/4096")
    embd=$(awk -F '\t' '$1 == "token_embd.weight" {print $5}' "$mnt/tensors.tsv")
    for c in f16 q8_0 q4_0; do
        kv=$(awk -F ': ' -v k="kv_$c" '$1 == k {print $2}' "$mnt/memory/4096")
        run awk -F '\t' -v c="$c" -v kv="$kv" -v w="$weights" -v e="$embd" '
            $1 == c && $5 + $8 != kv {print "kv", NR}
            $1 == c && $11 != $4 + $5 + $6 {print "gpu_total", NR}
            $1 == c && $12 != $7 + $8 + $9 + $10 {print "host_total", NR}
            $1 == c && $2 == 0 && ($4 != 0 || $5 != 0 || $7 != w) {print "ngl 0", NR}
            $1 == c && $2 == 1 && $5 != 0 {print "ngl 1", NR}
            $1 == c && $2 == 4 && ($8 != 0 || $7 != e || $4 != w - e) {print "ngl all", NR}' "$f"
        [ -z "$output" ]
    done
    run ! test -e "$mnt/offload/0"
    run ! test -e "$mnt/offload/16777217"
    [ "$(head -n 1 "$mnt/offload/16777216" | cut -f 1)" = cache ]
}

@test "a model with experts has lines for --n-cpu-moe with every layer offloaded, each moving its layer's experts to the host" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$MODELS/qwen3moe.gguf" "$mnt"
    local f=$mnt/offload/512
    # 2 layers: -ngl 0 to 3, then --n-cpu-moe 1 and 2 at -ngl 3
    [ "$(awk -F '\t' '$1 == "f16" {print $2 "/" $3}' "$f" | tr '\n' ' ')" = "0/0 1/0 2/0 3/0 3/1 3/2 " ]
    local experts
    experts=$(awk -F '\t' '$1 ~ /^blk\.0\.ffn_(gate|up|down)_exps\.weight$/ {s += $5} END {print s}' "$mnt/tensors.tsv")
    [ "$experts" -gt 0 ]
    # the GPU loses exactly layer 0's experts, the KV stays where it was
    run awk -F '\t' -v x="$experts" '$1 == "f16" && $2 == 3 && $3 == 0 {g = $4; k = $5}
        $1 == "f16" && $2 == 3 && $3 == 1 {print g - $4 == x && k == $5}' "$f"
    [ "$output" = 1 ]
}

@test "--n-cpu-moe lines equal what llama.cpp places with its --n-cpu-moe overrides, every architecture with experts" {
    require_vulkan_client
    local client arches
    client=$("$GGUF_FS_SCRIPTS/fixtures/cpu-moe-client") || skip "the --n-cpu-moe client could not be built"
    arches=$("$GGUF_FS_SCRIPTS/fixtures/arch-models") || skip "llama.cpp's tiny models could not be made"
    local f mnt="$BATS_TEST_TMPDIR/mnt" args=() n_layer n=0 out="$BATS_TEST_TMPDIR/loads"
    mount_model "$arches" "$mnt"
    mkdir -p -m 700 "$BATS_TEST_TMPDIR/xdg"
    : >"$out"
    for f in "$arches"/*.gguf; do
        [ -f "$mnt/${f##*/}/offload/512" ] || continue
        n_layer=$(awk -F '\t' 'NR > 1 {if ($3 > m) m = $3} END {print m + 0}' "$mnt/${f##*/}/offload/512")
        [ "$n_layer" -gt 0 ] || continue
        args+=("$f=$mnt/${f##*/}")
        n=$((n + n_layer + 1))
        # shellcheck disable=SC2086 # the binary and the backends' folder
        XDG_RUNTIME_DIR="$BATS_TEST_TMPDIR/xdg" client_run env -u MALLOC_PERTURB_ GGML_VK_VISIBLE_DEVICES=0 \
            $client "$f" $(seq 0 "$n_layer") >>"$out" 2>/dev/null
    done
    [ "${#args[@]}" -ge 20 ]
    run "$PYTHON" "$HELPERS/check_cpu_moe.py" 512 "${args[@]}" <"$out"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "$n loads checked, 0 differences" ]
}

@test "a cache type llama.cpp refuses has no lines in offload/" {
    local mnt="$BATS_TEST_TMPDIR/mnt"
    mount_model "$MODELS/llama_head8.gguf" "$mnt"
    [ "$(tail -n +2 "$mnt/offload/512" | cut -f 1 | sort -u)" = f16 ]
}

@test "compute-graph's replay of ggml's graph allocator gives llama.cpp's compute buffers to the byte" {
    require_vulkan_client
    local model family ngl
    # this build's replay
    export GALLOC_REPLAY=$GGUF_FS_GALLOC_REPLAY
    for model in llama:0 qwen3moe:99 gemma3:3; do
        family=${model%:*} ngl=${model#*:}
        run --separate-stderr "$GGUF_FS_SCRIPTS/tools/compute-graph" "$MODELS/$family.gguf" "$ngl" 4096
        [ "$status" -eq 0 ] || { echo "$family: $stderr"; return 1; }
        echo "$family -ngl $ngl:"
        grep ': replay ' <<<"$output"
        # llama.cpp reserves for a ubatch of 512 tokens first, then for one
        # token and again for 512; an allocator's buffer grows to the
        # largest (galloc-replay reports the same, and the 32 bytes more
        # Vulkan's host buffer type allocates): every line equal
        awk '/ replay [0-9]+ bytes, ggml [0-9]+ bytes/ {
                 if ($3 != $6) bad = 1
                 n++
             }
             END {
                 exit bad || n < 4
             }' <<<"$output"
    done
}
