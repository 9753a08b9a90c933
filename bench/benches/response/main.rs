//! Response compression side by side: tower-gzip, tower-http, the raw codec floor and no
//! compression, in one binary (cargo unifies flate2's backend, so both middlewares run on
//! zlib-rs; both zstd sides on the same libzstd, both br sides on the same brotli crate).
//! Run: `cargo bench -p tower-gzip-bench --bench response`.
//!
//! Groups: `response/<size>` (gzip 6, plus `libdeflate_floor` up to 64 KiB), `response_l1`,
//! `streaming`, `response_zstd` and `response_br` (each layer's default level: zstd 3, br 4),
//! `response_dict` (`dcz`/`dcb` with a trained dictionary beside plain zstd/br; and
//! `response_dict/reddit`, the builder's dictionary on the recorded corpus),
//! `client_dict` (decoding `dcz` on the client, learned dictionary offered, beside zstd),
//! `request/<size>` (gzip), `request_zstd/16KiB`, `request_br/16KiB` and `contention`.

// The benches' shared helpers (bench/benches/support/), beside this folder.
#[path = "../support/mod.rs"]
mod support;

#[cfg(all(feature = "dcz", feature = "dcb"))]
mod recorded;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use tower::{Layer, service_fn};
use tower_gzip::{CodecPool, compression::CompressionLayer};

#[cfg(feature = "libdeflate")]
use support::LibdeflateFloor;
use support::{
    RawFloor, RawInflateFloor, SIZES, drain_request, full_response, gzip_body_request, gzip_bytes,
    gzip_request, identity_body_request, json, levels, respond, streamed_response,
};
#[cfg(any(feature = "zstd", feature = "br"))]
use support::{accepting, encoded_body_request, expect_coding, tower_http_only};

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
        // The one-shot path (full bodies up to 64 KiB, levels 2-9) is libdeflate: its own floor.
        #[cfg(feature = "libdeflate")]
        if prefix == "response" && size <= 64 * 1024 {
            let mut floor = LibdeflateFloor::new(level);
            group.bench_function("libdeflate_floor", |b| {
                b.iter(|| black_box(floor.gzip(&payload)))
            });
        }
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

/// Group `prefix/<size>` for every size, one `Full<Bytes>` JSON body answered with `coding`
/// only (the request accepts nothing else; tower-http's layer offers nothing else): our
/// layer and tower-http's at their default levels, `floor` (the codec alone) and no
/// compression. Setup checks that both layers really answer with `coding`.
#[cfg(any(feature = "zstd", feature = "br"))]
fn compare_coding(
    c: &mut Criterion,
    prefix: &str,
    coding: &'static str,
    mut floor: impl FnMut(&[u8]) -> usize,
) {
    let rt = runtime();
    for (label, size) in SIZES {
        let payload = json(size);
        let serve = || {
            let p = payload.clone();
            service_fn(move |_| full_response(p.clone()))
        };
        let mut group = configure(c, &format!("{prefix}/{label}"), size);
        let svc = CompressionLayer::new().layer(serve());
        rt.block_on(expect_coding(&svc, accepting(coding), coding));
        group.bench_function("tower_gzip", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, accepting(coding)))))
        });
        let svc = tower_http_only(coding).layer(serve());
        rt.block_on(expect_coding(&svc, accepting(coding), coding));
        group.bench_function("tower_http", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, accepting(coding)))))
        });
        group.bench_function("raw_floor", |b| b.iter(|| black_box(floor(&payload))));
        let svc = serve();
        group.bench_function("identity", |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, accepting(coding)))))
        });
        group.finish();
    }
}

/// zstd at level 3 (both layers' default); floor: a reused `CCtx` with the size pledged.
#[cfg(feature = "zstd")]
fn response_zstd(c: &mut Criterion) {
    let mut floor = support::ZstdFloor::new(3);
    compare_coding(c, "response_zstd", "zstd", move |p| floor.compress(p));
}

/// br at quality 4 (both layers' default); floor: the brotli crate's one-call compressor.
#[cfg(feature = "br")]
fn response_br(c: &mut Criterion) {
    let mut floor = support::BrFloor::new(4);
    compare_coding(c, "response_br", "br", move |p| floor.compress(p));
}

