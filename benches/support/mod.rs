//! Payloads and service drivers shared by the response benches and the allocation counter.
#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use http::{Request, Response, header};
use http_body::Body;
use http_body_util::{BodyExt, Full, StreamBody};

/// A deterministic JSON array of about `len` bytes (records of ~150 B).
pub fn json(len: usize) -> Bytes {
    let mut out = String::with_capacity(len + 256);
    out.push('[');
    let mut i = 0u64;
    while out.len() < len {
        let price = (i * 7919) % 100_000;
        out.push_str(&format!(
            r#"{{"id":{i},"name":"item-{i:06}","sku":"SKU-{:08X}","price":{}.{:02},"in_stock":{},"tags":["t{}","t{}"]}},"#,
            i.wrapping_mul(2_654_435_761) & 0xffff_ffff,
            price / 100,
            price % 100,
            i % 3 == 0,
            i % 17,
            i % 29
        ));
        i += 1;
    }
    out.truncate(len);
    out.into()
}

/// A reproducible random message (a 32-bit LCG; no extra dependencies): the seed's case.
pub fn random_message(len: usize) -> Vec<u8> {
    let mut state = 0x5eed_u32;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect()
}

/// Our level and tower-http's for a deflate level the benches use (6, or 1 for fastest).
pub fn levels(level: u32) -> (tower_gzip::CompressionLevel, tower_http::CompressionLevel) {
    match level {
        1 => (
            tower_gzip::CompressionLevel::Fastest,
            tower_http::CompressionLevel::Fastest,
        ),
        _ => (
            tower_gzip::CompressionLevel::Default,
            tower_http::CompressionLevel::Default,
        ),
    }
}

/// The sizes every response group runs over.
pub const SIZES: [(&str, usize); 4] = [
    ("1KiB", 1024),
    ("16KiB", 16 * 1024),
    ("256KiB", 256 * 1024),
    ("1MiB", 1024 * 1024),
];

/// A request that accepts gzip.
pub fn gzip_request() -> Request<Full<Bytes>> {
    Request::builder()
        .header(header::ACCEPT_ENCODING, "gzip")
        .body(Full::new(Bytes::new()))
        .unwrap()
}

/// A handler answering with the whole payload as one `Full` frame.
pub fn full_response(
    payload: Bytes,
) -> impl Future<Output = Result<Response<Full<Bytes>>, Infallible>> {
    let response = Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(payload))
        .unwrap();
    std::future::ready(Ok(response))
}

type Frames =
    futures_util::stream::Iter<std::vec::IntoIter<Result<http_body::Frame<Bytes>, Infallible>>>;

/// A handler answering with the payload in 16 KiB frames, all ready.
pub fn streamed_response(
    payload: Bytes,
) -> impl Future<Output = Result<Response<StreamBody<Frames>>, Infallible>> {
    let frames: Vec<_> = (0..payload.len())
        .step_by(16 * 1024)
        .map(|at| {
            Ok(http_body::Frame::data(
                payload.slice(at..(at + 16 * 1024).min(payload.len())),
            ))
        })
        .collect();
    let response = Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(StreamBody::new(futures_util::stream::iter(frames)))
        .unwrap();
    std::future::ready(Ok(response))
}

/// Calls a clone of `svc` with `request` and reads the response body to the end; returns
/// the bytes seen.
pub async fn respond<S, ReqBody, B>(svc: &S, request: Request<ReqBody>) -> usize
where
    S: tower::Service<Request<ReqBody>, Response = Response<B>> + Clone,
    S::Error: std::fmt::Debug,
    B: Body,
    B::Error: std::fmt::Debug,
{
    use tower::ServiceExt;
    let res = svc.clone().oneshot(request).await.unwrap();
    drain(res.into_body()).await
}

/// Reads a body to the end without keeping it; returns the bytes seen.
pub async fn drain<B>(body: B) -> usize
where
    B: Body,
    B::Error: std::fmt::Debug,
{
    let mut body = std::pin::pin!(body);
    let mut total = 0;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.unwrap().into_data() {
            total += bytes::Buf::remaining(&data);
        }
    }
    total
}

/// The codec's physical floor: one reused raw deflate state with gzip framing, writing into
/// a reused buffer.
pub struct RawFloor {
    deflate: flate2::Compress,
    out: Vec<u8>,
}

