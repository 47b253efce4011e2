#!/usr/bin/env python3
"""A TCP relay that counts what the server sends: every byte of every
connection from UPSTREAM_PORT to the client, headers and bodies alike, the
sum and the connections still open written to COUNT_FILE ("BYTES OPEN")
as each connection opens and ends: once OPEN is 0, BYTES is all of it. For the benchmarks'
"bytes sent" (scripts/bench/s3bucket), below any HTTP client's own count.

usage: byte_count.py PORT UPSTREAM_PORT COUNT_FILE
"""
import os
import socket
import sys
import threading

PORT, UPSTREAM, COUNT = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()
total = [0]
open_now = [0]


def record(opened, sent):
    with lock:
        open_now[0] += opened
        total[0] += sent
        with open(COUNT + ".new", "w") as f:
            f.write(f"{total[0]} {open_now[0]}\n")
        os.replace(COUNT + ".new", COUNT)


def pump(src, dst, counted):
    n = 0
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
            n += len(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    if counted:
        record(-1, n)


def serve(client):
    record(1, 0)
    up = socket.create_connection(("127.0.0.1", UPSTREAM))
    threading.Thread(target=pump, args=(client, up, False), daemon=True).start()
    pump(up, client, True)
    client.close()
    up.close()


def main():
    record(0, 0)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", PORT))
    srv.listen(128)
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
