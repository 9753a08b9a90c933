//! Request logging and byte counts on the wire: `log_requests` sits outside the compression
//! layer and wraps both bodies in counting ones.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use tower_gzip::ContentCoding;
use tracing::info;

/// What really crossed the wire, counted by `log_requests`.
pub struct WireStats {
    pub responses: AtomicU64,
    pub encoded: AtomicU64,
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    /// Per compiled-in coding (in [`ContentCoding::PLAIN`]'s order): responses and their body bytes.
    pub codings: Vec<(ContentCoding, AtomicU64, AtomicU64)>,
}

impl Default for WireStats {
    fn default() -> Self {
        WireStats {
            responses: AtomicU64::new(0),
            encoded: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            codings: ContentCoding::PLAIN
                .iter()
                .map(|&f| (f, AtomicU64::new(0), AtomicU64::new(0)))
                .collect(),
        }
    }
}

pub fn load(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}

/// Counts request bytes as received and response bytes as sent, and logs one line per
/// request when its response body ends (or is dropped).
pub async fn log_requests(
    State(wire): State<Arc<WireStats>>,
    req: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
    let bytes_in = Arc::new(AtomicU64::new(0));
    let counter = bytes_in.clone();
    let req = req.map(|body| {
        Body::new(CountIn {
            inner: body,
            counter,
        })
    });

    let response = next.run(req).await;
    let encoding = response
        .headers()
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("identity")
        .to_owned();
    let status = response.status().as_u16();
    let on_end = Box::new(move |bytes_out: u64, complete: bool| {
        let bytes_in = bytes_in.load(Ordering::Relaxed);
        wire.responses.fetch_add(1, Ordering::Relaxed);
        wire.encoded
            .fetch_add(u64::from(encoding != "identity"), Ordering::Relaxed);
        wire.bytes_in.fetch_add(bytes_in, Ordering::Relaxed);
        wire.bytes_out.fetch_add(bytes_out, Ordering::Relaxed);
        let format = ContentCoding::from_token(&encoding);
        if let Some((_, responses, bytes)) = wire.codings.iter().find(|c| Some(c.0) == format) {
            responses.fetch_add(1, Ordering::Relaxed);
            bytes.fetch_add(bytes_out, Ordering::Relaxed);
        }
        let ms = (started.elapsed().as_secs_f64() * 1e4).round() / 10.0;
        info!(%method, path, status, encoding, bytes_in, bytes_out, complete, ms, "request");
    });
    response.map(|body| {
        Body::new(CountOut {
            inner: body,
            sent: 0,
            complete: false,
            on_end: Some(on_end),
        })
    })
}

/// A request body that adds the length of each data frame to `counter`.
struct CountIn {
    inner: Body,
    counter: Arc<AtomicU64>,
}

impl http_body::Body for CountIn {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &frame {
            let len = frame.data_ref().map_or(0, |d| d.len() as u64);
            self.counter.fetch_add(len, Ordering::Relaxed);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

type OnEnd = Box<dyn FnOnce(u64, bool) + Send>;

/// A response body that counts the bytes it yields and calls `on_end` once, when dropped.
struct CountOut {
    inner: Body,
    sent: u64,
    complete: bool,
    on_end: Option<OnEnd>,
}

impl http_body::Body for CountOut {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        match &frame {
            Poll::Ready(Some(Ok(frame))) => {
                self.sent += frame.data_ref().map_or(0, |d| d.len() as u64);
            }
            Poll::Ready(None) => self.complete = true,
            _ => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for CountOut {
    fn drop(&mut self) {
        // hyper may stop polling once `is_end_stream` is true, so that counts as complete.
        let complete = self.complete || http_body::Body::is_end_stream(&self.inner);
        if let Some(on_end) = self.on_end.take() {
            on_end(self.sent, complete);
        }
    }
}