impl RawFloor {
    pub fn new(level: u32) -> Self {
        RawFloor {
            deflate: flate2::Compress::new(flate2::Compression::new(level), false),
            out: Vec::with_capacity(2 * 1024 * 1024),
        }
    }

    pub fn gzip(&mut self, input: &[u8]) -> usize {
        self.deflate.reset();
        self.out.clear();
        self.out
            .extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        loop {
            let consumed = self.deflate.total_in() as usize;
            let status = self
                .deflate
                .compress_vec(
                    &input[consumed..],
                    &mut self.out,
                    flate2::FlushCompress::Finish,
                )
                .unwrap();
            if status == flate2::Status::StreamEnd {
                break;
            }
            self.out.reserve(64 * 1024);
        }
        let crc = crc32fast::hash(input);
        self.out.extend_from_slice(&crc.to_le_bytes());
        self.out
            .extend_from_slice(&(input.len() as u32).to_le_bytes());
        self.out.len()
    }
}

impl RawFloor {
    /// The gzip member written by the last [`RawFloor::gzip`] call.
    pub fn output(&self) -> &[u8] {
        &self.out
    }
}

/// `payload` as one gzip member at `level` (10-byte header, no flags), made once per bench.
pub fn gzip_bytes(payload: &[u8], level: u32) -> Bytes {
    let mut floor = RawFloor::new(level);
    floor.gzip(payload);
    Bytes::copy_from_slice(floor.output())
}

/// A `POST` whose body is `gzipped` (a gzip member), sent with `Content-Encoding: gzip`.
pub fn gzip_body_request(gzipped: Bytes) -> Request<Full<Bytes>> {
    Request::builder()
        .method(http::Method::POST)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_ENCODING, "gzip")
        .header(header::CONTENT_LENGTH, gzipped.len())
        .body(Full::new(gzipped))
        .unwrap()
}

/// A `POST` whose body is `payload`, uncompressed.
pub fn identity_body_request(payload: Bytes) -> Request<Full<Bytes>> {
    Request::builder()
        .method(http::Method::POST)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, payload.len())
        .body(Full::new(payload))
        .unwrap()
}

/// A handler that reads the request body to the end and answers an empty 200.
pub async fn drain_request<B>(req: Request<B>) -> Result<Response<Full<Bytes>>, Infallible>
where
    B: Body,
    B::Error: std::fmt::Debug,
{
    let seen = drain(req.into_body()).await;
    std::hint::black_box(seen);
    Ok(Response::new(Full::new(Bytes::new())))
}

/// The inflate floor: one reused raw inflate state and a reused output buffer; the gzip
/// header (10 bytes, no flags, as [`gzip_bytes`] writes it) and trailer are handled here, the
/// CRC32 with crc32fast. Returns the decoded length.
pub struct RawInflateFloor {
    inflate: flate2::Decompress,
    out: Vec<u8>,
}

impl RawInflateFloor {
    pub fn new() -> Self {
        RawInflateFloor {
            inflate: flate2::Decompress::new(false),
            out: Vec::with_capacity(2 * 1024 * 1024),
        }
    }

    pub fn gunzip(&mut self, member: &[u8]) -> usize {
        assert!(member.len() >= 18 && member[..4] == [0x1f, 0x8b, 8, 0]);
        let (deflate, trailer) = member[10..].split_at(member.len() - 18);
        self.inflate.reset(false);
        self.out.clear();
        loop {
            let consumed = self.inflate.total_in() as usize;
            let status = self
                .inflate
                .decompress_vec(
                    &deflate[consumed..],
                    &mut self.out,
                    flate2::FlushDecompress::Finish,
                )
                .unwrap();
            if status == flate2::Status::StreamEnd {
                break;
            }
            self.out.reserve(64 * 1024);
        }
        let crc = u32::from_le_bytes(trailer[..4].try_into().unwrap());
        let isize = u32::from_le_bytes(trailer[4..].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(&self.out));
        assert_eq!(isize, self.out.len() as u32);
        self.out.len()
    }
}

impl Default for RawInflateFloor {
    fn default() -> Self {
        Self::new()
    }
}
