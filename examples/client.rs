//! A hyper-util client with `RequestCompressionLayer` and `DecompressionLayer`, talking to
//! the demo server (`cargo run --example server`).
//!
//! ```text
//! cargo run --example client                       # http://127.0.0.1:3000
//! cargo run --example client -- http://host:port   # or ADDR=host:port
//! ```
//!
//! It uploads a JSON document to `POST /api/echo` (sent gzip-compressed; the server echoes
//! the decoded body) and checks the echo, then fetches `GET /api/items?n=200`. For each it
//! prints the bytes on the wire and the bytes after decoding. Exits non-zero on a mismatch
//! or an error.

use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use http::{Request, Response, Uri};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tower::{ServiceBuilder, ServiceExt};
use tower_gzip::BoxError;
use tower_gzip::client::{DecompressionLayer, RequestCompressionLayer};
use tower_gzip::compression::CompressionBody;

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

async fn run() -> Result<bool, BoxError> {
    let base = base_url()?;
    let sent = Arc::new(AtomicU64::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let (sent_tap, received_tap) = (sent.clone(), received.clone());

    let client = Client::builder(TokioExecutor::new()).build_http();
    let client = ServiceBuilder::new()
        .layer(DecompressionLayer::new())
        // Between the two layers: the response before decoding...
        .map_response(move |response: Response<hyper::body::Incoming>| {
            let count = received_tap.clone();
            response.map(|inner| Counted { inner, count })
        })
        .layer(RequestCompressionLayer::new())
        // ...and the request after compression.
        .map_request(move |request: Request<CompressionBody<Full<Bytes>>>| {
            let count = sent_tap.clone();
            request.map(|inner| Counted { inner, count })
        })
        .service(client);

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
        received.swap(0, Ordering::Relaxed),
        echoed.len(),
    );
    if !status.is_success() || echoed != doc.as_bytes() {
        eprintln!("error: the echo does not match what was sent");
        ok = false;
    }

    // 2. Fetch a compressed listing.
    let request = Request::get(format!("{base}/api/items?n=200")).body(Full::new(Bytes::new()))?;
    let response = client.clone().oneshot(request).await?;
    let status = response.status();
    let items = response.into_body().collect().await?.to_bytes();
    println!(
        "GET /api/items  {status}: {} bytes on the wire, {} decoded",
        received.swap(0, Ordering::Relaxed),
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
