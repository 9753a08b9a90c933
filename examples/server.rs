//! The tower-gzip demo server.
//!
//! ```text
//! cargo run --release --example server        # our layers, on 127.0.0.1:3000
//! ADDR=127.0.0.1:0 cargo run --release --example server   # any free port
//! cargo run --release --example server -- --baseline tower-http  # tower-http's layers
//! cargo run --release --example server -- --prefer dcb,br  # dcb first for dictionaries, br for the rest
//! cargo run --release --example server -- --dictionary api.dict  # serve a dictionary built before
//! cargo run --release --example server -- --dictionary-dir dicts  # learn, shared with other instances
//! ```
//!
//! It serves the layer's metrics at `/metrics` (Prometheus text), and a static folder at
//! `/static/` through tower-http's `ServeDir` (`--static DIR`, or a folder it makes with the
//! page's script and a catalogue of items: `/static/catalogue.json`).
//!
//! Flags (our layers only but `--static`; `--baseline tower-http` takes none of the others
//! and has no dictionaries nor cache):
//!
//! - `--cache BYTES` (default `64MiB`; `KiB`, `MiB`, `GiB`): the cache of compressed
//!   representations: a body compressed before is served again from it, files under
//!   `/static/` by their `ETag`, and hot entries are recompressed at the densest level in
//!   the background (`/stats` shows it under `cache`). `--no-cache` turns it off.
//! - `--prefer LIST`: codings most preferred first when the client's q-values tie,
//!   comma-separated: `zstd`, `br`, `gzip`, `deflate` order the plain codings (unlisted ones
//!   follow in the default order zstd, br, gzip, deflate), `dcz`, `dcb` the dictionary codings
//!   (default dcz, then dcb). A dictionary coding, when the request can have one, wins over
//!   the plain ones.
//! - `--level CODING=N[,CODING=N...]`: a level per coding (`--level br=9,zstd=12`), the
//!   others at their defaults.
//! - `--adaptive`: a load governor steps the levels down while compression takes over half
//!   the cores, and back up when the load falls (`/stats` shows it under `governor`).
//! - `--learn` (the default without `--dictionary`): learns the API dictionary from the
//!   responses of `/api/items` and keeps it current (`POST /api/schema?v=1` changes the
//!   items' shape, so a new one is learned). `--dictionary-dir DIR` shares the learned
//!   dictionaries with every instance started with the same directory, listed every
//!   `--dictionary-poll SECS` (default 10). `--no-learn` turns learning off.
//! - `--dictionary FILE`: the API dictionary, a file built at deploy time (`tower-gzip-dictionary
//!   build`, from `cargo install --path cli`), served at `/dictionary`, instead of learning one.
//!
//! The first line on stdout is `listening on http://IP:PORT`; logs go to stderr
//! (`RUST_LOG`, default `info`; `RUST_LOG=info,tower_gzip::compression=debug` adds an event
//! per response: the coding and its bytes, or why none). Open `/` in a browser for live
//! stats; `/metrics` has the layer's metrics in Prometheus text format.
//!
//! Layers, outermost first (all wired in [`app`]):
//!
//! 1. `log_requests`: logs each request and counts bytes on the wire (request bodies as
//!    received, response bodies after compression).
//! 2. Response compression, for every route: our `CompressionLayer` (level 6, global pool,
//!    every coding compiled in: zstd > br > gzip > deflate on ties, the cache), or tower-http's at the
//!    same level and with the same codings with `--baseline tower-http`.
//! 3. Request decompression, on `POST /api/echo` only: it is the one route that reads a body.
//! 4. `UseAsDictionaryLayer` on `/assets/app-v1.js` and `/assets/app-v2.js` (match
//!    `/assets/app-v*.js`): each version is marked `Use-As-Dictionary` and kept by its hash,
//!    so that a browser holding v1 gets v2 as a delta. Inside the compression layer, so it
//!    keeps the bytes the browser hashes.
//! 5. The dictionary learner's layer (`--learn`): samples `/api/items` responses, serves the
//!    learned dictionaries at `/.well-known/dictionaries/<sha-256>` and announces the
//!    current one on the API's responses. Inside the compression layer, for the same reason.
//!
//! Compression Dictionary Transport (RFC 9842, ours only): the API dictionary (match
//! `/api/items*`), learned from `/api/items` responses (5. below) or loaded from a file, is
//! announced on `GET /` (and, learned, on the API's responses) with `Link: <url>;
//! rel="compression-dictionary"`. A request naming it in `Available-Dictionary` and offering
//! `dcz` or `dcb` gets its response compressed against it.
//!
//! The rest lives in `examples/demo/`: the list-valued flags (`args.rs`), the cache and
//! the static folder (`cache.rs`), the handlers (`routes.rs`), `/stats` (`stats.rs`),
//! `/metrics` (`metrics.rs`), the
//! counting bodies and request log (`bodies.rs`), the API dictionary (`dictionary.rs`), the
//! versioned script (`assets.rs`, `app.js`), the PNG (`png.rs`) and the page (`index.html`); the allocation counter is the tests' (the support crate's `alloc`).

