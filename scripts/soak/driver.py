#!/usr/bin/env python3
"""Soak load driver for the tower-gzip demo server (Python 3 stdlib only).

Usage: driver.py BASE_URL SERVER_PID SECONDS

Runs CONCURRENCY worker threads (env SOAK_CONCURRENCY, default 4) for SECONDS, each on its
own keep-alive connection, mixing the demo's routes and checking every reply byte for byte;
a sampler thread reads the server's VmRSS from /proc/PID/status every 250 ms. Bounded in
time (SECONDS) and in count (env SOAK_MAX_REQUESTS, default 1,000,000).

Exit status: 0 if every reply had its expected status and content and RSS did not keep
growing; 1 otherwise. The last stdout line is a JSON summary.

RSS growth rule ("keeps growing"): split the samples taken under load into thirds by time;
fail if the MEDIAN of the last third exceeds the MAX of the middle third by more than
SOAK_RSS_GROWTH_PCT percent (default 10) AND by more than SOAK_RSS_GROWTH_MIB MiB
(default 16). The median ignores transient peaks (a 20 MiB bomb being refused, a big body
in flight); a real leak shifts the whole last third above everything seen in the middle
third. Both a relative and an absolute margin are required so that allocator noise on a
small heap, or a few MiB on a large one, do not count. The first third is warm-up (pools
and allocator arenas fill) and is not compared.
"""

import gzip
import http.client
import json
import os
import random
import statistics
import sys
import threading
import time
import urllib.parse
import zlib

BASE, PID, SECONDS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
CONCURRENCY = int(os.environ.get("SOAK_CONCURRENCY", "4"))
MAX_REQUESTS = int(os.environ.get("SOAK_MAX_REQUESTS", "1000000"))
GROWTH_PCT = float(os.environ.get("SOAK_RSS_GROWTH_PCT", "10"))
GROWTH_MIB = float(os.environ.get("SOAK_RSS_GROWTH_MIB", "16"))
BIG_MAX = 2 << 20
ITEMS_MAX = 3000
TIMEOUT = 30

url = urllib.parse.urlsplit(BASE)
assert url.hostname == "127.0.0.1", f"loopback only: {BASE}"
HOST, PORT = url.hostname, url.port


def log(*args):
    print("[soak]", *args, file=sys.stderr, flush=True)


def decode(headers, body):
    coding = (headers.get("content-encoding") or "identity").lower()
    if coding == "identity":
        return body
    if coding == "gzip":
        return gzip.decompress(body)
    if coding == "deflate":
        return zlib.decompress(body)
    if coding == "br":
        import brotli  # pip: brotli (installed by .ci/run)

        return brotli.decompress(body)
    if coding == "zstd":
        import zstandard  # pip: zstandard (installed by .ci/run)

        # The server may send several frames (one per pause): decode them all.
        data, rest = b"", body
        while rest:
            d = zstandard.ZstdDecompressor().decompressobj()
            data += d.decompress(rest)
            rest = d.unused_data
        return data
    raise AssertionError(f"unexpected Content-Encoding {coding!r}")


class Conn:
    """One keep-alive connection; reopened after the server closes it."""

    def __init__(self):
        self.c = None

    def request(self, method, path, body=None, headers=None, close=False):
        headers = dict(headers or {})
        if close:
            headers["Connection"] = "close"
        for attempt in (0, 1):
            if self.c is None:
                self.c = http.client.HTTPConnection(HOST, PORT, timeout=TIMEOUT)
            fresh = attempt == 1 or self.c.sock is None
            try:
                self.c.request(method, path, body=body, headers=headers)
                r = self.c.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.c.close()
                self.c = None
                # A reused keep-alive connection the server had just closed: retry once on
                # a new one. On a new connection it is a real failure.
                if fresh:
                    raise
                continue
            if close or r.getheader("connection", "").lower() == "close":
                self.c.close()
                self.c = None
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        raise AssertionError("unreachable")


# Reference content, fetched once (identity) before the load starts.
def fetch_identity(path):
    c = Conn()
    status, headers, body = c.request("GET", path, headers={"Accept-Encoding": "identity"})
    assert status == 200 and "content-encoding" not in headers, (path, status, headers)
    return body


BIG_REF = fetch_identity(f"/big.txt?size={BIG_MAX}")
assert len(BIG_REF) == BIG_MAX
ITEMS_REF = json.loads(fetch_identity(f"/api/items?n={ITEMS_MAX}"))
assert len(ITEMS_REF) == ITEMS_MAX
# A size bomb: > 20 MiB (the default limit) of zeros, ~21 KiB on the wire.
BOMB = gzip.compress(b"\0" * (21 << 20), 9)
# A ratio bomb under the size limit: 8 MiB of zeros (1000:1, over the 200:1 limit).
RATIO_BOMB = zlib.compress(b"\0" * (8 << 20), 9)
ACCEPT = ["gzip", "deflate", "identity", "gzip, deflate", "deflate;q=0.5, gzip", "br", "zstd", "gzip, deflate, br, zstd"]


