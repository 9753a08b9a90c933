"""Python websockets as an echo server: argv = takeover (0/1), window bits. Prints its port."""
import sys
from websockets.sync.server import serve
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory

takeover, bits = sys.argv[1] == "1", int(sys.argv[2])
factory = ServerPerMessageDeflateFactory(
    server_no_context_takeover=not takeover,
    client_no_context_takeover=not takeover,
    server_max_window_bits=bits,
    client_max_window_bits=bits,
)

def echo(ws):
    ws.send("extensions: " + (ws.request.headers.get("Sec-WebSocket-Extensions") or "") + " -> " +
            (ws.response.headers.get("Sec-WebSocket-Extensions") or ""))
    for message in ws:
        ws.send(message)

with serve(echo, "127.0.0.1", 0, extensions=[factory], compression=None, max_size=2**25) as server:
    print(server.socket.getsockname()[1], flush=True)
    server.serve_forever()
