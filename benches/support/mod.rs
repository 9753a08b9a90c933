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
    json_from(0, len)
}

/// Like [`json`], with the records numbered from `start` (other responses of the same API).
pub fn json_from(start: u64, len: usize) -> Bytes {
    let mut out = String::with_capacity(len + 256);
    out.push('[');
    let mut i = start;
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

/// A request that accepts only `coding` (`gzip`, `deflate`, `zstd` or `br`).
pub fn accepting(coding: &'static str) -> Request<Full<Bytes>> {
    Request::builder()
        .header(header::ACCEPT_ENCODING, coding)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

/// A `POST` whose body is `encoded`, sent with `Content-Encoding: coding`.
pub fn encoded_body_request(coding: &'static str, encoded: Bytes) -> Request<Full<Bytes>> {
    Request::builder()
        .method(http::Method::POST)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_ENCODING, coding)
        .header(header::CONTENT_LENGTH, encoded.len())
        .body(Full::new(encoded))
        .unwrap()
}

/// tower-http's compression layer offering only `coding` (`gzip`, `deflate`, `zstd` or `br`)
/// at its default quality.
pub fn tower_http_only(coding: &str) -> tower_http::compression::CompressionLayer {
    let layer = tower_http::compression::CompressionLayer::new()
        .quality(tower_http::CompressionLevel::Default);
    match coding {
        "gzip" => layer.no_deflate().no_br().no_zstd(),
        "deflate" => layer.no_gzip().no_br().no_zstd(),
        "zstd" => layer.no_gzip().no_deflate().no_br(),
        "br" => layer.no_gzip().no_deflate().no_zstd(),
        other => panic!("unknown coding {other}"),
    }
}

/// Calls a clone of `svc` once with `request`; panics unless the response is encoded with
/// `coding`. Returns the encoded body's length. For benchmark setup: proves a group
/// measures the coding it is named after.
pub async fn expect_coding<S, B>(svc: &S, request: Request<Full<Bytes>>, coding: &str) -> usize
where
    S: tower::Service<Request<Full<Bytes>>, Response = Response<B>> + Clone,
    S::Error: std::fmt::Debug,
    B: Body,
    B::Error: std::fmt::Debug,
{
    use tower::ServiceExt;
    let res = svc.clone().oneshot(request).await.unwrap();
    let got = res
        .headers()
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(got.as_deref(), Some(coding), "content-encoding");
    drain(res.into_body()).await
}

/// gzip level 6 by libdeflate alone: one reused `libdeflater::Compressor` writing a gzip
/// member into a reused buffer. The floor of the one-shot path (bodies up to 64 KiB).
#[cfg(feature = "libdeflate")]
pub struct LibdeflateFloor {
    compressor: libdeflater::Compressor,
    out: Vec<u8>,
}

#[cfg(feature = "libdeflate")]
impl LibdeflateFloor {
    pub fn new(level: u32) -> Self {
        let level = libdeflater::CompressionLvl::new(level as i32).unwrap();
        LibdeflateFloor {
            compressor: libdeflater::Compressor::new(level),
            out: Vec::new(),
        }
    }

    pub fn gzip(&mut self, input: &[u8]) -> usize {
        let bound = self.compressor.gzip_compress_bound(input.len());
        self.out.resize(bound, 0);
        self.compressor.gzip_compress(input, &mut self.out).unwrap()
    }
}

/// zstd alone: one reused `zstd_safe::CCtx` at `level` (no content checksum, as the layer
/// writes it), reset per body (`SessionOnly`), the input size pledged, and the whole
/// frame written by one `compress_stream2(.., e_end)` into a reused buffer.
#[cfg(feature = "zstd")]
pub struct ZstdFloor {
    cctx: zstd_safe::CCtx<'static>,
    out: Vec<u8>,
}

#[cfg(feature = "zstd")]
impl ZstdFloor {
    pub fn new(level: i32) -> Self {
        let mut cctx = zstd_safe::CCtx::create();
        cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level))
            .unwrap();
        ZstdFloor {
            cctx,
            out: Vec::new(),
        }
    }

    pub fn compress(&mut self, input: &[u8]) -> usize {
        self.cctx
            .reset(zstd_safe::ResetDirective::SessionOnly)
            .unwrap();
        self.cctx
            .set_pledged_src_size(Some(input.len() as u64))
            .unwrap();
        self.out.clear();
        self.out.reserve(zstd_safe::compress_bound(input.len()));
        let mut output = zstd_safe::OutBuffer::around(&mut self.out);
        let mut input = zstd_safe::InBuffer::around(input);
        let left = self
            .cctx
            .compress_stream2(
                &mut output,
                &mut input,
                zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end,
            )
            .unwrap();
        assert_eq!(left, 0, "one call with compress_bound room ends the frame");
        self.out.len()
    }

    /// The frame written by the last [`ZstdFloor::compress`] call.
    pub fn output(&self) -> &[u8] {
        &self.out
    }
}

