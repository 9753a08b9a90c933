//! A hyper-util client with `RequestCompressionLayer` and `DecompressionLayer`, talking to
//! the demo server (`cargo run --release --example server`).
//!
//! ```text
//! cargo run --example client                       # http://127.0.0.1:3000
//! cargo run --example client -- http://host:port   # or ADDR=host:port
//! ```
//!
//! It uploads a JSON document to `POST /api/echo` (sent gzip-compressed; the server echoes
//! the decoded body) and checks the echo, then fetches `GET /api/items?n=200`. For each it
//! prints the bytes on the wire and the bytes after decoding.
//!
//! Then dictionary transport (RFC 9842), with a [`ClientDictionaryStore`]: it loads `/`,
//! fetches the dictionary the page links (`Link: <url>; rel="compression-dictionary"`; a
//! demo that has not learned one yet gets 1,000 API requests first, as visitors would send:
//! from 127.0.0.2 to 127.0.0.8 to a demo on this machine, as the demo learns only from
//! several clients),
//! which the layer stores, and polls `GET /api/items?n=5&start=S` 100 times (starts the
//! dictionary never saw), once with the store and once without, printing the bytes
//! on the wire per request and per coding; then `/assets/app-v1.js` and `/assets/app-v2.js`
//! (v2 comes as a delta against v1). Every body decoded with a dictionary is checked against
//! the same body fetched without one. Exits non-zero on a mismatch or an error.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderMap, Request, Response, StatusCode, Uri};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tower::{ServiceBuilder, ServiceExt};
use tower_gzip::BoxError;
use tower_gzip::client::RequestCompressionLayer;
use tower_gzip::client::{ClientDictionaryStore, linked_dictionaries};
use tower_gzip::compression::CompressionBody;
use tower_gzip::decompression::DecompressionBody;
use tower_gzip::decompression::DecompressionLayer;

/// Counts the bytes of a body as they pass: under `RequestCompressionLayer` that is the
/// compressed upload, under `DecompressionLayer` the compressed response.
struct Counted<B> {
    inner: B,
    count: Arc<AtomicU64>,
}

impl<B: Body<Data = Bytes> + Unpin> Body for Counted<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let poll = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &poll {
            if let Some(data) = frame.data_ref() {
                self.count.fetch_add(data.len() as u64, Ordering::Relaxed);
            }
        }
        poll
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

fn base_url() -> Result<String, BoxError> {
    let url = match std::env::args().nth(1) {
        Some(url) => url,
        None => match std::env::var("ADDR") {
            Ok(addr) if addr.contains("://") => addr,
            Ok(addr) => format!("http://{addr}"),
            Err(_) => "http://127.0.0.1:3000".to_owned(),
        },
    };
    let url = url.trim_end_matches('/').to_owned();
    url.parse::<Uri>()?;
    Ok(url)
}

fn document() -> String {
    let items: Vec<_> = (0..500)
        .map(|i| {
            serde_json::json!({
                "id": i,
                "name": format!("item number {i}"),
                "tags": ["compressed", "request", "body"],
                "in_stock": i % 3 != 0,
            })
        })
        .collect();
    serde_json::json!({ "source": "examples/client.rs", "items": items }).to_string()
}

/// What the tap between the two layers saw of the last response: its coding on the wire
/// and its bytes before decoding.
#[derive(Clone, Default)]
struct Wire {
    bytes: Arc<AtomicU64>,
    coding: Arc<Mutex<String>>,
}

impl Wire {
    /// The last response's coding and wire bytes, resetting the count.
    fn take(&self) -> (String, u64) {
        let coding = std::mem::take(&mut *self.coding.lock().unwrap());
        (coding, self.bytes.swap(0, Ordering::Relaxed))
    }
}

type HttpClient = tower::util::BoxCloneService<
    Request<Full<Bytes>>,
    Response<DecompressionBody<Counted<hyper::body::Incoming>>>,
    BoxError,
>;

