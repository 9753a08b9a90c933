//! Streamed responses cached by their validator: served only when the path and the strong
//! `ETag` both match, never from a stream that did not complete, without reading the body.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, ETAG, HOST};
use http::{Request, Response};
use http_body::Body;
use http_body_util::BodyExt;
use std::convert::Infallible;
use tower::{Layer, Service, ServiceExt, service_fn};
use tower_gzip_support::bodies::{BodySender, ChannelBody, Probe, StutterBody, Tap};

use tower_gzip::cache::VariantCache;
use tower_gzip::codec::OneShot;
use tower_gzip::compression::CompressionLayer;
use tower_gzip::{BoxError, ContentCoding};

/// JSON of about `bytes` bytes, distinct per `seed`, in frames of 16 KiB.
fn frames(seed: u64, bytes: usize) -> (Bytes, Vec<Bytes>) {
    let mut out = String::new();
    let mut i = 0u64;
    while out.len() < bytes {
        out.push_str(&format!(
            r#"{{"id":{},"seed":{seed},"v":"{}"}},"#,
            i,
            i % 13
        ));
        i += 1;
    }
    let body = Bytes::from(out);
    let chunks = body.chunks(16 * 1024).map(Bytes::copy_from_slice).collect();
    (body, chunks)
}

/// A layer with a cache that keys streamed responses by `ETag` (no background worker unless
/// `recompress`).
fn layer(recompress: bool) -> (VariantCache, CompressionLayer) {
    let cache = VariantCache::builder()
        .by_etag(true)
        .recompress(recompress.then_some(1.0))
        .build();
    (cache.clone(), CompressionLayer::new().cache(cache))
}

/// Answers every path with `chunks`, streamed (pending between frames), under the `ETag`
/// the test sets, counting the bytes read from the body in `probe`.
fn streaming_service(
    layer: &CompressionLayer,
    chunks: Vec<Bytes>,
    etag: Arc<Mutex<&'static str>>,
    probe: Arc<Probe>,
) -> impl Service<
    Request<()>,
    Response = Response<impl Body<Data = Bytes, Error = BoxError> + use<>>,
    Error = Infallible,
> + Clone {
    layer.layer(service_fn(move |_: Request<()>| {
        let body = Tap::new(StutterBody::data(chunks.clone()), probe.clone());
        let mut res = Response::new(body);
        let etag = *etag.lock().unwrap();
        res.headers_mut().insert(ETAG, etag.parse().unwrap());
        async move { Ok::<_, Infallible>(res) }
    }))
}

/// A GET of `path` accepting `coding`: the coding answered and the body it decodes to.
async fn get<S, B>(service: &S, path: &str, coding: ContentCoding) -> (Option<String>, Vec<u8>)
where
    S: Service<Request<()>, Response = Response<B>, Error = Infallible> + Clone,
    B: Body<Data = Bytes, Error = BoxError>,
{
    let req = Request::get(path)
        .header(HOST, "app.example")
        .header(ACCEPT_ENCODING, coding.as_str())
        .body(())
        .unwrap();
    let res = service.clone().oneshot(req).await.unwrap();
    let encoding = res.headers().get(CONTENT_ENCODING).cloned();
    let length = res.headers().get(CONTENT_LENGTH).cloned();
    let wire = res.into_body().collect().await.unwrap().to_bytes();
    if let Some(length) = length {
        assert_eq!(length.to_str().unwrap(), wire.len().to_string());
    }
    let Some(encoding) = encoding else {
        return (None, wire.to_vec());
    };
    let coding = ContentCoding::from_token(encoding.to_str().unwrap()).unwrap();
    let plain = OneShot::new(coding).decode(&wire, 64 << 20).unwrap();
    (Some(coding.as_str().to_owned()), plain.to_vec())
}

#[tokio::test]
async fn a_streamed_body_with_a_strong_etag_is_served_by_it_without_being_read() {
    let (cache, layer) = layer(false);
    for (seed, coding) in ContentCoding::PLAIN.iter().enumerate() {
        let (body, chunks) = frames(seed as u64, 100_000);
        let probe = Arc::new(Probe::default());
        let etag = Arc::new(Mutex::new("\"v1\""));
        let service = streaming_service(&layer, chunks, etag, probe.clone());
        let hits = cache.stats().hits;
        let path = format!("/app-{seed}.js");
        // Seen, then recorded and filed as it streams.
        for _ in 0..2 {
            assert_eq!(get(&service, &path, *coding).await.1, body);
            assert_eq!(probe.take_total(), body.len());
        }
        let (encoding, plain) = get(&service, &path, *coding).await;
        assert_eq!(
            (encoding.as_deref(), plain),
            (Some(coding.as_str()), body.to_vec())
        );
        assert_eq!(probe.take_total(), 0, "{coding:?}: a hit reads no body");
        assert_eq!(cache.stats().hits - hits, 1, "{coding:?}");
    }
}

