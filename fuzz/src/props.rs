//! The properties the fuzz targets check, shared with the bounded proptest runs in
//! `tests/properties.rs` (which includes this file with `#[path]`).
//!
//! Every property takes raw bytes and derives its whole case (format, level, split points,
//! output budget, Pending points...) from them, so a fuzzer and a random byte generator
//! drive it the same way. All futures here are in-memory; [`block_on`] polls them with a
//! no-op waker and fails if one stays Pending for too long (a lost wake-up would hang a real
//! server).

use std::future::Future;
use std::io::Write;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::ContentCoding;
use tower_gzip::codec::{Decoder, OneShot};
use tower_gzip::compression::CompressionLayer;
use tower_gzip::compression::predicate::SizeAbove;
use tower_gzip::decompression::{DecompressionLayer, RatioLimit, RequestDecompressionLayer};
use tower_gzip::{BoxError, CodecPool, CompressionLevel};

/// Reads case parameters from the front of the input; yields zeros once it runs out.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// Up to `n` bytes.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
}

/// Polls `future` to completion with a no-op waker. Everything it waits on is in memory and
/// self-waking, so a long run of Pending means a hang.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000_000 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("future still pending after 1,000,000 polls");
}

fn level(code: u8) -> CompressionLevel {
    match code % 4 {
        0 => CompressionLevel::Fastest,
        1 => CompressionLevel::Default,
        2 => CompressionLevel::Best,
        _ => CompressionLevel::Precise(i32::from(code / 4 % 10)),
    }
}

/// The level of a streamed case. br draws qualities 0-9 only: at 10 and 11 (`Best`) brotli
/// spends ~80 ms on each flush, so a stream that pauses after every small frame runs for
/// tens of seconds whatever the layer does; the README's level table sends those
/// qualities to static assets. Every other coding draws every level, `Best` included.
fn stream_level(format: ContentCoding, code: u8) -> CompressionLevel {
    match level(code) {
        CompressionLevel::Best if format.as_str() == "br" => CompressionLevel::Precise(9),
        other => other,
    }
}

/// The coding of a case: `flate` picks gzip (0) or deflate (1); `other` (two bits) moves on
/// to the other codings compiled in (zstd, br, in `ContentCoding::PLAIN` order), falling back to
/// gzip/deflate where there are fewer. So gzip and deflate keep half the cases whatever the
/// features, and no case assumes a coding is absent.
fn pick_format(flate: u8, other: u8) -> ContentCoding {
    let flate = if flate & 1 == 0 {
        ContentCoding::Gzip
    } else {
        ContentCoding::Deflate
    };
    let mut others = ContentCoding::PLAIN
        .iter()
        .copied()
        .filter(|f| !matches!(f, ContentCoding::Gzip | ContentCoding::Deflate));
    match usize::from(other & 3) {
        0 => flate,
        n => others.nth(n - 1).unwrap_or(flate),
    }
}

/// Whether `format` takes several members or frames back to back (gzip members, zstd frames).
fn concatenates(format: ContentCoding) -> bool {
    format == ContentCoding::Gzip || format.as_str() == "zstd"
}

/// Split lengths, cycled from `seeds`: mostly small, sometimes large.
fn chunk_len(seeds: &[u8], i: usize) -> usize {
    match seeds.get(i % seeds.len().max(1)).copied().unwrap_or(0) {
        s @ 0..=191 => usize::from(s) + 1,
        s => (usize::from(s) - 191) * 1024,
    }
}

// ---------------------------------------------------------------------------------------
// negotiate: Accept-Encoding through CompressionLayer, Content-Encoding through
// RequestDecompressionLayer.

/// The most codings a `Content-Encoding` may stack before the layer answers 415.
const MAX_CODINGS: usize = 3;

const NEGOTIATE_BODY: &[u8] = &[b'a'; 1000];

