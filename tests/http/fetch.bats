#!/usr/bin/env bats
# How a URL mount fetches: many range requests at once for a reader going
# through a file, bounded by -o connections; a stalled or reset request
# among them costs its own retry and nothing else; -o prefetch fetches the
# whole model, waits out a server that went away and finishes when it is
# back, and a stop ends it within a second even when its requests stall;
# the `remote` file tells all of it, one block per shard.

load ../bats/test_helper
load server
load in_flight

BLOCK=1048576

setup_file() {
    export FILES="$BATS_FILE_TMPDIR/files"
    mkdir -p "$FILES/split"
    # 48 MiB of tensors after a small header: enough for every connection.
    python3 "$BATS_TEST_DIRNAME/make_model.py" "$FILES/model.gguf" 1000 16 16 16 >/dev/null
    python3 "$GGUF_FS_SCRIPTS/tools/gguf-split-set" --tensors-per-shard 1 "$FILES/model.gguf" "$FILES/split/model"
    start_servers "$BATS_FILE_TMPDIR/srv" "$FILES"
}

teardown_file() {
    stop_servers
}

setup() {
    require_fuse
    server_reset
    REMOTE="$BATS_TEST_TMPDIR/remote"
}

# field NAME [SHARD]: a field of the `remote` file (of shard 1 by default).
field() {
    awk -v want="${2:-1}" -v key="$1" '
        /^shard: / { shard = $2 }
        shard == want && index($0, key ": ") == 1 { print substr($0, length(key) + 3); exit }' "$REMOTE/remote"
}

# overlaps: the byte ranges the proxy saw asked for more than once, one
# line "FIRST-LAST FIRST-LAST" per range that overlaps one asked for before
# it (in order of first byte); nothing when every byte was asked for once.
overlaps() {
    awk '{split($3, r, /[=-]/); if (r[1] == "bytes") print r[2], r[3]}' "$SERVER_DIR/proxy.log" |
        sort -n | awk '
            { if ($1 <= end) { print prev_first "-" prev_end, $1 "-" $2 } if ($2 > end) end = $2
              prev_first = $1; prev_end = $2 }
            BEGIN { end = -1 }'
}

