#!/usr/bin/env python3
"""A fault-injecting HTTP proxy for the remote-model tests.

Sits between gguf-fs and nginx on loopback: as a reverse proxy (requests to
it go to the upstream port) or as a forward proxy (http_proxy=..., the
request line names the loopback server). Before each request it reads the
control file, one line:

    MODE [FIRST-LAST] [xCOUNT]

MODE is what to do with requests whose Range overlaps bytes FIRST-LAST (all
requests when no range is given), for the next COUNT such requests (all of
them when no count is given); other requests pass. Modes:

    pass     forward to the upstream server unchanged
    refuse   reset the connection; without a range or count, also stop
             listening (new connections are refused) while the mode lasts
    reset    forward the headers and half the body, then reset the connection
    stall    send nothing, hold the connection (until the mode changes)
    503      answer 503 Service Unavailable
    norange  forward without the Range header: 200 and the whole file
    etag     forward, with a different ETag
    short    forward the headers, half the body, then close cleanly
    delay    forward after waiting $FAULT_DELAY_MS milliseconds (default 50),
             as a distant server's round trip would

Each request is logged to LOG as "METHOD PATH RANGE MODE AUTH inflight=N"
(RANGE and AUTH "-" when absent; AUTH is "auth" when an Authorization
header came; N the requests being served as it came, itself included).

usage: fault_proxy.py PORT UPSTREAM_PORT CONTROL LOG
"""
import http.client
import os
import socket
import struct
import sys
import threading
import time

PORT, UPSTREAM, CONTROL, LOG = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
MAX_STALL_S = 120
log_lock = threading.Lock()
count_lock = threading.Lock()
used = {}  # control line -> requests it has applied to
in_flight = [0]  # requests being served, under count_lock


def read_control():
    """(mode, (first, last) or None, count or None, line)."""
    try:
        with open(CONTROL) as f:
            line = f.readline().strip()
    except OSError:
        line = ""
    parts = line.split()
    mode, span, count = (parts[0] if parts else "pass"), None, None
    for p in parts[1:]:
        if p.startswith("x"):
            count = int(p[1:])
        elif "-" in p:
            a, b = p.split("-", 1)
            span = (int(a), int(b))
    return mode, span, count, line


def range_of(headers):
    v = headers.get("range", "")
    if not v.startswith("bytes="):
        return None
    a, _, b = v[6:].partition("-")
    try:
        return int(a), int(b) if b else None
    except ValueError:
        return None


def mode_for(headers):
    mode, span, count, line = read_control()
    if mode == "pass":
        return "pass"
    if span is not None:
        r = range_of(headers)
        if r is None:
            return "pass"
        first, last = r[0], r[1] if r[1] is not None else 1 << 62
        if last < span[0] or first > span[1]:
            return "pass"
    if count is not None:
        with count_lock:
            n = used.get(line, 0)
            if n >= count:
                return "pass"
            used[line] = n + 1
    return mode


def log(method, path, headers, mode, serving):
    with log_lock, open(LOG, "a") as f:
        f.write("%s %s %s %s %s inflight=%d\n" % (method, path, headers.get("range", "-").replace(" ", ""),
                                                 mode, "auth" if "authorization" in headers else "-", serving))


def reset(sock):
    """Closes with a TCP reset."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def read_request(f):
    line = f.readline(65536)
    if not line:
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers, raw = {}, []
    while True:
        h = f.readline(65536)
        if h in (b"\r\n", b"\n", b""):
            break
        name, _, value = h.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
        raw.append((name.strip(), value.strip()))
    return method, target, headers, raw


def upstream_of(target):
    """(host, port, path): a forward proxy's absolute URL, or the upstream."""
    if target.startswith("http://"):
        hostport, _, path = target[7:].partition("/")
        host, _, port = hostport.partition(":")
        if host not in ("127.0.0.1", "localhost"):
            raise ValueError("only loopback servers are proxied")
        return host, int(port or 80), "/" + path
    return "127.0.0.1", UPSTREAM, target


def serve(client):
    f = client.makefile("rb")
    while True:
        req = read_request(f)
        if req is None:
            client.close()
            return
        method, target, headers, raw = req
        mode = mode_for(headers)
        with count_lock:
            in_flight[0] += 1
            serving = in_flight[0]
        try:
            log(method, target, headers, mode, serving)
            if not answer(client, method, target, headers, raw, mode):
                return
        finally:
            with count_lock:
                in_flight[0] -= 1


def answer(client, method, target, headers, raw, mode):
    """Answers one request; False when the connection is closed."""
    if mode == "delay":
        time.sleep(int(os.environ.get("FAULT_DELAY_MS", "50")) / 1000)
    if mode == "refuse":
        reset(client)
        return False
    if mode == "stall":
        end = time.time() + MAX_STALL_S
        while time.time() < end and read_control()[0] == "stall":
            time.sleep(0.05)
        reset(client)
        return False
    if mode == "503":
        body = b"overloaded\n"
        client.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n"
                       b"Content-Type: text/plain\r\n\r\n%s" % (len(body), body))
        return True
    host, port, path = upstream_of(target)
    up = http.client.HTTPConnection(host, port, timeout=30)
    send = {k: v for k, v in raw if k.lower() not in ("connection", "proxy-connection")}
    if mode == "norange":
        send = {k: v for k, v in send.items() if k.lower() != "range"}
    # Redirects are the client's to follow: keep Location as it is.
    up.request(method, path, headers=send)
    resp = up.getresponse()
    length = resp.getheader("Content-Length")
    out = ["HTTP/1.1 %d %s" % (resp.status, resp.reason)]
    for k, v in resp.getheaders():
        if k.lower() in ("connection", "keep-alive", "transfer-encoding"):
            continue
        if k.lower() == "etag" and mode == "etag":
            v = v[:-1] + '-changed"' if v.endswith('"') else v + "-changed"
        out.append("%s: %s" % (k, v))
    body = resp.read() if length is None else None
    if body is not None:
        out.append("Content-Length: %d" % len(body))
    try:
        client.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
        if body is not None:
            client.sendall(body)
        else:
            left = int(length)
            cut = left // 2 if mode in ("reset", "short") else -1
            sent = 0
            while left > 0:
                chunk = resp.read(min(65536, left, cut - sent if cut >= 0 and cut > sent else 65536))
                if not chunk:
                    break
                client.sendall(chunk)
                sent += len(chunk)
                left -= len(chunk)
                if cut >= 0 and sent >= cut:
                    break
            if cut >= 0:
                up.close()
                if mode == "reset":
                    reset(client)
                else:
                    client.shutdown(socket.SHUT_RDWR)
                    client.close()
                return False
    except OSError:
        up.close()
        client.close()
        return False
    up.close()
    return True


def listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", PORT))
    s.listen(64)
    s.settimeout(0.05)
    return s


def main():
    s = listen()
    with open(LOG, "a"):
        pass
    while True:
        mode, span, count, _ = read_control()
        if mode == "refuse" and span is None and count is None:
            # Refused at connect: nobody listens while the mode lasts.
            s.close()
            while read_control()[0] == "refuse":
                time.sleep(0.05)
            s = listen()
        try:
            c, _ = s.accept()
        except socket.timeout:
            continue
        c.settimeout(None)
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