fn contains_ci(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Any `Accept-Encoding` value gives 406, identity, or a coding the value could have asked
/// for, and an encoded body decodes to the handler's bytes. Returns false if the value is not
/// a valid header value (the case is skipped).
pub fn check_accept_encoding(value: &[u8]) -> bool {
    let Ok(value) = HeaderValue::from_bytes(value) else {
        return false;
    };
    let service = CompressionLayer::new()
        .pool(CodecPool::builder().max_idle(2).build())
        .layer(service_fn(|_req: Request<Full<Bytes>>| async {
            let mut res = Response::new(Full::new(Bytes::from_static(NEGOTIATE_BODY)));
            res.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            Ok::<_, std::convert::Infallible>(res)
        }));
    let req = Request::builder()
        .header(ACCEPT_ENCODING, value.clone())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let res = block_on(service.oneshot(req)).unwrap();
    let (parts, body) = res.into_parts();
    let body = block_on(body.collect()).expect("in-memory body").to_bytes();
    let raw = value.as_bytes();
    match parts.status {
        StatusCode::NOT_ACCEPTABLE => {
            assert!(
                contains_ci(raw, b"identity") || raw.contains(&b'*'),
                "406 for {value:?}, which does not refuse identity"
            );
            assert!(parts.headers.get(CONTENT_ENCODING).is_none());
        }
        StatusCode::OK => match parts.headers.get(CONTENT_ENCODING) {
            None => assert_eq!(&body[..], NEGOTIATE_BODY, "identity for {value:?}"),
            Some(coding) => {
                // Exactly a coding's own token (never `x-gzip`, never another case).
                let format = ContentCoding::PLAIN
                    .iter()
                    .copied()
                    .find(|f| coding.as_bytes() == f.as_str().as_bytes())
                    .unwrap_or_else(|| panic!("Content-Encoding {coding:?} for {value:?}"));
                assert!(
                    contains_ci(raw, format.as_str().as_bytes()) || raw.contains(&b'*'),
                    "{format:?} chosen for {value:?}"
                );
                let plain = decode_all(format, &body, 64 * 1024).expect("valid encoded body");
                assert_eq!(&plain[..], NEGOTIATE_BODY);
            }
        },
        other => panic!("status {other} for Accept-Encoding {value:?}"),
    }
    true
}

/// Any `Content-Encoding` value is refused with 415 exactly when it names an unknown coding,
/// is not visible ASCII, or stacks more than `MAX_CODINGS`; otherwise the handler is called
/// and reading the body (here `body`, taken as already encoded) never panics. Returns false
/// if the value is not a valid header value.
pub fn check_content_encoding(value: &[u8], body: &[u8]) -> bool {
    let Ok(value) = HeaderValue::from_bytes(value) else {
        return false;
    };
    // Our own reading of the value, to compare with.
    let expect_refused = match value.to_str() {
        Err(_) => true,
        Ok(text) => {
            let tokens: Vec<&str> = text
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("identity"))
                .collect();
            // Every coding compiled in is decoded by default (zstd and br with their
            // features), and `x-gzip` is gzip.
            let known = |t: &&str| {
                ContentCoding::PLAIN
                    .iter()
                    .map(|f| f.as_str())
                    .chain(["x-gzip"])
                    .any(|k| t.eq_ignore_ascii_case(k))
            };
            !tokens.iter().all(known) || tokens.len() > MAX_CODINGS
        }
    };
    let called = Arc::new(AtomicBool::new(false));
    let seen = called.clone();
    let service = RequestDecompressionLayer::new()
        .pool(CodecPool::builder().max_idle(4).build())
        .layer(service_fn(
            move |req: Request<tower_gzip::decompression::DecompressionBody<Full<Bytes>>>| {
                seen.store(true, Ordering::SeqCst);
                async move {
                    let assert_stripped =
                        !req.headers().contains_key(CONTENT_ENCODING) || !req.body().is_decoding();
                    assert!(assert_stripped, "Content-Encoding left on a decoded body");
                    // Errors are fine (corrupt input); panics are not.
                    let status = match req.into_body().collect().await {
                        Ok(_) => StatusCode::OK,
                        Err(_) => StatusCode::BAD_REQUEST,
                    };
                    let mut res = Response::new(Full::new(Bytes::new()));
                    *res.status_mut() = status;
                    Ok::<_, std::convert::Infallible>(res)
                }
            },
        ));
    let req = Request::builder()
        .header(CONTENT_ENCODING, value.clone())
        .body(Full::new(Bytes::copy_from_slice(body)))
        .unwrap();
    let res = block_on(service.oneshot(req)).unwrap();
    let refused = res.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE;
    assert_eq!(refused, expect_refused, "Content-Encoding {value:?}");
    assert_eq!(called.load(Ordering::SeqCst), !refused);
    if refused {
        assert!(res.headers().contains_key(ACCEPT_ENCODING));
    }
    true
}

