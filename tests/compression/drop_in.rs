//! The drop-in contract: tower-http's own gzip tests, ported unchanged (a 13-byte body with
//! trailers whose size is not exact, `compress_when(Always)`, no `min_size` adaptation), and
//! every predicate form on small bodies of exact, inexact and unknown size: a custom
//! predicate decides alone, only `DefaultPredicate` (and what combines it so that it must
//! agree) applies the `min_size` floor.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use tower::{ServiceExt, service_fn};
use tower_gzip::compression::{Compression, CompressionLayer, DefaultPredicate, Predicate};

use crate::common::{BoxError, decode, gunzip, text};
use crate::support::{Always, get, round, stream_of, trailers};

/// tower-http's `handle`: "Hello, World!" with a `foo: bar` trailer, as a body whose size
/// is not exact (a stream of one chunk).
async fn handle(
    _req: Request<()>,
) -> Result<Response<impl Body<Data = Bytes, Error = BoxError>>, Infallible> {
    let body = stream_of(vec![Bytes::from_static(b"Hello, World!")])
        .with_trailers(async { Some(Ok(trailers(&[("foo", "bar")]))) });
    Ok(Response::new(body))
}

/// Ports tower-http `compression::tests::gzip_works` unchanged.
#[tokio::test]
async fn gzip_works() {
    let svc = Compression::new(service_fn(handle)).compress_when(Always);
    let res = svc.oneshot(get(Some("gzip"))).await.unwrap();
    let collected = res.into_body().collect().await.unwrap();
    let trailers = collected.trailers().cloned().unwrap();
    let compressed = collected.to_bytes();
    assert_eq!(gunzip(&compressed), b"Hello, World!");
    assert_eq!(trailers["foo"], "bar");
}

/// Ports tower-http `compression::tests::x_gzip_works` unchanged: `x-gzip` is gzip.
#[tokio::test]
async fn x_gzip_works() {
    let svc = Compression::new(service_fn(handle)).compress_when(Always);
    let res = svc.oneshot(get(Some("x-gzip"))).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "gzip");
    let collected = res.into_body().collect().await.unwrap();
    let trailers = collected.trailers().cloned().unwrap();
    assert_eq!(gunzip(&collected.to_bytes()), b"Hello, World!");
    assert_eq!(trailers["foo"], "bar");
}

/// Ports tower-http `compression::tests::zstd_works` unchanged, over the inexact body.
#[cfg(feature = "zstd")]
#[tokio::test]
async fn zstd_works() {
    let svc = Compression::new(service_fn(handle)).compress_when(Always);
    let res = svc.oneshot(get(Some("zstd"))).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], "zstd");
    let collected = res.into_body().collect().await.unwrap();
    assert_eq!(collected.trailers().expect("trailers")["foo"], "bar");
    assert_eq!(
        crate::common::unzstd(&collected.to_bytes()),
        b"Hello, World!"
    );
}

/// Ports tower-http `compression::tests::trailers_with_streamed_body` unchanged: small
/// ready chunks of unknown total size, with trailers.
#[tokio::test]
async fn trailers_with_streamed_body() {
    let body = stream_of(vec!["chunk1".into(), "chunk2".into(), "chunk3".into()])
        .with_trailers(async { Some(Ok(trailers(&[("grpc-status", "0")]))) });
    let layer = CompressionLayer::new().compress_when(Always);
    let out = round(&layer, Some("gzip"), Response::new(body)).await;
    assert_eq!(out.encoding(), Some("gzip"));
    assert_eq!(gunzip(&out.body), b"chunk1chunk2chunk3");
    assert_eq!(out.trailers.expect("trailers")["grpc-status"], "0");
}

/// Ports tower-http `compression::tests::wildcard_alone_compresses`: `Accept-Encoding: *`
/// gets a coding (the most preferred compiled in), and the body decodes.
#[tokio::test]
async fn wildcard_alone_compresses() {
    let svc = Compression::new(service_fn(handle)).compress_when(Always);
    let res = svc.oneshot(get(Some("*"))).await.unwrap();
    let coding = res.headers()[CONTENT_ENCODING].to_str().unwrap().to_owned();
    let collected = res.into_body().collect().await.unwrap();
    assert_eq!(
        decode(Some(&coding), &collected.to_bytes()),
        b"Hello, World!"
    );
}

/// A body of `data` whose size hint is exact, a range, or unknown.
struct Sized {
    data: Option<Bytes>,
    hint: SizeHint,
}

#[derive(Clone, Copy, Debug)]
enum Size {
    Exact,
    Inexact,
    Unknown,
}

impl Sized {
    fn new(data: Vec<u8>, size: Size) -> Self {
        let len = data.len() as u64;
        let hint = match size {
            Size::Exact => SizeHint::with_exact(len),
            Size::Inexact => {
                let mut hint = SizeHint::new();
                hint.set_lower(len / 2);
                hint.set_upper(len * 2);
                hint
            }
            Size::Unknown => SizeHint::new(),
        };
        Sized {
            data: Some(Bytes::from(data)),
            hint,
        }
    }
}

impl Body for Sized {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.data.take().map(|d| Ok(Frame::data(d))))
    }

    fn size_hint(&self) -> SizeHint {
        self.hint
    }
}

