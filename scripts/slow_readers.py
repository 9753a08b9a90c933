#!/usr/bin/env python3
"""Slow readers: many raw HTTP/1.1 connections, each reading one response at a capped rate.

    scripts/slow_readers.py http://127.0.0.1:PORT [--path /big.txt?size=1000000]
        [--conns 256] [--rate 16384] [--seconds 10] [--rcvbuf 16384]
        [--encoding gzip] [--setup-timeout 20]

Standard library only, one process, one thread: non-blocking sockets and a selector. Every
socket gets a small SO_RCVBUF (set before connecting, so the TCP window stays small too),
sends one `GET` with `Accept-Encoding: ENCODING` and then reads at most RATE bytes per second
(a token bucket refilled every 100 ms, at most one second's worth banked) for SECONDS;
then every socket is closed, finished or not. Loopback only: the host must be 127.0.0.1
or localhost.

Prints one JSON object on stdout: connections opened, responses seen (status 200, and
with Content-Encoding ENCODING), responses read to the end, bytes read per connection,
errors and the elapsed time. Exits 1 if no connection could be opened.
"""

import argparse
import errno
import json
import resource
import selectors
import socket
import sys
import time
import urllib.parse

TICK = 0.1


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class Conn:
    __slots__ = ("sock", "state", "budget", "head", "status", "encoding", "read", "eof")

    def __init__(self, sock):
        self.sock = sock
        self.state = "connecting"  # connecting -> reading -> done
        self.budget = 0.0
        self.head = b""
        self.status = None
        self.encoding = None
        self.read = 0
        self.eof = False

    def parse_head(self, data):
        """Keeps the first bytes until the end of the response head, then parses it."""
        if self.status is not None or len(self.head) > 16384:
            return
        self.head += data
        end = self.head.find(b"\r\n\r\n")
        if end < 0:
            return
        lines = self.head[:end].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        self.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        self.encoding = "identity"
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-encoding":
                self.encoding = value.strip().lower()
        self.head = b""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="http://127.0.0.1:PORT")
    ap.add_argument("--path", default="/big.txt?size=1000000")
    ap.add_argument("--conns", type=int, default=256)
    ap.add_argument("--rate", type=int, default=16384, help="bytes per second per connection")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rcvbuf", type=int, default=16384)
    ap.add_argument("--encoding", default="gzip")
    ap.add_argument("--setup-timeout", type=float, default=20.0)
    args = ap.parse_args()

    url = urllib.parse.urlsplit(args.base)
    host, port = url.hostname, url.port or 80
    if host not in ("127.0.0.1", "localhost"):
        sys.exit("slow_readers: loopback only (127.0.0.1 or localhost)")
    if not 1 <= args.conns <= 4096 or not 0 < args.seconds <= 600 or args.rate < 1:
        sys.exit("slow_readers: --conns 1..4096, --seconds 0..600, --rate >= 1")
    nofile = raise_nofile(args.conns + 64)
    if nofile < args.conns + 16:
        sys.exit(f"slow_readers: RLIMIT_NOFILE {nofile} is too low for {args.conns} sockets")

    request = (
        f"GET {args.path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Accept-Encoding: {args.encoding}\r\nUser-Agent: slow_readers.py\r\n\r\n"
    ).encode()

    sel = selectors.DefaultSelector()
    conns, errors = [], {}

    def fail(conn, why):
        errors[why] = errors.get(why, 0) + 1
        if conn.state != "done":
            try:
                sel.unregister(conn.sock)
            except (KeyError, ValueError):
                pass
            conn.sock.close()
            conn.state = "done"

    # Connect all sockets, then send each its request as soon as it is writable.
    started = time.monotonic()
    for _ in range(args.conns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.rcvbuf)
        sock.setblocking(False)
        conn = Conn(sock)
        conns.append(conn)
        rc = sock.connect_ex((host, port))
        if rc not in (0, errno.EINPROGRESS):
            fail(conn, f"connect: {errno.errorcode.get(rc, rc)}")
            continue
        sel.register(sock, selectors.EVENT_WRITE, conn)
    pending = sum(c.state == "connecting" for c in conns)
    deadline = started + args.setup_timeout
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.2):
            conn = key.data
            rc = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            pending -= 1
            if rc:
                fail(conn, f"connect: {errno.errorcode.get(rc, rc)}")
                continue
            try:
                sent = conn.sock.send(request)
            except OSError as e:
                fail(conn, f"send: {e.__class__.__name__}")
                continue
            if sent != len(request):
                fail(conn, "send: partial")
                continue
            sel.unregister(conn.sock)
            conn.state = "reading"
    for conn in conns:
        if conn.state == "connecting":
            fail(conn, "connect: setup timeout")
    setup = time.monotonic() - started

    # Read: every TICK each open socket earns rate*TICK bytes (at most one second banked);
    # only sockets with budget left are watched.
    reading = [c for c in conns if c.state == "reading"]
    t0 = last = time.monotonic()
    end = t0 + args.seconds
    watched = set()
    while True:
        now = time.monotonic()
        if now >= end:
            break
        dt, last = now - last, now
        for conn in reading:
            if conn.state != "reading":
                continue
            conn.budget = min(conn.budget + args.rate * dt, float(args.rate))
            if conn.budget >= 1 and conn not in watched:
                sel.register(conn.sock, selectors.EVENT_READ, conn)
                watched.add(conn)
        tick_end = min(now + TICK, end)
        while True:
            timeout = tick_end - time.monotonic()
            if timeout <= 0:
                break
            for key, _ in sel.select(timeout=timeout):
                conn = key.data
                want = min(int(conn.budget), args.rcvbuf)
                try:
                    data = conn.sock.recv(want)
                except BlockingIOError:
                    continue
                except OSError as e:
                    watched.discard(conn)
                    fail(conn, f"recv: {e.__class__.__name__}")
                    continue
                if not data:
                    conn.eof = True
                    watched.discard(conn)
                    sel.unregister(conn.sock)
                    conn.sock.close()
                    conn.state = "done"
                    continue
                conn.read += len(data)
                conn.budget -= len(data)
                conn.parse_head(data)
                if conn.budget < 1:
                    sel.unregister(conn.sock)
                    watched.discard(conn)
    elapsed = time.monotonic() - t0

    for conn in conns:
        if conn.state != "done":
            if conn in watched:
                sel.unregister(conn.sock)
            conn.sock.close()
            conn.state = "done"
    sel.close()

    opened = [c for c in conns if c.status is not None or c.read > 0 or c.eof]
    read = [c.read for c in reading]
    print(json.dumps({
        "connections": args.conns,
        "opened": len(reading),
        "status_200": sum(c.status == 200 for c in conns),
        "encoded": sum(c.status == 200 and c.encoding == args.encoding for c in conns),
        "complete": sum(c.eof for c in conns),
        "responded": len(opened),
        "bytes_read": sum(read),
        "bytes_per_conn_mean": round(sum(read) / len(read)) if read else 0,
        "bytes_per_conn_max": max(read) if read else 0,
        "errors": errors,
        "setup_s": round(setup, 3),
        "elapsed_s": round(elapsed, 3),
        "rlimit_nofile": nofile,
    }))
    return 0 if reading else 1


if __name__ == "__main__":
    sys.exit(main())
