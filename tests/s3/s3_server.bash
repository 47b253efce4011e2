# Starting and stopping the S3 bucket tests' server, all on 127.0.0.1:
# s3rver (scripts/fixtures/s3-setup) keeping its buckets under a directory,
# behind sigv4_proxy.py, which checks every request's signature with
# botocore and answers as S3 does where s3rver does not. Clients talk to the
# proxy only: AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT, path-style.
#
#   start_s3 DIR BUCKET...    s3rver on $S3RVER_PORT with those buckets, the
#                             proxy on $S3_PORT; config, logs, pids and data
#                             under DIR ($S3_DIR) ($S3_CONFIG: the proxy's JSON config,
#                             region $S3_REGION, the key pair
#                             $S3_ACCESS/$S3_SECRET, the session
#                             $S3_SESSION_ACCESS/$S3_SESSION_SECRET/
#                             $S3_SESSION_TOKEN)
#   s3_put BUCKET KEY FILE    stores FILE as KEY (straight to s3rver)
#   s3_put_checksum BUCKET KEY FILE
#                             stores FILE as KEY through the proxy, signed,
#                             with its x-amz-checksum-sha256 (the proxy
#                             keeps it and answers it to x-amz-checksum-mode)
#   s3_delete BUCKET KEY      deletes KEY (straight to s3rver)
#   s3_config EXPR            changes the proxy's config: EXPR is Python on
#                             the dict `c` (c["skew_s"] = 3600)
#   s3_env                    exports the key pair, region and endpoint
#   s3_proxy_stop             stops the proxy only: the server is gone
#   s3_proxy_start            starts it again on the same port
#   stop_s3                   stops both (by the pids they were started with)
#   all_signed                every request the proxy saw since the test's
#                             setup emptied $S3_PROXY_LOG was signed right
#   refused PATTERN ARGS...   the mount is refused, exit 1, one line on
#                             stderr matching PATTERN, nothing mounted
#   read_at FILE OFF          "ok" or the errno's name of a 64 KiB pread
#
# Skips the test, saying why, when s3rver or botocore is missing.

S3_REGION=eu-west-3
S3_ACCESS=AKIATESTGGUFFS000001
S3_SECRET=tEsTsEcReT/gguf-fs+k3y0123456789abcdefgh
S3_SESSION_ACCESS=ASIATESTGGUFFS000002
S3_SESSION_SECRET=sEsSiOnSeCrEt/gguf-fs+0123456789abcdefgh
S3_SESSION_TOKEN=FwoGZXIvYXdzEGGUFFS+session/token==0123456789

S3_HELPERS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

start_s3() {
    local dir=$1 root
    shift
    root=$(cd "$S3_HELPERS/../.." && pwd)
    S3RVER=$("$root/scripts/fixtures/s3-setup" 2>"$dir/s3-setup.err") ||
        skip "s3rver cannot be installed: $(tail -1 "$dir/s3-setup.err")"
    python3 -c 'import botocore.auth' 2>/dev/null || skip "python3-botocore is not installed (scripts/setup)"
    read -r S3RVER_PORT S3_PORT < <(free_ports 2)
    S3_DIR=$dir
    S3_CONFIG=$dir/s3-proxy.json
    cat >"$S3_CONFIG" <<JSON
{"region": "$S3_REGION", "public": false, "skew_s": 0, "slow_down": 0, "extra_keys": {},
 "credentials": [{"access": "$S3_ACCESS", "secret": "$S3_SECRET", "token": null},
                 {"access": "$S3_SESSION_ACCESS", "secret": "$S3_SESSION_SECRET", "token": "$S3_SESSION_TOKEN"}]}
JSON
    local buckets=() b
    for b in "$@"; do
        buckets+=(--configure-bucket "$b")
    done
    mkdir -p "$dir/s3rver-data"
    node "$S3RVER" -d "$dir/s3rver-data" -a 127.0.0.1 -p "$S3RVER_PORT" --no-vhost-buckets --silent \
        "${buckets[@]}" >"$dir/s3rver.log" 2>&1 3>&- &
    echo $! >"$dir/s3rver.pid"
    S3_PROXY_LOG=$dir/s3-proxy.log
    wait_port "$S3RVER_PORT" && s3_proxy_start
}

s3_proxy_start() {
    python3 "$S3_HELPERS/sigv4_proxy.py" "$S3_CONFIG" "$S3_PORT" "$S3RVER_PORT" \
        >>"$S3_PROXY_LOG" 2>&1 3>&- &
    echo $! >"$S3_DIR/proxy.pid"
    wait_port "$S3_PORT"
}