def upload_body(rng):
    kind = rng.random()
    if kind < 0.6:  # text, compressible
        start = rng.randrange(0, BIG_MAX // 2)
        return BIG_REF[start : start + rng.randrange(0, 256 << 10)]
    if kind < 0.8:  # random bytes, incompressible
        return rng.randbytes(rng.randrange(0, 64 << 10))
    return json.dumps(ITEMS_REF[: rng.randrange(0, 300)]).encode()


def compress(coding, data, rng):
    level = rng.choice([1, 6, 9])
    if coding == "gzip":
        return gzip.compress(data, level)
    return zlib.compress(data, level)


def corrupt(coding, data, rng):
    """A body that must not decode: truncated, bad trailer checksum, or garbage."""
    good = compress(coding, data or b"x", rng)
    how = rng.choice(["truncate", "checksum", "garbage"])
    if how == "truncate":
        return how, good[: rng.randrange(1, len(good) - 1)] if len(good) > 2 else good[:1]
    if how == "checksum":
        # gzip: CRC-32 is bytes -8..-5; zlib: Adler-32 is the last 4 bytes.
        i = len(good) - (8 if coding == "gzip" else 1)
        return how, good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1 :]
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" if coding == "gzip" else b"\x78\x9c"
    return how, head + b"\xff" * rng.randrange(8, 4096)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = 0
        self.by_op = {}
        self.unexpected = []
        self.bytes_down = 0
        self.bytes_up = 0

    def record(self, op, ok, detail, up=0, down=0):
        with self.lock:
            self.requests += 1
            self.by_op[op] = self.by_op.get(op, 0) + 1
            self.bytes_up += up
            self.bytes_down += down
            if not ok:
                self.unexpected.append(f"{op}: {detail}")
                if len(self.unexpected) <= 20:
                    log("UNEXPECTED", op, detail)


STATS = Stats()
STOP = threading.Event()
DEADLINE = time.monotonic() + SECONDS


def op_items(conn, rng):
    n = rng.randrange(0, ITEMS_MAX + 1)
    ae = rng.choice(ACCEPT)
    status, h, body = conn.request("GET", f"/api/items?n={n}", headers={"Accept-Encoding": ae})
    ok = status == 200 and json.loads(decode(h, body)) == ITEMS_REF[:n]
    return ok, f"n={n} ae={ae} status={status}", 0, len(body)


def op_big(conn, rng):
    size = rng.choice([0, 1, 100, rng.randrange(0, BIG_MAX + 1)])
    ae = rng.choice(ACCEPT)
    status, h, body = conn.request("GET", f"/big.txt?size={size}", headers={"Accept-Encoding": ae})
    ok = status == 200 and decode(h, body) == BIG_REF[:size]
    return ok, f"size={size} ae={ae} status={status}", 0, len(body)


def op_sse(conn, rng):
    n, interval = rng.randrange(1, 21), rng.randrange(1, 6)
    ae = rng.choice(ACCEPT)
    path = f"/events?n={n}&interval_ms={interval}"
    status, h, body = conn.request("GET", path, headers={"Accept-Encoding": ae})
    want = "".join(f'data: {{"tick":{i}}}\n\n' for i in range(n)).encode()
    ok = status == 200 and h.get("content-type") == "text/event-stream" and decode(h, body) == want
    return ok, f"{path} ae={ae} status={status}", 0, len(body)


def op_echo(conn, rng):
    coding = rng.choice(["gzip", "deflate"])
    data = upload_body(rng)
    wire = compress(coding, data, rng)
    ae = rng.choice(ACCEPT)
    headers = {"Content-Encoding": coding, "Content-Type": "text/plain", "Accept-Encoding": ae}
    status, h, body = conn.request("POST", "/api/echo", body=wire, headers=headers)
    ok = status == 200 and decode(h, body) == data
    return ok, f"{coding} {len(data)}B ae={ae} status={status}", len(wire), len(body)


def op_corrupt(conn, rng):
    coding = rng.choice(["gzip", "deflate"])
    how, wire = corrupt(coding, upload_body(rng), rng)
    headers = {"Content-Encoding": coding, "Content-Type": "text/plain"}
    status, _, body = conn.request("POST", "/api/echo", body=wire, headers=headers, close=True)
    return status == 400, f"{coding} {how} status={status} {body[:80]!r}", len(wire), len(body)


def op_unsupported(conn, rng):
    # LZW `compress`: registered, and decoded by no build of this crate.
    headers = {"Content-Encoding": "compress", "Content-Type": "text/plain"}
    status, _, body = conn.request("POST", "/api/echo", body=b"xyz", headers=headers, close=True)
    return status == 415, f"compress status={status}", 3, len(body)


def op_bomb(conn, rng):
    coding, wire = rng.choice([("gzip", BOMB), ("deflate", RATIO_BOMB)])
    headers = {"Content-Encoding": coding, "Content-Type": "application/octet-stream"}
    status, _, body = conn.request("POST", "/api/echo", body=wire, headers=headers, close=True)
    ok = status == 413
    return ok, f"{coding} bomb status={status} {body[:80]!r}", len(wire), len(body)


