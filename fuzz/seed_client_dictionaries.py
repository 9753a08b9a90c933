#!/usr/bin/env python3
"""Writes the seed inputs of the `client_dictionaries` fuzz target into
fuzz/corpus/client_dictionaries/ (the input layout is in the target's module docs)."""

import hashlib
import os
import struct

MODES = {m: i for i, m in enumerate(
    "plain gzip dcz dcb dcz_gzip gzip_dcz dcz_other dcb_other dcz_truncated dcb_truncated "
    "dcz_flipped dcb_flipped dcz_garbage dcb_garbage dcz_two_frames raw".split())}
PATHS = ["/dict", "/api/items?n=5", "/assets/app-v2.js", "/a/b/c", "/", "/api/x"]

DICT = (b'{"user":{"id":0,"name":"","email":"@example.com","roles":["reader"],'
        b'"settings":{"theme":"dark","lang":"en"}}}')
BODY = (b'{"user":{"id":7,"name":"Ada","email":"ada@example.com","roles":["reader","admin"],'
        b'"settings":{"theme":"light","lang":"en"}}}')


def string(b):
    assert len(b) < 256
    return bytes([len(b)]) + b


def step(path=0, origin=0, method=0, status=0, extras=0, uad=0, uad_string=None, cache=0,
         cache_strings=(), mode="plain", level=0, coding=None, chunking=0, tweak=0,
         payload=b"", repeat=1):
    out = bytes([method, status])
    if isinstance(path, bytes):
        out += bytes([6 | origin << 3]) + string(path)
    else:
        out += bytes([path | origin << 3])
    out += bytes([extras, uad])
    if uad in (8, 9):
        out += string(uad_string)
    out += bytes([cache])
    for s in cache_strings:
        out += string(s)
    out += bytes([MODES[mode], level | (0x80 if coding is not None else 0)])
    if coding is not None:
        out += string(coding)
    out += bytes([chunking]) + struct.pack("<HH", tweak, len(payload)) + bytes([repeat - 1])
    return out + payload


def store(a=0, b=0):
    return bytes([a, b])


learn = step(path=0, payload=DICT)
seeds = {
    "dcz": store() + learn + step(path=1, mode="dcz", payload=BODY),
    "dcb": store() + learn + step(path=1, mode="dcb", level=1, payload=BODY),
    "gzip_learn_dcz_gzip": store() + step(path=0, mode="gzip", payload=DICT)
    + step(path=5, mode="dcz_gzip", payload=BODY),
    "stacked_frames_truncated": store() + learn + step(path=1, mode="gzip_dcz", payload=BODY)
    + step(path=4, mode="dcz_two_frames", payload=BODY)
    + step(path=3, mode="dcz_truncated", tweak=45, payload=BODY),
    "no_store_mismatch": store() + step(path=0, cache=4, payload=DICT)
    + step(path=1, mode="dcz", payload=BODY),
    "api_id_chunked": store() + step(path=0, uad=1, payload=DICT)
    + step(path=5, mode="dcz", chunking=0x73, payload=BODY, repeat=3),
    "small_store_evicts": store(0x80 | 0x15, 2 | 3 << 2 | 2 << 5)
    + learn + step(path=2, uad=2, payload=BODY)
    + step(path=1, extras=1 << 2, mode="dcz", payload=BODY)
    + step(path=2, extras=1 << 2, mode="dcb", payload=DICT),
    "flipped_other": store() + learn + step(path=1, mode="dcz_flipped", tweak=20, payload=BODY)
    + step(path=1, mode="dcz_other", payload=BODY)
    + step(path=1, mode="dcz_flipped", tweak=0x0460, payload=BODY),
    "fuzzed_strings": store() + step(path=b"/q?x=1", uad=8, uad_string=b'match="/q*", id="x"',
                                     cache=8, cache_strings=[b"max-age=60"], payload=DICT)
    + step(path=b"/q/2?y", mode="dcz", coding=b"DCZ", payload=BODY)
    + step(path=b"/q/3", mode="dcb_garbage", payload=BODY),
    "expires_date_age": store() + step(path=0, cache=9, cache_strings=[
        b"Thu, 01 Jan 2099 00:00:00 GMT", b"Wed, 31 Dec 2098 00:00:00 GMT"], payload=DICT)
    + step(path=1, cache=10, cache_strings=[b"30"], mode="dcz", payload=BODY),
}

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus", "client_dictionaries")
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, "seed_" + name), "wb") as f:
        f.write(data)
    print(name, len(data), hashlib.sha1(data).hexdigest()[:8])
