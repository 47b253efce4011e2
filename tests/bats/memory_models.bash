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

# client_run CMD...: runs CMD (a client loading models with llama.cpp),
# or prints again what it printed before, with its status, for the same
# words and the same files: the bytes of each word that is a file under
# 1 MiB (the client's script, wherever it was checked out), the path, size
# and time of a larger one (a model in the cache, whose path the client
# prints: hashing them all at each call would take seconds); NODE_PATH
# names the pinned client's version.
# What llama.cpp allocates for a model is fixed by those: its runs are
# the slow part of these suites, and what is compared with the mounts is
# still read from the mounts at each run. A run that ends with a status
# below 128 but not 0 (the client could not start, say) is not kept;
# llama.cpp crashing on a model (a signal) is.
# With CLIENT_RUN_SIDE=VAR:FILE, the command also writes a file of its
# own, which it finds named by its environment variable VAR: the file is
# kept with the run, and appended to FILE each time, as run or as kept.
client_run() {
    local cache=${GGUF_FS_CACHE:-$HOME/.cache/gguf-fs}/client-runs key word words=() files=() small=() large=()
    local size path
    for word in "$@"; do
        if [ -f "$word" ]; then files+=("$word"); else words+=("$word"); fi
    done
    if [ "${#files[@]}" -gt 0 ]; then
        while IFS=$'\t' read -r size path; do
            if [ "$size" -lt 1048576 ]; then small+=("$path"); else large+=("$path"); fi
        done < <(find "${files[@]}" -maxdepth 0 -printf '%s\t%p\n')
    fi
    key=$({
        printf '%s\n' "${words[@]}"
        [ "${#small[@]}" -eq 0 ] || cat -- "${small[@]}" | sha256sum
        [ "${#large[@]}" -eq 0 ] || stat -c '%n %s %Y' -- "${large[@]}"
    } | sha256sum | cut -c1-32)
    local side_var=${CLIENT_RUN_SIDE%%:*} side_file=${CLIENT_RUN_SIDE#*:}
    if [ ! -f "$cache/$key.status" ]; then
        mkdir -p "$cache"
        local status=0
        if [ -n "${CLIENT_RUN_SIDE:-}" ]; then
            : >"$cache/$key.side.tmp"
            export "$side_var=$cache/$key.side.tmp"
        fi
        "$@" >"$cache/$key.out.tmp" 2>"$cache/$key.err.tmp" || status=$?
        if [ "$status" -ne 0 ] && [ "$status" -lt 128 ]; then
            cat "$cache/$key.out.tmp"
            cat "$cache/$key.err.tmp" >&2
            rm -f "$cache/$key.out.tmp" "$cache/$key.err.tmp"
            return "$status"
        fi
        mv "$cache/$key.out.tmp" "$cache/$key.out"
        mv "$cache/$key.err.tmp" "$cache/$key.err"
        [ -z "${CLIENT_RUN_SIDE:-}" ] || mv "$cache/$key.side.tmp" "$cache/$key.side"
        echo "$status" >"$cache/$key.status"
    fi
    [ -z "${CLIENT_RUN_SIDE:-}" ] || cat "$cache/$key.side" >>"$side_file"
    cat "$cache/$key.out"
    cat "$cache/$key.err" >&2
    return "$(cat "$cache/$key.status")"
}

# past_crashes PER_MODEL CMD... -- MODEL...: the lines of CMD MODEL... for
# the models that have all PER_MODEL of theirs. llama.cpp itself crashes
# building the graph of a few of llama.cpp's own random models (after the
# buffers these suites read): CMD runs again with the models after the
# one it crashed on, whose names go to CRASHED.
past_crashes() {
    local per_model=$1 cmd=() out all="" status done_models
    shift
    while [ "$1" != -- ]; do cmd+=("$1"); shift; done
    shift
    local remaining=("$@")
    CRASHED=()
    while [ "${#remaining[@]}" -gt 0 ]; do
        status=0
        out=$("${cmd[@]}" "${remaining[@]}" 2>/dev/null) || status=$?
        all+=$out$'\n'
        [ "$status" -eq 0 ] && break
        # each line opens with its model (the clients' JSON)
        done_models=$(grep -o '^{"model":"[^"]*"' <<<"$out" | uniq -c | awk -v n="$per_model" '$1 == n {k++} END {print k + 0}')
        CRASHED+=("$(basename "${remaining[$done_models]}" .gguf)")
        remaining=("${remaining[@]:$((done_models + 1))}")
    done
    jq -cs --argjson n "$per_model" 'group_by(.model) | map(select(length == $n)) | flatten | .[]' <<<"$all"
}
