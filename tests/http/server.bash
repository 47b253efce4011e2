# Starting and stopping the tests' servers, all on 127.0.0.1: nginx serving
# a directory of files with ETags and byte ranges (plus a Hub-like resolve
# location, one that wants a token, one without range support, a redirect
# loop), the same files over TLS, and the fault-injecting proxy in front of
# the plain server.
#
#   start_servers DIR FILES   nginx on $NGINX_PORT (HTTP) and $TLS_PORT
#                             (HTTPS, /files/ only, with the self-signed
#                             certificate DIR/tls.pem for 127.0.0.1 and
#                             localhost), the proxy on $PROXY_PORT; their
#                             state, logs and the proxy's control file under
#                             DIR
#   fault MODE...             writes the proxy's control line
#   await_request [PATTERN]   waits for a request (one whose log line has
#                             PATTERN) to reach the proxy
#   stop_servers              stops both (by the pids they were started with)
#
# The Hub-like paths (HF_ENDPOINT=http://127.0.0.1:$NGINX_PORT):
#   /ORG/REPO/resolve/REV/FILE    302 to /files/FILE (same host); REV is
#                                 one segment, or refs/KIND/N
#   /ORG/private/resolve/REV/FILE 401 unless "Authorization: Bearer $HUB_TOKEN",
#                                 then 302 to http://localhost:PORT/files/FILE
#                                 (another host, which must get no token)
# and /files/ (ranges), /norange/ (no ranges), /forbidden/ (403),
# /loop/ (redirects to itself).

HUB_TOKEN=hf_test_token_0123456789

# A TCP port nobody listens on, picked by the kernel.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# free_ports N: N such ports on one line, all different: each is held while
# the next is picked (ports picked one at a time, each let go at once, may
# come back twice, and two servers would then want one port).
free_ports() {
    python3 -c 'import socket, sys
held = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in held:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in held))' "$1"
}

wait_port() {
    local port=$1 i
    for i in $(seq 100); do
        if python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$port" 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    echo "nothing answers on port $port" >&2
    return 1
}

# make_certificate DIR: a self-signed certificate for 127.0.0.1 and
# localhost, DIR/tls.pem (also the authority a client is told to trust),
# and its key, DIR/tls.key.
make_certificate() {
    local dir=$1
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$dir/tls.key" -out "$dir/tls.pem" 2>/dev/null
}

# write_nginx_conf DIR FILES [RATE]: with $TLS_PORT set, also an HTTPS
# server of FILES under /files/ with DIR/tls.pem, logging to
# DIR/nginx-tls-access.log. With RATE (nginx's limit_rate, e.g. 50m: MiB
# a second), each connection is sent at most RATE, as a server that caps
# connections does. nginx pauses after each sendfile chunk of a response
# but its last, so the chunk is cut to 256 KiB: with the default 2 MiB,
# requests of up to 2 MiB were never slowed (0.7-2 GB/s measured at 50m);
# with 256 KiB, 1 MiB requests run at about 1.3x RATE and 4 MiB ones at
# 1.05x. Smaller chunks would not help: the pause is counted in whole
# milliseconds (2.5 ms at 128 KiB becomes 2).
write_nginx_conf() {
    local dir=$1 files=$2 rate=${3:-} tls='' limit=''
    if [ -n "$rate" ]; then
        limit="limit_rate $rate;
    sendfile_max_chunk 256k;"
    fi
    if [ -n "${TLS_PORT:-}" ]; then
        tls="server {
        listen 127.0.0.1:$TLS_PORT ssl;
        server_name localhost 127.0.0.1;
        ssl_certificate $dir/tls.pem;
        ssl_certificate_key $dir/tls.key;
        access_log $dir/nginx-tls-access.log ranges;
        location /files/ { alias $files/; }
    }"
    fi
    cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 512; }
