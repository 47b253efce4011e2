# What a URL mount has in flight, from its `remote` file.
#
#   await_idle MOUNT   waits until no request of the mount is in flight
#
# A test that asserts that something was NOT fetched (read-ahead past a
# tensor's end, a prefetch held or off) waits for this instead of
# sleeping. Read-ahead is queued within the read that calls for it, and a
# prefetch is let go or held within the read or release that decides it:
# once a test's reads and closes returned, whatever they set going is in
# the fetcher's hands, which starts a job as soon as a connection is free,
# and a job keeps `in_flight` above 0 while its request is out. So the
# assertion waits as long as the fetches take, however slow the machine,
# and no longer. Only the moment between one job's end and the next one's
# request shows 0 too: the mount must read idle twice in a row.

# await_idle MOUNT: returns once every shard's `in_flight` in MOUNT/remote
# read 0 twice in a row; fails after 30 s.
await_idle() {
    local _ idle=0
    for _ in $(seq 600); do
        if awk '/^in_flight: / {seen = 1; if ($2 != 0) busy = 1} END {exit busy || !seen}' "$1/remote"; then
            idle=$((idle + 1))
            [ "$idle" -lt 2 ] || return 0
        else
            idle=0
        fi
        sleep 0.05
    done
    echo "requests of $1 still in flight after 30 s:" >&2
    cat "$1/remote" >&2
    return 1
}