/// zstd decoding alone: one reused `DCtx`, the whole frame into a reused buffer.
#[cfg(feature = "zstd")]
pub struct ZstdDecodeFloor {
    dctx: zstd_safe::DCtx<'static>,
    out: Vec<u8>,
}

#[cfg(feature = "zstd")]
impl ZstdDecodeFloor {
    pub fn new(capacity: usize) -> Self {
        ZstdDecodeFloor {
            dctx: zstd_safe::DCtx::create(),
            out: Vec::with_capacity(capacity),
        }
    }

    pub fn decompress(&mut self, frame: &[u8]) -> usize {
        self.out.clear();
        self.dctx.decompress(&mut self.out, frame).unwrap()
    }
}

/// `payload` as one zstd frame at `level` (pledged size), made once per bench.
#[cfg(feature = "zstd")]
pub fn zstd_bytes(payload: &[u8], level: i32) -> Bytes {
    let mut floor = ZstdFloor::new(level);
    floor.compress(payload);
    Bytes::copy_from_slice(floor.output())
}

/// br alone: the brotli crate's one-call compressor (`BrotliCompressCustomAlloc`, reader to
/// writer) at `quality`, window 22 (`lgwin`, as the layer and tower-http use), the size hint
/// set to the input's length and the whole input handed over in one piece (as tower-http's
/// encoder receives a `Full` body), into reused buffers. The encoder state is built and freed
/// inside every call: that is the crate's one-call API (`BrotliEncoderCompress` over slices
/// is only exported through its C API).
#[cfg(feature = "br")]
pub struct BrFloor {
    params: brotli::enc::BrotliEncoderParams,
    input: Vec<u8>,
    chunk: Vec<u8>,
    out: Vec<u8>,
}

#[cfg(feature = "br")]
impl BrFloor {
    pub fn new(quality: i32) -> Self {
        let params = brotli::enc::BrotliEncoderParams {
            quality,
            lgwin: 22,
            ..Default::default()
        };
        BrFloor {
            params,
            input: Vec::new(),
            chunk: vec![0; 64 * 1024],
            out: Vec::new(),
        }
    }

    pub fn compress(&mut self, mut input: &[u8]) -> usize {
        self.params.size_hint = input.len();
        self.input.resize(input.len().max(1), 0);
        self.out.clear();
        brotli::BrotliCompressCustomAlloc(
            &mut input,
            &mut self.out,
            &mut self.input,
            &mut self.chunk,
            &self.params,
            brotli::enc::StandardAlloc::default(),
        )
        .unwrap()
    }

    /// The stream written by the last [`BrFloor::compress`] call.
    pub fn output(&self) -> &[u8] {
        &self.out
    }
}

/// br decoding alone: the brotli crate's one-call `BrotliDecompress` into a reused buffer.
#[cfg(feature = "br")]
pub struct BrDecodeFloor {
    out: Vec<u8>,
}

#[cfg(feature = "br")]
impl BrDecodeFloor {
    pub fn new(capacity: usize) -> Self {
        BrDecodeFloor {
            out: Vec::with_capacity(capacity),
        }
    }

    pub fn decompress(&mut self, mut stream: &[u8]) -> usize {
        self.out.clear();
        brotli::BrotliDecompress(&mut stream, &mut self.out).unwrap();
        self.out.len()
    }
}

/// `payload` as one br stream at `quality`, window 22, made once per bench.
#[cfg(feature = "br")]
pub fn br_bytes(payload: &[u8], quality: i32) -> Bytes {
    let mut floor = BrFloor::new(quality);
    floor.compress(payload);
    Bytes::copy_from_slice(floor.output())
}