http {
    log_format ranges '\$request_method \$request_uri \$http_range \$status host=\$host auth=\$http_authorization';
    access_log $dir/nginx-access.log ranges;
    client_body_temp_path $dir/tmp-body;
    proxy_temp_path $dir/tmp-proxy;
    fastcgi_temp_path $dir/tmp-fastcgi;
    uwsgi_temp_path $dir/tmp-uwsgi;
    scgi_temp_path $dir/tmp-scgi;
    types { application/octet-stream gguf; }
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    etag on;
    $limit
    server {
        listen 127.0.0.1:$NGINX_PORT;
        server_name localhost 127.0.0.1;
        location /files/ { alias $files/; }
        location /norange/ { alias $files/; max_ranges 0; }
        location /forbidden/ { return 403; }
        location /loop/ { return 302 /loop/; }
        location ~ ^/[^/]+/private/resolve/[^/]+/(?<file>.+)\$ {
            if (\$http_authorization != "Bearer $HUB_TOKEN") { return 401; }
            return 302 http://localhost:$NGINX_PORT/files/\$file;
        }
        location ~ ^/[^/]+/[^/]+/resolve/refs/[^/]+/[^/]+/(?<file>.+)\$ {
            return 302 /files/\$file;
        }
        location ~ ^/[^/]+/[^/]+/resolve/[^/]+/(?<file>.+)\$ {
            return 302 /files/\$file;
        }
    }
    $tls
}
EOF
}

start_servers() {
    local dir=$1 files=$2
    mkdir -p "$dir"
    read -r NGINX_PORT PROXY_PORT TLS_PORT < <(free_ports 3)
    export NGINX_PORT PROXY_PORT TLS_PORT
    SERVER_DIR=$dir
    export SERVER_DIR
    make_certificate "$dir"
    write_nginx_conf "$dir" "$files"
    nginx -c "$dir/nginx.conf" -p "$dir" 3>&- &
    echo $! >"$dir/nginx.pid.ours"
    : >"$dir/control"
    python3 "$BATS_TEST_DIRNAME/fault_proxy.py" "$PROXY_PORT" "$NGINX_PORT" "$dir/control" \
        "$dir/proxy.log" 3>&- 2>"$dir/proxy-error.log" &
    echo $! >"$dir/proxy.pid"
    wait_port "$NGINX_PORT" && wait_port "$PROXY_PORT" && wait_port "$TLS_PORT"
}

fault() {
    echo "$*" >"$SERVER_DIR/control"
}

# await_request [PATTERN]: returns once the proxy logged a request since
# the last clear_log (one whose line, "METHOD PATH RANGE MODE ...", holds
# PATTERN), as it does when the request arrives; fails after 10 s. A test
# that changes the fault once a request is under way, or that needs a
# reader to be held by a fault, waits for it so instead of sleeping,
# whatever the machine's load.
await_request() {
    local _
    for _ in $(seq 500); do
        grep -qF -- "${1:-}" "$SERVER_DIR/proxy.log" && return 0
        sleep 0.02
    done
    echo "no request${1:+ with '$1'} reached the proxy in 10 s" >&2
    return 1
}

stop_servers() {
    local f
    for f in "$SERVER_DIR/nginx.pid.ours" "$SERVER_DIR/proxy.pid"; do
        if [ -f "$f" ]; then
            kill "$(cat "$f")" 2>/dev/null || true
        fi
    done
    return 0
}

# server_reset: the proxy passing everything, the logs empty, and the
# servers' URLs as DIRECT (nginx) and PROXIED (through the proxy): each
# test's start.
server_reset() {
    fault pass
    clear_log
    DIRECT="http://127.0.0.1:$NGINX_PORT/files"
    PROXIED="http://127.0.0.1:$PROXY_PORT/files"
}

# The proxy's log of Range headers since the last clear_log.
clear_log() {
    : >"$SERVER_DIR/proxy.log"
    : >"$SERVER_DIR/nginx-access.log"
    : >"$SERVER_DIR/nginx-tls-access.log"
}