/// Group `prefix/16KiB`: a 16 KiB JSON request body encoded once with `coding` (`encoded`),
/// decoded by our `RequestDecompressionLayer` and tower-http's around a handler that drains
/// it; `floor` decodes it alone; identity drains the plain body with no layer.
#[cfg(any(feature = "zstd", feature = "br"))]
fn request_coding(
    c: &mut Criterion,
    prefix: &str,
    coding: &'static str,
    payload: Bytes,
    encoded: Bytes,
    mut floor: impl FnMut(&[u8]) -> usize,
) {
    let rt = runtime();
    assert_eq!(floor(&encoded), payload.len(), "the floor decodes the body");
    let echo = tower_gzip::decompression::RequestDecompressionLayer::new()
        .layer(service_fn(support::echo));
    support::check_request_decoding(&rt, echo, coding, &payload, &encoded);
    let mut group = configure(c, &format!("{prefix}/16KiB"), payload.len());
    let svc = tower_gzip::decompression::RequestDecompressionLayer::new()
        .layer(service_fn(drain_request));
    group.bench_function("tower_gzip", |b| {
        b.iter(|| {
            black_box(rt.block_on(respond(&svc, encoded_body_request(coding, encoded.clone()))))
        })
    });
    let svc = tower_http::decompression::RequestDecompressionLayer::new()
        .layer(service_fn(drain_request));
    group.bench_function("tower_http", |b| {
        b.iter(|| {
            black_box(rt.block_on(respond(&svc, encoded_body_request(coding, encoded.clone()))))
        })
    });
    group.bench_function("raw_floor", |b| b.iter(|| black_box(floor(&encoded))));
    let svc = service_fn(drain_request);
    group.bench_function("identity", |b| {
        b.iter(|| black_box(rt.block_on(respond(&svc, identity_body_request(payload.clone())))))
    });
    group.finish();
}

/// A 16 KiB JSON request body as one zstd frame at level 3.
#[cfg(feature = "zstd")]
fn request_zstd(c: &mut Criterion) {
    let payload = json(16 * 1024);
    let encoded = support::zstd_bytes(&payload, 3);
    let mut floor = support::ZstdDecodeFloor::new(payload.len());
    request_coding(c, "request_zstd", "zstd", payload, encoded, move |e| {
        floor.decompress(e)
    });
}

/// A 16 KiB JSON request body as one br stream at quality 4.
#[cfg(feature = "br")]
fn request_br(c: &mut Criterion) {
    let payload = json(16 * 1024);
    let encoded = support::br_bytes(&payload, 4);
    let mut floor = support::BrDecodeFloor::new(payload.len());
    request_coding(c, "request_br", "br", payload, encoded, move |e| {
        floor.decompress(e)
    });
}

/// Group `response_dict/<size>` (1 KiB and 16 KiB of JSON): our layer answering `dcz` and
/// `dcb` with a 16 KiB dictionary trained on other responses of the same API (records the
/// measured body does not contain), beside plain `zstd` and `br` from the same layer (`br`
/// at quality 5, `dcb`'s); then `dcz_built` and `dcb_built`, with the dictionary and levels
/// `DictionaryBuilder` chose from the same responses. Setup checks each coding and prints
/// the bytes of each answer.
#[cfg(all(feature = "dcz", feature = "dcb"))]
fn response_dict(c: &mut Criterion) {
    use tower_gzip::ContentCoding;
    let rt = runtime();
    let (dictionary, store) = support::trained_dictionary();
    let built = support::built_dictionary();
    let offering =
        |accept: &'static str| support::offering(accept, dictionary.available_dictionary());
    for (label, size) in [("1KiB", 1024), ("16KiB", 16 * 1024)] {
        let payload = json(size);
        let mut group = configure(c, &format!("response_dict/{label}"), size);
        for (name, accept, codings) in [
            ("dcz", "dcz", &[ContentCoding::Dcz][..]),
            ("dcb", "dcb", &[ContentCoding::Dcb][..]),
            ("zstd", "zstd", &[][..]),
            ("br", "br", &[][..]),
        ] {
            let p = payload.clone();
            let svc = CompressionLayer::new()
                .level(ContentCoding::Br, tower_gzip::CompressionLevel::Precise(5))
                .dictionaries(store.clone())
                .dictionary_codings(codings)
                .layer(service_fn(move |_| full_response(p.clone())));
            let bytes = rt.block_on(expect_coding(&svc, offering(accept), name));
            eprintln!("response_dict/{label}/{name}: {bytes} bytes (identity {size})");
            group.bench_function(name, |b| {
                b.iter(|| black_box(rt.block_on(respond(&svc, offering(accept)))))
            });
        }
        response_dict_built(&rt, &mut group, &payload, &built);
        group.finish();
    }
}