use tower_gzip_support::alloc;
tower_gzip_support::count_allocations!();
#[path = "demo/args.rs"]
mod args;
#[path = "demo/assets.rs"]
mod assets;
#[path = "demo/bodies.rs"]
mod bodies;
#[path = "demo/cache.rs"]
mod cache;
#[path = "demo/dictionary.rs"]
mod dictionary;
#[cfg(feature = "metrics")]
#[path = "demo/metrics.rs"]
mod metrics;
#[path = "demo/png.rs"]
mod png;
#[path = "demo/routes.rs"]
mod routes;
#[path = "demo/stats.rs"]
mod stats;
// WebSocket routes (permessage-deflate and OpenIM-style gzip), with the `websocket` feature.
#[cfg(feature = "websocket")]
#[path = "demo/websocket.rs"]
mod websocket;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::middleware;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use tokio::sync::watch;
use tower::ServiceBuilder;
use tower_gzip::CompressionLevel;
use tower_gzip::ContentCoding;
use tower_gzip::cache::VariantCache;
use tower_gzip::compression::{CompressionLayer, CompressionStats, Governor};
use tower_gzip::dictionary::UseAsDictionary;
use tower_gzip::dictionary::learn::Learner;
use tower_gzip::dictionary::{
    Dictionary, DictionaryService, DictionaryStore, UseAsDictionaryLayer, link_header,
};
use tracing::{info, warn};

use bodies::WireStats;

const INDEX_HTML: &str = include_str!("demo/index.html");
const MAX_ECHO: usize = 64 << 20;
/// The dictionaries the server keeps: the API's, and the versions of the script.
const STORE_BYTES: usize = 8 << 20;
/// The dictionary codings this build makes, in the default order.
/// The dictionary codings compiled in.
fn dict_codings() -> impl Iterator<Item = ContentCoding> {
    ContentCoding::ALL
        .iter()
        .copied()
        .filter(|c| c.needs_dictionary())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    TowerGzip,
    TowerHttp,
}

/// The command line.
#[derive(Clone, Debug)]
struct Config {
    mode: Mode,
    /// `--prefer`: the plain codings, then the dictionary codings, in order of preference.
    prefer: Vec<ContentCoding>,
    dict_codings: Vec<ContentCoding>,
    dictionary: Option<PathBuf>,
    /// `--learn` / `--no-learn`; unset, the API dictionary is learned unless
    /// `--dictionary FILE` gives one.
    learn: Option<bool>,
    dictionary_dir: Option<PathBuf>,
    dictionary_poll: Option<Duration>,
    /// `--level`: a level for some codings, the others at their defaults.
    levels: Vec<(ContentCoding, i32)>,
    /// `--adaptive`: a load governor steps the levels down under load.
    adaptive: bool,
    /// `--cache BYTES` (64 MiB unless `--no-cache`): the cache of compressed representations.
    cache: Option<u64>,
    /// `--static DIR`: the folder `/static/` serves (a made one by default).
    static_dir: Option<PathBuf>,
}

/// Dictionary transport, ours only.
#[derive(Clone)]
struct Dictionaries {
    store: DictionaryStore,
    /// The API dictionary from `--dictionary FILE`, served at `/dictionary`.
    api: Option<Dictionary>,
    /// Learning the API dictionary (`--learn`); `None` in a build without `dcz`.
    learner: Option<Learner>,
    /// The dictionary codings made, most preferred first.
    codings: Vec<ContentCoding>,
    /// The plain codings, most preferred first.
    prefer: Vec<ContentCoding>,
}

