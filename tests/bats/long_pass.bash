# A computation of seconds, and a stop during it: the model that takes
# them, a reader blocked in its open of the file being computed, and the
# daemon's clean end. Loaded after test_helper by the suites that stop a
# long pass (hashes.bats, verify.bats).

# A model whose hashes, and token_embd.weight's stats, take seconds (several
# on the optimized build, about 18 on ASan+UBSan on a loaded 2-core
# machine): 1.65 GB, 32 blocks and a 256,000-token vocabulary, made once by
# the project's sample maker and kept with the fixtures (the hashes and
# verify suites use it, and the benchmark's part 21).
long_pass_model() {
    local cache=${GGUF_FS_CACHE:-$HOME/.cache/gguf-fs}
    local model=$cache/long-pass-32x2048.gguf
    if [ ! -f "$model" ]; then
        mkdir -p "$cache"
        "$GGUF_FS_SCRIPTS/fixtures/make-sample" "$GGML_REF" "$model" --blocks 32 --embd 2048 --ff 5632 \
            --vocab 256000 --merges 64000 >/dev/null
    fi
    echo "$model"
}

# wait_open_blocked PID: waits up to 10 s until process PID, a cat started
# in the background, is blocked in its openat(AT_FDCWD, ...) of the mount
# (the open computes the text it reads, and waits for it).
wait_open_blocked() {
    local i nr dirfd rest
    for i in $(seq 200); do
        if [ "$(readlink -f "/proc/$1/exe")" = "$(readlink -f "$(command -v cat)")" ] &&
            read -r nr dirfd rest 2>/dev/null <"/proc/$1/syscall"; then
            case $dirfd in *ffffff9c) return 0 ;; esac
        fi
        sleep 0.05
    done
    echo "reader $1 never blocked in its open" >&2
    return 1
}

# start_long_pass SOURCE MOUNT FILE: mounts SOURCE on MOUNT and starts a
# cat of MOUNT/FILE in the background (its pid in $reader, the daemon's in
# $daemon); returns once that cat is blocked in its open.
start_long_pass() {
    mount_model "$1" "$2"
    daemon=$(last_daemon)
    cat "$2/$3" >/dev/null 2>"$BATS_TEST_TMPDIR/reader.err" &
    reader=$!
    wait_open_blocked "$reader"
}

# stopped_cleanly [SECONDS]: the daemon ended within SECONDS (3 by default)
# of the stop with status 0, and its reader was answered (an error: its
# text was never made).
stopped_cleanly() {
    wait_gone "$daemon" "${1:-3}"
    local status=0
    wait "$daemon" || status=$?
    [ "$status" -eq 0 ]
    wait_gone "$reader" "${1:-3}"
    status=0
    wait "$reader" || status=$?
    [ "$status" -ne 0 ]
}
