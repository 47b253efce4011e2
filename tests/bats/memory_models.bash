# The memory suites' models (make_memory_models.py), for memory.bats and
# offload.bats. Needs test_helper loaded first.

# memory_models: $MODELS names the folder of the models, made once in the
# fixtures' cache and keyed by the generator's contents (a changed
# generator makes new models). A lock keeps two suites running side by
# side from writing them at once.
memory_models() {
    local cache=${GGUF_FS_CACHE:-$HOME/.cache/gguf-fs} key
    key=$(sha256sum "$HELPERS/make_memory_models.py" | cut -c1-16)
    MODELS="$cache/memory-models-$key"
    mkdir -p "$MODELS"
    (
        flock 9
        if [ ! -f "$MODELS/.complete" ]; then
            "$PYTHON" "$HELPERS/make_memory_models.py" "$GGML_LIB" "$MODELS" >/dev/null
            touch "$MODELS/.complete"
        fi
    ) 9>"$MODELS.lock"
}
