# Sourced by the bats suites' runners (tests/bats/run.sh, tests/http/run.sh,
# tests/s3/run.sh): every python3 a suite starts (helpers, servers, proxies,
# scripts by their #!/usr/bin/env python3) is one with the modules
# scripts/setup installs for Debian's python3 (numpy, xxhash, botocore).
# When the python3 first on PATH lacks numpy and /usr/bin/python3 has it
# (a version manager's interpreter, whose shim also costs about 0.3 s at
# every start: hundreds of starts in some suites), a directory holding only
# a python3 that is /usr/bin/python3 goes first on PATH, under the cache
# the fixtures are kept in.
if ! python3 -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    GGUF_FS_PYTHON_DIR=${GGUF_FS_CACHE:-$HOME/.cache/gguf-fs}/python
    if [ "$(readlink "$GGUF_FS_PYTHON_DIR/python3" 2>/dev/null)" != /usr/bin/python3 ]; then
        mkdir -p "$GGUF_FS_PYTHON_DIR"
        # Suites start side by side: the link is renamed into place whole.
        ln -sfn /usr/bin/python3 "$GGUF_FS_PYTHON_DIR/python3.$$"
        mv -f "$GGUF_FS_PYTHON_DIR/python3.$$" "$GGUF_FS_PYTHON_DIR/python3"
    fi
    export PATH="$GGUF_FS_PYTHON_DIR:$PATH"
fi
