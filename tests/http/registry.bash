# An Ollama (OCI distribution) registry on loopback for the tests, served
# by nginx from files (needs server.bash loaded first for its ports):
#
#   start_registry DIR   the registry on 127.0.0.1:$REGISTRY_PORT and its
#                        blob store on 127.0.0.2:$BLOB_PORT (another host,
#                        as a registry's CDN is), their logs under DIR
#   add_blob FILE        puts FILE in the blob store; prints its digest's hex
#   add_manifest NS/NAME TAG JSON   the manifest of NS/NAME:TAG
#   stop_registry
#
# The registry answers GET /v2/NS/NAME/manifests/TAG with the manifest's
# media type, and GET /v2/NS/NAME/blobs/sha256:HEX with a 307 to the blob
# store, which serves ranges. Repositories of the namespace `private` want
# a token: without `Authorization: Bearer $REGISTRY_TOKEN` the registry
# answers 401 with a Bearer challenge whose realm, /token on the registry,
# gives that token to anyone (as public registries do); those of `locked`
# answer 401 with no challenge. Both servers log each request's
# Authorization header (auth=...).

REGISTRY_TOKEN=registry_test_token_42
MANIFEST_TYPE=application/vnd.docker.distribution.manifest.v2+json

start_registry() {
    local dir=$1
    REGISTRY_DIR=$dir
    mkdir -p "$dir/store/v2" "$dir/blobs"
    read -r REGISTRY_PORT BLOB_PORT < <(free_ports 2)
    export REGISTRY_DIR REGISTRY_PORT BLOB_PORT
    cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 128; }
http {
    log_format auth '\$request_method \$request_uri \$http_range \$status host=\$host auth=\$http_authorization';
    client_body_temp_path $dir/tmp-body;
    proxy_temp_path $dir/tmp-proxy;
    fastcgi_temp_path $dir/tmp-fastcgi;
    uwsgi_temp_path $dir/tmp-uwsgi;
    scgi_temp_path $dir/tmp-scgi;
    types { }
    default_type application/octet-stream;
    etag on;
    map "\$uri|\$http_authorization" \$denied {
        "~^/v2/private/.*\\|Bearer $REGISTRY_TOKEN\$" 0;
        "~^/v2/private/" 1;
        default 0;
    }
    server {
        listen 127.0.0.1:$REGISTRY_PORT;
        access_log $dir/registry.log auth;
        if (\$denied) { rewrite ^ /unauthorized last; }
        location = /unauthorized {
            internal;
            add_header WWW-Authenticate 'Bearer realm="http://127.0.0.1:$REGISTRY_PORT/token",service="test-registry",scope="repository:private/tiny:pull"' always;
            return 401;
        }
        location ^~ /v2/locked/ {
            return 401;
        }
        location = /token {
            default_type application/json;
            return 200 '{"token":"$REGISTRY_TOKEN","expires_in":300}';
        }
        location ~ ^/v2/.+/manifests/[^/]+\$ {
            root $dir/store;
            default_type $MANIFEST_TYPE;
        }
        location ~ "^/v2/.+/blobs/sha256:(?<hex>[0-9a-f]{64})\$" {
            return 307 http://127.0.0.2:$BLOB_PORT/blobs/sha256-\$hex;
        }
    }
    server {
        listen 127.0.0.2:$BLOB_PORT;
        access_log $dir/blobs.log auth;
        location /blobs/ { root $dir; }
    }
}
CONF
    nginx -c "$dir/nginx.conf" -p "$dir" 3>&- &
    echo $! >"$dir/nginx.pid.ours"
    wait_port "$REGISTRY_PORT" && wait_blob_port
}

# The blob store listens on 127.0.0.2, which wait_port does not ask.
wait_blob_port() {
    local i
    for i in $(seq 100); do
        if python3 -c 'import socket, sys; socket.create_connection(("127.0.0.2", int(sys.argv[1])), 0.2)' "$BLOB_PORT" 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    echo "nothing answers on 127.0.0.2:$BLOB_PORT" >&2
    return 1
}

add_blob() {
    local hex
    hex=$(sha256sum "$1" | cut -d' ' -f1)
    cp "$1" "$REGISTRY_DIR/blobs/sha256-$hex"
    echo "$hex"
}

add_manifest() {
    mkdir -p "$REGISTRY_DIR/store/v2/$1/manifests"
    printf '%s' "$3" >"$REGISTRY_DIR/store/v2/$1/manifests/$2"
}

stop_registry() {
    if [ -f "$REGISTRY_DIR/nginx.pid.ours" ]; then
        kill "$(cat "$REGISTRY_DIR/nginx.pid.ours")" 2>/dev/null || true
    fi
    return 0
}