// ---------------------------------------------------------------------------------------
// decoder: tower_gzip::codec::Decoder on arbitrary input.

/// A reference encoding of `plain` in `format`, with flate2 for gzip and deflate (independent
/// of our encoder). `variant` picks zlib or raw deflate for `Deflate`, and one or two members
/// for gzip (two frames for zstd). zstd and br have no independent encoder among the
/// dependencies, so this crate's one-shot encoder writes them.
pub fn reference_encode(format: ContentCoding, variant: u8, plain: &[u8]) -> Vec<u8> {
    let level = flate2::Compression::new(u32::from(variant / 4 % 10));
    match (format, variant % 2) {
        (ContentCoding::Gzip, 0) => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        (ContentCoding::Gzip, _) => {
            let (a, b) = plain.split_at(plain.len() / 2);
            let mut wire = reference_encode(ContentCoding::Gzip, variant & !1, a);
            wire.extend(reference_encode(ContentCoding::Gzip, variant & !1, b));
            wire
        }
        (ContentCoding::Deflate, 0) => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        (ContentCoding::Deflate, _) => {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), level);
            e.write_all(plain).unwrap();
            e.finish().unwrap()
        }
        (other, 1) if concatenates(other) => {
            let (a, b) = plain.split_at(plain.len() / 2);
            let mut wire = reference_encode(other, variant & !1, a);
            wire.extend(reference_encode(other, variant & !1, b));
            wire
        }
        (other, _) => {
            let pool = CodecPool::builder().max_idle(0).build();
            let mut wire = BytesMut::new();
            OneShot::new(other)
                .level(CompressionLevel::Precise(i32::from(variant / 4 % 10)))
                .pool(&pool)
                .encode(plain, &mut wire)
                .unwrap();
            wire.to_vec()
        }
    }
}

/// Decodes a whole stream in one go with our decoder (`max_out` per call).
pub fn decode_all(format: ContentCoding, wire: &[u8], max_out: usize) -> Result<Vec<u8>, BoxError> {
    let pool = CodecPool::builder().max_idle(1).build();
    let mut decoder = Decoder::for_coding(format, None, &pool).unwrap();
    let mut out = BytesMut::new();
    let mut input = wire;
    while !input.is_empty() || decoder.has_pending_output() {
        let n = decoder.decode(input, &mut out, max_out)?;
        input = &input[n..];
    }
    decoder.finish()?;
    Ok(out.to_vec())
}

/// How a decoder case builds its wire bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    /// The payload as it is.
    Raw,
    /// A valid reference encoding of the payload.
    Valid,
    /// A valid encoding with one byte changed.
    Flipped,
    /// A valid encoding cut short.
    Truncated,
}