/// A hyper-util client under `DecompressionLayer` (with `dictionaries` if given) and
/// `RequestCompressionLayer`, tapped between the layers by `sent` and `received`.
fn client(
    dictionaries: Option<ClientDictionaryStore>,
    sent: Arc<AtomicU64>,
    received: Wire,
) -> HttpClient {
    let mut decompression = DecompressionLayer::new();
    if let Some(store) = dictionaries {
        decompression = decompression.dictionaries(store);
    }
    let http = Client::builder(TokioExecutor::new()).build_http();
    let svc = ServiceBuilder::new()
        .layer(decompression)
        // Between the two layers: the response before decoding...
        .map_response(move |response: Response<hyper::body::Incoming>| {
            let coding = response
                .headers()
                .get(CONTENT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("identity");
            *received.coding.lock().unwrap() = coding.to_owned();
            let count = received.bytes.clone();
            response.map(|inner| Counted { inner, count })
        })
        .layer(RequestCompressionLayer::new())
        // ...and the request after compression.
        .map_request(move |request: Request<CompressionBody<Full<Bytes>>>| {
            let count = sent.clone();
            request.map(|inner| Counted { inner, count })
        })
        .service(http)
        .map_err(BoxError::from);
    tower::util::BoxCloneService::new(svc)
}

async fn get(client: &HttpClient, url: &str) -> Result<(StatusCode, HeaderMap, Bytes), BoxError> {
    let request = Request::get(url).body(Full::new(Bytes::new()))?;
    let response = client.clone().oneshot(request).await?;
    let (parts, body) = response.into_parts();
    Ok((
        parts.status,
        parts.headers,
        body.collect().await?.to_bytes(),
    ))
}

async fn run() -> Result<bool, BoxError> {
    let base = base_url()?;
    let sent = Arc::new(AtomicU64::new(0));
    let received = Wire::default();
    let client = client(None, sent.clone(), received.clone());
    let mut ok = true;

    // 1. Upload a JSON document, compressed, and check the echo.
    let doc = document();
    let request = Request::post(format!("{base}/api/echo"))
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(doc.clone())))?;
    let response = client.clone().oneshot(request).await?;
    let status = response.status();
    let coding_note = response
        .headers()
        .get(CONTENT_ENCODING)
        .map(|v| format!(" (left encoded: {v:?})"))
        .unwrap_or_default();
    let echoed = response.into_body().collect().await?.to_bytes();
    println!(
        "POST /api/echo  {status}: sent {} bytes on the wire for {} bytes of JSON; \
         echo {} bytes on the wire, {} decoded{coding_note}",
        sent.swap(0, Ordering::Relaxed),
        doc.len(),
        received.take().1,
        echoed.len(),
    );
    if !status.is_success() || echoed != doc.as_bytes() {
        eprintln!("error: the echo does not match what was sent");
        ok = false;
    }

    // 2. Fetch a compressed listing.
    let (status, _, items) = get(&client, &format!("{base}/api/items?n=200")).await?;
    let (coding, wire) = received.take();
    println!(
        "GET /api/items  {status}: {wire} bytes on the wire ({coding}), {} decoded",
        items.len(),
    );
    match serde_json::from_slice::<serde_json::Value>(&items) {
        Ok(_) if status.is_success() => {}
        Ok(_) => {
            eprintln!("error: GET /api/items answered {status}");
            ok = false;
        }
        Err(err) => {
            eprintln!("error: GET /api/items is not JSON: {err}");
            ok = false;
        }
    }

    // 3. Dictionary transport.
    ok &= dictionaries(&base, &client, &received).await?;
    Ok(ok)
}

/// Polls of `/api/items?n=5&start=S`, with S from 10^8 up (the demo learns its dictionary
/// from what visitors ask for; [`visit`] asks for starts below 10^5).
const POLLS: u64 = 100;

/// 1,000 API requests (the demo learns its API dictionary from its responses), then `/`'s
/// headers once it links a dictionary (or after 10 s). To a demo on this machine they come
/// from seven loopback addresses in turn: its learner publishes only what 3 distinct
/// clients (peer addresses) or more were sent.
async fn visit(base: &str, plain: &HttpClient) -> Result<HeaderMap, BoxError> {
    println!("  GET / links no dictionary yet: 1,000 API requests, for the demo to learn one");
    let local = base.starts_with("http://127.") || base.starts_with("http://localhost");
    let visitors: Vec<_> = (2..=8u8)
        .map(|last| {
            let mut connector = HttpConnector::new();
            connector.set_local_address(Some(std::net::Ipv4Addr::new(127, 0, 0, last).into()));
            Client::builder(TokioExecutor::new()).build::<_, Full<Bytes>>(connector)
        })
        .collect();
    for k in 0..1000u64 {
        let path = format!(
            "{base}/api/items?n={}&start={}",
            1 + k % 6,
            k * 7919 % 100_000
        );
        if !local {
            get(plain, &path).await?;
            continue;
        }
        let visitor = &visitors[(k % 7) as usize];
        let response = visitor.get(path.parse()?).await?;
        response.into_body().collect().await?;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_, headers, _) = get(plain, &format!("{base}/")).await?;
        if !linked_dictionaries(&headers).is_empty() || std::time::Instant::now() > deadline {
            return Ok(headers);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The client with a dictionary store and the plain one, each with its wire counter.
struct Sides<'a> {
    base: &'a str,
    client: HttpClient,
    wire: Wire,
    plain: &'a HttpClient,
    plain_wire: &'a Wire,
}

impl Sides<'_> {
    /// GETs `url` with the store and without: (status, decoded body, coding, wire bytes) of
    /// the first, (coding, wire bytes) of the second, and whether both decoded the same.
    async fn both(&self, url: &str) -> Result<(Fetched, (String, u64), bool), BoxError> {
        let (status, _, body) = get(&self.client, url).await?;
        let (coding, bytes) = self.wire.take();
        let (_, _, reference) = get(self.plain, url).await?;
        let plain = self.plain_wire.take();
        let same = body == reference;
        if !same {
            eprintln!("error: {url} decoded with the dictionary differs from the plain body");
        }
        Ok(((status, body, coding, bytes), plain, same))
    }
}

