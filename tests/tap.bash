# Sourced by the bats suites' runners (tests/bats/run.sh, tests/http/run.sh,
# tests/s3/run.sh). run_bats ARGS...: bats with ARGS, its TAP stream on
# stdout for meson, and each failure with its diagnostic lines on stderr
# too: of a suite that fails, meson shows only stderr. Each test's line
# gives its time (--timing): the test log shows where a suite's time
# goes. With GGUF_FS_BATS_TAGS set (tests/meson.build sets it for the
# ThreadSanitizer build), only the tests carrying those tags run. The
# caller sets pipefail: bats' status is the runner's.
run_bats() {
    bats --tap --timing ${GGUF_FS_BATS_TAGS:+--filter-tags "$GGUF_FS_BATS_TAGS"} "$@" |
        awk '{ print; fflush() } /^(not ok|#)/ { print > "/dev/stderr"; fflush("/dev/stderr") }'
}