/// Feeds the decoder arbitrary (or mangled valid) input split at arbitrary points with an
/// arbitrary output budget: it never panics, never appends more than `max_out` per call,
/// consumes less than its input only with output pending, never stalls, decodes valid input
/// exactly, and a decoder from the same pool after it (the same, reset state) still works.
pub fn check_decoder(data: &[u8]) {
    let mut input = Input::new(data);
    let control = input.byte();
    let format = pick_format(control, control >> 3);
    let mode = match control >> 1 & 3 {
        0 => Wire::Raw,
        1 => Wire::Valid,
        2 => Wire::Flipped,
        _ => Wire::Truncated,
    };
    let variant = input.byte();
    let budget_code = input.u16();
    let max_out = match budget_code % 4 {
        0 => usize::from(budget_code >> 2) % 16 + 1,
        1 => usize::from(budget_code >> 2) + 1,
        _ => 64 * 1024,
    };
    let position = usize::from(input.u16());
    let seeds = input.take(8);
    let payload = input.rest();

    let mut full_len = payload.len();
    let wire = match mode {
        Wire::Raw => payload.to_vec(),
        _ => {
            let mut wire = reference_encode(format, variant, payload);
            full_len = wire.len();
            match mode {
                Wire::Flipped => {
                    let at = position % wire.len();
                    wire[at] ^= variant | 1;
                }
                Wire::Truncated => wire.truncate(position % wire.len()),
                _ => {}
            }
            wire
        }
    };

    let pool = CodecPool::builder().max_idle(1).build();
    let mut decoder = Decoder::for_coding(format, None, &pool).unwrap();
    let mut out = BytesMut::new();
    let mut rest = &wire[..];
    let mut result = Ok(());
    let mut i = 0;
    'feed: while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(chunk_len(seeds, i).min(rest.len()));
        rest = tail;
        i += 1;
        let mut chunk = chunk;
        loop {
            let before = out.len();
            match decoder.decode(chunk, &mut out, max_out) {
                Ok(n) => {
                    let produced = out.len() - before;
                    assert!(
                        produced <= max_out,
                        "{produced} bytes out, budget {max_out}"
                    );
                    assert!(n <= chunk.len());
                    if n < chunk.len() {
                        assert!(
                            decoder.has_pending_output(),
                            "consumed {n} of {} without pending output",
                            chunk.len()
                        );
                    }
                    assert!(
                        n > 0
                            || produced > 0
                            || (chunk.is_empty() && !decoder.has_pending_output()),
                        "no progress: {} bytes in, pending {}",
                        chunk.len(),
                        decoder.has_pending_output()
                    );
                    chunk = &chunk[n..];
                    if chunk.is_empty() && !decoder.has_pending_output() {
                        break;
                    }
                }
                Err(e) => {
                    result = Err(e);
                    break 'feed;
                }
            }
        }
    }
    let result = result.and_then(|()| decoder.finish());
    if mode == Wire::Valid {
        result.as_ref().expect("a valid stream decodes");
        assert!(
            out[..] == payload[..],
            "valid stream decoded to other bytes"
        );
    }
    // A strict, non-empty prefix of a stream is never complete (the last byte holds the end
    // of the final deflate block or the trailer), except a cut between two gzip members.
    let two_members = concatenates(format) && variant % 2 == 1;
    if mode == Wire::Truncated && !two_members && position % full_len != 0 {
        assert!(result.is_err(), "a truncated stream was accepted");
    }
    drop(decoder);

    // The state goes back reset: the next decoder reuses it and decodes a known message.
    let known = b"the quick brown fox jumps over the lazy dog, again and again and again";
    let wire = reference_encode(format, variant, known);
    let mut next = Decoder::for_coding(format, None, &pool).unwrap();
    let mut out = BytesMut::new();
    let mut input = &wire[..];
    while !input.is_empty() || next.has_pending_output() {
        let n = next
            .decode(input, &mut out, 7)
            .expect("known message decodes");
        input = &input[n..];
    }
    next.finish().expect("known message complete");
    assert_eq!(&out[..], &known[..]);
    drop(next);
    // Whichever kind of state the coding uses: one created, reused once, none out.
    let stats = pool.stats();
    let sum = |f: fn(&tower_gzip::pool::KindStats) -> u64| -> u64 {
        stats.kinds().map(|(_, kind)| f(&kind)).sum()
    };
    assert_eq!(sum(|k| k.created) + sum(|k| k.reused), 2, "{stats:?}");
    // A brotli state that saw an error is discarded, not reset (its decoder cannot be
    // rewound safely); the others are reset and reused.
    if stats
        .kind(tower_gzip::pool::PoolKind::BrDecompressors)
        .discarded
        == 0
    {
        assert_eq!(sum(|k| k.reused), 1, "{stats:?}");
    }
    assert_eq!(stats.in_use(), 0, "{stats:?}");
}

