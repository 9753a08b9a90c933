//! Helpers shared by the test files: independent encoders and decoders (flate2, libzstd,
//! brotli), deterministic test data, test bodies, a collected response, the loopback server
//! harness (`server`), and the check for the outside programs interop tests run (`tools`:
//! skipped when missing, a failure under `REQUIRE_INTEROP=1`). The counting allocator
//! (`alloc.rs`) is included on its own, as it installs itself as the global allocator.
#![allow(dead_code)]

pub mod bomb;
pub mod server;
pub mod tools;

use std::io::{Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, VARY};
use http::{HeaderMap, Response, StatusCode, Version};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::sync::mpsc;
use tower_gzip::ContentCoding;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `data` through one of flate2's `write` encoders at the default level.
macro_rules! flate2_encode {
    ($encoder:ident, $data:expr) => {{
        let mut e = flate2::write::$encoder::new(Vec::new(), flate2::Compression::default());
        e.write_all($data).unwrap();
        e.finish().unwrap()
    }};
}

/// One gzip member of `data`, by flate2 at the default level.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    flate2_encode!(GzEncoder, data)
}

/// A zlib stream of `data` (`Content-Encoding: deflate`), by flate2 at the default level.
pub fn zlib(data: &[u8]) -> Vec<u8> {
    flate2_encode!(ZlibEncoder, data)
}

/// Raw deflate of `data` (no zlib wrapper), by flate2 at the default level.
pub fn raw_deflate(data: &[u8]) -> Vec<u8> {
    flate2_encode!(DeflateEncoder, data)
}

/// One zstd frame of `data` by libzstd directly (level 3), with the content size and, if
/// asked, the content checksum.
#[cfg(feature = "zstd")]
pub fn zstd_frame(data: &[u8], checksum: bool) -> Vec<u8> {
    use zstd_safe::{CCtx, CParameter};
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(3)).unwrap();
    cctx.set_parameter(CParameter::ChecksumFlag(checksum))
        .unwrap();
    let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
    cctx.compress2(&mut out, data).unwrap();
    out
}

/// One br stream of `data` by the `brotli` crate at this quality and window (2^`lgwin`).
#[cfg(feature = "br")]
pub fn br_stream(data: &[u8], quality: u32, lgwin: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut out, 4096, quality, lgwin);
        writer.write_all(data).unwrap();
    }
    out
}

/// Optional gzip header fields, and the ways to break one, for [`gzip_member`].
#[derive(Clone, Copy, Default)]
pub struct GzipHeader<'a> {
    /// FEXTRA's content.
    pub extra: Option<&'a [u8]>,
    /// FNAME, without its NUL.
    pub name: Option<&'a [u8]>,
    /// FCOMMENT, without its NUL.
    pub comment: Option<&'a [u8]>,
    /// FHCRC: the header's CRC16 follows it.
    pub hcrc: bool,
    /// Flag bits set on top of those the fields imply (the reserved ones, say).
    pub flags_or: u8,
    /// The compression method byte, instead of 8 (deflate).
    pub method: Option<u8>,
}

impl<'a> GzipHeader<'a> {
    /// A header with only FNAME set.
    pub fn named(name: &'a [u8]) -> Self {
        GzipHeader {
            name: Some(name),
            ..GzipHeader::default()
        }
    }
}

/// FHCRC, FEXTRA, FNAME and FCOMMENT of RFC 1952 section 2.3.1.
pub const FHCRC: u8 = 0x02;
pub const FEXTRA: u8 = 0x04;
pub const FNAME: u8 = 0x08;
pub const FCOMMENT: u8 = 0x10;

/// A gzip member built by hand, so every header field can be set or broken: the header `h`,
/// flate2's raw deflate of `data`, CRC-32 and ISIZE.
pub fn gzip_member(h: &GzipHeader<'_>, data: &[u8]) -> Vec<u8> {
    let mut flags = h.flags_or;
    flags |= if h.hcrc { FHCRC } else { 0 };
    flags |= if h.extra.is_some() { FEXTRA } else { 0 };
    flags |= if h.name.is_some() { FNAME } else { 0 };
    flags |= if h.comment.is_some() { FCOMMENT } else { 0 };
    let mut v = vec![0x1f, 0x8b, h.method.unwrap_or(8), flags, 1, 2, 3, 4, 0, 3];
    if let Some(extra) = h.extra {
        v.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        v.extend_from_slice(extra);
    }
    for field in [h.name, h.comment].into_iter().flatten() {
        v.extend_from_slice(field);
        v.push(0);
    }
    if h.hcrc {
        let crc = crc32fast::hash(&v) as u16;
        v.extend_from_slice(&crc.to_le_bytes());
    }
    v.extend_from_slice(&raw_deflate(data));
    v.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    v.extend_from_slice(&(data.len() as u32).to_le_bytes());
    v
}

