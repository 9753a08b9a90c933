//! The cache behind a `CompressionLayer`: what is served from it, what never is, and that
//! every answer decodes to the identity body of the response that asked for it.

use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use std::convert::Infallible;
use tower::{Layer, Service, ServiceExt, service_fn};

use super::wait_for;
use tower_gzip::ContentCoding;
use tower_gzip::cache::VariantCache;
use tower_gzip::codec::OneShot;
use tower_gzip::compression::CompressionLayer;

/// API-like JSON of about `bytes` bytes, distinct per `seed`.
fn json(seed: u64, bytes: usize) -> Bytes {
    let mut out = String::from("[");
    let mut i = 0u64;
    while out.len() < bytes {
        out.push_str(&format!(
            r#"{{"id":{},"name":"item {seed}-{i}","price":{},"tags":["x","y{}"]}},"#,
            seed * 1_000_000 + i,
            (i * 37) % 1000,
            i % 7
        ));
        i += 1;
    }
    out.pop();
    out.push(']');
    out.into()
}

/// A service answering `body` with `status` and `cache_control`, behind `layer`.
fn service(
    layer: &CompressionLayer,
    body: Bytes,
    status: StatusCode,
    cache_control: Option<&'static str>,
) -> impl Service<
    Request<()>,
    Response = Response<tower_gzip::compression::CompressionBody<Full<Bytes>>>,
    Error = Infallible,
    Future: Send,
> + Clone
+ Send {
    layer.layer(service_fn(move |_: Request<()>| {
        let mut res = Response::new(Full::new(body.clone()));
        *res.status_mut() = status;
        if let Some(value) = cache_control {
            res.headers_mut()
                .insert(CACHE_CONTROL, value.parse().unwrap());
        }
        async move { Ok::<_, Infallible>(res) }
    }))
}

/// One request accepting `coding`: the coding answered and the body decoded by it.
async fn get<S>(service: &S, method: Method, coding: ContentCoding) -> (Option<String>, Vec<u8>)
where
    S: Service<
            Request<()>,
            Response = Response<tower_gzip::compression::CompressionBody<Full<Bytes>>>,
            Error = Infallible,
        > + Clone,
{
    let req = Request::builder()
        .method(method)
        .header(ACCEPT_ENCODING, coding.as_str())
        .body(())
        .unwrap();
    let res = service.clone().oneshot(req).await.unwrap();
    let encoding = res
        .headers()
        .get(CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap().to_owned());
    let length = res.headers().get(CONTENT_LENGTH).cloned();
    let wire = res.into_body().collect().await.unwrap().to_bytes();
    if let Some(length) = length {
        assert_eq!(length.to_str().unwrap(), wire.len().to_string());
    }
    let plain = match &encoding {
        Some(token) => {
            let coding = ContentCoding::from_token(token).unwrap();
            OneShot::new(coding)
                .decode(&wire, 64 << 20)
                .unwrap()
                .to_vec()
        }
        None => wire.to_vec(),
    };
    (encoding, plain)
}

#[tokio::test]
async fn a_repeated_body_is_served_from_the_cache_in_every_coding() {
    let cache = VariantCache::builder().recompress(None).build();
    let layer = CompressionLayer::new().cache(cache.clone());
    for (seed, coding) in ContentCoding::PLAIN.iter().enumerate() {
        let body = json(seed as u64, 20_000);
        let service = service(&layer, body.clone(), StatusCode::OK, None);
        let before = cache.stats().hits;
        for _ in 0..4 {
            let (encoding, plain) = get(&service, Method::GET, *coding).await;
            assert_eq!(encoding.as_deref(), Some(coding.as_str()));
            assert_eq!(plain, body, "{coding:?}");
        }
        assert_eq!(
            cache.stats().hits - before,
            2,
            "{coding:?}: seen, filed, hit, hit"
        );
    }
}