# The proxy may have been started again by a test (a child of another
# shell): it is stopped by its pid, and waited for until it is gone.
s3_proxy_stop() {
    local pid
    pid=$(cat "$S3_DIR/proxy.pid" 2>/dev/null) || return 0
    rm -f "$S3_DIR/proxy.pid"
    kill "$pid" 2>/dev/null || return 0
    wait_gone "$pid"
}

s3_put() {
    python3 - "$S3RVER_PORT" "$1" "$2" "$3" <<'PY'
import http.client, sys, urllib.parse
port, bucket, key, path = sys.argv[1:]
with open(path, "rb") as f:
    body = f.read()
c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
c.request("PUT", "/" + bucket + "/" + urllib.parse.quote(key), body=body)
r = c.getresponse()
r.read()
sys.exit(0 if r.status == 200 else f"PUT {key}: HTTP {r.status}")
PY
}

s3_put_checksum() {
    python3 - "$S3_PORT" "$S3_REGION" "$S3_ACCESS" "$S3_SECRET" "$1" "$2" "$3" <<'PY'
import base64, hashlib, http.client, sys, urllib.parse
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
port, region, access, secret, bucket, key, path = sys.argv[1:]
with open(path, "rb") as f:
    body = f.read()
url = f"http://127.0.0.1:{port}/{bucket}/{urllib.parse.quote(key)}"
request = AWSRequest(method="PUT", url=url, data=body, headers={
    "x-amz-checksum-sha256": base64.b64encode(hashlib.sha256(body).digest()).decode(),
    "x-amz-content-sha256": hashlib.sha256(body).hexdigest()})
S3SigV4Auth(Credentials(access, secret), "s3", region).add_auth(request)
c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
c.request("PUT", request.url[len(f"http://127.0.0.1:{port}"):], body=body, headers=dict(request.headers.items()))
r = c.getresponse()
r.read()
sys.exit(0 if r.status == 200 else f"PUT {key}: HTTP {r.status}")
PY
}

s3_config() {
    python3 - "$S3_CONFIG" "$1" <<'PY'
import json, os, sys
path, expr = sys.argv[1:]
with open(path) as f:
    c = json.load(f)
exec(expr)
with open(path + ".new", "w") as f:
    json.dump(c, f)
os.replace(path + ".new", path)
PY
}

s3_env() {
    export AWS_ACCESS_KEY_ID=$S3_ACCESS AWS_SECRET_ACCESS_KEY=$S3_SECRET AWS_REGION=$S3_REGION
    export AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT
    unset AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_REGION AWS_ENDPOINT_URL_S3
    # No file of the user's is read.
    export AWS_SHARED_CREDENTIALS_FILE=/nonexistent AWS_CONFIG_FILE=/nonexistent
}

stop_s3() {
    s3_proxy_stop
    local pid
    pid=$(cat "$S3_DIR/s3rver.pid" 2>/dev/null) || return 0
    rm -f "$S3_DIR/s3rver.pid"
    kill "$pid" 2>/dev/null && wait_gone "$pid"
    return 0
}

s3_delete() {
    python3 - "$S3RVER_PORT" "$1" "$2" <<'PY'
import http.client, sys, urllib.parse
port, bucket, key = sys.argv[1:]
c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
c.request("DELETE", "/" + bucket + "/" + urllib.parse.quote(key))
r = c.getresponse()
r.read()
sys.exit(0 if r.status == 204 else f"DELETE {key}: HTTP {r.status}")
PY
}

# Every request the proxy saw since setup was signed right.
all_signed() {
    [ -s "$S3_PROXY_LOG" ]
    run grep -v ' signed$' "$S3_PROXY_LOG"
    [ "$status" -eq 1 ] || { echo "requests not signed right: $output"; return 1; }
}

# refused LINE_PATTERN GGUF_FS_ARGS...: the mount is refused, exit 1, with
# exactly one line on stderr matching the pattern; nothing is mounted.
refused() {
    local pattern=$1
    shift
    refused_mount -- "$@" "$BATS_TEST_TMPDIR/refused"
    [[ $stderr =~ $pattern ]]
}

# read_at FILE OFF: "ok" or the errno's name of a 64 KiB pread at OFF.
read_at() {
    python3 -c 'import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    os.pread(fd, 65536, int(sys.argv[2]))
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$1" "$2"
}