/// The `Accept-Encoding` a decompression layer sends, and lists in a 415: every coding
/// compiled in and not `disabled`, in the order zstd, br, gzip, deflate.
pub fn accepted_codings(disabled: &[ContentCoding]) -> String {
    let tokens: Vec<&str> = ContentCoding::PLAIN
        .iter()
        .filter(|f| !disabled.contains(f))
        .map(|f| f.as_str())
        .collect();
    tokens.join(", ")
}

/// Reads `decoder` to the end and checks it left none of `data` behind (`what`: the stream's
/// name in messages).
fn read_whole<'a, R: Read>(
    mut decoder: R,
    into_inner: impl FnOnce(R) -> &'a [u8],
    what: &str,
) -> Vec<u8> {
    let mut out = Vec::new();
    decoder
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("flate2 could not decode the {what}: {e}"));
    let rest = into_inner(decoder);
    assert!(rest.is_empty(), "{} bytes after the {what}", rest.len());
    out
}

/// Decodes one complete gzip member with flate2 and checks nothing follows it.
pub fn gunzip(data: &[u8]) -> Vec<u8> {
    let decoder = flate2::read::GzDecoder::new(data);
    read_whole(decoder, |d| d.into_inner(), "gzip member")
}

/// Decodes a complete zlib stream (`Content-Encoding: deflate`) with flate2.
pub fn inflate(data: &[u8]) -> Vec<u8> {
    let decoder = flate2::read::ZlibDecoder::new(data);
    read_whole(decoder, |d| d.into_inner(), "zlib stream")
}

/// Decodes zstd frames (one or more, as an idle stream sends them) with libzstd directly,
/// independently of this crate's decoder, with the 8 MiB window limit of RFC 9659.
#[cfg(feature = "zstd")]
pub fn unzstd(data: &[u8]) -> Vec<u8> {
    let mut dctx = zstd_safe::DCtx::create();
    dctx.set_parameter(zstd_safe::DParameter::WindowLogMax(23))
        .expect("window limit");
    let mut input = zstd_safe::InBuffer::around(data);
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::new();
    let hint = loop {
        let mut output = zstd_safe::OutBuffer::around(&mut buf[..]);
        let hint = match dctx.decompress_stream(&mut output, &mut input) {
            Ok(hint) => hint,
            Err(code) => panic!(
                "libzstd could not decode the zstd body: {}",
                zstd_safe::get_error_name(code)
            ),
        };
        let full = output.pos() == output.capacity();
        out.extend_from_slice(output.as_slice());
        // Done when all input is taken and the decoder has no more output to give: it did
        // not fill the buffer, or it says the frame is complete (hint 0), which can happen on
        // a call that filled the buffer exactly.
        if input.pos() == data.len() && (!full || hint == 0) {
            break hint;
        }
    };
    assert_eq!(hint, 0, "the zstd body ends inside a frame");
    out
}

/// Decodes a brotli stream with the `brotli` crate's decoder, independently of this crate's.
#[cfg(feature = "br")]
pub fn unbrotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::Decompressor::new(data, 4096)
        .read_to_end(&mut out)
        .expect("brotli could not decode the br body");
    out
}

/// Decodes `data` as named by a `Content-Encoding` value (`None` = identity), with decoders
/// independent of this crate: flate2, libzstd (zstd-safe), the brotli crate.
pub fn decode(encoding: Option<&str>, data: &[u8]) -> Vec<u8> {
    match encoding {
        None => data.to_vec(),
        Some("gzip") => gunzip(data),
        Some("deflate") => inflate(data),
        #[cfg(feature = "zstd")]
        Some("zstd") => unzstd(data),
        #[cfg(feature = "br")]
        Some("br") => unbrotli(data),
        Some(other) => panic!("unexpected content-encoding {other:?}"),
    }
}

/// A response read to the end: head, body and trailers.
#[derive(Debug)]
pub struct Collected {
    pub status: StatusCode,
    pub version: Version,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub trailers: Option<HeaderMap>,
}

impl Collected {
    /// The `Content-Encoding`, if any.
    pub fn encoding(&self) -> Option<&str> {
        self.headers
            .get(CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap())
    }

    /// The body decoded as its `Content-Encoding` says, by [`decode`].
    pub fn decoded(&self) -> Vec<u8> {
        decode(self.encoding(), &self.body)
    }

    /// How many times `Vary` names `Accept-Encoding`, over every `Vary` line.
    pub fn vary_count(&self) -> usize {
        self.headers
            .get_all(VARY)
            .iter()
            .flat_map(|v| v.to_str().unwrap().split(','))
            .filter(|t| t.trim().eq_ignore_ascii_case("accept-encoding"))
            .count()
    }
}

/// Reads `response` to the end; the body must complete without an error.
pub async fn collect<B>(response: Response<B>) -> Collected
where
    B: Body,
    B::Error: std::fmt::Debug,
{
    let (parts, body) = response.into_parts();
    let collected = body.collect().await.expect("body completes");
    let trailers = collected.trailers().cloned();
    Collected {
        status: parts.status,
        version: parts.version,
        headers: parts.headers,
        body: collected.to_bytes(),
        trailers,
    }
}

