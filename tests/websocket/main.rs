//! permessage-deflate (RFC 7692) and OpenIM-style gzip through the `websocket` module:
//! round trips between the crate's own server and client (roundtrip.rs), hostile frames
//! from a raw socket (hostile.rs), Python `websockets` and Node `ws` in both roles
//! (interop.rs, skipped without them unless REQUIRE_INTEROP=1), and the gzip protocol
//! (gzip.rs).

mod gzip;
mod hostile;
mod interop;
mod raw;
mod roundtrip;

use std::net::SocketAddr;

use axum::Router;
use axum::response::Response;
use axum::routing::any;
use tower_gzip::websocket::{DeflateConfig, Message, WebSocket, WebSocketUpgrade, WindowBudget};

tower_gzip_support::count_allocations!();

/// Echoes every data message until the peer closes.
async fn echo(mut socket: WebSocket) {
    while let Some(Ok(message)) = socket.recv().await {
        // Data is echoed; tungstenite answers pings and the Close itself (sent by the
        // next read, which then ends the stream).
        let data = matches!(message, Message::Text(_) | Message::Binary(_));
        if data && socket.send(message).await.is_err() {
            break;
        }
    }
}

/// An echo route answering permessage-deflate by `config`, messages up to `limit` bytes.
fn route(config: DeflateConfig, limit: usize) -> axum::routing::MethodRouter {
    any(move |ws: WebSocketUpgrade| {
        let config = config.clone();
        async move {
            let response: Response = ws.deflate(config).max_message_size(limit).on_upgrade(echo);
            response
        }
    })
}

/// The test server: `/echo` (defaults: no takeover), `/takeover` (takeover, own budget),
/// `/w10` (takeover, windows of at most 10 bits), `/small` (messages up to 1 MiB).
async fn serve() -> SocketAddr {
    let takeover = DeflateConfig::new()
        .context_takeover(true)
        .budget(WindowBudget::new(64 << 20));
    let app = Router::new()
        .route("/echo", route(DeflateConfig::new(), 64 << 20))
        .route("/takeover", route(takeover.clone(), 64 << 20))
        .route("/w10", route(takeover.max_window_bits(10), 64 << 20))
        .route("/small", route(DeflateConfig::new(), 1 << 20));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// JSON messages from the recorded corpus, like the demo's feed.
fn corpus_messages(n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/reddit-api.jsonl"
    ))
    .unwrap_or_else(|_| "{\"kind\": \"t3\", \"data\": {\"title\": \"fallback\"}}\n".repeat(n));
    text.lines().take(n).map(str::to_owned).collect()
}
