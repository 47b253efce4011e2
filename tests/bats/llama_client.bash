# The real client, node-llama-cpp (llama_client.mjs), for the suites that
# load models through the mount: the local ones here, the URL ones in
# tests/http. Needs test_helper loaded first.

LLAMA_CLIENT_JS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/llama_client.mjs"

# require_llama_client: $LLAMA_CLIENT names the directory whose node_modules
# hold node-llama-cpp; the test skips, saying why, when npm cannot install it.
require_llama_client() {
    LLAMA_CLIENT=$("$GGUF_FS_SCRIPTS/fixtures/llama-client-setup" 2>/dev/null) ||
        skip "node-llama-cpp is not installed (scripts/setup installs it)"
}

# llama_client [[--mmap|--no-mmap] MODEL...]...: one JSON line per model.
llama_client() {
    env NODE_PATH="$LLAMA_CLIENT/node_modules" node "$LLAMA_CLIENT_JS" "$@"
}

# same_tokens_mounted PLAIN SOURCE [OPTIONS...]: mounts SOURCE twice, has
# one client load PLAIN and the first mount's model.gguf mapping them, then
# PLAIN and the second's reading them, and fails unless all four give the
# same name, template and 4 greedy tokens. Each way has a mount of its own
# because the kernel keeps model.gguf's pages across opens: a second load
# from one mount would not reach the daemon.
same_tokens_mounted() {
    local plain=$1 source=$2
    shift 2
    local mapped="$BATS_TEST_TMPDIR/mnt-mapped" reading="$BATS_TEST_TMPDIR/mnt-reading"
    mount_model "$source" "$mapped" "$@"
    mount_model "$source" "$reading" "$@"
    run --separate-stderr llama_client --mmap "$plain" "$mapped/model.gguf" --no-mmap "$plain" "$reading/model.gguf"
    fusermount3 -u "$mapped"
    fusermount3 -u "$reading"
    [ "$status" -eq 0 ] || { echo "node-llama-cpp failed on $source: $stderr"; return 1; }
    same_tokens <<<"$output"
}

# same_tokens < LINES: the client's lines agree with the first (same_tokens.py).
same_tokens() {
    run "$PYTHON" "$(dirname "$LLAMA_CLIENT_JS")/same_tokens.py"
    echo "$output"
    [ "$status" -eq 0 ]
}
