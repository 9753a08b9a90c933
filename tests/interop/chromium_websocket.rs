//! A WebSocket from headless Chromium to the crate's axum extractor: the browser offers
//! permessage-deflate, the server's answer shows in `ws.extensions`, and text and binary
//! messages (large enough to be compressed, and small ones that are not) come back as sent.

use std::time::Duration;

use axum::Router;
use axum::response::{Html, Response};
use axum::routing::{any, get};
use tower_gzip::websocket::{WebSocket, WebSocketUpgrade};

use crate::chromium::{autotest_result, dump_dom_within, have_chromium};

/// The page: opens `/ws`, sends a long text, a short text and a long binary message, and
/// writes what came back and the negotiated extensions.
const PAGE: &str = r#"<!doctype html><html><body><pre id="autotest"></pre><script>
const long = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: "item " + i })) });
const bytes = new Uint8Array(4096).map((_, i) => i % 7);
function run() {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://${location.host}/ws`);
    ws.binaryType = "arraybuffer";
    const got = [];
    ws.onopen = () => { ws.send(long); ws.send("hi"); ws.send(bytes); };
    ws.onmessage = (e) => {
      if (typeof e.data === "string") got.push(e.data === long ? "long" : e.data === "hi" ? "short" : "wrong text");
      else {
        const back = new Uint8Array(e.data);
        got.push(back.length === bytes.length && back.every((b, i) => b === bytes[i]) ? "binary" : "wrong binary");
      }
      if (got.length === 3) { resolve({ extensions: ws.extensions, got }); ws.close(); }
    };
    ws.onerror = () => resolve({ extensions: ws.extensions, got, error: "websocket error" });
  });
}
// Headless Chromium's virtual time does not wait for a WebSocket, but it waits for a fetch:
// the page holds one open (the server answers `/hold` after 200 ms) until the socket is done.
let out = null;
run().then((o) => { out = o; });
(async () => {
  for (let i = 0; i < 100 && !out; i++) await fetch("/hold");
  out = out || { error: "no answer in 20 s" };
  out.done = true;
  document.getElementById("autotest").textContent = JSON.stringify(out);
})();
</script></body></html>"#;

async fn echo(ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(|mut socket: WebSocket| async move {
        while let Some(Ok(message)) = socket.recv().await {
            let data = message.is_text() || message.is_binary();
            if data && socket.send(message).await.is_err() {
                break;
            }
        }
    })
}

#[test]
fn chromium_negotiates_permessage_deflate_and_round_trips_messages() {
    if !have_chromium() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route("/ws", any(echo))
        .route(
            "/hold",
            get(|| async { tokio::time::sleep(Duration::from_millis(200)).await }),
        );
    runtime.spawn(async move { axum::serve(listener, app).await.unwrap() });
    let result = autotest_result(&dump_dom_within(&url, 30_000, Duration::from_secs(60)))
        .expect("the page wrote no result into <pre id=\"autotest\">");
    runtime.shutdown_background();
    eprintln!("chromium, websocket: {result}");
    let extensions = result["extensions"].as_str().unwrap_or_default();
    assert!(
        extensions.starts_with("permessage-deflate"),
        "negotiated: {result}"
    );
    assert!(
        extensions.contains("server_no_context_takeover")
            && extensions.contains("client_no_context_takeover"),
        "the default answer: {result}"
    );
    assert_eq!(
        result["got"],
        serde_json::json!(["long", "short", "binary"]),
        "{result}"
    );
    // Chromium compresses what it likes (here all three); the server compressed the two long
    // messages and sent "hi", under its threshold, as it was.
    let stats = tower_gzip::websocket::stats();
    let [inbound, outbound] = stats.deflate;
    assert!(inbound.messages >= 2, "{stats:?}");
    assert_eq!(outbound.messages, 2, "{stats:?}");
    assert_eq!(stats.identity[1].messages, 1, "{stats:?}");
    for counts in [inbound, outbound] {
        assert!(counts.wire_bytes * 4 < counts.plain_bytes, "{stats:?}");
    }
}