/// A response as the client with the store saw it: status, decoded body, coding, wire bytes.
type Fetched = (StatusCode, Bytes, String, u64);

/// Learns the demo's dictionaries and shows what they save. `plain` is a client without a
/// store, for the same requests without dictionaries.
async fn dictionaries(base: &str, plain: &HttpClient, plain_wire: &Wire) -> Result<bool, BoxError> {
    let store = ClientDictionaryStore::new();
    let wire = Wire::default();
    let client = client(
        Some(store.clone()),
        Arc::new(AtomicU64::new(0)),
        wire.clone(),
    );
    let sides = Sides {
        base,
        client,
        wire,
        plain,
        plain_wire,
    };
    println!();
    println!("Dictionary transport (RFC 9842), with a ClientDictionaryStore:");
    if !fetch_linked(&sides, &store).await? {
        println!("  GET / links no dictionary: the server does not offer dictionary compression");
        return Ok(true);
    }
    let polled = poll_items(&sides).await?;
    let deltas = script_deltas(&sides).await?;
    let stats = store.stats();
    println!(
        "  store: {} dictionaries, {} bytes; {} requests offered one",
        store.stats().entries,
        store.stats().bytes,
        stats.offered
    );
    Ok(polled && deltas)
}

/// Fetches the dictionaries the page links (visiting the API first if it links none yet);
/// false if it links none even then.
async fn fetch_linked(sides: &Sides<'_>, store: &ClientDictionaryStore) -> Result<bool, BoxError> {
    let base = sides.base;
    let (_, mut page_headers, _) = get(&sides.client, &format!("{base}/")).await?;
    if linked_dictionaries(&page_headers).is_empty() {
        page_headers = visit(base, sides.plain).await?;
        sides.plain_wire.take();
    }
    sides.wire.take();
    let linked = linked_dictionaries(&page_headers);
    for path in &linked {
        let (status, _, body) = get(&sides.client, &format!("{base}{path}")).await?;
        let (coding, bytes) = sides.wire.take();
        println!(
            "  GET {path}  {status}: {bytes} bytes on the wire ({coding}), {} decoded; stored: {} dictionary ({} bytes)",
            body.len(),
            store.stats().entries,
            store.stats().bytes
        );
    }
    Ok(!linked.is_empty())
}

/// Bytes on the wire per coding: (responses, bytes).
type PerCoding = BTreeMap<String, (u64, u64)>;

/// POLLS API responses with the store and without; true if every body decoded the same.
async fn poll_items(sides: &Sides<'_>) -> Result<bool, BoxError> {
    let (mut with, mut without) = (PerCoding::new(), PerCoding::new());
    let mut ok = true;
    for poll in 0..POLLS {
        let start = 100_000_000 + poll * 7_919_333;
        let url = format!("{}/api/items?n=5&start={start}", sides.base);
        let ((_, body, coding, bytes), (plain_coding, plain_bytes), same) =
            sides.both(&url).await?;
        ok &= same;
        if poll < 5 {
            println!(
                "  GET /api/items?n=5&start={start}: {bytes:>4} bytes ({coding}); without the store {plain_bytes:>4} bytes ({plain_coding}); {} decoded",
                body.len()
            );
        }
        let entry = with.entry(coding).or_default();
        *entry = (entry.0 + 1, entry.1 + bytes);
        let entry = without.entry(plain_coding).or_default();
        *entry = (entry.0 + 1, entry.1 + plain_bytes);
    }
    print_totals(&with, &without);
    Ok(ok)
}

fn print_totals(with: &PerCoding, without: &PerCoding) {
    println!("  ... {POLLS} polls in all, bytes on the wire per coding:");
    for (label, map) in [("with the store", with), ("without", without)] {
        let list: Vec<String> = map
            .iter()
            .map(|(coding, (n, bytes))| format!("{coding}: {n} responses, {bytes} bytes"))
            .collect();
        println!("    {label:<15} {}", list.join("; "));
    }
    let total = |map: &PerCoding| map.values().map(|(_, bytes)| bytes).sum::<u64>();
    let (with_bytes, without_bytes) = (total(with), total(without));
    println!(
        "    with the store: {with_bytes} bytes, {:.2}x of {without_bytes} without",
        with_bytes as f64 / without_bytes.max(1) as f64
    );
}

/// A new version of a script, as a delta against the old one; true if both decoded the same.
async fn script_deltas(sides: &Sides<'_>) -> Result<bool, BoxError> {
    let mut ok = true;
    for path in ["/assets/app-v1.js", "/assets/app-v2.js"] {
        let url = format!("{}{path}", sides.base);
        let ((status, body, coding, bytes), (plain_coding, plain_bytes), same) =
            sides.both(&url).await?;
        println!(
            "  GET {path}  {status}: {bytes} bytes on the wire ({coding}); without the store {plain_bytes} ({plain_coding}); {} decoded",
            body.len()
        );
        ok &= same;
    }
    Ok(ok)
}

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