/// `dcz_built` and `dcb_built`: the dictionary `DictionaryBuilder` chose, at the level it chose.
#[cfg(all(feature = "dcz", feature = "dcb"))]
fn response_dict_built(
    rt: &tokio::runtime::Runtime,
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    payload: &Bytes,
    built: &(
        tower_gzip::dictionary::Dictionary,
        tower_gzip::dictionary::DictionaryStore,
        i32,
        i32,
    ),
) {
    use tower_gzip::{CompressionLevel, ContentCoding};
    let (dictionary, store, dcz_level, dcb_quality) = built;
    for (name, coding, level) in [
        ("dcz_built", ContentCoding::Dcz, *dcz_level),
        ("dcb_built", ContentCoding::Dcb, *dcb_quality),
    ] {
        let p = payload.clone();
        let svc = CompressionLayer::new()
            .level(coding, CompressionLevel::Precise(level))
            .dictionaries(store.clone())
            .dictionary_codings(&[coding])
            .layer(service_fn(move |_| full_response(p.clone())));
        let accept = coding.as_str();
        let request = || support::offering(accept, dictionary.available_dictionary());
        let bytes = rt.block_on(expect_coding(&svc, request(), accept));
        eprintln!("{name} (level {level}): {bytes} bytes");
        group.bench_function(name, |b| {
            b.iter(|| black_box(rt.block_on(respond(&svc, request()))))
        });
    }
}

#[cfg(not(all(feature = "dcz", feature = "dcb")))]
fn response_dict(_: &mut Criterion) {}

#[cfg(all(feature = "dcz", feature = "dcb"))]
use recorded::response_dict_recorded;
#[cfg(not(all(feature = "dcz", feature = "dcb")))]
fn response_dict_recorded(_: &mut Criterion) {}

