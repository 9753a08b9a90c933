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

/// The test routes: `/echo` (defaults: no takeover), `/takeover` (takeover, own budget),
/// `/w10` (takeover, windows of at most 10 bits), `/small` (messages up to 1 MiB),
/// `/pooled` (defaults, its own pool), `/budget` (takeover, a budget for one connection).
fn app() -> Router {
    let takeover = DeflateConfig::new()
        .context_takeover(true)
        .budget(WindowBudget::new(64 << 20));
    Router::new()
        .route("/echo", route(DeflateConfig::new(), 64 << 20))
        .route("/takeover", route(takeover.clone(), 64 << 20))
        .route("/w10", route(takeover.max_window_bits(10), 64 << 20))
        .route("/small", route(DeflateConfig::new(), 1 << 20))
        .route(
            "/pooled",
            route(DeflateConfig::new().pool(pool().clone()), 64 << 20),
        )
        .route("/budget", route(budgeted().clone(), 64 << 20))
}

/// The config of `/budget`: takeover with room for one connection's two 32 KiB windows.
fn budgeted() -> &'static DeflateConfig {
    static CONFIG: std::sync::OnceLock<DeflateConfig> = std::sync::OnceLock::new();
    CONFIG.get_or_init(|| {
        DeflateConfig::new()
            .context_takeover(true)
            .budget(WindowBudget::new(2 << 15))
    })
}

/// The pool of `/pooled`, which only that route uses.
fn pool() -> &'static tower_gzip::CodecPool {
    static POOL: std::sync::OnceLock<tower_gzip::CodecPool> = std::sync::OnceLock::new();
    POOL.get_or_init(tower_gzip::CodecPool::new)
}

/// The test server (axum::serve: HTTP/1.1).
async fn serve() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app()).await.unwrap() });
    addr
}

/// The test routes over HTTP/1.1 and HTTP/2 with extended CONNECT (RFC 8441) enabled.
#[cfg(feature = "http2")]
async fn serve_h2() -> SocketAddr {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto::Builder;
    use hyper_util::service::TowerToHyperService;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let service = TowerToHyperService::new(app());
            tokio::spawn(async move {
                let mut builder = Builder::new(TokioExecutor::new());
                builder.http2().enable_connect_protocol();
                let _ = builder
                    .serve_connection_with_upgrades(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// API JSON messages (the support crate's generated corpus: it needs no file beside the
/// repository), like the demo's feed.
fn corpus_messages(n: usize) -> Vec<String> {
    tower_gzip_support::corpus::bodies(n, 7)
        .into_iter()
        .map(|body| String::from_utf8(body).expect("the corpus is UTF-8"))
        .collect()
}
