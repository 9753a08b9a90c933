//! The demo's WebSocket routes, with permessage-deflate (RFC 7692) on, both also serving
//! OpenIM-style `?compression=gzip` clients:
//!
//! - `/ws/echo`: echoes every message, text and binary, as received (Autobahn's cases run
//!   against it: BENCHMARKS.md, "WebSocket").
//! - `/ws/feed?interval_ms=M`: a live feed of the demo's JSON (`/api/items` pages), one
//!   text message every M ms (default 500) until the client closes.
//!
//! `WS_DEFLATE_THRESHOLD=N`: messages under N bytes go uncompressed (default 128); 0 sends
//! every message compressed, even those deflate makes larger. `WS_TAKEOVER=1` allows
//! context takeover (within the global window budget).

use std::time::Duration;

use axum::extract::Query;
use axum::response::Response;
use serde_json::{Value, json};
use tower_gzip::websocket::{DeflateConfig, Message, WebSocket, WebSocketUpgrade};

/// Autobahn's cases send messages up to 16 MiB; the limit bounds what one may inflate to.
const MAX_MESSAGE: usize = 64 << 20;

/// The deflate settings: the defaults, with the threshold from `WS_DEFLATE_THRESHOLD`
/// (bytes; default 128), so a conformance run can have every message compressed, and
/// takeover allowed by `WS_TAKEOVER=1`, so a load run can measure it.
fn deflate() -> DeflateConfig {
    let threshold = std::env::var("WS_DEFLATE_THRESHOLD")
        .ok()
        .and_then(|v| v.parse().ok());
    let takeover = std::env::var("WS_TAKEOVER").is_ok_and(|v| v == "1");
    DeflateConfig::new()
        .threshold(threshold.unwrap_or(128))
        .context_takeover(takeover)
}

/// `GET /ws/echo`.
pub async fn echo(ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_MESSAGE)
        .deflate(deflate())
        .on_upgrade(|mut socket: WebSocket| async move {
            while let Some(Ok(message)) = socket.recv().await {
                // Data is echoed; tungstenite answers pings and the Close itself (sent by the
                // next read, which then ends the stream).
                let data = matches!(message, Message::Text(_) | Message::Binary(_));
                if data && socket.send(message).await.is_err() {
                    break;
                }
            }
        })
}

/// `GET /ws/feed?interval_ms=M`.
pub async fn feed(
    ws: WebSocketUpgrade,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    let interval = q
        .get("interval_ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or(500u64)
        .clamp(10, 60_000);
    ws.deflate(deflate()).on_upgrade(move |mut socket: WebSocket| async move {
        let mut ticker = tokio::time::interval(Duration::from_millis(interval));
        let mut page = 0u64;
        loop {
            tokio::select! {
                _ = ticker.tick() => {
                    let json = crate::routes::items_json(page * 10, 10);
                    page += 1;
                    let text = String::from_utf8(json).unwrap_or_default();
                    // A gzip client gets its feed as binary gzip members, as OpenIM sends.
                    let message = if socket.gzip() { Message::binary(text) } else { Message::text(text) };
                    if socket.send(message).await.is_err() {
                        break;
                    }
                }
                incoming = socket.recv() => match incoming {
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => {}
                },
            }
        }
    })
}

/// The WebSocket counters for `/stats`: bytes saved per coding, connections, refusals.
pub fn stats() -> Value {
    let s = tower_gzip::websocket::stats();
    let counts = |c: [tower_gzip::websocket::MessageCounts; 2]| {
        json!({
            "messages_in": c[0].messages, "messages_out": c[1].messages,
            "plain": c[0].plain_bytes + c[1].plain_bytes, "wire": c[0].wire_bytes + c[1].wire_bytes,
        })
    };
    json!({
        "deflate": counts(s.deflate), "gzip": counts(s.gzip), "identity": counts(s.identity),
        "with_takeover": s.connections_with_takeover,
        "without_takeover": s.connections_without_takeover,
        "refusals": s.refusals, "failures": s.failures,
        "parked_window_bytes": s.parked_window_bytes, "kept_compressors": s.kept_compressors,
    })
}
