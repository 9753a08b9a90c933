#!/usr/bin/env python3
"""Aborted downloads against a server on loopback: what a client that reads a few KB of a
large compressed response and then resets the connection costs the server.

    scripts/aborted_downloads.py --port PORT --pid SERVER_PID [--encoding br] [--count 1500]
        [--size 8388608] [--read 4096] [--parallel 8] [--timeout 300]

Each request: connect, `GET /big.txt?size=SIZE` with `Accept-Encoding: ENCODING`, read until
READ body bytes have arrived (headers excluded), then close with SO_LINGER 0 (an RST, as a
browser tab closing mid-download does). PARALLEL requests run at once, COUNT in total, the
whole run bounded by TIMEOUT seconds. Prints one JSON line: the wall time, the server's CPU
time (utime + stime from /proc/PID/stat) spent during the run, its VmRSS after a 1 s settle
and its VmHWM, and how many requests got a 200 with the expected Content-Encoding.
Loopback only: the host is 127.0.0.1.
"""

import argparse
import json
import os
import socket
import struct
import sys
import threading
import time


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def one(port, size, encoding, read, deadline):
    """One aborted download; returns (status, content-encoding) or None on error."""
    s = socket.create_connection(("127.0.0.1", port), timeout=max(1.0, deadline - time.time()))
    try:
        req = (
            f"GET /big.txt?size={size} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Accept-Encoding: {encoding}\r\nConnection: close\r\n\r\n"
        )
        s.sendall(req.encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                return None
            buf += chunk
        head, body = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        coding = ""
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-encoding":
                coding = value.strip()
        got = len(body)
        while got < read and time.time() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += len(chunk)
        return status, coding
    finally:
        # SO_LINGER on, 0 s: close sends an RST.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--encoding", default="br")
    p.add_argument("--count", type=int, default=1500)
    p.add_argument("--size", type=int, default=8 << 20)
    p.add_argument("--read", type=int, default=4096)
    p.add_argument("--parallel", type=int, default=8)
    p.add_argument("--timeout", type=float, default=300)
    a = p.parse_args()
    if not (1 <= a.count <= 100000 and 1 <= a.parallel <= 256 and 1 <= a.timeout <= 3600):
        sys.exit("count, parallel or timeout out of range")

    start_cpu = cpu_seconds(a.pid)
    start = time.time()
    deadline = start + a.timeout
    lock = threading.Lock()
    state = {"next": 0, "ok": 0, "errors": 0}

    def worker():
        while time.time() < deadline:
            with lock:
                if state["next"] >= a.count:
                    return
                state["next"] += 1
            try:
                r = one(a.port, a.size, a.encoding, a.read, deadline)
                good = r is not None and r[0] == 200 and r[1] == a.encoding
            except OSError:
                good = False
            with lock:
                state["ok" if good else "errors"] += 1

    threads = [threading.Thread(target=worker) for _ in range(a.parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - start
    time.sleep(1.0)
    print(
        json.dumps(
            {
                "encoding": a.encoding,
                "requests": state["next"],
                "ok": state["ok"],
                "errors": state["errors"],
                "wall_s": round(wall, 2),
                "server_cpu_s": round(cpu_seconds(a.pid) - start_cpu, 2),
                "rss_after_kb": status_kb(a.pid, "VmRSS"),
                "hwm_kb": status_kb(a.pid, "VmHWM"),
                "timed_out": time.time() > deadline,
            }
        )
    )


if __name__ == "__main__":
    main()
