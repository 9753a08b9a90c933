//! Response compression side by side: tower-gzip, tower-http, the raw codec floor and no
//! compression, in one binary (cargo unifies flate2's backend, so both middlewares run on
//! zlib-rs). Run: `cargo bench --bench response`.

mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use tower::{Layer, service_fn};
use tower_gzip::{CodecPool, compression::CompressionLayer};

use support::{
    RawFloor, RawInflateFloor, SIZES, drain_request, full_response, gzip_body_request, gzip_bytes,
    gzip_request, identity_body_request, json, levels, respond, streamed_response,
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn configure<'a>(
    c: &'a mut Criterion,
    name: &str,
    size: usize,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    if size >= 256 * 1024 {
        group
            .sample_size(20)
            .measurement_time(Duration::from_secs(4));
    } else {
        group
            .sample_size(50)
            .measurement_time(Duration::from_secs(3));
    }
    group.warm_up_time(Duration::from_secs(1));
    group
}

/// Group `prefix/<size>` for every size: our layer, tower-http's, the raw codec floor and no
/// compression, at `level` (6 or 1), on the responses `handler` builds.
fn compare<H, F, B>(c: &mut Criterion, prefix: &str, level: u32, handler: H)
where
    H: Fn(Bytes) -> F + Clone + Send + 'static,
    F: std::future::Future<Output = Result<http::Response<B>, std::convert::Infallible>>
        + Send
        + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tower_gzip::BoxError> + std::fmt::Debug,
{
    let (ours, theirs) = levels(level);
    let rt = runtime();
    for (label, size) in SIZES {
        let payload = json(size);
        let serve = |handler: H| {
            let p = payload.clone();
            service_fn(move |_| handler(p.clone()))
        };
        let mut group = configure(c, &format!("{prefix}/{label}"), size);
        let svc = CompressionLayer::new()
            .quality(ours)
            .layer(serve(handler.clone()));
        group.bench_function("tower_gzip", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, gzip_request()))))
        });
        let svc = tower_http::compression::CompressionLayer::new()
            .quality(theirs)
            .layer(serve(handler.clone()));
        group.bench_function("tower_http", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, gzip_request()))))
        });
        let mut floor = RawFloor::new(level);
        group.bench_function("raw_floor", |b| b.iter(|| black_box(floor.gzip(&payload))));
        let svc = serve(handler.clone());
        group.bench_function("identity", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, gzip_request()))))
        });
        group.finish();
    }
}

/// Full<Bytes> bodies, level 6.
fn response(c: &mut Criterion) {
    compare(c, "response", 6, full_response);
}

/// Full<Bytes> bodies, level 1.
fn response_l1(c: &mut Criterion) {
    compare(c, "response_l1", 1, full_response);
}

/// Bodies arriving in 16 KiB frames, all ready, level 6.
fn streaming(c: &mut Criterion) {
    compare(c, "streaming", 6, streamed_response);
}

/// Two threads each serving 1 KiB responses through one shared pool, against one thread:
/// time per response. Equal times mean the pool adds no contention.
fn contention(c: &mut Criterion) {
    let payload = json(1024);
    let pool = CodecPool::new();
    let mut group = c.benchmark_group("contention");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(3));
    for threads in [1usize, 2] {
        let p = payload.clone();
        let svc = CompressionLayer::new()
            .pool(pool.clone())
            .layer(service_fn(move |_| full_response(p.clone())));
        group.bench_function(
            BenchmarkId::new("tower_gzip", format!("{threads}_threads")),
            |b| {
                b.iter_custom(|iters| {
                    let start = Instant::now();
                    std::thread::scope(|scope| {
                        for _ in 0..threads {
                            let svc = svc.clone();
                            scope.spawn(move || {
                                let rt = runtime();
                                for _ in 0..iters {
                                    black_box(rt.block_on(respond(&svc, gzip_request())));
                                }
                            });
                        }
                    });
                    // Per response: each thread served `iters`, in parallel.
                    start.elapsed() / threads as u32
                })
            },
        );
    }
    group.finish();
}

/// Request bodies gzip-compressed at level 6 (prepared once), decoded by the layer around a
/// handler that drains them: group `request/<size>`.
fn request(c: &mut Criterion) {
    let rt = runtime();
    for (label, size) in SIZES {
        let payload = json(size);
        let gzipped = gzip_bytes(&payload, 6);
        let mut group = configure(c, &format!("request/{label}"), size);
        let svc = tower_gzip::decompression::RequestDecompressionLayer::new()
            .layer(service_fn(drain_request));
        group.bench_function("tower_gzip", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, gzip_body_request(gzipped.clone())))))
        });
        let svc = tower_http::decompression::RequestDecompressionLayer::new()
            .layer(service_fn(drain_request));
        group.bench_function("tower_http", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, gzip_body_request(gzipped.clone())))))
        });
        let mut floor = RawInflateFloor::new();
        group.bench_function("raw_floor", |b| {
            b.iter(|| black_box(floor.gunzip(&gzipped)))
        });
        let svc = service_fn(drain_request);
        group.bench_function("identity", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, identity_body_request(payload.clone())))))
        });
        group.finish();
    }
}

criterion_group!(
    benches,
    response,
    response_l1,
    streaming,
    request,
    contention
);
criterion_main!(benches);