#[derive(Clone)]
struct AppState {
    mode: Mode,
    /// Our layer's counters; `None` with `--baseline tower-http`, which has none.
    compression: Option<CompressionStats>,
    /// The load governor, with `--adaptive`.
    governor: Option<Governor>,
    /// Our cache and its budget; `None` with `--no-cache` or `--baseline tower-http`.
    cache: Option<(VariantCache, u64)>,
    /// `None` with `--baseline tower-http`.
    dictionaries: Option<Dictionaries>,
    wire: Arc<WireStats>,
    /// Renders `/metrics` (with the crate's `metrics` feature).
    #[cfg(feature = "metrics")]
    metrics: metrics_exporter_prometheus::PrometheusHandle,
    png: Bytes,
    /// Turns `true` on Ctrl-C, so that long event streams end and shutdown can finish.
    shutdown: watch::Receiver<bool>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = parse_args();
    let mode = config.mode;
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();

    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let app = app(&config, shutdown_rx.clone())?;

    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".to_owned());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let local = listener.local_addr()?;
    // The first stdout line, read by tests and scripts to find the port.
    println!("listening on http://{local}");
    std::io::stdout().flush()?;
    info!(%local, ?mode, "listening");

    let mut stop = shutdown_rx;
    let mut server = tokio::spawn(async move {
        // Each request carries its peer's address (`ConnectInfo`): the learner counts the
        // distinct clients a dictionary's content comes from.
        let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
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

const USAGE: &str = "usage: server [--baseline tower-http] [--prefer LIST] \
    [--level CODING=N[,CODING=N...]] [--adaptive] [--cache BYTES] [--no-cache] \
    [--static DIR] [--dictionary FILE] [--learn] \
    [--no-learn] [--dictionary-dir DIR] [--dictionary-poll SECS] \
    (env: ADDR, RUST_LOG)\n\
    LIST: comma-separated codings, most preferred first: zstd, br, gzip, deflate, dcz, dcb";

fn usage(why: &str) -> ! {
    eprintln!("server: {why}\n{USAGE}");
    std::process::exit(2);
}

fn parse_args() -> Config {
    let mut config = Config {
        mode: Mode::TowerGzip,
        prefer: Vec::new(),
        dict_codings: dict_codings().collect(),
        dictionary: None,
        learn: None,
        dictionary_dir: None,
        dictionary_poll: None,
        levels: Vec::new(),
        adaptive: false,
        cache: Some(cache::DEFAULT_BUDGET),
        static_dir: None,
    };
    let mut ours_only = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = split_flag(&arg);
        if matches!(flag.as_str(), "-h" | "--help") {
            println!("{USAGE}");
            std::process::exit(0);
        }
        if inline.is_none() && switch(&mut config, &flag) {
            ours_only.push(flag);
            continue;
        }
        if !VALUED_FLAGS.contains(&flag.as_str()) {
            usage(&format!("unknown argument {arg:?}"));
        }
        let Some(value) = inline.or_else(|| args.next()) else {
            usage(&format!("{flag} needs a value"));
        };
        set_value(&mut config, &flag, value);
        if !["--baseline", "--static"].contains(&flag.as_str()) {
            ours_only.push(flag);
        }
    }
    if config.mode == Mode::TowerHttp && !ours_only.is_empty() {
        usage(&format!(
            "{} apply to our layers only, not to --baseline tower-http",
            ours_only.join(", ")
        ));
    }
    config
}

/// The flags that take a value (`--flag value` or `--flag=value`).
const VALUED_FLAGS: [&str; 8] = [
    "--baseline",
    "--cache",
    "--static",
    "--prefer",
    "--level",
    "--dictionary",
    "--dictionary-dir",
    "--dictionary-poll",
];

/// `--flag=value` as the flag and its value; anything else as itself, without one.
fn split_flag(arg: &str) -> (String, Option<String>) {
    match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.to_owned())),
        _ => (arg.to_owned(), None),
    }
}

/// Sets the switch `flag` names (`--adaptive`, `--learn`, `--no-learn`, `--no-cache`); false
/// for any other.
fn switch(config: &mut Config, flag: &str) -> bool {
    match flag {
        "--adaptive" => config.adaptive = true,
        "--learn" => config.learn = Some(true),
        "--no-learn" => config.learn = Some(false),
        "--no-cache" => config.cache = None,
        _ => return false,
    }
    true
}

/// Sets what one of [`VALUED_FLAGS`] says; exits with the usage on a bad value.
fn set_value(config: &mut Config, flag: &str, value: String) {
    match flag {
        "--baseline" if value == "tower-http" => config.mode = Mode::TowerHttp,
        "--baseline" => usage(&format!("unknown baseline {value:?} (only tower-http)")),
        "--prefer" => {
            let (plain, dict) = args::parse_prefer(&value).unwrap_or_else(|e| usage(&e));
            config.prefer = plain;
            // The listed ones first, then the others in the default order.
            let rest = dict_codings().filter(|c| !dict.contains(c));
            config.dict_codings = dict.iter().copied().chain(rest).collect();
        }
        "--level" => config.levels = args::parse_levels(&value).unwrap_or_else(|e| usage(&e)),
        "--cache" => config.cache = Some(cache::parse_bytes(&value).unwrap_or_else(|e| usage(&e))),
        "--static" => config.static_dir = Some(value.into()),
        "--dictionary" => config.dictionary = Some(value.into()),
        "--dictionary-dir" => config.dictionary_dir = Some(value.into()),
        "--dictionary-poll" => {
            let secs: f64 = value
                .parse()
                .unwrap_or_else(|_| usage("--dictionary-poll: seconds"));
            config.dictionary_poll = Some(Duration::from_secs_f64(secs.clamp(0.01, 3600.0)));
        }
        _ => usage(&format!("unknown argument {flag:?}")),
    }
}