// ---------------------------------------------------------------------------------------
// roundtrip: CompressionLayer then DecompressionBody.

/// Progress shared between the test body and the consumer.
#[derive(Default)]
struct Progress {
    /// Bytes the test body has handed out.
    yielded: AtomicUsize,
    /// Decoded bytes the consumer has received.
    delivered: AtomicUsize,
    /// Set once the response head is out: from then on the body is polled by the
    /// compression body, which must flush whenever it sees Pending.
    streaming: AtomicBool,
}

/// Frames with an optional Pending (self-woken) before each one.
struct FramesBody {
    frames: std::collections::VecDeque<(Bytes, bool)>,
    pending_done: bool,
    went_pending: bool,
    progress: Arc<Progress>,
    exact: Option<u64>,
}

impl Body for FramesBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let progress = self.progress.clone();
        if std::mem::take(&mut self.went_pending) {
            // Polled again after Pending: everything handed out before must have reached
            // the consumer, decoded (a streaming response never sits on data).
            let (yielded, delivered) = (
                progress.yielded.load(Ordering::SeqCst),
                progress.delivered.load(Ordering::SeqCst),
            );
            assert_eq!(
                delivered, yielded,
                "after Pending, {delivered} of {yielded} bytes reached the consumer"
            );
        }
        let Some((_, pending_first)) = self.frames.front() else {
            return Poll::Ready(None);
        };
        if *pending_first && !self.pending_done {
            self.pending_done = true;
            self.went_pending = progress.streaming.load(Ordering::SeqCst);
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.pending_done = false;
        let (data, _) = self.frames.pop_front().expect("checked");
        progress.yielded.fetch_add(data.len(), Ordering::SeqCst);
        Poll::Ready(Some(Ok(Frame::data(data))))
    }

    fn size_hint(&self) -> SizeHint {
        match self.exact {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.frames.is_empty()
    }
}

/// Reads `body` to the end, counting decoded bytes into `progress` as they arrive.
async fn drain<B>(body: B, progress: &Progress) -> Result<Vec<u8>, BoxError>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let mut body = pin!(body);
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.map_err(Into::into)?.into_data() {
            out.extend_from_slice(&data);
            progress.delivered.fetch_add(data.len(), Ordering::SeqCst);
        }
    }
    Ok(out)
}

