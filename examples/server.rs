//! The tower-gzip demo server.
//!
//! ```text
//! cargo run --release --example server                          # our layers, on 127.0.0.1:3000
//! ADDR=127.0.0.1:0 cargo run --release --example server         # any free port
//! cargo run --release --example server -- --baseline tower-http # tower-http's layers, same routes
//! ```
//!
//! The first line on stdout is `listening on http://IP:PORT`; logs go to stderr
//! (`RUST_LOG`, default `info`). Open `/` in a browser for live stats.
//!
//! Layers, outermost first (all wired in [`app`]):
//!
//! 1. `log_requests`: logs each request and counts bytes on the wire (request bodies as
//!    received, response bodies after compression).
//! 2. Response compression, for every route: our `CompressionLayer` (level 6, global pool,
//!    every coding compiled in: zstd > br > gzip > deflate on ties), or tower-http's at the
//!    same level and with the same codings with `--baseline tower-http`.
//! 3. Request decompression, on `POST /api/echo` only: it is the one route that reads a body.
//!
//! The rest lives in `examples/demo/`: the handlers (`routes.rs`), `/stats` (`stats.rs`), the
//! counting bodies and request log (`bodies.rs`), the PNG (`png.rs`) and the page
//! (`index.html`); the allocation counter is the tests' (`tests/common/alloc.rs`).

#[path = "../tests/common/alloc.rs"]
mod alloc;
#[path = "demo/bodies.rs"]
mod bodies;
#[path = "demo/png.rs"]
mod png;
#[path = "demo/routes.rs"]
mod routes;
#[path = "demo/stats.rs"]
mod stats;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::response::Html;
use axum::routing::{MethodRouter, get, post};
use tokio::sync::watch;
use tower_gzip::CompressionLevel;
use tower_gzip::compression::{CompressionLayer, CompressionStats};
use tracing::{info, warn};

use bodies::WireStats;

const INDEX_HTML: &str = include_str!("demo/index.html");
const MAX_ECHO: usize = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    TowerGzip,
    TowerHttp,
}

#[derive(Clone)]
struct AppState {
    mode: Mode,
    /// Our layer's counters; `None` with `--baseline tower-http`, which has none.
    compression: Option<CompressionStats>,
    wire: Arc<WireStats>,
    png: Bytes,
    /// Turns `true` on Ctrl-C, so that long event streams end and shutdown can finish.
    shutdown: watch::Receiver<bool>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mode = parse_args();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();

    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let app = app(mode, shutdown_rx.clone());

    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let local = listener.local_addr()?;
    // The first stdout line, read by tests and scripts to find the port.
    println!("listening on http://{local}");
    std::io::stdout().flush()?;
    info!(%local, ?mode, "listening");

    let mut stop = shutdown_rx;
    let mut server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|&stop| stop).await;
            })
            .await
    });
    tokio::select! {
        result = &mut server => return Ok(result??),
        _ = tokio::signal::ctrl_c() => info!("Ctrl-C: shutting down"),
    }
    shutdown_tx.send_replace(true);
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(result) => result??,
        Err(_) => warn!("connections still open after 5 s; exiting anyway"),
    }
    Ok(())
}

fn parse_args() -> Mode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        [] => Mode::TowerGzip,
        ["--baseline", "tower-http"] | ["--baseline=tower-http"] => Mode::TowerHttp,
        _ => {
            eprintln!("usage: server [--baseline tower-http]   (env: ADDR, RUST_LOG)");
            std::process::exit(2);
        }
    }
}

/// The router, with the layers of `mode` (see the module docs for their order).
fn app(mode: Mode, shutdown: watch::Receiver<bool>) -> Router {
    let ours = CompressionLayer::new().quality(CompressionLevel::Default);
    let state = AppState {
        mode,
        compression: (mode == Mode::TowerGzip).then(|| ours.stats()),
        wire: Arc::default(),
        png: png::png(),
        shutdown,
    };
    // tower-http speaks the codings this build of tower-gzip speaks, no more.
    let (zstd, br) = (cfg!(feature = "zstd"), cfg!(feature = "br"));

    let echo: MethodRouter<AppState> = match mode {
        // Request bodies are decompressed (with the default size and ratio limits) only
        // where a handler reads them.
        Mode::TowerGzip => post(routes::echo)
            .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(MAX_ECHO))
            .layer(tower_gzip::decompression::RequestDecompressionLayer::new()),
        Mode::TowerHttp => post(routes::echo)
            .layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(MAX_ECHO))
            .layer(
                tower_http::decompression::RequestDecompressionLayer::new()
                    .zstd(zstd)
                    .br(br),
            ),
    };

    let router = Router::new()
        .route("/", get(|| async { Html(INDEX_HTML) }))
        .route("/api/items", get(routes::items))
        .route("/events", get(routes::events))
        .route("/big.txt", get(routes::big_txt))
        .route("/image.png", get(routes::image_png))
        .route("/stats", get(stats::stats))
        .route("/api/echo", echo)
        .with_state(state.clone());

    let router = match mode {
        Mode::TowerGzip => router.layer(ours),
        Mode::TowerHttp => router.layer(
            tower_http::compression::CompressionLayer::new()
                .quality(tower_http::CompressionLevel::Default)
                .zstd(zstd)
                .br(br),
        ),
    };
    router.layer(middleware::from_fn_with_state(
        state.wire,
        bodies::log_requests,
    ))
}
