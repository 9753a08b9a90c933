#!/usr/bin/env python3
"""A grpcio client against examples/grpc.rs (run by tests/grpc/python.rs).

Usage: grpc_client.py HOST:PORT

grpcio is the independent peer: its C core compresses our requests (gzip, deflate) and
decodes our responses. Requests go with each compression; responses are asked for in gzip
alone and in deflate alone (the channel's enabled-algorithms bitset sets what it lists in
grpc-accept-encoding). Messages are encoded by hand (protobuf field 1, length-delimited:
`example.Note`'s text), so no generated code is needed. Exits non-zero (AssertionError) on the first mismatch; on success
the last stdout line is a JSON object of what was checked.
"""

import json
import sys

import grpc

TARGET = sys.argv[1]
assert TARGET.startswith("127.0.0.1:"), TARGET

# grpc_compression_algorithm: identity 0, deflate 1, gzip 2; the bitset's bit n enables n.
ACCEPT = {"gzip": 0b101, "deflate": 0b011}
COMPRESSION = {"gzip": grpc.Compression.Gzip, "deflate": grpc.Compression.Deflate}


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def payload(data):
    """A Note message: field 1, length-delimited (ASCII text)."""
    return b"\x0a" + varint(len(data)) + data if data else b""


def read_fields(message):
    """The values of a message made only of field 1, length-delimited (repeated or not)."""
    fields, i = [], 0
    while i < len(message):
        assert message[i] == 0x0A, message[i : i + 8]
        n, shift, i = 0, 0, i + 1
        while True:
            byte = message[i]
            n |= (byte & 0x7F) << shift
            shift += 7
            i += 1
            if not byte & 0x80:
                break
        fields.append(message[i : i + n])
        i += n
    assert i == len(message), (i, len(message))
    return fields


def read_payload(message):
    fields = read_fields(message)
    assert len(fields) <= 1, len(fields)
    return fields[0] if fields else b""


def text(n):
    words = b"tower gzip grpc message compression pooled codecs streaming "
    return (words * (n // len(words) + 1))[:n]


checked = {"echo": 0, "list": 0, "health": 0, "reflection": 0}
for accept, bits in ACCEPT.items():
    options = [("grpc.compression_enabled_algorithms_bitset", bits)]
    with grpc.insecure_channel(TARGET, options=options) as channel:
        echo = channel.unary_unary("/example.Notes/Echo")
        for send, compression in COMPRESSION.items():
            for size in (10, 1000, 100_000, 1_000_000):
                data = text(size)
                reply = echo(payload(data), compression=compression, timeout=30)
                assert read_payload(reply) == data, (accept, send, size)
                checked["echo"] += 1
        list_notes = channel.unary_unary("/example.Notes/List")
        # ListRequest: count (field 1) 2000: about 120 KB of notes in one reply.
        notes = read_fields(list_notes(b"\x08" + varint(2000), timeout=30))
        assert len(notes) == 2000, len(notes)
        assert notes[7].startswith(b"note 7: "), notes[7]
        checked["list"] += 1
        health = channel.unary_unary("/grpc.health.v1.Health/Check")
        assert health(b"", timeout=30) == b"\x08\x01"  # SERVING
        checked["health"] += 1
        # Both reflection versions: grpcurl asks v1, grpcio-reflection v1alpha.
        for version in ("v1", "v1alpha"):
            path = f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"
            reflect = channel.stream_stream(path)
            # ServerReflectionRequest { list_services: "" } (field 7).
            replies = list(reflect(iter([b"\x3a\x00"]), timeout=30))
            assert b"example.Notes" in replies[0], (version, replies[0])
            assert b"grpc.health.v1.Health" in replies[0], (version, replies[0])
            checked["reflection"] += 1

print(json.dumps(checked))
