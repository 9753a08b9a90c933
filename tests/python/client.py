#!/usr/bin/env python3
"""A Python stdlib client against the demo server (run by tests/interop/real_clients.rs).

Usage: client.py BASE_URL

urllib.request never decodes Content-Encoding itself, so every compressed reply is decoded
here with gzip.decompress / zlib.decompress and compared with the identity reply. Exits
non-zero (AssertionError with a message) on the first mismatch; on success the last stdout
line is a JSON object of what was checked.
"""

import gzip
import http.client
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

BASE = sys.argv[1].rstrip("/")
assert BASE.startswith("http://127.0.0.1:"), BASE
checked = {"get": 0, "upload": 0, "rejected": 0}

# No proxies, even if the environment names one: loopback only.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def request(path, accept=None, data=None, headers=None):
    headers = dict(headers or {})
    if accept is not None:
        headers["Accept-Encoding"] = accept
    req = urllib.request.Request(BASE + path, data=data, headers=headers)
    try:
        with opener.open(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def decode(headers, body):
    coding = headers.get("Content-Encoding")
    if coding is None:
        return body
    if coding == "gzip":
        return gzip.decompress(body)
    if coding == "deflate":
        return zlib.decompress(body)  # HTTP "deflate" is the zlib format
    raise AssertionError(f"unexpected Content-Encoding {coding!r}")


# --- Responses: each coding decodes to the identity bytes --------------------------------
ROUTES = [
    ("/api/items?n=700", "application/json"),
    ("/big.txt?size=1500000", "text/plain; charset=utf-8"),
    ("/", "text/html; charset=utf-8"),
    ("/events?n=4&interval_ms=5", "text/event-stream"),
]
for path, ctype in ROUTES:
    status, h, plain = request(path, "identity")
    assert status == 200, (path, status)
    assert h.get("Content-Encoding") is None, (path, h.get("Content-Encoding"))
    assert h.get("Content-Type") == ctype, (path, h.get("Content-Type"))
    for accept, want in [
        ("gzip", "gzip"),
        ("deflate", "deflate"),
        ("gzip, deflate", "gzip"),
        ("gzip;q=0.2, deflate", "deflate"),
    ]:
        status, h, body = request(path, accept)
        assert status == 200, (path, accept, status)
        assert h.get("Content-Encoding") == want, (path, accept, h.get("Content-Encoding"))
        assert "accept-encoding" in h.get("Vary", "").lower(), (path, h.get("Vary"))
        decoded = decode(h, body)
        assert decoded == plain, f"{path} {accept}: decodes to {len(decoded)} other bytes"
        # Event streams are flushed per event, so tiny ones may grow; the rest must shrink.
        if ctype != "text/event-stream":
            assert len(body) < len(plain) // 2, f"{path} {accept}: {len(body)} of {len(plain)}"
        checked["get"] += 1

status, h, items = request("/api/items?n=700", "gzip")
items = json.loads(decode(h, items))
assert len(items) == 700 and items[-1]["id"] == 699 and items[-1]["name"] == "item-000699"
status, h, plain = request("/api/items?n=700", "identity")
assert json.loads(plain) == items
big = decode(*request("/big.txt?size=1500000", "deflate")[1:])
assert len(big) == 1_500_000 and big.decode("utf-8").startswith("      1  ")
status, h, sse = request("/events?n=4&interval_ms=5", "gzip")
assert decode(h, sse).decode() == "".join(f'data: {{"tick":{i}}}\n\n' for i in range(4))

# /stats changes between calls: it must decode and parse, with the pool counters.
stats = json.loads(decode(*request("/stats", "gzip")[1:]))
assert stats["mode"] == "tower-gzip" and "in_use" in stats["pool"]["deflate_compressors"], stats

# Images are not compressed.
status, h, png = request("/image.png", "gzip, deflate")
assert status == 200 and h.get("Content-Encoding") is None and png.startswith(b"\x89PNG"), h

# --- SSE over http.client, decoded incrementally: events arrive before the stream ends ---
u = urllib.parse.urlsplit(BASE)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
started = time.monotonic()
conn.request("GET", "/events?n=3&interval_ms=300", headers={"Accept-Encoding": "gzip"})
r = conn.getresponse()
assert r.status == 200 and r.getheader("Content-Encoding") == "gzip", r.getheaders()
inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
text, first_event_at = b"", None
while chunk := r.read1(65536):
    text += inflater.decompress(chunk)
    if first_event_at is None and text.endswith(b"\n\n"):
        first_event_at = time.monotonic() - started
text += inflater.flush()
total = time.monotonic() - started
conn.close()
assert inflater.eof, "the gzip stream did not end"
assert text == b'data: {"tick":0}\n\ndata: {"tick":1}\n\ndata: {"tick":2}\n\n', text
assert first_event_at is not None and total - first_event_at >= 0.4, (first_event_at, total)

# --- Uploads: compressed request bodies come back decoded --------------------------------
payload = json.dumps(items[:200]).encode()
uploads = [
    ("gzip", gzip.compress(payload)),
    ("x-gzip", gzip.compress(payload, 1)),
    ("deflate", zlib.compress(payload, 9)),
    ("gzip", gzip.compress(b"")),
]
for coding, wire in uploads:
    want = payload if len(wire) > 40 else b""
    for accept in ["identity", "gzip", "deflate"]:
        headers = {"Content-Encoding": coding, "Content-Type": "application/json"}
        status, h, body = request("/api/echo", accept, wire, headers)
        assert status == 200, (coding, accept, status, body[:200])
        assert h.get("Content-Type") == "application/json", h.get("Content-Type")
        assert decode(h, body) == want, f"{coding} upload, {accept} reply: echo differs"
        checked["upload"] += 1

# --- Corrupt and unsupported uploads are refused -----------------------------------------
good_gz, good_zz = gzip.compress(payload), zlib.compress(payload)
bad_crc = bytearray(good_gz)
bad_crc[-8] ^= 0xFF
bad_adler = bytearray(good_zz)
bad_adler[-1] ^= 0xFF
rejected = [
    ("gzip", good_gz[:-10], 400, "truncated gzip"),
    ("gzip", bytes(bad_crc), 400, "gzip with a wrong CRC-32"),
    ("gzip", b"this is not gzip at all", 400, "not gzip"),
    ("gzip", good_gz + b"trailing junk", 400, "gzip with trailing data"),
    ("deflate", good_zz[: len(good_zz) // 2], 400, "truncated zlib"),
    ("deflate", bytes(bad_adler), 400, "zlib with a wrong Adler-32"),
    ("deflate", good_gz, 400, "gzip sent as deflate"),
    # A coding no build decodes (br, used here before, is decoded with its cargo feature).
    ("compress", b"\x1f\x9d\x90hello", 415, "unsupported coding"),
]
for coding, wire, want, what in rejected:
    headers = {"Content-Encoding": coding, "Content-Type": "text/plain"}
    status, h, body = request("/api/echo", "identity", wire, headers)
    assert status == want, f"{what}: status {status}, want {want}: {body[:200]!r}"
    if want == 415:
        accepted = h.get("Accept-Encoding", "")
        assert "gzip" in accepted, f"415 without Accept-Encoding: {h}"
    checked["rejected"] += 1

print(json.dumps(checked))