# only_faulted_asked_twice MODE: every byte range asked for more than once
# overlaps the one request the proxy faulted with MODE (stall, reset).
only_faulted_asked_twice() {
    local faulted
    faulted=$(awk -v mode="$1" '$4 == mode {split($3, r, /[=-]/); print r[2], r[3]}' "$SERVER_DIR/proxy.log")
    [ -n "$faulted" ] || { echo "no request was faulted with $1"; return 1; }
    local o
    while read -r o; do
        [ -n "$o" ] || continue
        local later=${o#* }
        local lo=${later%-*} hi=${later#*-}
        [ "$lo" -le "${faulted#* }" ] && [ "$hi" -ge "${faulted% *}" ] ||
            { echo "asked twice outside the range faulted with $1 ($faulted): $o"; return 1; }
    done < <(overlaps)
}

# max_in_flight: the most requests the proxy served at once.
max_in_flight() {
    sed -n 's/.* inflight=//p' "$SERVER_DIR/proxy.log" | sort -n | tail -1
}

# bats test_tags=races
@test "cat of model.gguf goes over many connections, every byte asked for once" {
    # Each answer comes 50 ms late, as a distant server's would: over
    # loopback a slow build's requests could each end before the next
    # one starts, whatever the read-ahead asked for.
    fault delay
    mount_model "$PROXIED/model.gguf" "$REMOTE"
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
    [ -z "$(overlaps)" ]
    # A sequential reader is read ahead over several requests at once.
    [ "$(max_in_flight)" -ge 4 ]
    [ "$(max_in_flight)" -le 16 ]
}

@test "-o connections=N bounds the requests in flight; 0 and past 256 are usage errors" {
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o connections=2
    # Two readers at once, and a third on a file of its own.
    # (The daemon runs in the background too: wait for the readers only.)
    local a b
    cat "$REMOTE/model.gguf" >"$BATS_TEST_TMPDIR/a" &
    a=$!
    cat "$REMOTE/tensors/t2/raw" >/dev/null &
    b=$!
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
    wait "$a" "$b"
    cmp "$BATS_TEST_TMPDIR/a" "$FILES/model.gguf"
    [ "$(max_in_flight)" -le 2 ]
    fusermount3 -u "$REMOTE"
    local n
    for n in 0 257 x; do
        run -2 --separate-stderr "$GGUF_FS" -o connections=$n "$PROXIED/model.gguf" "$REMOTE"
        [[ "$stderr" == *connections* ]]
    done
}

# bats test_tags=races
@test "a stalled range among those in flight costs its own retry; the others go on and every byte is right" {
    # The first request for bytes in the middle of t1 stalls (the server
    # sends nothing and holds the connection).
    local at=$((24 * BLOCK + 12345))
    fault stall "$at-$at" x1
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o timeout_s=120
    local start
    start=$(date +%s)
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
    # Far from the timeout: the stall was given up after seconds.
    [ $(($(date +%s) - start)) -lt 60 ]
    grep -q " stall " "$SERVER_DIR/proxy.log"
    # Only bytes of the stalled request were asked for again.
    only_faulted_asked_twice stall
    # The stalled request is given up after seconds, and counted.
    local i
    for i in $(seq 200); do
        [ "$(field retries)" -ge 1 ] && break
        sleep 0.1
    done
    [ "$(field retries)" -ge 1 ]
    [ "$(field last_error)" != none ]
}

@test "a range reset mid-body is fetched again; nothing else is" {
    local at=$((30 * BLOCK + 777))
    fault reset "$at-$at" x1
    mount_model "$PROXIED/model.gguf" "$REMOTE"
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
    grep -q " reset " "$SERVER_DIR/proxy.log"
    only_faulted_asked_twice reset
    [ "$(field retries)" -ge 1 ]
}

@test "the remote file: one block per shard, every field, numbers that move" {
    local cache="$BATS_TEST_TMPDIR/cache"
    mount_model "$PROXIED/split/model-00001-of-00003.gguf" "$REMOTE" -o cache_dir="$cache"
    # Fixed format: eleven fields in order per shard, blocks apart.
    run "$PYTHON" - "$REMOTE/remote" <<'PY'
import sys
text = open(sys.argv[1]).read()
keys = ["shard", "url", "size", "in_memory", "on_disk", "fetched", "in_flight",
        "mb_per_s_now", "mb_per_s_average", "retries", "last_error"]
blocks = text.rstrip("\n").split("\n\n")
assert len(blocks) == 3, blocks
for i, b in enumerate(blocks, 1):
    lines = [l.split(": ", 1) for l in b.split("\n")]
    assert [k for k, _ in lines] == keys, lines
    v = dict(lines)
    assert v["shard"] == "%d of 3" % i, v
    assert v["url"].endswith("model-%05d-of-00003.gguf" % i), v
    for k in ("size", "in_memory", "on_disk", "fetched", "in_flight", "retries"):
        int(v[k])
    for k in ("mb_per_s_now", "mb_per_s_average"):
        float(v[k])
    assert v["last_error"] == "none", v
print("ok")
PY
    [ "$output" = ok ]
    local size
    size=$(stat -c %s "$FILES/split/model-00002-of-00003.gguf")
    [ "$(field size 2)" -eq "$size" ]
    local before
    before=$(field fetched 2)
    [ "$(field in_flight 2)" -eq 0 ]
    cat "$REMOTE/tensors/t1/raw" >/dev/null
    # (The first block came with the header.)
    [ "$(field fetched 2)" -ge $((before + 15 * BLOCK)) ]
    [ "$(field in_memory 2)" -gt 0 ]
    # A block is served as soon as it is in memory and written to disk
    # after its run ends, so the disk can trail the reader by a moment.
    local i
    for i in $(seq 200); do
        [ "$(field on_disk 2)" -ge $((16 * BLOCK)) ] && break
        sleep 0.1
    done
    [ "$(field on_disk 2)" -ge $((16 * BLOCK)) ]
    awk '$1 == "mb_per_s_average:" && $2 > 0 {found = 1} END {exit !found}' "$REMOTE/remote"
    # A local mount has none.
    local local_mnt="$BATS_TEST_TMPDIR/local"
    mount_model "$FILES/model.gguf" "$local_mnt"
    [ ! -e "$local_mnt/remote" ]
    ! ls "$local_mnt" | grep -qx remote
}

@test "-o prefetch fetches every shard onto disk; a later mount fetches nothing" {
    local cache="$BATS_TEST_TMPDIR/cache" i
    mount_model "$PROXIED/split/model-00001-of-00003.gguf" "$REMOTE" -o prefetch,cache_dir="$cache"
    for i in $(seq 300); do
        [ "$(field on_disk 1)" = "$(field size 1)" ] && [ "$(field on_disk 2)" = "$(field size 2)" ] &&
            [ "$(field on_disk 3)" = "$(field size 3)" ] && break
        sleep 0.1
    done
    [ "$(field on_disk 3)" = "$(field size 3)" ]
    fusermount3 -u "$REMOTE"
    clear_log
    mount_model "$PROXIED/split/model-00001-of-00003.gguf" "$REMOTE" -o cache_dir="$cache"
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
    # Only the opening requests, one byte each.
    [ "$(grep -c 'bytes=' "$SERVER_DIR/proxy.log")" -eq 3 ]
    [ "$(grep -c 'bytes=0-0 ' "$SERVER_DIR/proxy.log")" -eq 3 ]
    # Read from the block files as they are: of the tensor's 16 MiB, only
    # the blocks of the header (at open) and of a read across two shards
    # (copied) went through the memory cache.
    [ "$(field in_memory 2)" -le $((3 * BLOCK)) ]
}

@test "-o prefetch with no disk cache hands the whole model to the page cache; reading it then fetches nothing" {
    # A memory cache of 16 MiB for a model of 48: the kernel's pages hold
    # what the daemon's memory does not.
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch,cache_mb=16
    local size i
    size=$(stat -c %s "$FILES/model.gguf")
    # fincore counts whole pages, the last one too once it is in.
    for i in $(seq 300); do
        [ "$(fincore -nb -o RES "$REMOTE/model.gguf")" -ge "$size" ] && break
        sleep 0.1
    done
    [ "$(fincore -nb -o RES "$REMOTE/model.gguf")" -ge "$size" ]
    [ "$(field in_memory)" -le $((16 * BLOCK)) ]
    clear_log
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
    run grep -c 'bytes=' "$SERVER_DIR/proxy.log"
    [ "$output" -eq 0 ]
}

@test "-o prefetch with a disk cache fills it, not the page cache" {
    local cache="$BATS_TEST_TMPDIR/cache" i
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch,cache_dir="$cache",cache_mb=16
    for i in $(seq 300); do
        [ "$(field on_disk)" = "$(field size)" ] && break
        sleep 0.1
    done
    [ "$(field on_disk)" = "$(field size)" ]
    # Every byte is on disk: none is pushed into model.gguf's pages too
    # (a push follows each run as it lands: all have, none is in flight).
    await_idle "$REMOTE"
    [ "$(fincore -nb -o RES "$REMOTE/model.gguf")" -eq 0 ]
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
}

@test "-o prefetch with no cache at all fetches nothing in the background" {
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch,cache_mb=0
    local opened asked
    opened=$(field fetched)
    asked=$(grep -c 'bytes=' "$SERVER_DIR/proxy.log")
    # What a prefetch fetched would go nowhere: it does not start. (One
    # starts at mount and hands its runs out at once.)
    await_idle "$REMOTE"
    [ "$(field fetched)" -eq "$opened" ]
    [ "$(grep -c 'bytes=' "$SERVER_DIR/proxy.log")" -eq "$asked" ]
    cmp "$REMOTE/tensors/t2/raw" <(tail -c $((16 * BLOCK)) "$FILES/model.gguf")
}

# asked_from OFF: whether a request the proxy saw asked for a byte at OFF
# or past it.
asked_from() {
    awk -v off="$1" '{split($3, r, /[=-]/); if (r[1] == "bytes" && r[3] >= off) found = 1}
                     END {exit !found}' "$SERVER_DIR/proxy.log"
}

# passed OFF: whether a request the proxy let pass asked for the byte at OFF.
passed() {
    awk -v off="$1" '$4 == "pass" {split($3, r, /[=-]/); if (r[2] <= off && r[3] >= off) found = 1}
                     END {exit !found}' "$SERVER_DIR/proxy.log"
}

# load_like_llama [MIB...]: reads 1 MiB at each of nine places of
# model.gguf (by default in its first 15 MiB), out of order, as a model
# load does (with direct I/O, so that each read reaches the daemon as it
# is, whatever the kernel has cached or reads ahead).
load_like_llama() {
    local at places=("$@")
    [ $# -gt 0 ] || places=(0 8 2 10 4 12 6 14 1)
    for at in "${places[@]}"; do
        dd if="$REMOTE/model.gguf" bs=1M skip=$at count=1 iflag=direct status=none of=/dev/null
    done
}

# bats test_tags=races
@test "a load of model.gguf lets the prefetch go (-o prefetch_after_mb); its last close holds it again" {
    # (fd 7: bats keeps 3 for itself.)
    local size i
    size=$(stat -c %s "$FILES/model.gguf")
    # One 8 MiB run of the prefetch out at a time, read-ahead within 12
    # blocks of a reader (cache_mb=16, two connections).
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch_after_mb=4,cache_mb=16,connections=2
    # Neither tensors read through tensors/ nor a reader in order are a
    # load: read-ahead serves them.
    cat "$REMOTE/tensors/t0/raw" >/dev/null
    exec 7<"$REMOTE/model.gguf"
    dd bs=1M count=16 status=none <&7 >/dev/null
    # A read that let the prefetch go would have done so within it.
    await_idle "$REMOTE"
    exec 7<&-
    run ! asked_from $((32 * BLOCK))
    fusermount3 -u "$REMOTE"
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch_after_mb=4,cache_mb=16,connections=2
    clear_log
    # The prefetch's run at 24 MiB stalls until the fault is lifted.
    fault stall $((24 * BLOCK))-$((24 * BLOCK))
    exec 7<"$REMOTE/model.gguf"
    load_like_llama
    for i in $(seq 300); do
        grep -q " stall " "$SERVER_DIR/proxy.log" && break
        sleep 0.1
    done
    grep -q " stall " "$SERVER_DIR/proxy.log"
    # Closed: the run under way lands, and no other starts.
    exec 7<&-
    fault pass
    for i in $(seq 300); do
        passed $((24 * BLOCK)) && break
        sleep 0.1
    done
    passed $((24 * BLOCK))
    # The run landed: a prefetch not held would hand out the next at once.
    await_idle "$REMOTE"
    run ! asked_from $((32 * BLOCK))
    # A load again lets it go on to the end.
    exec 7<"$REMOTE/model.gguf"
    load_like_llama
    for i in $(seq 300); do
        passed $((size - 1)) && break
        sleep 0.1
    done
    passed $((size - 1))
    exec 7<&-
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
    # 0 turns it off.
    fusermount3 -u "$REMOTE"
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch_after_mb=0,cache_mb=16,connections=2
    clear_log
    exec 7<"$REMOTE/model.gguf"
    load_like_llama
    await_idle "$REMOTE"
    run ! asked_from $((24 * BLOCK))
    exec 7<&-
}

# first_asking OFF: the line of the proxy's log of the first request for
# the byte at OFF; nothing when none asked for it.
first_asking() {
    awk -v off="$1" '{split($3, r, /[=-]/); if (r[1] == "bytes" && r[2] <= off && r[3] >= off) {print NR; exit}}' \
        "$SERVER_DIR/proxy.log"
}

@test "a load's prefetch begins where the load is, then comes back for the runs before" {
    local i at36 at8
    # One run of the prefetch at a time, in order; read-ahead within 6
    # blocks of a reader (cache_mb=8).
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch_after_mb=4,cache_mb=8,connections=2
    clear_log
    exec 7<"$REMOTE/model.gguf"
    # The eighth jump, to 26 MiB, starts the prefetch: its first run is
    # 24-32 MiB, then 32-40 MiB, which the load and its read-ahead left
    # alone from 33 MiB on, as they did 1-19 MiB.
    load_like_llama 40 20 44 24 42 22 46 26 38
    for i in $(seq 300); do
        [ -n "$(first_asking $((8 * BLOCK)))" ] && break
        sleep 0.1
    done
    exec 7<&-
    at36=$(first_asking $((36 * BLOCK)))
    at8=$(first_asking $((8 * BLOCK)))
    [ -n "$at36" ] && [ -n "$at8" ]
    [ "$at36" -lt "$at8" ]
}

# bats test_tags=races
@test "SIGTERM or an unmount while the prefetch hands bytes to the kernel ends the daemon cleanly" {
    local how pid i
    for how in TERM unmount TERM unmount; do
        mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch,cache_mb=16
        pid=$(last_daemon)
        # A reader of model.gguf meanwhile, whose pages the pushes fill too
        # (an unmount waits for none: it would find the mount busy).
        if [ "$how" = TERM ]; then
            (cat "$REMOTE/model.gguf" >/dev/null 2>&1 || true) &
        fi
        for i in $(seq 100); do
            [ "$(fincore -nb -o RES "$REMOTE/model.gguf")" -gt 0 ] && break
            sleep 0.02
        done
        if [ "$how" = TERM ]; then
            kill -TERM "$pid"
        else
            fusermount3 -u "$REMOTE"
        fi
        wait_gone "$pid" || { echo "the daemon did not end after $how"; return 1; }
        wait "$pid" || { echo "the daemon ended after $how with status $?"; return 1; }
        run ! mountpoint -q "$REMOTE"
    done
}

# bats test_tags=races
@test "a prefetch waits out a server that went away: readers get EIO meanwhile, it finishes once the server is back" {
    local cache="$BATS_TEST_TMPDIR/cache" i
    # Every request for one byte of t1 is reset: the server is gone for it.
    local at=$((20 * BLOCK))
    fault refuse "$at-$at"
    mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch,cache_dir="$cache",timeout_s=2
    # The prefetch gets all but that block; a reader of it fails.
    run cat "$REMOTE/tensors/t1/raw"
    [ "$status" -ne 0 ]
    [[ "$output" == *"Input/output error"* ]]
    [ "$(field on_disk)" -lt "$(field size)" ]
    [ "$(field last_error)" != none ]
    # The mount answers meanwhile.
    cmp "$REMOTE/tensors/t0/raw" <(tail -c +$(($(sed -n 's/^offset: //p' "$REMOTE/tensors/t0/info") + 1)) \
        "$FILES/model.gguf" | head -c $((16 * BLOCK)))
    fault pass
    for i in $(seq 300); do
        [ "$(field on_disk)" = "$(field size)" ] && break
        sleep 0.1
    done
    [ "$(field on_disk)" = "$(field size)" ]
    cmp "$REMOTE/model.gguf" "$FILES/model.gguf"
}

# bats test_tags=races
@test "SIGTERM or an unmount while the prefetch waits on stalled requests ends the daemon within 2 s" {
    local how pid i
    for how in TERM unmount; do
        server_reset
        # The header passes; every request for the tensors stalls until
        # the mode changes (the proxy holds it up to 120 s).
        fault stall $((2 * BLOCK))-$((64 * BLOCK))
        mount_model "$PROXIED/model.gguf" "$REMOTE" -o prefetch,cache_mb=16
        pid=$(last_daemon)
        for i in $(seq 200); do
            grep -q ' stall ' "$SERVER_DIR/proxy.log" && break
            sleep 0.05
        done
        grep -q ' stall ' "$SERVER_DIR/proxy.log"
        if [ "$how" = TERM ]; then
            kill -TERM "$pid"
        else
            fusermount3 -u "$REMOTE"
        fi
        local ended=0
        wait_gone "$pid" 2 || ended=$?
        fault pass
        [ "$ended" -eq 0 ] || { echo "after $how"; return 1; }
        wait "$pid" || { echo "the daemon ended after $how with status $?"; return 1; }
    done
}