impl Dictionaries {
    /// The API dictionary announced now and where it is served: the learned one, else the
    /// file's at `/dictionary`; `None` before anything is learned.
    fn announced(&self) -> Option<(Dictionary, String)> {
        let learned = self.learner.as_ref().and_then(|l| {
            let current = l.stats().into_iter().next()?.current?;
            Some((self.store.get(&current.hash)?, current.url))
        });
        learned.or_else(|| Some((self.api.clone()?, dictionary::URL.to_owned())))
    }
}

/// `GET /`: the page; with dictionaries, it announces the API dictionary (a `Link` header,
/// and a `<link>` element for browsers that look there).
async fn index(axum::extract::State(state): axum::extract::State<AppState>) -> Response {
    let Some((_, url)) = state
        .dictionaries
        .as_ref()
        .and_then(Dictionaries::announced)
    else {
        return Html(INDEX_HTML).into_response();
    };
    let link = link_header(&url).expect("a plain path");
    let tag = format!(r#"<link rel="compression-dictionary" href="{url}">"#);
    let html = INDEX_HTML.replacen("<!--dictionary-link-->", &tag, 1);
    ([(header::LINK, link)], Html(html)).into_response()
}

/// Dictionary transport (ours only): the store, a dictionary file, the learner.
fn dictionaries(config: &Config) -> Result<Option<Dictionaries>, Box<dyn std::error::Error>> {
    if config.mode == Mode::TowerHttp {
        return Ok(None);
    }
    let store = DictionaryStore::new(STORE_BYTES);
    let api = config
        .dictionary
        .as_deref()
        .map(dictionary::load)
        .transpose()?;
    if let Some(api) = &api {
        store.insert(api.clone());
    }
    let learner = match config.learn.unwrap_or(config.dictionary.is_none()) {
        true => Some(dictionary::learner(
            &store,
            config.dictionary_dir.as_deref(),
            config.dictionary_poll,
        )?),
        false => None,
    };
    let rest = ContentCoding::PLAIN
        .iter()
        .filter(|f| !config.prefer.contains(f));
    Ok(Some(Dictionaries {
        store,
        api,
        learner,
        codings: config.dict_codings.clone(),
        prefer: config.prefer.iter().chain(rest).copied().collect(),
    }))
}

/// Our compression layer, as the command line configures it.
fn our_layer(
    config: &Config,
    dictionaries: Option<&Dictionaries>,
    governor: Option<&Governor>,
    cache: Option<&VariantCache>,
) -> CompressionLayer {
    let mut ours = CompressionLayer::new().quality(CompressionLevel::Default);
    if let Some(cache) = cache {
        ours = ours.cache(cache.clone());
    }
    for &(coding, level) in &config.levels {
        ours = ours.level(coding, CompressionLevel::Precise(level));
    }
    if let Some(governor) = governor {
        ours = ours.adaptive(governor.clone());
    }
    if let Some(d) = dictionaries {
        ours = ours
            .prefer(&d.prefer)
            .dictionaries(d.store.clone())
            .dictionary_codings(&d.codings);
    }
    ours
}

/// The router, with the layers of `mode` (see the module docs for their order).
fn app(
    config: &Config,
    shutdown: watch::Receiver<bool>,
) -> Result<Router, Box<dyn std::error::Error>> {
    #[cfg(feature = "metrics")]
    let metrics = metrics::install()?;
    let mode = config.mode;
    let dictionaries = dictionaries(config)?;
    let governor = config.adaptive.then(Governor::new);
    let cache = (config.cache)
        .filter(|_| mode == Mode::TowerGzip)
        .map(|budget| (cache::build(budget, governor.as_ref()), budget));
    let ours_cache = cache.as_ref().map(|(cache, _)| cache);
    let ours = our_layer(config, dictionaries.as_ref(), governor.as_ref(), ours_cache);
    #[cfg(feature = "metrics")]
    if mode == Mode::TowerGzip {
        ours.publish_metrics();
    }
    let state = AppState {
        mode,
        compression: (mode == Mode::TowerGzip).then(|| ours.stats()),
        governor,
        cache,
        dictionaries: dictionaries.clone(),
        wire: Arc::default(),
        #[cfg(feature = "metrics")]
        metrics,
        png: png::png(),
        shutdown,
    };
    let static_dir = cache::static_dir(config.static_dir.clone())?;
    let router = routes(mode, dictionaries.as_ref(), &static_dir)?.with_state(state.clone());
    let learner = dictionaries.as_ref().and_then(|d| d.learner.as_ref());
    let router = compress(router, mode, ours, learner);
    Ok(router.layer(middleware::from_fn_with_state(
        state.wire,
        bodies::log_requests,
    )))
}

/// tower-http speaks the codings this build of tower-gzip speaks, no more: (zstd, br).
const BASELINE_CODINGS: (bool, bool) = (cfg!(feature = "zstd"), cfg!(feature = "br"));

/// `/api/echo`: request bodies are decompressed (with the default size and ratio limits)
/// only where a handler reads them.
fn echo_route(mode: Mode) -> MethodRouter<AppState> {
    let (zstd, br) = BASELINE_CODINGS;
    let limited =
        post(routes::echo).layer::<_, std::convert::Infallible>(DefaultBodyLimit::max(MAX_ECHO));
    match mode {
        Mode::TowerGzip => {
            limited.layer(tower_gzip::decompression::RequestDecompressionLayer::new())
        }
        Mode::TowerHttp => limited.layer(
            tower_http::decompression::RequestDecompressionLayer::new()
                .zstd(zstd)
                .br(br),
        ),
    }
}

/// The script's versions: marked and remembered as dictionaries for the next one (ours).
fn script_routes(
    dictionaries: Option<&Dictionaries>,
) -> Result<(MethodRouter<AppState>, MethodRouter<AppState>), Box<dyn std::error::Error>> {
    let (mut app_v1, mut app_v2): (MethodRouter<AppState>, MethodRouter<AppState>) =
        (get(assets::app_v1_js), get(assets::app_v2_js));
    if let Some(d) = dictionaries {
        let versions =
            UseAsDictionaryLayer::new(UseAsDictionary::new("/assets/app-v*.js"), d.store.clone())?;
        app_v1 = app_v1.layer(versions.clone());
        app_v2 = app_v2.layer(versions);
    }
    Ok((app_v1, app_v2))
}

/// Every route of the demo, before its state and layers.
fn routes(
    mode: Mode,
    dictionaries: Option<&Dictionaries>,
    static_dir: &std::path::Path,
) -> Result<Router<AppState>, Box<dyn std::error::Error>> {
    let (app_v1, app_v2) = script_routes(dictionaries)?;
    let mut router = Router::new()
        .route("/", get(index))
        .route("/api/items", get(routes::items))
        .route("/api/schema", post(routes::set_schema))
        .route("/assets/app-v1.js", app_v1)
        .route("/assets/app-v2.js", app_v2)
        .route("/events", get(routes::events))
        .route("/big.txt", get(routes::big_txt))
        .route("/image.png", get(routes::image_png))
        .route("/stats", get(stats::stats))
        .route("/api/echo", echo_route(mode))
        .nest_service("/static", tower_http::services::ServeDir::new(static_dir));
    if let Some(api) = dictionaries.and_then(|d| d.api.clone()) {
        router = router.route_service(dictionary::URL, DictionaryService::new(api));
    }
    #[cfg(feature = "metrics")]
    let router = router.route("/metrics", get(metrics::metrics));
    #[cfg(feature = "websocket")]
    let router = router
        .route("/ws/echo", axum::routing::any(websocket::echo))
        .route("/ws/feed", axum::routing::any(websocket::feed));
    Ok(router)
}

/// The compression layer around every route: ours (with the learner, if any) or tower-http's.
/// One `Router::layer` for the learner and the compression layer: axum clones (and boxes) a
/// route's service on every request, once a `layer` call.
fn compress(
    router: Router,
    mode: Mode,
    ours: CompressionLayer,
    learner: Option<&Learner>,
) -> Router {
    let (zstd, br) = BASELINE_CODINGS;
    match (mode, learner) {
        (Mode::TowerGzip, Some(learner)) => {
            router.layer(ServiceBuilder::new().layer(ours).layer(learner.layer()))
        }
        (Mode::TowerGzip, None) => router.layer(ours),
        (Mode::TowerHttp, _) => router.layer(
            tower_http::compression::CompressionLayer::new()
                .quality(tower_http::CompressionLevel::Default)
                .zstd(zstd)
                .br(br),
        ),
    }
}
