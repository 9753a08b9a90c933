//! Group `response_cache/<size>/<coding>`: a body served again through a layer with a
//! `VariantCache`, beside tower-http's layer and ours without a cache (see
//! [`response_cache`]).

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::Criterion;
use tower::{Layer, service_fn};
use tower_gzip::compression::CompressionLayer;

use super::support::{accepting, expect_coding, full_response, json, respond, tower_http_only};
use super::{SIZES, configure, runtime};

/// Group `response_cache/<size>/<coding>` for every size and gzip, br and zstd at the
/// layers' default levels: tower-http's layer on a body served again (`tower_http`), ours
/// with a cache on the same body, filed and recompressed before measuring (`hot`: one
/// `Bytes`, found by address once pinned; `hot_hashed`: the same bytes copied per request,
/// found by their hash), and ours
/// without (`uncached`) and with a cache (`miss`) on a body never seen before (both
/// handlers copy the payload and number it, so they pay the same for making it).
pub fn response_cache(c: &mut Criterion) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tower_gzip::cache::VariantCache;
    let rt = runtime();
    for (label, size) in SIZES {
        let payload = json(size);
        for coding in ["gzip", "br", "zstd"] {
            let mut group = configure(c, &format!("response_cache/{label}/{coding}"), size);
            let same = || {
                let p = payload.clone();
                service_fn(move |_| full_response(p.clone()))
            };
            let fresh = || {
                let (p, n) = (payload.clone(), std::sync::Arc::new(AtomicU64::new(0)));
                service_fn(move |_| {
                    let mut body = p.to_vec();
                    let number = n.fetch_add(1, Ordering::Relaxed).to_le_bytes();
                    body[1..9].copy_from_slice(&number);
                    full_response(body.into())
                })
            };
            let svc = tower_http_only(coding).layer(same());
            rt.block_on(expect_coding(&svc, accepting(coding), coding));
            group.bench_function("tower_http", |b| {
                b.iter(|| black_box(rt.block_on(respond(&svc, accepting(coding)))))
            });
            let svc = warm_cache(&rt, same(), coding);
            group.bench_function("hot", |b| {
                b.iter(|| black_box(rt.block_on(respond(&svc, accepting(coding)))))
            });
            // The same bytes in a new allocation each time: found by their hash.
            let p = payload.clone();
            let copied = service_fn(move |_| full_response(Bytes::copy_from_slice(&p)));
            let svc = warm_cache(&rt, copied, coding);
            group.bench_function("hot_hashed", |b| {
                b.iter(|| black_box(rt.block_on(respond(&svc, accepting(coding)))))
            });
            let svc = CompressionLayer::new().layer(fresh());
            rt.block_on(expect_coding(&svc, accepting(coding), coding));
            group.bench_function("uncached", |b| {
                b.iter(|| black_box(rt.block_on(respond(&svc, accepting(coding)))))
            });
            let cache = VariantCache::builder().min_size(0).build();
            let svc = CompressionLayer::new().cache(cache).layer(fresh());
            rt.block_on(expect_coding(&svc, accepting(coding), coding));
            group.bench_function("miss", |b| {
                b.iter(|| black_box(rt.block_on(respond(&svc, accepting(coding)))))
            });
            group.finish();
        }
    }
}

/// `inner` behind our layer with a cache, served until the cache holds its body
/// recompressed and has served it (or for 60 s: the measurement then says what it found).
fn warm_cache<S, B>(
    rt: &tokio::runtime::Runtime,
    inner: S,
    coding: &'static str,
) -> tower_gzip::compression::Compression<S>
where
    S: tower::Service<http::Request<http_body_util::Full<Bytes>>, Response = http::Response<B>>
        + Clone,
    S::Error: std::fmt::Debug,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tower_gzip::BoxError> + std::fmt::Debug,
{
    let cache = tower_gzip::cache::VariantCache::builder()
        .min_size(0)
        .recompress(Some(1.0))
        .build();
    let svc = CompressionLayer::new().cache(cache.clone()).layer(inner);
    let deadline = Instant::now() + Duration::from_secs(60);
    rt.block_on(expect_coding(&svc, accepting(coding), coding));
    // Until an entry is at the densest level and a request was served from it.
    let warm = |s: tower_gzip::cache::CacheStats| s.recompressed > 0 && s.hits > 0;
    while !warm(cache.stats()) && Instant::now() < deadline {
        rt.block_on(respond(&svc, accepting(coding)));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        cache.stats().hits > 0,
        "the cache never served: {:?}",
        cache.stats()
    );
    svc
}
