//! permessage-deflate (RFC 7692) with axum and tokio-tungstenite: the crate's
//! `WebSocketUpgrade` in place of axum's, and a client that offers compression.
//!
//! `cargo run --example websocket`

use axum::{Router, response::Response, routing::any};
use futures_util::{SinkExt, StreamExt};
use tower_gzip::websocket::{DeflateConfig, Message, WebSocket, WebSocketUpgrade, connect_async};

/// The handler: axum's shape, with the crate's extractor.
async fn echo(ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(|mut socket: WebSocket| async move {
        println!("server: deflate {:?}", socket.deflate());
        while let Some(Ok(message)) = socket.recv().await {
            if (message.is_text() || message.is_binary()) && socket.send(message).await.is_err() {
                break;
            }
        }
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let app = Router::new().route("/ws", any(echo));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    // The client offers permessage-deflate; the default server answers it without
    // context takeover, so neither side keeps codec state between messages.
    let url = format!("ws://{addr}/ws");
    let (mut client, response) = connect_async(url, &DeflateConfig::default(), None).await?;
    println!(
        "answer: {:?}",
        response.headers().get("sec-websocket-extensions")
    );
    let json = r#"{"kind":"t3","data":{"title":"compressed on the wire"}} "#.repeat(50);
    client.send(Message::text(json.clone())).await?;
    let echoed = client.next().await.ok_or("closed")??;
    assert_eq!(echoed.to_text()?, json);
    let stats = tower_gzip::websocket::stats();
    println!(
        "sent {} bytes as {} on the wire",
        stats.deflate[1].plain_bytes, stats.deflate[1].wire_bytes
    );
    client.close(None).await?;
    Ok(())
}