/// Random data in random frames, with Pending between some of them, through
/// `CompressionLayer` and back through the client `DecompressionLayer` or the server
/// `RequestDecompressionLayer`: the output equals the input, and whenever the producer goes
/// Pending everything it gave so far has reached the consumer.
pub fn check_roundtrip(data: &[u8]) {
    let mut input = Input::new(data);
    let control = input.byte();
    let format = pick_format(control, control >> 6);
    let via_request = control & 2 != 0;
    let exact_size = control & 4 != 0;
    let repeat = usize::from(control >> 3) % 8;
    let level = stream_level(format, input.byte());
    let raw_min_size = input.u16();
    let min_size = u64::from(raw_min_size % 600);
    // Every pause long (a zero park bound): states go back at each pause and each event
    // resumes on a primed one, where short pauses park (or, for br, keep) them.
    let long_pauses = raw_min_size & 0x8000 != 0;
    // A context of zstd's best level is hundreds of megabytes, too large to keep pooled:
    // with every pause long, each event would allocate one (~130 ms). Those cases take
    // level 9, whose context the pool keeps.
    let level = match level {
        CompressionLevel::Best if long_pauses && format.as_str() == "zstd" => {
            CompressionLevel::Precise(9)
        }
        other => other,
    };
    let seeds = input.take(6);
    let pendings = input.byte();
    let payload = input.rest();
    // Repeating the payload makes large, compressible inputs from a small fuzz case.
    let plain = payload.repeat([1, 1, 1, 1, 2, 8, 64, 256][repeat]);

    let mut frames = std::collections::VecDeque::new();
    let mut rest = &plain[..];
    let mut i = 0;
    while !rest.is_empty() {
        let len = chunk_len(seeds, i).min(rest.len());
        let (head, tail) = rest.split_at(len);
        // With long pauses every pause primes a fresh state (~1 ms for br at quality 8),
        // so those cases pause at most 200 times: thousands of one-byte frames would spend
        // seconds in priming that the first few hundred already cover.
        let pause = pendings >> (i % 8) & 1 == 1 && !(long_pauses && i >= 200);
        frames.push_back((Bytes::copy_from_slice(head), pause));
        rest = tail;
        i += 1;
    }
    let mut pool = CodecPool::builder().max_idle(2);
    if long_pauses {
        pool = pool.park_bound(std::time::Duration::ZERO);
    }
    let pool = pool.build();
    let progress = Arc::new(Progress::default());
    let body = FramesBody {
        frames,
        pending_done: false,
        went_pending: false,
        progress: progress.clone(),
        exact: exact_size.then_some(plain.len() as u64),
    };
    let body = std::sync::Mutex::new(Some(body));
    let compressing = CompressionLayer::new()
        .pool(pool.clone())
        .quality(level)
        .min_size(min_size)
        .compress_when(None::<SizeAbove>)
        .layer(service_fn(move |_req: Request<Full<Bytes>>| {
            let body = body.lock().unwrap().take().expect("called once");
            async move { Ok::<_, std::convert::Infallible>(Response::new(body)) }
        }));
    let req = Request::builder()
        .header(ACCEPT_ENCODING, format.as_str())
        .body(Full::new(Bytes::new()))
        .unwrap();

    let decoded = if via_request {
        // The compressed response body becomes a request body to RequestDecompression.
        let res = block_on(compressing.oneshot(req)).unwrap();
        progress.streaming.store(true, Ordering::SeqCst);
        let (parts, body) = res.into_parts();
        let mut upload = Request::new(body);
        if let Some(coding) = parts.headers.get(CONTENT_ENCODING) {
            upload
                .headers_mut()
                .insert(CONTENT_ENCODING, coding.clone());
        }
        let echo = RequestDecompressionLayer::new()
            .pool(pool.clone())
            .limits(tower_gzip::decompression::DecompressionLimits::none())
            .layer(service_fn(|req: Request<_>| async move {
                Ok::<_, std::convert::Infallible>(Response::new(req.into_body()))
            }));
        let res = block_on(echo.oneshot(upload)).unwrap();
        block_on(drain(res.into_body(), &progress))
    } else {
        let client = DecompressionLayer::new()
            .pool(pool.clone())
            .limits(tower_gzip::decompression::DecompressionLimits::none())
            .layer(compressing);
        let res = block_on(client.oneshot(req)).unwrap();
        assert!(res.headers().get(CONTENT_ENCODING).is_none());
        progress.streaming.store(true, Ordering::SeqCst);
        block_on(drain(res.into_body(), &progress))
    };
    let decoded = decoded.expect("the round trip decodes");
    assert!(decoded == plain, "round trip changed the bytes");
    let stats = pool.stats();
    assert_eq!(
        stats.in_use(),
        0,
        "no codec state of any kind left out: {stats:?}"
    );
}

// ---------------------------------------------------------------------------------------
// request: arbitrary request bodies through RequestDecompressionLayer.

/// A request body of ready data frames, size unknown.
struct ChunksBody {
    chunks: std::collections::VecDeque<Bytes>,
}

impl Body for ChunksBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Poll::Ready(self.chunks.pop_front().map(|c| Ok(Frame::data(c))))
    }
}