# Weights: mostly successful traffic, a steady trickle of errors, an occasional bomb.
OPS = [
    (op_items, 30),
    (op_big, 15),
    (op_sse, 15),
    (op_echo, 30),
    (op_corrupt, 7),
    (op_unsupported, 2),
    (op_bomb, 1),
]
OP_FUNCS = [f for f, _ in OPS]
OP_WEIGHTS = [w for _, w in OPS]


def worker(seed):
    rng = random.Random(seed)
    conn = Conn()
    while not STOP.is_set() and time.monotonic() < DEADLINE:
        with STATS.lock:
            if STATS.requests >= MAX_REQUESTS:
                break
        op = rng.choices(OP_FUNCS, OP_WEIGHTS)[0]
        name = op.__name__[3:]
        try:
            ok, detail, up, down = op(conn, rng)
        except Exception as e:  # noqa: BLE001 - any failure is an unexpected result
            conn = Conn()
            ok, detail, up, down = False, f"exception {e!r}", 0, 0
        STATS.record(name, ok, detail, up, down)


def rss_kib():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


SAMPLES = []  # (seconds since start, KiB)
T0 = time.monotonic()


def sampler():
    while not STOP.is_set():
        SAMPLES.append((time.monotonic() - T0, rss_kib()))
        STOP.wait(0.25)


def get_stats():
    status, h, body = Conn().request("GET", "/stats", headers={"Accept-Encoding": "gzip"})
    assert status == 200, status
    return json.loads(decode(h, body))


def main():
    rss_start = rss_kib()
    log(f"{BASE} pid {PID}: {SECONDS:g} s, {CONCURRENCY} workers, RSS at start {rss_start / 1024:.1f} MiB")
    samp = threading.Thread(target=sampler, daemon=True)
    samp.start()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(CONCURRENCY)]
    for t in threads:
        t.start()
    last = T0
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(timeout=1)
        now = time.monotonic()
        if now - last >= 10:
            last = now
            log(f"t={now - T0:.0f}s requests={STATS.requests} unexpected={len(STATS.unexpected)} RSS={SAMPLES[-1][1] / 1024:.1f} MiB")
        if now > DEADLINE + 60:
            STOP.set()
            STATS.record("driver", False, "workers still busy 60 s after the deadline")
            break
    elapsed = time.monotonic() - T0
    load_samples = list(SAMPLES)
    # Idle: let bodies finish dropping, then take the final figures.
    time.sleep(1.0)
    stats = get_stats()
    deadline = time.monotonic() + 5
    while any(stats["pool"][k]["in_use"] for k in ("deflate_compressors", "block_compressors", "deflate_decompressors")):
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
        stats = get_stats()
    STOP.set()
    rss_end = rss_kib()

    values = [kib for _, kib in load_samples]
    span = load_samples[-1][0] if load_samples else 0
    mid = [kib for t, kib in load_samples if span / 3 <= t < 2 * span / 3]
    last3 = [kib for t, kib in load_samples if t >= 2 * span / 3]
    growth = {"rule": f"median(last third) > max(middle third) by > {GROWTH_PCT:g}% and > {GROWTH_MIB:g} MiB"}
    grew = False
    if len(mid) >= 3 and len(last3) >= 3:
        mid_max, last_median = max(mid), statistics.median(last3)
        over = last_median - mid_max
        grew = over > mid_max * GROWTH_PCT / 100 and over > GROWTH_MIB * 1024
        growth.update(
            middle_max_mib=round(mid_max / 1024, 1),
            last_median_mib=round(last_median / 1024, 1),
            grew=grew,
        )
    else:
        growth["grew"] = None
        growth["note"] = "too few samples to judge"

    pool = stats["pool"]
    pool_ok = all(pool[k]["in_use"] == 0 for k in ("deflate_compressors", "block_compressors", "deflate_decompressors"))
    summary = {
        "seconds": round(elapsed, 1),
        "concurrency": CONCURRENCY,
        "requests": STATS.requests,
        "requests_per_s": round(STATS.requests / elapsed, 1) if elapsed else None,
        "by_op": STATS.by_op,
        "unexpected": len(STATS.unexpected),
        "mib_up": round(STATS.bytes_up / 2**20, 1),
        "mib_down": round(STATS.bytes_down / 2**20, 1),
        "rss_mib": {
            "start": round(rss_start / 1024, 1),
            "peak": round(max(values + [rss_start, rss_end]) / 1024, 1),
            "end": round(rss_end / 1024, 1),
            "samples": len(values),
        },
        "rss_growth": growth,
        "pool": pool,
        "compression": stats["compression"],
        "wire": stats["wire"],
    }
    print(json.dumps(summary, indent=2), flush=True)
    failed = []
    if STATS.unexpected:
        failed.append(f"{len(STATS.unexpected)} unexpected replies (first: {STATS.unexpected[0]})")
    if grew:
        failed.append(f"RSS kept growing: {growth}")
    if not pool_ok:
        failed.append(f"codecs still in use after the load: {pool}")
    if STATS.requests == 0:
        failed.append("no requests were made")
    for f in failed:
        log("FAIL:", f)
    if not failed:
        log("PASS")
    sys.exit(1 if failed else 0)


main()
