#!/usr/bin/env python3
"""Busy event streams: many server-sent-event responses read to their end, and what they
cost the server in CPU.

    scripts/event_streams.py http://127.0.0.1:PORT --pid SERVER_PID
        [--path '/events?n=2000&interval_ms=1'] [--conns 8] [--encoding gzip]
        [--timeout 120] [--connect-parallel 64]

Standard library only (asyncio). Opens CONNS HTTP/1.1 connections, sends one `GET PATH`
with `Accept-Encoding: ENCODING` on each (`identity` sends none), and reads every response
to its end (chunked framing is parsed, so the wire bytes counted are the body's). The
server's CPU time (its threads' run time from /proc/PID/task/*/schedstat, or utime + stime)
is read right before the requests go out and after the last response ends; divided by the events served (n per stream, from the
path) it is the server CPU per event. Loopback only; every run is bounded by TIMEOUT.

Prints one JSON object on stdout. Exits 1 if no stream completed.
"""

import argparse
import asyncio
import json
import os
import sys
import time
import urllib.parse

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """The process's CPU time: the sum of its threads' schedstat run times (nanoseconds, so
    a few hundred events at 100 ms apart still measure), else utime + stime in ticks."""
    try:
        total = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as f:
            # The command name may hold spaces: fields start after its closing parenthesis.
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK


async def read_chunked(reader):
    total = 0
    while True:
        line = await reader.readline()
        if not line:
            raise EOFError("connection closed inside the chunked body")
        size = int(line.split(b";")[0].strip(), 16)
        if size == 0:
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            return total
        await reader.readexactly(size + 2)
        total += size


async def one_stream(host, port, request, sem, result):
    async with sem:
        reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(request)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        result["status"] = status
        result["encoding"] = headers.get("content-encoding", "identity")
        if headers.get("transfer-encoding", "").lower() == "chunked":
            result["bytes"] = await read_chunked(reader)
        elif "content-length" in headers:
            n = int(headers["content-length"])
            await reader.readexactly(n)
            result["bytes"] = n
        else:
            result["bytes"] = len(await reader.read())
        result["complete"] = True
    finally:
        writer.close()


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("base")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--path", default="/events?n=2000&interval_ms=1")
    p.add_argument("--conns", type=int, default=8)
    p.add_argument("--encoding", default="gzip")
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--connect-parallel", type=int, default=64)
    a = p.parse_args()
    url = urllib.parse.urlsplit(a.base)
    if url.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("loopback only")
    n = int(urllib.parse.parse_qs(urllib.parse.urlsplit(a.path).query).get("n", ["5"])[0])
    accept = "" if a.encoding == "identity" else f"Accept-Encoding: {a.encoding}\r\n"
    request = (
        f"GET {a.path} HTTP/1.1\r\nHost: {url.netloc}\r\n{accept}Connection: close\r\n\r\n"
    ).encode()
    sem = asyncio.Semaphore(a.connect_parallel)
    results = [{"complete": False} for _ in range(a.conns)]
    cpu0, t0 = cpu_seconds(a.pid), time.monotonic()
    tasks = [
        asyncio.create_task(one_stream(url.hostname, url.port, request, sem, r)) for r in results
    ]
    done, pending = await asyncio.wait(tasks, timeout=a.timeout)
    for t in pending:
        t.cancel()
    errors = {}
    for t in done:
        if t.exception() is not None:
            e = type(t.exception()).__name__
            errors[e] = errors.get(e, 0) + 1
    cpu1, t1 = cpu_seconds(a.pid), time.monotonic()
    complete = [r for r in results if r["complete"]]
    events = n * len(complete)
    out = {
        "conns": a.conns,
        "events_per_stream": n,
        "complete": len(complete),
        "encoded": sum(1 for r in complete if r["encoding"] == a.encoding),
        "seconds": round(t1 - t0, 2),
        "server_cpu_s": round(cpu1 - cpu0, 4),
        "cpu_us_per_event": round((cpu1 - cpu0) * 1e6 / events, 2) if events else None,
        "bytes_per_stream": round(sum(r["bytes"] for r in complete) / len(complete), 1)
        if complete
        else None,
        "errors": errors,
    }
    print(json.dumps(out))
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
