#!/usr/bin/env python3
"""Idle streams: many open server-sent-event responses, held for a while, then closed.

    scripts/idle_streams.py http://127.0.0.1:PORT [--path '/events?n=1000&interval_ms=5000']
        [--conns 1000] [--hold 15] [--checkpoint 5] [--encoding gzip] [--pid SERVER_PID]
        [--setup-timeout 30] [--connect-parallel 64]

Standard library only (asyncio). Opens CONNS HTTP/1.1 connections (at most
CONNECT_PARALLEL handshakes at a time), sends one `GET PATH` with
`Accept-Encoding: ENCODING` on each and waits for the response head. Once all are open (or
SETUP_TIMEOUT has passed) the streams are held for HOLD seconds while every event is read
and counted; then all connections are closed. With --pid, the server's VmRSS (KiB, from
/proc/PID/status) is read CHECKPOINT seconds into the hold and at its end, just before the
connections close. Raises RLIMIT_NOFILE as far as the hard limit allows. Loopback only.

Prints one JSON object on stdout. Exits 1 if no stream could be opened.
"""

import argparse
import asyncio
import json
import resource
import sys
import time
import urllib.parse


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def vm_rss_kib(pid):
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class Stream:
    def __init__(self):
        self.status = None
        self.encoding = None
        self.bytes = 0
        self.error = None
        self.writer = None


async def open_stream(host, port, request, sem, stream, opened):
    try:
        async with sem:
            reader, writer = await asyncio.open_connection(host, port)
            stream.writer = writer
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        stream.status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        stream.encoding = "identity"
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-encoding":
                stream.encoding = value.strip().lower()
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
        stream.error = e.__class__.__name__
        return
    finally:
        opened.release()
    # Read (and count) events until cancelled or the server ends the response.
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            stream.bytes += len(data)
    except OSError as e:
        stream.error = e.__class__.__name__


async def run(args):
    url = urllib.parse.urlsplit(args.base)
    host, port = url.hostname, url.port or 80
    request = (
        f"GET {args.path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Accept-Encoding: {args.encoding}\r\nUser-Agent: idle_streams.py\r\n\r\n"
    ).encode()
    sem = asyncio.Semaphore(args.connect_parallel)
    opened = asyncio.Semaphore(0)
    streams = [Stream() for _ in range(args.conns)]
    started = time.monotonic()
    tasks = [
        asyncio.create_task(open_stream(host, port, request, sem, s, opened)) for s in streams
    ]

    async def all_opened():
        for _ in streams:
            await opened.acquire()

    try:
        await asyncio.wait_for(all_opened(), args.setup_timeout)
    except asyncio.TimeoutError:
        pass
    setup = time.monotonic() - started
    open_now = sum(s.status is not None for s in streams)

    await asyncio.sleep(args.checkpoint)
    rss_checkpoint = vm_rss_kib(args.pid)
    await asyncio.sleep(max(0.0, args.hold - args.checkpoint))
    rss_end = vm_rss_kib(args.pid)
    still_open = sum(
        s.status is not None and s.error is None and not t.done() for s, t in zip(streams, tasks)
    )

    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for s in streams:
        if s.writer is not None:
            s.writer.close()
    await asyncio.sleep(0.2)  # let the transports close

    errors = {}
    for s in streams:
        if s.error:
            errors[s.error] = errors.get(s.error, 0) + 1
    got = [s.bytes for s in streams if s.status is not None]
    return {
        "connections": args.conns,
        "opened": open_now,
        "status_200": sum(s.status == 200 for s in streams),
        "encoded": sum(s.status == 200 and s.encoding == args.encoding for s in streams),
        "open_at_end": still_open,
        "event_bytes_per_stream_mean": round(sum(got) / len(got), 1) if got else 0,
        "errors": errors,
        "setup_s": round(setup, 3),
        "hold_s": args.hold,
        "rss_checkpoint_kib": rss_checkpoint,
        "rss_end_kib": rss_end,
        "checkpoint_s": args.checkpoint,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="http://127.0.0.1:PORT")
    ap.add_argument("--path", default="/events?n=1000&interval_ms=5000")
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--hold", type=float, default=15.0)
    ap.add_argument("--checkpoint", type=float, default=5.0)
    ap.add_argument("--encoding", default="gzip")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--setup-timeout", type=float, default=30.0)
    ap.add_argument("--connect-parallel", type=int, default=64)
    args = ap.parse_args()

    host = urllib.parse.urlsplit(args.base).hostname
    if host not in ("127.0.0.1", "localhost"):
        sys.exit("idle_streams: loopback only (127.0.0.1 or localhost)")
    if not 1 <= args.conns <= 10000 or not 0 < args.hold <= 600:
        sys.exit("idle_streams: --conns 1..10000, --hold 0..600")
    args.checkpoint = min(args.checkpoint, args.hold)
    nofile = raise_nofile(args.conns + 64)
    if nofile < args.conns + 16:
        sys.exit(f"idle_streams: RLIMIT_NOFILE {nofile} is too low for {args.conns} sockets")
    result = asyncio.run(run(args))
    result["rlimit_nofile"] = nofile
    print(json.dumps(result))
    return 0 if result["opened"] else 1


if __name__ == "__main__":
    sys.exit(main())