/// Bodies larger than one poll's slice stream on a miss; the worker files them, and later
/// requests get the filed bytes with their exact length.
#[tokio::test]
async fn a_large_body_is_filed_by_the_worker_then_served() {
    let cache = VariantCache::builder().budget(64 << 20).build();
    let layer = CompressionLayer::new().cache(cache.clone());
    let body = json(50, 300_000);
    let service = service(&layer, body.clone(), StatusCode::OK, None);
    for _ in 0..2 {
        assert_eq!(
            get(&service, Method::GET, ContentCoding::Gzip).await.1,
            body
        );
    }
    let stats = wait_for(&cache, |s| s.admitted >= 1);
    assert_eq!(stats.admitted, 1, "{stats:?}");
    let (encoding, plain) = get(&service, Method::GET, ContentCoding::Gzip).await;
    assert_eq!((encoding.as_deref(), plain), (Some("gzip"), body.to_vec()));
    assert_eq!(cache.stats().hits, 1);
}

#[tokio::test]
async fn what_the_rules_leave_alone_is_never_cached() {
    let cache = VariantCache::builder().recompress(None).build();
    let layer = CompressionLayer::new().cache(cache.clone());
    let body = json(60, 20_000);
    let cases = [
        (StatusCode::OK, Some("no-transform"), Method::GET),
        (StatusCode::PARTIAL_CONTENT, None, Method::GET),
        (StatusCode::OK, None, Method::HEAD),
    ];
    for (status, cache_control, method) in cases {
        let service = service(&layer, body.clone(), status, cache_control);
        for _ in 0..3 {
            let (encoding, _) = get(&service, method.clone(), ContentCoding::Gzip).await;
            assert_eq!(encoding, None, "{status} {cache_control:?} {method}");
        }
    }
    let stats = cache.stats();
    assert_eq!(
        (stats.admitted, stats.hits, stats.refused),
        (0, 0, 0),
        "{stats:?}"
    );
}

#[tokio::test]
async fn gzip_with_breach_jitter_is_never_cached() {
    let cache = VariantCache::builder().recompress(None).build();
    let layer = CompressionLayer::new()
        .breach_jitter(32)
        .cache(cache.clone());
    let body = json(70, 20_000);
    let jittered = service(&layer, body.clone(), StatusCode::OK, None);
    // gzip and every other plain coding: all are padded (the dictionary codings follow
    // the same rule, `CompressionSettings::cache_for`, tested there).
    let plain = ContentCoding::ALL.iter().filter(|c| !c.needs_dictionary());
    for &coding in plain {
        for _ in 0..3 {
            assert_eq!(
                get(&jittered, Method::GET, coding).await.1,
                body,
                "{coding:?}"
            );
        }
        assert_eq!(cache.stats().admitted, 0, "{coding:?}");
    }
    // The same cache behind a layer without jitter: admitted at the second sight, then hit.
    let unpadded = CompressionLayer::new().cache(cache.clone());
    let cached = service(&unpadded, body.clone(), StatusCode::OK, None);
    for _ in 0..3 {
        assert_eq!(get(&cached, Method::GET, ContentCoding::Gzip).await.1, body);
    }
    assert_eq!(cache.stats().hits, 1);
}

/// Different bodies through one cache, by several tasks at once, each checked against its
/// own identity bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_fills_never_serve_another_body() {
    let cache = VariantCache::builder().budget(8 << 20).build();
    let layer = CompressionLayer::new().cache(cache.clone());
    let mut tasks = Vec::new();
    for task in 0..8u64 {
        let layer = layer.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..30u64 {
                let seed = (task + round) % 5;
                let body = json(80 + seed, 5_000 + seed as usize * 1_000);
                let service = service(&layer, body.clone(), StatusCode::OK, None);
                let coding = ContentCoding::PLAIN[(round as usize) % ContentCoding::PLAIN.len()];
                assert_eq!(get(&service, Method::GET, coding).await.1, body);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert!(cache.stats().hits > 0);
}
