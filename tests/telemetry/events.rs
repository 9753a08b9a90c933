//! The `tracing` events: one per response, at `DEBUG`, with the coding and its bytes or the
//! reason none was used.

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE};
use http::{Extensions, HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Version};
use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody};
use tower_gzip::compression::predicate::Predicate;
use tower_gzip::compression::{CompressionLayer, SkipReason, ToCompress};
use tower_gzip::{BoxError, CodecPool, ContentCoding};
use tracing::Level;

use crate::capture::capture;
use crate::{body, get, respond, text};

fn full(data: Bytes) -> Response<Full<Bytes>> {
    Response::new(Full::new(data))
}

fn with_header(
    mut res: Response<Full<Bytes>>,
    name: http::HeaderName,
    value: &'static str,
) -> Response<Full<Bytes>> {
    res.headers_mut()
        .insert(name, HeaderValue::from_static(value));
    res
}

fn layer() -> CompressionLayer {
    CompressionLayer::new().pool(CodecPool::new())
}

/// A body of unknown size: `chunks`, then nothing more for ever (a stream that waits).
fn waiting(
    chunks: Vec<Bytes>,
) -> StreamBody<impl futures_util::Stream<Item = Result<Frame<Bytes>, BoxError>>> {
    use futures_util::StreamExt;
    let frames = chunks.into_iter().map(|c| Ok(Frame::data(c)));
    StreamBody::new(futures_util::stream::iter(frames).chain(futures_util::stream::pending()))
}

#[tokio::test]
async fn a_body_known_in_full_tells_its_coding_bytes_and_time() {
    let (events, _guard) = capture();
    let layer = layer();
    let res = respond(&layer, get(Some("gzip")), full(text(4000))).await;
    let event = events.one("compressed");
    let out = body(res).await;
    assert_eq!(event.level, Level::DEBUG);
    assert_eq!(event.str("coding"), Some("gzip"));
    assert_eq!(event.u64("level"), Some(6));
    assert_eq!(event.u64("bytes_in"), Some(4000));
    assert_eq!(event.u64("bytes_out"), Some(out.len() as u64));
    assert!(out.len() < 2000, "{} bytes", out.len());
    assert_eq!(event.bool("streamed"), Some(false));
    assert_eq!(event.bool("complete"), Some(true));
    // A subscriber wants the event, so the time is measured.
    assert!(event.u64("elapsed_us").is_some(), "{event:?}");
    assert!(events.take().is_empty(), "one event per response");
    let stats = layer.stats().coding(ContentCoding::Gzip);
    assert_eq!((stats.compressed, stats.bytes_in), (1, 4000));
}

#[tokio::test]
async fn a_stream_tells_when_it_ends() {
    let (events, _guard) = capture();
    let layer = layer();
    // Known to be larger than one poll's slice: streamed from the start.
    let res = respond(&layer, get(Some("deflate")), full(text(200_000))).await;
    assert!(
        events.take().is_empty(),
        "nothing told before the body ends"
    );
    let out = body(res).await;
    let event = events.one("compressed");
    assert_eq!(event.str("coding"), Some("deflate"));
    assert_eq!(event.u64("bytes_in"), Some(200_000));
    assert_eq!(event.u64("bytes_out"), Some(out.len() as u64));
    assert_eq!(event.bool("streamed"), Some(true));
    assert_eq!(event.bool("complete"), Some(true));
    assert!(event.u64("elapsed_us").is_some());
}

#[tokio::test]
async fn a_stream_dropped_before_its_end_says_so() {
    let (events, _guard) = capture();
    let layer = layer();
    let res = respond(
        &layer,
        get(Some("gzip")),
        Response::new(waiting(vec![text(2000)])),
    )
    .await;
    let mut body = res.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert!(!first.is_empty());
    assert!(events.take().is_empty());
    drop(body);
    let event = events.one("compressed");
    assert_eq!(event.str("coding"), Some("gzip"));
    assert_eq!(event.u64("bytes_in"), Some(2000));
    assert_eq!(event.u64("bytes_out"), Some(first.len() as u64));
    assert_eq!(event.bool("streamed"), Some(true));
    assert_eq!(event.bool("complete"), Some(false));
}

/// Runs one response and returns the reason its event gives, checking the counter by that
/// reason moved too.
async fn reason_for<P: Predicate>(
    layer: &CompressionLayer<P>,
    req: Request<()>,
    res: Response<Full<Bytes>>,
) -> (String, StatusCode) {
    let (events, _guard) = capture();
    let stats = layer.stats();
    let skipped = || -> u64 { SkipReason::ALL.iter().map(|&r| stats.skipped_for(r)).sum() };
    let before = skipped();
    let res = respond(layer, req, res).await;
    let status = res.status();
    // Sent as it was (a response that came encoded keeps its coding).
    let encoding = res.headers().get(CONTENT_ENCODING);
    assert!(encoding.is_none_or(|v| v != "gzip"), "{encoding:?}");
    body(res).await;
    let event = events.one("not compressed");
    assert_eq!(event.level, Level::DEBUG);
    assert!(event.str("coding").is_none());
    let reason = event.str("reason").unwrap().to_owned();
    let counted = SkipReason::ALL
        .into_iter()
        .find(|r| r.to_string() == reason)
        .unwrap_or_else(|| panic!("{reason}: not a SkipReason"));
    assert_eq!(skipped(), before + 1);
    assert!(stats.skipped_for(counted) >= 1);
    (reason, status)
}