/// What the handler saw: the status axum's extractors would answer (200, 413 for a limit,
/// 400 for a decode error) and the decoded bytes it received before the end or the error.
async fn read_request_body(
    body: tower_gzip::decompression::DecompressionBody<ChunksBody>,
) -> (StatusCode, Vec<u8>) {
    let mut body = pin!(body);
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    out.extend_from_slice(&data);
                }
            }
            Err(err) if err.is::<http_body_util::LengthLimitError>() => {
                return (StatusCode::PAYLOAD_TOO_LARGE, out);
            }
            Err(err) if err.is::<tower_gzip::codec::DecodeError>() => {
                return (StatusCode::BAD_REQUEST, out);
            }
            Err(err) => panic!("an error that is neither a limit nor a decode error: {err}"),
        }
    }
    (StatusCode::OK, out)
}

/// Sends `wire` with `Content-Encoding: format` through `service`; returns the status and
/// the decoded bytes the handler saw.
fn send_request<S>(
    service: &S,
    format: ContentCoding,
    wire: &[u8],
    seeds: &[u8],
) -> (StatusCode, Vec<u8>, usize)
where
    S: tower::Service<
            Request<ChunksBody>,
            Response = Response<
                tower_gzip::decompression::RequestDecompressionResponseBody<Full<Bytes>>,
            >,
            Error = std::convert::Infallible,
        > + Clone,
{
    let mut chunks = std::collections::VecDeque::new();
    let mut rest = wire;
    let mut i = 0;
    while !rest.is_empty() {
        let (head, tail) = rest.split_at(chunk_len(seeds, i).min(rest.len()));
        chunks.push_back(Bytes::copy_from_slice(head));
        rest = tail;
        i += 1;
    }
    let req = Request::builder()
        .header(CONTENT_ENCODING, format.as_str())
        .body(ChunksBody { chunks })
        .unwrap();
    let res = block_on(service.clone().oneshot(req)).unwrap();
    let status = res.status();
    let read = res
        .headers()
        .get(READ)
        .map(|read| read.to_str().unwrap().parse().unwrap());
    let body = block_on(res.into_body().collect())
        .expect("in-memory response")
        .to_bytes();
    (status, body.to_vec(), read.unwrap_or(0))
}

/// The header the handler tells how many decoded bytes it read in.
const READ: http::HeaderName = http::HeaderName::from_static("x-read");