#[tokio::test]
async fn a_validator_entry_is_used_only_when_path_and_etag_both_match() {
    let (cache, layer) = layer(false);
    let (body, chunks) = frames(10, 60_000);
    let probe = Arc::new(Probe::default());
    let etag = Arc::new(Mutex::new("\"a\""));
    let service = streaming_service(&layer, chunks, etag.clone(), probe.clone());
    for _ in 0..2 {
        get(&service, "/one", ContentCoding::Gzip).await;
    }
    assert_eq!(cache.stats().admitted, 1);
    // Another path, another query, another ETag: each its own key, never the entry's.
    for path in ["/two", "/one?x=1"] {
        assert_eq!(get(&service, path, ContentCoding::Gzip).await.1, body);
    }
    *etag.lock().unwrap() = "\"b\"";
    assert_eq!(get(&service, "/one", ContentCoding::Gzip).await.1, body);
    assert_eq!(cache.stats().hits, 0);
    assert!(probe.take_total() > 0);
    *etag.lock().unwrap() = "\"a\"";
    assert_eq!(get(&service, "/one", ContentCoding::Gzip).await.1, body);
    assert_eq!(probe.take_total(), 0);
    assert_eq!(cache.stats().hits, 1);
}

#[tokio::test]
async fn a_weak_etag_is_never_used() {
    let (cache, layer) = layer(false);
    let (body, chunks) = frames(20, 60_000);
    let probe = Arc::new(Probe::default());
    let etag = Arc::new(Mutex::new("W/\"a\""));
    let service = streaming_service(&layer, chunks, etag, probe.clone());
    for _ in 0..4 {
        assert_eq!(get(&service, "/weak", ContentCoding::Br).await.1, body);
        assert_eq!(probe.take_total(), body.len());
    }
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.admitted), (0, 0), "{stats:?}");
}

/// One request to the channel-fed service; the test feeds the body through its sender.
async fn channel_request<S>(
    service: &S,
) -> Response<tower_gzip::compression::CompressionBody<Tap<ChannelBody>>>
where
    S: Service<
            Request<()>,
            Response = Response<tower_gzip::compression::CompressionBody<Tap<ChannelBody>>>,
            Error = Infallible,
        > + Clone,
{
    let req = Request::get("/feed")
        .header(HOST, "app.example")
        .header(ACCEPT_ENCODING, "gzip")
        .body(())
        .unwrap();
    service.clone().oneshot(req).await.unwrap()
}

#[tokio::test]
async fn a_stream_that_fails_or_is_dropped_half_way_is_never_filed() {
    let (cache, layer) = layer(false);
    let (body, chunks) = frames(30, 80_000);
    let probe = Arc::new(Probe::default());
    let senders: Arc<Mutex<Vec<BodySender>>> = Arc::default();
    let service = {
        let (probe, senders) = (probe.clone(), senders.clone());
        layer.layer(service_fn(move |_: Request<()>| {
            let (tx, rx) = tower_gzip_support::bodies::channel_body();
            senders.lock().unwrap().push(tx);
            let mut res = Response::new(Tap::new(rx, probe.clone()));
            res.headers_mut().insert(ETAG, "\"fed\"".parse().unwrap());
            async move { Ok::<_, Infallible>(res) }
        }))
    };
    let sender = |senders: &Mutex<Vec<BodySender>>| senders.lock().unwrap().pop().unwrap();
    // Seen once, complete.
    let res = channel_request(&service).await;
    let tx = sender(&senders);
    chunks.iter().for_each(|c| tx.data(c.clone()));
    drop(tx);
    res.into_body().collect().await.unwrap();
    // A miss that fails half-way, and one the client drops half-way.
    let res = channel_request(&service).await;
    let tx = sender(&senders);
    tx.data(chunks[0].clone());
    tx.error("the upstream went away");
    assert!(res.into_body().collect().await.is_err());
    let mut res = channel_request(&service).await;
    let tx = sender(&senders);
    tx.data(chunks[0].clone());
    let first = res.body_mut().frame().await.unwrap().unwrap();
    assert!(first.is_data());
    drop((res, tx));
    assert_eq!(cache.stats().admitted, 0, "{:?}", cache.stats());
    // A complete one is filed, and the next is a hit that reads nothing.
    let res = channel_request(&service).await;
    let tx = sender(&senders);
    chunks.iter().for_each(|c| tx.data(c.clone()));
    drop(tx);
    res.into_body().collect().await.unwrap();
    assert_eq!(cache.stats().admitted, 1);
    probe.take_total();
    let res = channel_request(&service).await;
    let wire = res.into_body().collect().await.unwrap().to_bytes();
    let plain = OneShot::new(ContentCoding::Gzip)
        .decode(&wire, 1 << 20)
        .unwrap();
    assert_eq!(plain, body);
    assert_eq!(probe.take_total(), 0);
}

/// The worker has no identity body for a validator entry: it decodes the entry's bytes,
/// recompresses them at the densest level and keeps the result when smaller.
#[cfg(feature = "br")]
#[tokio::test]
async fn a_validator_entry_is_recompressed_from_its_own_bytes() {
    use super::wait_for;
    let (cache, layer) = layer(true);
    let (body, chunks) = frames(40, 120_000);
    let probe = Arc::new(Probe::default());
    let etag = Arc::new(Mutex::new("\"r\""));
    let service = streaming_service(&layer, chunks, etag, probe);
    for _ in 0..3 {
        get(&service, "/r", ContentCoding::Br).await;
    }
    let stats = wait_for(&cache, |s| s.recompressed >= 1);
    assert!(stats.recompress_saved > 0, "{stats:?}");
    let (encoding, plain) = get(&service, "/r", ContentCoding::Br).await;
    assert_eq!((encoding.as_deref(), plain), (Some("br"), body.to_vec()));
    assert_eq!(cache.stats().hits, stats.hits + 1);
}