/// Group `client_dict/1KiB`: what a client pays to decode a 1 KiB JSON response sent `dcz`
/// (the layer offers the learned dictionary: pattern match, `Available-Dictionary`, then a
/// pooled context with the prepared `DDict`) against the same response sent plain `zstd`,
/// both through our `DecompressionLayer`; and the two decoders alone.
#[cfg(all(feature = "dictionary-client", feature = "dcz"))]
fn client_dict(c: &mut Criterion) {
    use bytes::BytesMut;
    use http::{Request, Response};
    use http_body_util::{BodyExt, Empty, Full};
    use tower::ServiceExt;
    use tower_gzip::ContentCoding;
    use tower_gzip::client::ClientDictionaryStore;
    use tower_gzip::codec::Decoder;
    use tower_gzip::codec::OneShot;
    use tower_gzip::decompression::DecompressionLayer;

    let rt = runtime();
    let (dictionary, _) = support::trained_dictionary();
    let payload = json(1024);
    let pool = CodecPool::global();
    let mut dcz = BytesMut::new();
    OneShot::new(ContentCoding::Dcz)
        .dictionary(&dictionary)
        .pool(pool)
        .encode(&payload, &mut dcz)
        .unwrap();
    let dcz = dcz.freeze();
    let zstd = support::zstd_bytes(&payload, 3);
    eprintln!(
        "client_dict/1KiB: dcz {} bytes, zstd {} bytes (identity {})",
        dcz.len(),
        zstd.len(),
        payload.len()
    );

    // The server: the dictionary at /dict, the payload at /api/* in the coding asked for.
    let dict_bytes = dictionary.bytes().clone();
    let (dcz_wire, zstd_wire) = (dcz.clone(), zstd.clone());
    let server = service_fn(move |req: Request<Empty<Bytes>>| {
        let response = if req.uri().path() == "/dict" {
            Response::builder()
                .header("use-as-dictionary", r#"match="/api/*""#)
                .header("cache-control", "max-age=3600")
                .body(Full::new(dict_bytes.clone()))
        } else if req.headers().contains_key("available-dictionary") {
            Response::builder()
                .header("content-encoding", "dcz")
                .body(Full::new(dcz_wire.clone()))
        } else {
            Response::builder()
                .header("content-encoding", "zstd")
                .body(Full::new(zstd_wire.clone()))
        };
        std::future::ready(Ok::<_, std::convert::Infallible>(response.unwrap()))
    });
    let store = ClientDictionaryStore::new();
    let with_store = DecompressionLayer::new()
        .dictionaries(store.clone())
        .layer(server.clone());
    let plain = DecompressionLayer::new().layer(server);
    let fetch = |svc: &_, path: &str| {
        let svc: &tower_gzip::decompression::Decompression<_> = svc;
        let request = Request::get(format!("http://api.test{path}"))
            .body(Empty::new())
            .unwrap();
        let svc = svc.clone();
        async move {
            let response = svc.oneshot(request).await.unwrap();
            response.into_body().collect().await.unwrap().to_bytes()
        }
    };
    rt.block_on(async {
        assert_eq!(fetch(&with_store, "/dict").await, dictionary.bytes());
        assert_eq!(store.stats().entries, 1);
        assert_eq!(fetch(&with_store, "/api/items").await, payload);
        assert_eq!(fetch(&plain, "/api/items").await, payload);
    });

    let mut group = configure(c, "client_dict/1KiB", payload.len());
    group.bench_function("dcz_layer", |b| {
        b.iter(|| black_box(rt.block_on(fetch(&with_store, "/api/items"))))
    });
    group.bench_function("zstd_layer", |b| {
        b.iter(|| black_box(rt.block_on(fetch(&plain, "/api/items"))))
    });
    let decode = |mut decoder: Decoder, wire: &[u8]| {
        let mut out = BytesMut::with_capacity(2048);
        let mut input = wire;
        while !input.is_empty() || decoder.has_pending_output() {
            let used = decoder.decode(input, &mut out, 64 << 10).unwrap();
            input = &input[used..];
        }
        decoder.finish().unwrap();
        out
    };
    group.bench_function("dcz_decoder", |b| {
        b.iter(|| {
            let decoder = Decoder::for_coding(ContentCoding::Dcz, Some(&dictionary), pool).unwrap();
            black_box(decode(decoder, &dcz))
        })
    });
    group.bench_function("zstd_decoder", |b| {
        b.iter(|| {
            black_box(decode(
                Decoder::for_coding(ContentCoding::Zstd, None, pool).unwrap(),
                &zstd,
            ))
        })
    });
    group.finish();
}

#[cfg(not(all(feature = "dictionary-client", feature = "dcz")))]
fn client_dict(_: &mut Criterion) {}

#[cfg(not(feature = "zstd"))]
fn response_zstd(_: &mut Criterion) {}
#[cfg(not(feature = "zstd"))]
fn request_zstd(_: &mut Criterion) {}
#[cfg(not(feature = "br"))]
fn response_br(_: &mut Criterion) {}
#[cfg(not(feature = "br"))]
fn request_br(_: &mut Criterion) {}

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

#[cfg(all(feature = "zstd", feature = "br"))]
mod cache;
#[cfg(all(feature = "zstd", feature = "br"))]
use cache::response_cache;
#[cfg(not(all(feature = "zstd", feature = "br")))]
fn response_cache(_: &mut Criterion) {}

criterion_group!(
    benches,
    response_cache,
    response,
    response_l1,
    streaming,
    response_zstd,
    response_br,
    response_dict,
    response_dict_recorded,
    client_dict,
    request,
    request_zstd,
    request_br,
    contention
);
criterion_main!(benches);
