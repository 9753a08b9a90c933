//! The client side of Autobahn's cases: drives an Autobahn fuzzing server (kosoku's
//! `fuzzingserver`, or the TestSuite's) through this crate's tokio-tungstenite client,
//! echoing every message as the cases ask, then has the server write its reports.
//!
//! `cargo run --release --example autobahn_client -- ws://127.0.0.1:9001`
//!
//! `WS_DEFLATE_THRESHOLD` sets the client's [`DeflateConfig::threshold`]; `WS_TAKEOVER=1`
//! lets the server keep context takeover.

use futures_util::{SinkExt, StreamExt};
use tower_gzip::websocket::{DeflateConfig, Error, connect_async};

const AGENT: &str = "tower-gzip";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "ws://127.0.0.1:9001".into());
    let deflate = deflate_from_env();
    let count: u32 = {
        let (mut ws, _) = connect_async(format!("{server}/getCaseCount"), &deflate, None).await?;
        let message = ws.next().await.ok_or("no case count")??;
        message.to_text()?.trim().parse()?
    };
    for case in 1..=count {
        let url = format!("{server}/runCase?case={case}&agent={AGENT}");
        // A case may end the connection any way it likes; its verdict is the server's.
        if let Err(error) = echo(&url, &deflate).await {
            eprintln!("case {case}: {error}");
        }
    }
    let url = format!("{server}/updateReports?agent={AGENT}");
    let (mut ws, _) = connect_async(url, &deflate, None).await?;
    ws.close(None).await.ok();
    println!("ran {count} cases");
    Ok(())
}

/// Echoes every data message until the server closes; tungstenite answers pings and the
/// close handshake on its own.
async fn echo(url: &str, deflate: &DeflateConfig) -> Result<(), Error> {
    let (mut ws, _) = connect_async(url, deflate, None).await?;
    while let Some(message) = ws.next().await {
        let message = message?;
        if message.is_text() || message.is_binary() {
            ws.send(message).await?;
        }
    }
    Ok(())
}

fn deflate_from_env() -> DeflateConfig {
    let mut deflate = DeflateConfig::new();
    if let Some(bytes) = std::env::var("WS_DEFLATE_THRESHOLD")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        deflate = deflate.threshold(bytes);
    }
    if std::env::var("WS_TAKEOVER").is_ok_and(|v| v == "1") {
        deflate = deflate.context_takeover(true);
    }
    deflate
}