/// Whether `predicate` gets a 100-byte body (under the 256-byte floor) of each size kind
/// compressed, as `content_type`.
async fn compressed<P: Predicate>(predicate: P, content_type: &'static str) -> [bool; 3] {
    let layer = CompressionLayer::new().compress_when(predicate);
    let mut out = [false; 3];
    for (i, size) in [Size::Exact, Size::Inexact, Size::Unknown]
        .into_iter()
        .enumerate()
    {
        let mut res = Response::new(Sized::new(text(100), size));
        res.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        let got = round(&layer, Some("gzip"), res).await;
        assert_eq!(got.decoded(), text(100), "{size:?}");
        out[i] = got.encoding() == Some("gzip");
    }
    out
}

#[tokio::test]
async fn every_predicate_form_on_small_bodies_of_every_size_kind() {
    const YES: [bool; 3] = [true; 3];
    const NO: [bool; 3] = [false; 3];
    let text_plain = "text/plain";
    let closure = |_: StatusCode, _: http::Version, _: &HeaderMap, _: &http::Extensions| true;
    let cases: Vec<(&str, [bool; 3])> = vec![
        (
            "default",
            compressed(DefaultPredicate::new(), text_plain).await,
        ),
        ("closure", compressed(closure, text_plain).await),
        ("Always", compressed(Always, text_plain).await),
        (
            "Always and default",
            compressed(Always.and(DefaultPredicate::new()), text_plain).await,
        ),
        (
            "default and closure",
            compressed(DefaultPredicate::new().and(closure), text_plain).await,
        ),
        (
            "Always or default",
            compressed(Always.or(DefaultPredicate::new()), text_plain).await,
        ),
        (
            "default or default",
            compressed(
                DefaultPredicate::new().or(DefaultPredicate::new()),
                text_plain,
            )
            .await,
        ),
        // Not(default) picks what the default turns down (images) and applies no floor.
        (
            "not default, image",
            compressed(DefaultPredicate::new().not(), "image/png").await,
        ),
        (
            "not default, text",
            compressed(DefaultPredicate::new().not(), text_plain).await,
        ),
        ("not closure", compressed(closure.not(), text_plain).await),
        (
            "Some(default)",
            compressed(Some(DefaultPredicate::new()), text_plain).await,
        ),
        (
            "None",
            compressed(None::<DefaultPredicate>, text_plain).await,
        ),
        ("Some(Always)", compressed(Some(Always), text_plain).await),
    ];
    let expected: Vec<(&str, [bool; 3])> = vec![
        ("default", NO),
        ("closure", YES),
        ("Always", YES),
        ("Always and default", NO),
        ("default and closure", NO),
        ("Always or default", YES),
        ("default or default", NO),
        ("not default, image", YES),
        ("not default, text", NO),
        ("not closure", NO),
        ("Some(default)", NO),
        ("None", YES),
        ("Some(Always)", YES),
    ];
    assert_eq!(cases, expected);
    // Above the floor every form that says yes compresses, whatever the size kind.
    let layer = CompressionLayer::new().compress_when(DefaultPredicate::new());
    for size in [Size::Exact, Size::Inexact, Size::Unknown] {
        let got = round(
            &layer,
            Some("gzip"),
            Response::new(Sized::new(text(1000), size)),
        )
        .await;
        assert_eq!(got.encoding(), Some("gzip"), "{size:?}");
    }
}

/// The zstd answer's bytes.
#[cfg(feature = "zstd")]
async fn zstd_answer<B>(res: Response<B>) -> Bytes
where
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Debug,
{
    assert_eq!(res.headers()[CONTENT_ENCODING], "zstd");
    res.into_body().collect().await.unwrap().to_bytes()
}

/// A swapper's bytes: zstd at `Best` is no larger than tower-http's on a body known in full
/// (44,890 bytes of numbered lines, where a pledged size once cost libzstd its block
/// splitter).
#[cfg(feature = "zstd")]
#[tokio::test]
async fn zstd_best_is_no_larger_than_tower_https() {
    use http_body_util::Full;
    use tower::Layer;
    let lines: String = (0..3000)
        .map(|i| format!("line {i} of some text\n"))
        .collect();
    let body = Bytes::from(lines[..44_890].to_owned());
    let full = |body: Bytes| {
        service_fn(move |_: Request<()>| {
            let body = Full::new(body.clone());
            async move { Ok::<_, Infallible>(Response::new(body)) }
        })
    };
    let ours = CompressionLayer::new().quality(tower_gzip::CompressionLevel::Best);
    let ours = ours.layer(full(body.clone())).oneshot(get(Some("zstd")));
    let ours = zstd_answer(ours.await.unwrap()).await;
    let theirs = tower_http::compression::CompressionLayer::new()
        .quality(tower_http::CompressionLevel::Best);
    let theirs = theirs.layer(full(body.clone())).oneshot(get(Some("zstd")));
    let theirs = zstd_answer(theirs.await.unwrap()).await;
    assert_eq!(decode(Some("zstd"), &ours), body);
    let (ours, theirs) = (ours.len(), theirs.len());
    eprintln!("zstd Best, 44,890 B of lines: ours {ours} B, tower-http {theirs} B");
    assert!(ours <= theirs, "ours {ours} B, tower-http {theirs} B");
}