/// Both layers hand the handler exactly `payload` when sent `encoded` with
/// `Content-Encoding: coding` (so the request groups measure real decoding).
pub fn check_request_decoding(
    rt: &tokio::runtime::Runtime,
    coding: &'static str,
    payload: &Bytes,
    encoded: &Bytes,
) {
    use tower::{Layer, ServiceExt, service_fn};
    async fn collect<B>(req: Request<B>) -> Result<Response<Full<Bytes>>, B::Error>
    where
        B: Body<Data = Bytes>,
    {
        let body = req.into_body().collect().await?.to_bytes();
        Ok(Response::new(Full::new(body)))
    }
    async fn body<B>(res: Response<B>) -> Bytes
    where
        B: Body<Data = Bytes>,
        B::Error: std::fmt::Debug,
    {
        res.into_body().collect().await.unwrap().to_bytes()
    }
    rt.block_on(async {
        let ours =
            tower_gzip::decompression::RequestDecompressionLayer::new().layer(service_fn(collect));
        let res = ours
            .oneshot(encoded_body_request(coding, encoded.clone()))
            .await;
        assert_eq!(
            body(res.unwrap()).await,
            payload,
            "tower-gzip decoding {coding}"
        );
        let theirs =
            tower_http::decompression::RequestDecompressionLayer::new().layer(service_fn(collect));
        let res = theirs
            .oneshot(encoded_body_request(coding, encoded.clone()))
            .await;
        assert_eq!(
            body(res.unwrap()).await,
            payload,
            "tower-http decoding {coding}"
        );
    });
}

/// A 16 KiB dictionary trained on 400 responses of the [`json`] API numbered from 10^6
/// (records the measured bodies, numbered from 0, do not contain), and a store holding it.
#[cfg(feature = "dcz")]
pub fn trained_dictionary() -> (
    tower_gzip::dictionary::Dictionary,
    tower_gzip::dictionary::DictionaryStore,
) {
    use tower_gzip::dictionary::{Dictionary, DictionaryStore, train};
    use tower_gzip::headers::UseAsDictionary;
    let samples: Vec<Bytes> = (0..400)
        .map(|k| json_from(1_000_000 + k * 37, 1024 + (k as usize % 7) * 512))
        .collect();
    let trained = train(&samples, 16 * 1024).expect("training");
    let dictionary = Dictionary::new(trained, UseAsDictionary::new("/*")).unwrap();
    let store = DictionaryStore::new(1 << 20);
    store.insert(dictionary.clone());
    (dictionary, store)
}

/// The dictionary `DictionaryBuilder` chooses from the same 400 responses as
/// [`trained_dictionary`], a store holding it, and the `dcz` level and `dcb` quality it chose.
#[cfg(all(feature = "dcz", feature = "dcb"))]
pub fn built_dictionary() -> (
    tower_gzip::dictionary::Dictionary,
    tower_gzip::dictionary::DictionaryStore,
    i32,
    i32,
) {
    use tower_gzip::dictionary::{Dictionary, DictionaryBuilder, DictionaryStore};
    use tower_gzip::headers::UseAsDictionary;
    let samples: Vec<Bytes> = (0..400)
        .map(|k| json_from(1_000_000 + k * 37, 1024 + (k as usize % 7) * 512))
        .collect();
    let built = DictionaryBuilder::new(&samples)
        .build()
        .expect("a dictionary");
    let dcb_quality = built.dcb_quality.expect("dcb is compiled in");
    let dictionary = Dictionary::new(built.bytes, UseAsDictionary::new("/*")).unwrap();
    let store = DictionaryStore::new(1 << 20);
    store.insert(dictionary.clone());
    (dictionary, store, built.dcz_level, dcb_quality)
}

/// A same-origin request accepting only `coding`, naming `dictionary`.
#[cfg(feature = "dcz")]
pub fn offering(
    coding: &'static str,
    dictionary: &tower_gzip::dictionary::Dictionary,
) -> Request<Full<Bytes>> {
    let mut req = accepting(coding);
    req.headers_mut()
        .insert("available-dictionary", dictionary.available_dictionary());
    req.headers_mut().insert(
        "sec-fetch-site",
        http::HeaderValue::from_static("same-origin"),
    );
    req
}
