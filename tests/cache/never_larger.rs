//! An entry is never larger than what the layer sends uncached: a body too large to
//! compress on the request path is filed by the background worker at the smaller of its
//! coding's densest level and the layer's own, since the densest is not always smallest
//! (br 11 loses to br 4 on long, repetitive text).

use std::convert::Infallible;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING};
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use tower::{Layer, ServiceExt, service_fn};
use tower_gzip::ContentCoding;
use tower_gzip::cache::VariantCache;
use tower_gzip::compression::CompressionLayer;
use tower_gzip_support::decode;

/// 67,890 bytes of numbered lines: larger than one request's slice, so the worker files it.
fn text() -> Bytes {
    let lines = (0..3000).map(|i| format!("line {i} of some text\n"));
    Bytes::from(lines.collect::<String>())
}

/// What the layer sends for `body` in `coding`, checked to decode to it.
async fn answer(layer: &CompressionLayer, body: &Bytes, coding: &str) -> usize {
    let body = body.clone();
    let service = layer.layer(service_fn(move |_: Request<()>| {
        let res = Response::new(Full::new(body.clone()));
        async move { Ok::<_, Infallible>(res) }
    }));
    let req = Request::get("/text")
        .header(ACCEPT_ENCODING, coding)
        .body(());
    let res = service.oneshot(req.unwrap()).await.unwrap();
    assert_eq!(res.headers()[CONTENT_ENCODING], coding);
    let wire = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(decode::decode(Some(coding), &wire), text());
    wire.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filed_entry_is_never_larger_than_the_answer_it_replaces() {
    let body = text();
    assert_eq!(body.len(), 67_890);
    for coding in ContentCoding::PLAIN {
        let cache = VariantCache::builder().recompress(Some(1.0)).build();
        let layer = CompressionLayer::new().cache(cache.clone());
        let coding = coding.as_str();
        let uncached = answer(&layer, &body, coding).await;
        let deadline = Instant::now() + Duration::from_secs(60);
        while cache.stats().admitted == 0 && Instant::now() < deadline {
            assert_eq!(answer(&layer, &body, coding).await, uncached);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(cache.stats().admitted, 1, "{coding}: filed within 60 s");
        let cached = answer(&layer, &body, coding).await;
        assert_eq!(cache.stats().hits, 1, "{coding}");
        assert!(
            cached <= uncached,
            "{coding}: {cached} B cached, {uncached} B uncached"
        );
    }
}