/// Arbitrary bytes (raw, or a valid reference encoding, one byte flipped, or cut short) as a
/// gzip, deflate, zstd or br request body through `RequestDecompressionLayer` with small,
/// input-derived limits, split at input-derived points:
///
/// - never a panic, and the status is 200, 400 or 413;
/// - never more than the size limit reaches the handler, whatever the outcome;
/// - a valid body within the size limit is 200 with exactly its bytes (or 413 if the ratio
///   limit applies to it); one over the size limit is 413;
/// - a strict, non-empty prefix of a stream is 400 (or 413 if its prefix is already over a
///   limit);
/// - afterwards nothing is checked out of the pool, and the same service decodes a known
///   message (the decoder state came back reset).
pub fn check_request(data: &[u8]) {
    let mut input = Input::new(data);
    let control = input.byte();
    let format = pick_format(control, control >> 3);
    let mode = match control >> 1 & 3 {
        0 => Wire::Raw,
        1 => Wire::Valid,
        2 => Wire::Flipped,
        _ => Wire::Truncated,
    };
    let variant = input.byte();
    let repeat = [1, 1, 2, 16, 256][usize::from(input.byte() % 5)];
    let size_code = input.u16();
    let max_size = match size_code % 4 {
        0 => 64 * 1024,
        1 => usize::from(size_code >> 2) % 256 + 1,
        _ => usize::from(size_code >> 2) % (64 * 1024) + 1,
    };
    let ratio_code = input.byte();
    let ratio = match ratio_code % 4 {
        0 => None,
        burst => {
            let mut limit = RatioLimit::new(u32::from(ratio_code >> 2) + 1, u32::from(burst) - 1);
            limit.min_size = usize::from(ratio_code >> 4) * 1024;
            Some(limit)
        }
    };
    let position = usize::from(input.u16());
    let seeds = input.take(8);
    let plain = input.rest().repeat(repeat);

    let (wire, full_len) = match mode {
        Wire::Raw => (plain.clone(), plain.len()),
        _ => {
            let mut wire = reference_encode(format, variant, &plain);
            let full_len = wire.len();
            match mode {
                Wire::Flipped => {
                    let at = position % wire.len();
                    wire[at] ^= variant | 1;
                }
                Wire::Truncated => wire.truncate(position % wire.len()),
                _ => {}
            }
            (wire, full_len)
        }
    };

    let pool = CodecPool::builder().max_idle(2).build();
    let handler = service_fn(
        |req: Request<tower_gzip::decompression::DecompressionBody<ChunksBody>>| async move {
            assert!(req.headers().get(CONTENT_ENCODING).is_none());
            let (status, seen) = read_request_body(req.into_body()).await;
            // The layer puts its own text in a 413's body; the header tells what was read.
            let read = http::HeaderValue::from(seen.len());
            let mut res = Response::new(Full::new(Bytes::from(seen)));
            *res.status_mut() = status;
            res.headers_mut().insert(READ, read);
            Ok::<_, std::convert::Infallible>(res)
        },
    );
    let service = RequestDecompressionLayer::new()
        .pool(pool.clone())
        .limits(
            tower_gzip::decompression::DecompressionLimits::none()
                .with_max_size(Some(max_size))
                .with_ratio(ratio),
        )
        .layer(handler);
    let (status, seen, read) = send_request(&service, format, &wire, seeds);
    assert!(
        [
            StatusCode::OK,
            StatusCode::BAD_REQUEST,
            StatusCode::PAYLOAD_TOO_LARGE
        ]
        .contains(&status),
        "status {status}"
    );
    assert!(
        read <= max_size,
        "{read} bytes reached the handler, limit {max_size}"
    );
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        let text = String::from_utf8_lossy(&seen);
        assert!(text.starts_with("Payload Too Large: "), "{text}");
        assert!(
            text.ends_with(" limit)\n"),
            "the 413 names its limit: {text}"
        );
    }
    match mode {
        Wire::Valid if plain.len() > max_size => {
            assert_eq!(
                status,
                StatusCode::PAYLOAD_TOO_LARGE,
                "{} over {max_size}",
                plain.len()
            );
        }
        Wire::Valid => {
            let ratio_may_apply = ratio.is_some_and(|r| plain.len() >= r.min_size);
            if status != StatusCode::PAYLOAD_TOO_LARGE || !ratio_may_apply {
                assert_eq!(status, StatusCode::OK, "a valid body within the limits");
                assert!(seen == plain, "a valid body decoded to other bytes");
            }
        }
        Wire::Truncated => {
            let two_members = concatenates(format) && variant % 2 == 1;
            if !two_members && position % full_len != 0 {
                assert_ne!(status, StatusCode::OK, "a truncated body was accepted");
            }
        }
        Wire::Raw | Wire::Flipped => {}
    }
    assert_eq!(pool.stats().in_use(), 0, "{:?}", pool.stats());

    // The same pool serves a known message afterwards (the decoder state came back reset),
    // through a layer without limits.
    let known = b"the quick brown fox jumps over the lazy dog, again and again and again";
    let wire = reference_encode(format, variant, known);
    let unlimited = RequestDecompressionLayer::new()
        .pool(pool.clone())
        .limits(tower_gzip::decompression::DecompressionLimits::none())
        .layer(handler);
    let (status, seen, _) = send_request(&unlimited, format, &wire, seeds);
    assert_eq!((status, &seen[..]), (StatusCode::OK, &known[..]));
    assert_eq!(pool.stats().in_use(), 0, "{:?}", pool.stats());
}
