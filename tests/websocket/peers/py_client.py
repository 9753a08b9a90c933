"""Python websockets as a client of the echo server: argv = url, takeover (0/1), window bits.
Sends text and binary, small and large, whole and fragmented; prints the extension agreed."""
import sys
from websockets.sync.client import connect
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

url, takeover, bits = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
factory = ClientPerMessageDeflateFactory(
    server_no_context_takeover=not takeover,
    client_no_context_takeover=not takeover,
    server_max_window_bits=bits if bits < 15 else None,
    client_max_window_bits=bits,
)
with connect(url, extensions=[factory], compression=None, max_size=2**25) as ws:
    print(ws.response.headers.get("Sec-WebSocket-Extensions"))
    big = ('{"kind": "t3", "data": {"title": "permessage-deflate", "score": %d}} ' * 3000)
    for i, message in enumerate(["hi", "hello " * 500, big % tuple(range(3000)), b"\x00\x01" * 4000]):
        for _ in range(3):  # the same message again: takeover shrinks it
            ws.send(message)
            assert ws.recv() == message, f"message {i} differs"
    ws.send(["fragmented " * 100, "text, ", "done"])
    assert ws.recv() == "fragmented " * 100 + "text, done"
    ws.send([b"\xff" * 1000, b"binary" * 200])
    assert ws.recv() == b"\xff" * 1000 + b"binary" * 200
print("ok")