/// The reason expected, the request, the response.
type Case = (&'static str, Request<()>, Response<Full<Bytes>>);

#[tokio::test]
async fn each_skipped_response_tells_why() {
    let layer = layer();
    let big = || full(text(4000));
    let gzip = || get(Some("gzip"));
    let cases: Vec<Case> = vec![
        ("size", gzip(), full(text(100))),
        (
            "type",
            gzip(),
            with_header(big(), CONTENT_TYPE, "image/png"),
        ),
        (
            "no_transform",
            gzip(),
            with_header(big(), CACHE_CONTROL, "public, no-transform"),
        ),
        (
            "already_encoded",
            gzip(),
            with_header(big(), CONTENT_ENCODING, "br"),
        ),
        (
            "partial",
            gzip(),
            with_header(big(), http::header::CONTENT_RANGE, "bytes 0-3999/9000"),
        ),
        ("identity", get(Some("identity")), big()),
        ("identity", get(None), big()),
        ("not_acceptable", get(Some("identity;q=0")), big()),
    ];
    for (want, req, res) in cases {
        let (reason, _) = reason_for(&layer, req, res).await;
        assert_eq!(reason, want);
    }
    let (reason, status) = reason_for(&layer, get(Some("identity;q=0")), big()).await;
    assert_eq!(
        (reason.as_str(), status),
        ("not_acceptable", StatusCode::NOT_ACCEPTABLE)
    );

    let mut head = gzip();
    *head.method_mut() = Method::HEAD;
    assert_eq!(reason_for(&layer, head, big()).await.0, "no_body");
    let mut no_content = big();
    *no_content.status_mut() = StatusCode::NO_CONTENT;
    assert_eq!(reason_for(&layer, gzip(), no_content).await.0, "no_body");
}

#[tokio::test]
async fn the_predicate_and_the_level_chooser_are_reasons_too() {
    let refuse = |_: StatusCode, _: Version, _: &HeaderMap, _: &Extensions| false;
    let by_predicate = layer().compress_when(refuse);
    let (reason, _) = reason_for(&by_predicate, get(Some("gzip")), full(text(4000))).await;
    assert_eq!(reason, "predicate");

    let by_level = layer().level_for(|_: &ToCompress<'_>| None);
    let (reason, _) = reason_for(&by_level, get(Some("gzip")), full(text(4000))).await;
    assert_eq!(reason, "level");
}

#[tokio::test]
async fn a_small_body_of_unknown_size_read_ahead_is_skipped_for_its_size() {
    let (events, _guard) = capture();
    let layer = layer();
    let frames = vec![Ok::<_, BoxError>(Frame::data(text(100)))];
    let body_of_unknown_size = StreamBody::new(futures_util::stream::iter(frames));
    let res = respond(
        &layer,
        get(Some("gzip")),
        Response::new(body_of_unknown_size),
    )
    .await;
    assert_eq!(body(res).await.len(), 100);
    assert_eq!(events.one("not compressed").str("reason"), Some("size"));
    assert_eq!(layer.stats().skipped_for(SkipReason::Size), 1);
}

#[tokio::test]
async fn a_body_that_fails_before_anything_is_compressed_is_an_error() {
    let (events, _guard) = capture();
    let layer = layer();
    let frames = vec![Err::<Frame<Bytes>, BoxError>("the handler gave up".into())];
    let failing = StreamBody::new(futures_util::stream::iter(frames));
    let res = respond(&layer, get(Some("gzip")), Response::new(failing)).await;
    assert!(res.into_body().collect().await.is_err());
    assert_eq!(events.one("not compressed").str("reason"), Some("error"));
}

#[cfg(feature = "dcz")]
#[tokio::test]
async fn a_request_naming_an_unknown_dictionary_tells_the_outcome() {
    use tower_gzip::dictionary::DictionaryStore;
    let (events, _guard) = capture();
    let layer = layer().dictionaries(DictionaryStore::new(1 << 20));
    let mut req = get(Some("dcz, gzip"));
    let hash = ":AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=:";
    req.headers_mut()
        .insert("available-dictionary", HeaderValue::from_static(hash));
    let res = respond(&layer, req, full(text(4000))).await;
    body(res).await;
    let told = events.take();
    let outcome = told.iter().find(|e| e.message() == "dictionary").unwrap();
    assert_eq!(outcome.str("outcome"), Some("unknown"));
    let compressed = told.iter().find(|e| e.message() == "compressed").unwrap();
    assert_eq!(compressed.str("coding"), Some("gzip"));
    assert_eq!(layer.stats().dictionaries().unknown, 1);
}