/// Compressible text: JSON-ish lines, deterministic.
pub fn text(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut i = 0u64;
    while out.len() < len {
        out.extend_from_slice(
            format!("{{\"id\":{i},\"name\":\"item-{}\",\"ok\":true}}\n", i % 97).as_bytes(),
        );
        i += 1;
    }
    out.truncate(len);
    out
}

/// Incompressible bytes (xorshift64*), deterministic.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A body fed by a channel: frames arrive when the test sends them, and the body is
/// pending in between. Its size is unknown. Ends when the sender is dropped.
pub struct ChannelBody {
    rx: mpsc::UnboundedReceiver<Result<Frame<Bytes>, BoxError>>,
}

/// The sending side of a [`ChannelBody`].
#[derive(Clone)]
pub struct BodySender {
    tx: mpsc::UnboundedSender<Result<Frame<Bytes>, BoxError>>,
}

impl BodySender {
    pub fn data(&self, data: impl Into<Bytes>) {
        self.tx
            .send(Ok(Frame::data(data.into())))
            .expect("body receiver is alive");
    }

    pub fn trailers(&self, trailers: HeaderMap) {
        self.tx
            .send(Ok(Frame::trailers(trailers)))
            .expect("body receiver is alive");
    }

    pub fn error(&self, message: &str) {
        self.tx
            .send(Err(message.to_string().into()))
            .expect("body receiver is alive");
    }

    /// Whether the body (the receiver) was dropped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

pub fn channel_body() -> (BodySender, ChannelBody) {
    let (tx, rx) = mpsc::unbounded_channel();
    (BodySender { tx }, ChannelBody { rx })
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.rx.poll_recv(cx)
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// A body that yields its frames with a `Pending` (and a self-wake) before each one, so a
/// consumer sees it go pending between frames. Size unknown.
pub struct StutterBody {
    frames: std::collections::VecDeque<Frame<Bytes>>,
    ready: bool,
}

impl StutterBody {
    pub fn new(frames: impl IntoIterator<Item = Frame<Bytes>>) -> Self {
        StutterBody {
            frames: frames.into_iter().collect(),
            ready: false,
        }
    }

    pub fn data<I, D>(chunks: I) -> Self
    where
        I: IntoIterator<Item = D>,
        D: Into<Bytes>,
    {
        Self::new(chunks.into_iter().map(|d| Frame::data(d.into())))
    }
}

impl Body for StutterBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if !self.ready {
            self.ready = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.ready = false;
        Poll::Ready(self.frames.pop_front().map(Ok))
    }
}

/// A body of the given frames, all ready at once, size unknown (no exact hint and
/// `is_end_stream` only after the end).
pub struct ReadyFrames {
    frames: std::collections::VecDeque<Result<Frame<Bytes>, BoxError>>,
}

impl ReadyFrames {
    pub fn new(frames: impl IntoIterator<Item = Result<Frame<Bytes>, BoxError>>) -> Self {
        ReadyFrames {
            frames: frames.into_iter().collect(),
        }
    }

    pub fn data<I, D>(chunks: I) -> Self
    where
        I: IntoIterator<Item = D>,
        D: Into<Bytes>,
    {
        Self::new(chunks.into_iter().map(|d| Ok(Frame::data(d.into()))))
    }
}

impl Body for ReadyFrames {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Poll::Ready(self.frames.pop_front())
    }
}

/// What a [`Tap`] saw: data bytes in total and the largest data frame.
#[derive(Debug, Default)]
pub struct Probe {
    pub total: AtomicU64,
    pub max_frame: AtomicUsize,
}

impl Probe {
    pub fn total(&self) -> usize {
        self.total.load(Ordering::SeqCst) as usize
    }

    pub fn max_frame(&self) -> usize {
        self.max_frame.load(Ordering::SeqCst)
    }

    /// Starts the count again from zero; returns the bytes counted so far.
    pub fn take_total(&self) -> usize {
        self.total.swap(0, Ordering::SeqCst) as usize
    }
}

/// A body that passes `inner`'s frames through unchanged (its size hint is not: unknown) and
/// records its data frames in a [`Probe`].
pub struct Tap<B> {
    inner: B,
    probe: Arc<Probe>,
}

impl<B> Tap<B> {
    pub fn new(inner: B, probe: Arc<Probe>) -> Self {
        Tap { inner, probe }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Tap<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let poll = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &poll {
            if let Some(data) = frame.data_ref() {
                let probe = &self.probe;
                probe.total.fetch_add(data.len() as u64, Ordering::SeqCst);
                probe.max_frame.fetch_max(data.len(), Ordering::SeqCst);
            }
        }
        poll
    }
}

/// Polls `cond` every 10 ms for up to 5 s; true if it held.
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}
