#!/usr/bin/env python3
"""Stands in for systemd's end of sd_notify(3).

usage: notify_listen.py ADDRESS MOUNTPOINT LOG

Binds a datagram socket at ADDRESS (a path, or @NAME for an abstract
socket), writes "listening" to LOG, then one line per datagram received:
the datagram, its newlines shown as '|'. Right after a datagram with
READY=1 it lists MOUNTPOINT and writes "answers: NAMES" (or "answers:
ERROR"), so the log shows what a client of the mount saw the moment the
daemon called itself ready. Exits after STOPPING=1, or after 30 seconds.
"""
import os
import socket
import sys


def main():
    address, mountpoint, log_path = sys.argv[1:4]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + address[1:] if address.startswith("@") else address)
    sock.settimeout(30)
    with open(log_path, "a", buffering=1) as log:
        log.write("listening\n")
        while True:
            try:
                data = sock.recv(4096).decode()
            except socket.timeout:
                log.write("timeout\n")
                return 1
            log.write(data.replace("\n", "|") + "\n")
            states = data.split("\n")
            if "READY=1" in states:
                try:
                    log.write("answers: " + " ".join(sorted(os.listdir(mountpoint))) + "\n")
                except OSError as e:
                    log.write(f"answers: ERROR {e}\n")
            if "STOPPING=1" in states:
                return 0


if __name__ == "__main__":
    sys.exit(main())
